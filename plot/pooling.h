#pragma once
// The plots pool as the engine's kept maps do: core/pooling.h, the one home of that arithmetic.

#include "core/attention_engine.h"
#include "core/pooling.h"

namespace ae::plot {

using ae::Pooling;
using ae::PoolShape;
using ae::poolShape;

inline float pooledValue(const AttentionEngine<float>::ConstBlock& matrix, const PoolShape& shape,
                         int shownRow, int shownColumn, Pooling pooling) {
    return ae::pooledValue(matrix, shape, shownRow, shownColumn, pooling);
}

}  // namespace ae::plot
