#pragma once
// Shared by the classroom's tests (tests/ui/classroom): a map holds exactly the matrix it shows,
// cell by cell, as double(float).

#include <QString>
#include <QtTest>

#include "plot/heatmap_controller.h"

namespace ae::test {

// The value the map colours in its cell (row, column).
inline double cell(plot::HeatmapController* map, int row, int column) {
    return map->cellValue(row, column);
}

// Every cell of the map equals the float matrix exactly (the map holds double(float)); else
// false, and `why` names the shape or the first cell that differs.
template <typename M>
bool mapEquals(plot::HeatmapController* map, const M& m, QString* why) {
    if (map->rows() != m.rows() || map->columns() != m.cols()) {
        *why = QStringLiteral("shape %1x%2, expected %3x%4")
                   .arg(map->rows())
                   .arg(map->columns())
                   .arg(m.rows())
                   .arg(m.cols());
        return false;
    }
    for (int i = 0; i < m.rows(); ++i) {
        for (int j = 0; j < m.cols(); ++j) {
            const double expected = static_cast<double>(static_cast<float>(m(i, j)));
            if (cell(map, i, j) != expected) {
                *why = QStringLiteral("cell (%1, %2) = %3, expected %4")
                           .arg(i)
                           .arg(j)
                           .arg(cell(map, i, j), 0, 'g', 9)
                           .arg(expected, 0, 'g', 9);
                return false;
            }
        }
    }
    return true;
}

}  // namespace ae::test

#define VERIFY_MAP(map, matrix)                                                    \
    do {                                                                           \
        QString why_;                                                              \
        QVERIFY2(::ae::test::mapEquals((map), (matrix), &why_), qPrintable(why_)); \
    } while (false)
