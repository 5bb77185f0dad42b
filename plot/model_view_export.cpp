#include "plot/model_view_export.h"

#include <QApplication>
#include <QPainter>
#include <QTabWidget>
#include <stdexcept>

#include "io/formats/result_export.h"
#include "plot/head_grid.h"
#include "plot/heatmap_controller.h"
#include "plot/model_panels.h"
#include "qcustomplot.h"

namespace ae::plot {
namespace {

// Laid out and painted twice at its size, never shown, so layouts and plots have settled before
// the real paint (render() delivers the pending resizes; QCustomPlot places tick labels a pass
// after measuring them).
void settle(QWidget* widget, QSize size) {
    widget->resize(size);
    for (int pass = 0; pass < 2; ++pass) {
        QApplication::processEvents();
        QImage scratch(size, QImage::Format_ARGB32_Premultiplied);
        widget->render(&scratch);
    }
}

QByteArray encode(QWidget* widget, QSize size, double scale, ImageFormat format) {
    return paintedImage(format, size, scale, QStringLiteral("Attention Explorer model view"),
                        [widget](QCPPainter& painter) { widget->render(&painter); });
}

}  // namespace

QByteArray renderModelView(const ModelViewData& data, const ModelViewImage& image,
                           ImageFormat format) {
    const auto& run = data.run;
    if (!run) throw std::invalid_argument("no model run to draw");
    const std::pair<int, int> head = image.head.value_or(std::pair<int, int>{0, 0});
    if (head.first < 0 || head.first >= static_cast<int>(run->layers.size())) {
        throw std::invalid_argument(QStringLiteral("--layer: expected 0 to %1, got %2")
                                        .arg(run->layers.size() - 1)
                                        .arg(head.first)
                                        .toStdString());
    }
    if (head.second < 0 || head.second >= run->config.heads) {
        throw std::invalid_argument(QStringLiteral("--head: expected 0 to %1, got %2")
                                        .arg(run->config.heads - 1)
                                        .arg(head.second)
                                        .toStdString());
    }
    ModelView view;
    view.setPresentation(image.presentation);
    if (image.position >= 0) view.setSelectedPosition(image.position);
    ModelViewData shown = data;
    if (!shown.openHead && image.head) shown.openHead = image.head;
    view.setData(std::move(shown));
    QWidget* drawn = &view;
    if (image.part == ModelViewPart::Rollout) {
        drawn = view.rolloutPanel();
    } else if (image.part == ModelViewPart::QueryKey) {
        view.queryKeyPanel()->setMode(image.qkMode);
        view.queryKeyPanel()->drawIfStale();  // never shown: it waits to be drawn
        drawn = view.queryKeyPanel();
    }
    if (drawn != &view) {
        // A panel alone, at the image's size, out of its tab.
        drawn->setParent(nullptr);
        settle(drawn, image.size);
        const QByteArray bytes = encode(drawn, image.size, image.scale, format);
        drawn->setParent(&view);  // deleted with the view
        return bytes;
    }
    settle(&view, image.size);
    return encode(&view, image.size, image.scale, format);
}

}  // namespace ae::plot
