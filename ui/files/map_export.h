#pragma once
// Exporting a labelled map (plot::EffectMap: the workbench's maps, the alignment view): its
// context menu offers the image (PNG, PDF, SVG, through the export dialog's size, print width,
// title and range) and its numbers (CSV, NPY), each written atomically.

#include <QString>
#include <functional>

class QWidget;

namespace ae::plot {
class EffectMap;
}

namespace ae::ui {

// Writes `map` to `fileName`: its numbers (.csv, .npy) or its image (.png, .jpg, .pdf, .svg, at
// least 640 x 480 at twice its pixels). Empty, or the one line saying why not (a suffix it does
// not write, the writer's reason).
QString saveMapFile(const plot::EffectMap& map, const QString& fileName);

// Gives `map`'s plot a context menu of both exports; `status` hears what was saved or why not.
// `owner` parents the dialogs.
void addMapExportMenu(plot::EffectMap* map, QWidget* owner,
                      const std::function<void(const QString&)>& status);

}  // namespace ae::ui
