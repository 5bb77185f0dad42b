#pragma once
#include <QString>

#include "core/scene.h"

namespace ae::io {
// A LaTeX `bmatrix` (amsmath) of `m`, every value with `decimals` digits after the point, rows
// separated by `\\` and one row per line, ready to paste into a paper or slide. -0 is written 0.
QString latexBmatrix(const MatrixD& m, int decimals);
}  // namespace ae::io
