#pragma once
// Shared by the tests that push a grid to its limits (test_limits, test_extreme_values): every
// map shows finite numbers on a finite, non-empty colour range.

#include <QtTest>
#include <cmath>

#include "plot/heatmap_controller.h"
#include "plot/heatmap_grid.h"
#include "qcustomplot.h"

namespace ae::test {

// QVERIFY inside: on failure it returns from here, so call as
//   verifyMapsFinite(grid); if (QTest::currentTestFailed()) return;
inline void verifyMapsFinite(const ui::HeatmapGrid& grid) {
    for (const ui::HeatmapTile& tile : grid.tiles()) {
        QCPColorMap* map = tile.controller->colorMap();
        const QCPRange range = map->dataRange();
        QVERIFY2(
            std::isfinite(range.lower) && std::isfinite(range.upper) && range.upper > range.lower,
            qPrintable(tile.controller->title()));
        QCPColorMapData* data = map->data();
        for (int x = 0; x < data->keySize(); ++x)
            for (int y = 0; y < data->valueSize(); ++y)
                QVERIFY(std::isfinite(data->cell(x, y)));
    }
}

}  // namespace ae::test
