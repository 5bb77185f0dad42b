#pragma once
// Deterministic numbers for `init`: SplitMix64 and Box-Muller, with no std::*_distribution, whose
// output differs between standard libraries. The same seed gives the same matrices everywhere.

#include <cstdint>

#include "core/scene.h"

namespace ae {

class SplitMix64 {
public:
    explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next();
    // In [0, 1), with 53 random bits.
    double uniform01() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

private:
    std::uint64_t state_;
};

// rows x cols values drawn row by row. Normal uses two uniforms per value (Box-Muller, cosine
// branch only), so the draw order is the element order.
MatrixD drawMatrix(SplitMix64& rng, const InitSpec& spec, int rows, int cols);

// W_Q, W_K (not for shared_qk), W_V, W_O if spec.output, then the biases in the same order, all
// drawn after the embeddings from the same generator. dProj = spec.dProj or dModel.
Projections drawProjections(SplitMix64& rng, const InitSpec& spec, int dModel);

// A self-attention scene of `length` tokens "t0", "t1", ... with `heads` heads: embeddings
// (length x spec.dModel, which must be set), then the projections, from one SplitMix64(spec.seed);
// init = spec. For benchmarks and tests that need a layer of a given size.
Scene drawnScene(const InitSpec& spec, int length, int heads);

}  // namespace ae
