#include "ui/files/map_export.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QWidget>

#include "io/formats/result_export.h"
#include "plot/effect_map.h"
#include "plot/image_export.h"
#include "ui/files/export_dialog.h"

namespace ae::ui {

QString saveMapFile(const plot::EffectMap& map, const QString& fileName) {
    const QString suffix = QFileInfo(fileName).suffix().toLower();
    try {
        QByteArray bytes;
        if (suffix == QLatin1String("csv")) {
            bytes = io::csvBytes(map.values());
        } else if (suffix == QLatin1String("npy")) {
            bytes = io::npyBytes(map.values());
        } else if (const auto format = plot::imageFormatForFile(fileName)) {
            // The map's own size on screen, at least a readable figure's.
            const QSize size = map.widget()->size().expandedTo(QSize(640, 480));
            bytes = map.image(*format, size, 2.0);
        } else {
            return QObject::tr(
                       "%1: choose .png, .jpg, .pdf or .svg for an image, .csv or .npy "
                       "for the numbers")
                .arg(fileName);
        }
        io::writeFileAtomically(fileName, bytes);
    } catch (const io::WriteError& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

void addMapExportMenu(plot::EffectMap* map, QWidget* owner,
                      const std::function<void(const QString&)>& status) {
    QWidget* widget = map->widget();
    widget->setContextMenuPolicy(Qt::CustomContextMenu);
    QObject::connect(
        widget, &QWidget::customContextMenuRequested, owner,
        [map, widget, owner, status](QPoint at) {
            if (map->rows() == 0) return;
            QMenu menu;
            QAction* image = menu.addAction(QObject::tr("Export image (PNG, PDF, SVG)…"));
            menu.addAction(QObject::tr("Export numbers (CSV, NPY)…"));
            QAction* chosen = menu.exec(widget->mapToGlobal(at));
            if (!chosen) return;
            if (chosen == image) {
                // As any map: size, print width, title, colour-bar label and range.
                ExportDialog dialog(map, owner);
                QObject::connect(&dialog, &ExportDialog::statusMessage, owner, status);
                dialog.exec();
                return;
            }
            const QString fileName = QFileDialog::getSaveFileName(
                owner, chosen->text(), map->title().section(QLatin1Char('('), 0, 0).trimmed(),
                QObject::tr("Numbers (*.csv *.npy)"));
            if (fileName.isEmpty()) return;
            const QString error = saveMapFile(*map, fileName);
            status(error.isEmpty() ? QObject::tr("Saved %1").arg(QFileInfo(fileName).fileName())
                                   : error);
        });
}

}  // namespace ae::ui
