#pragma once
// File › Export image…, Export every head… and Export a sweep…: what to draw, the format, the
// size and the scale for print, and where. On the model view (issue 16) the same dialog saves one
// of its parts (heads grid, rollout, query-key map) or every head of the model; on the workbench,
// one of its maps as a paper's figure. Remembers the last
// folder and format; a failed write shows the writer's own reason and keeps the dialog open.

#include <QDialog>

#include "plot/image_export.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLineEdit;
class QSpinBox;

namespace ae::document {
class AttentionDocument;
}  // namespace ae::document

namespace ae::plot {
class EffectMap;
class HeatmapGrid;
class ModelView;
}  // namespace ae::plot

namespace ae::ui {

class ExportDialog : public QDialog {
    Q_OBJECT
public:
    // ModelImage: one part of the model view in one file; ModelEveryHead: exportEveryModelHead.
    // WorkbenchMap: one of the workbench's maps (plot::EffectMap::image).
    enum class Mode { Image, EveryHead, Sweep, ModelImage, ModelEveryHead, WorkbenchMap };
    // Exports `document`'s maps as `grid` shows them (its view, its maps for Mode::Image).
    ExportDialog(document::AttentionDocument* document, const plot::HeatmapGrid* grid, Mode mode,
                 QWidget* parent = nullptr);
    // Exports what `model` shows (its run, selected position, open head and query-key mode);
    // mode is ModelImage or ModelEveryHead. `model` outlives the dialog.
    ExportDialog(const plot::ModelView* model, Mode mode, QWidget* parent = nullptr);
    // Exports `map` (Mode::WorkbenchMap), which outlives the dialog.
    explicit ExportDialog(const plot::EffectMap* map, QWidget* parent = nullptr);

    // Exports with the current fields; false with *error (the writer's reason) on failure.
    bool exportNow(QString* error);
    // The file (Image) or folder (EveryHead, Sweep) written to.
    QString target() const;
    void setTarget(const QString& path);

    void accept() override;

signals:
    // After a successful export from the dialog's button: "Exported to PATH".
    void statusMessage(const QString& text);

private:
    ExportDialog(document::AttentionDocument* document, const plot::HeatmapGrid* grid,
                 const plot::ModelView* model, const plot::EffectMap* map, Mode mode,
                 QWidget* parent);
    bool modelMode() const { return mode_ == Mode::ModelImage || mode_ == Mode::ModelEveryHead; }
    bool fileMode() const {
        return mode_ == Mode::Image || mode_ == Mode::ModelImage || mode_ == Mode::WorkbenchMap;
    }
    void browse();
    void formatChanged();
    void paperChanged();
    QString baseName() const;
    // How many maps one file holds, for a paper layout.
    int mapsPerFile() const;
    plot::FigureStyle style() const;

    document::AttentionDocument* document_;
    const plot::HeatmapGrid* grid_;
    const plot::ModelView* model_;
    const plot::EffectMap* effectMap_;
    Mode mode_;
    QComboBox* maps_ = nullptr;
    QComboBox* format_ = nullptr;
    QSpinBox* width_;
    QSpinBox* height_;
    QDoubleSpinBox* scale_;
    QLineEdit* target_;
    QLineEdit* base_ = nullptr;
    QComboBox* parameter_ = nullptr;
    QDoubleSpinBox* from_ = nullptr;
    QDoubleSpinBox* to_ = nullptr;
    QSpinBox* steps_ = nullptr;
    QCheckBox* gif_ = nullptr;
    QComboBox* paper_;
    QComboBox* titleMode_;
    QLineEdit* title_;
    QCheckBox* entropy_;
    QLineEdit* colorBarLabel_;
    QComboBox* range_;
    QDoubleSpinBox* rangeLow_;
    QDoubleSpinBox* rangeHigh_;
    QSpinBox* decimals_;
};

}  // namespace ae::ui
