#pragma once
// Shared by the tests that push a grid to its limits (test_limits, test_extreme_values): every
// map shows finite numbers on a finite, non-empty colour range.

#include <QtTest>
#include <cmath>

#include "plot/heatmap_controller.h"
#include "plot/heatmap_grid.h"

namespace ae::test {

// QVERIFY inside: on failure it returns from here, so call as
//   verifyMapsFinite(grid); if (QTest::currentTestFailed()) return;
inline void verifyMapsFinite(const plot::HeatmapGrid& grid) {
    for (const plot::HeatmapTile& tile : grid.tiles()) {
        const plot::HeatmapController& map = *tile.controller;
        const plot::ValueRange range = map.colorRange();
        QVERIFY2(
            std::isfinite(range.lower) && std::isfinite(range.upper) && range.upper > range.lower,
            qPrintable(map.title()));
        for (int row = 0; row < map.shownRows(); ++row)
            for (int column = 0; column < map.shownColumns(); ++column)
                QVERIFY(std::isfinite(map.shownCellValue(row, column)));
    }
}

}  // namespace ae::test
