#pragma once
// "Why divide by √d_k?", answered by the engine itself: for random unit-variance queries and keys
// of width d_k, how the raw scores' variance grows with d_k, and what that does to the softmax,
// with and without the √d_k divisor.

#include <cstdint>
#include <vector>

namespace ae {

struct ScalingPoint {
    int dk = 0;
    double rawVariance = 0, scaledVariance = 0;    // of q·k, and of q·k / √d_k
    double rawMaxWeight = 0, scaledMaxWeight = 0;  // mean over rows of the largest weight
    double rawEntropy = 0, scaledEntropy = 0;      // mean row entropy, in nats
};

// For each d_k: `trials` independent layers of `tokens` queries and `tokens` keys, entries drawn
// from N(0, 1) (SplitMix64, so the same seed gives the same figures everywhere), pushed through
// AttentionEngine<double> in identity mode (q = x, k = x_source) once with scale none and once
// with √d_k. The row entropy of uniform weights is ln(tokens).
std::vector<ScalingPoint> scalingStudy(const std::vector<int>& dks, int tokens, int trials,
                                       std::uint64_t seed);

}  // namespace ae
