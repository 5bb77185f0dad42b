#pragma once
// Reducing a map with more cells than room to draw them: each shown cell stands for a block of
// the matrix's cells (the last block of a row or column may be partial), its value the block's
// maximum (peaks stay visible) or mean. The heatmaps, the model view's small maps and the pooled
// maps a long run keeps instead of its full ones (core/model/layer_digest.h) all pool this way.

#include <Eigen/Core>
#include <algorithm>

namespace ae {

// How a map with more cells than pixels is reduced for display.
enum class Pooling { Max, Mean };

// The blocks a rows x columns matrix is cut into so that at most maxRows x maxColumns cells
// are shown (a bound of 0 or less: no pooling along that side).
struct PoolShape {
    int rowsPerCell = 1;
    int columnsPerCell = 1;
    int shownRows = 0;
    int shownColumns = 0;
};

inline PoolShape poolShape(int rows, int columns, int maxRows, int maxColumns) {
    PoolShape shape;
    shape.columnsPerCell =
        maxColumns > 0 ? std::max(1, (columns + maxColumns - 1) / maxColumns) : 1;
    shape.rowsPerCell = maxRows > 0 ? std::max(1, (rows + maxRows - 1) / maxRows) : 1;
    shape.shownColumns = (columns + shape.columnsPerCell - 1) / shape.columnsPerCell;
    shape.shownRows = (rows + shape.rowsPerCell - 1) / shape.rowsPerCell;
    return shape;
}

// The value of shown cell (shownRow, shownColumn): its block's maximum or mean.
// matrix: rows x columns as given to poolShape (any Eigen dense expression).
template <typename Derived>
typename Derived::Scalar pooledValue(const Eigen::DenseBase<Derived>& matrix,
                                     const PoolShape& shape, int shownRow, int shownColumn,
                                     Pooling pooling) {
    const int firstRow = shownRow * shape.rowsPerCell;
    const int firstColumn = shownColumn * shape.columnsPerCell;
    const int rowCount =
        std::min<int>(shape.rowsPerCell, static_cast<int>(matrix.rows()) - firstRow);
    const int columnCount =
        std::min<int>(shape.columnsPerCell, static_cast<int>(matrix.cols()) - firstColumn);
    const auto block = matrix.block(firstRow, firstColumn, rowCount, columnCount);
    return pooling == Pooling::Max ? block.maxCoeff() : block.mean();
}

}  // namespace ae
