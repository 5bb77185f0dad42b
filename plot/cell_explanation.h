#pragma once
// The text a heatmap cell's tooltip shows: its exact value and how it was made from the numbers
// before it, all taken from the window's float engine so the arithmetic shown is the arithmetic
// done.

#include <QString>
#include <QStringList>

#include "plot/stage.h"

namespace ae::plot {

// The shortest decimal text that reads back to the same float.
QString exactFloat(float value);
// Five significant digits: what the formulas in a tooltip print.
QString shortNumber(double value);

// Why query `query` cannot see key `key`: one entry per part of the mask that hides it
// ("causal (key 4 comes after query 2)", "window …", "padding …", "custom …"); empty if visible.
QStringList maskReasons(const Mask& mask, int query, int key);
// Whether causal, window or padding hide the pair: a custom mask edit cannot show it again.
bool hiddenByFixedMask(const Mask& mask, int query, int key);
// queries x keys, true where the mask's window hides the pair and its causal part does not: a
// decoder's sliding window, the keys too far back. Empty when the mask has no window.
BoolMatrix slidingWindowCells(const Mask& mask, int queries, int keys);

// Tooltip text for cell (row, column) of `stage`, head `head`. For the weights: the raw score,
// the division, the softmax with its row maximum and sum; for a masked cell, which part of the
// mask hides it and what the fill made of it. Needs a computed engine.
QString explainCell(const EngineF& engine, Stage stage, int head, int row, int column);
// The same for the mean of the weights over all heads.
QString explainMeanWeight(const EngineF& engine, int row, int column);

}  // namespace ae::plot
