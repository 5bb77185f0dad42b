#pragma once
// Reducing a map with more cells than room to draw them: each shown cell stands for a block of
// the matrix's cells (the last block of a row or column may be partial), its value the block's
// maximum (peaks stay visible) or mean. The heatmaps and the model view's small maps both pool
// this way.

#include "core/attention_engine.h"

namespace ae::plot {

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
PoolShape poolShape(int rows, int columns, int maxRows, int maxColumns);

// The value of shown cell (shownRow, shownColumn): its block's maximum or mean.
// matrix: rows x columns as given to poolShape.
float pooledValue(const AttentionEngine<float>::ConstBlock& matrix, const PoolShape& shape,
                  int shownRow, int shownColumn, Pooling pooling);

}  // namespace ae::plot
