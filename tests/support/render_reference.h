#pragma once
// Shared by the tests of `render` in process (tests/ui/test_sharing) and through the binary
// (tests/cli/test_render_command): where each cell of head 2's weights lands in the image, and
// the colour it must have there.

#include <QColor>
#include <QImage>
#include <QtTest>
#include <cstdlib>
#include <memory>

#include "document/attention_document.h"
#include "io/scene/scene_file.h"
#include "plot/color_maps.h"
#include "plot/heatmap_controller.h"
#include "plot/heatmap_grid.h"
#include "plot/image_export.h"
#include "ui/window/document_maps.h"

namespace ae::test {

inline bool nearColour(QRgb a, QRgb b, int tolerance = 3) {
    return std::abs(qRed(a) - qRed(b)) <= tolerance &&
           std::abs(qGreen(a) - qGreen(b)) <= tolerance &&
           std::abs(qBlue(a) - qBlue(b)) <= tolerance;
}

// Head 2's weights of the default scene, drawn alone at 500 x 400 as `render --head 2` draws them:
// a reference grid laid out at the same size tells where each cell's pixels are.
struct RenderReference {
    document::AttentionDocument document;
    std::unique_ptr<plot::HeatmapGrid> grid;
    plot::HeatmapController* tile = nullptr;
    RenderReference() {
        document.resetScene(io::loadPreset(QStringLiteral("default")));
        grid = std::make_unique<plot::HeatmapGrid>();
        new ui::DocumentMaps(&document, grid.get());  // the grid's child
        plot::GridView view;
        view.mode = plot::ViewMode::AllStages;
        view.head = 2;
        view.showValues = false;
        grid->setView(view);
        tile = grid->tile(Stage::Weights, 2);
        plot::ImageOptions options;
        options.size = QSize(500, 400);
        plot::renderImage({tile}, options);  // lays the tile out at the image's size
    }
    // Checks the centre of every cell against the colour viridis gives the engine's value.
    void checkCells(const QImage& image, double scale) const {
        int checked = 0;
        for (int q = 0; q < 6; ++q) {
            for (int k = 0; k < 6; ++k) {
                const QPointF centre = tile->cellCenter(q, k);
                const QPoint at(qRound(centre.x() * scale), qRound(centre.y() * scale));
                const double value = document.engine().weights(2)(q, k);
                const QRgb expected =
                    plot::gradientColor(plot::ColorMap::Viridis, value, 0, 1).rgb();
                QVERIFY2(
                    nearColour(image.pixel(at), expected),
                    qPrintable(QStringLiteral("cell (%1,%2) = %3 at (%4,%5): %6, expected %7")
                                   .arg(q)
                                   .arg(k)
                                   .arg(value)
                                   .arg(at.x())
                                   .arg(at.y())
                                   .arg(QColor(image.pixel(at)).name(), QColor(expected).name())));
                ++checked;
            }
        }
        QCOMPARE(checked, 36);
    }
};

}  // namespace ae::test
