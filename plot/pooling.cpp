#include "plot/pooling.h"

#include <algorithm>

namespace ae::plot {

PoolShape poolShape(int rows, int columns, int maxRows, int maxColumns) {
    PoolShape shape;
    shape.columnsPerCell =
        maxColumns > 0 ? std::max(1, (columns + maxColumns - 1) / maxColumns) : 1;
    shape.rowsPerCell = maxRows > 0 ? std::max(1, (rows + maxRows - 1) / maxRows) : 1;
    shape.shownColumns = (columns + shape.columnsPerCell - 1) / shape.columnsPerCell;
    shape.shownRows = (rows + shape.rowsPerCell - 1) / shape.rowsPerCell;
    return shape;
}

float pooledValue(const AttentionEngine<float>::ConstBlock& matrix, const PoolShape& shape,
                  int shownRow, int shownColumn, Pooling pooling) {
    const int firstRow = shownRow * shape.rowsPerCell;
    const int firstColumn = shownColumn * shape.columnsPerCell;
    const int rowCount =
        std::min<int>(shape.rowsPerCell, static_cast<int>(matrix.rows()) - firstRow);
    const int columnCount =
        std::min<int>(shape.columnsPerCell, static_cast<int>(matrix.cols()) - firstColumn);
    const auto block = matrix.block(firstRow, firstColumn, rowCount, columnCount);
    return pooling == Pooling::Max ? block.maxCoeff() : block.mean();
}

}  // namespace ae::plot
