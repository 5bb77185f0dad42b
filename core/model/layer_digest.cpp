#include "core/model/layer_digest.h"

#include <cmath>
#include <limits>

namespace ae::model {

template <typename Scalar>
HeadDigest poolHead(const ops::RowMajorMatrix<Scalar>& weights, bool causal) {
    HeadDigest d;
    // Queries x keys: square for self-attention, target x source for cross-attention.
    const int T = static_cast<int>(weights.rows());
    const PoolShape pool =
        poolShape(T, static_cast<int>(weights.cols()), kDigestCells, kDigestCells);
    d.pooled.resize(static_cast<std::size_t>(pool.shownRows) * pool.shownColumns);
    for (int r = 0; r < pool.shownRows; ++r) {
        for (int c = 0; c < pool.shownColumns; ++c) {
            const float v = static_cast<float>(pooledValue(weights, pool, r, c, Pooling::Max));
            d.pooled[static_cast<std::size_t>(r) * pool.shownColumns + c] =
                std::isfinite(v) ? v : 0.0f;
        }
    }
    const int firstRow = causal && T > 1 ? 1 : 0;
    d.largest =
        T > firstRow
            ? static_cast<float>(weights.bottomRows(T - firstRow)
                                     .unaryExpr([](Scalar w) { return std::isfinite(w) ? w : 0; })
                                     .maxCoeff())
            : 0.0f;
    return d;
}

template <typename Scalar>
HeadDigest digestHead(const ops::RowMajorMatrix<Scalar>& weights,
                      const std::vector<int>& attentionMask, bool causal, int layer, int head,
                      RepeatedText repeated, const std::vector<int>* separators) {
    HeadDigest d = poolHead(weights, causal);
    d.summary.layer = layer;
    d.summary.head = head;
    const HeadWeights view(weights, attentionMask, repeated, separators);
    for (const HeadScore& score : headScores())
        d.summary.*score.value = score.needsRepeatedRun && repeated.period == 0
                                     ? std::numeric_limits<double>::quiet_NaN()
                                     : score.measure(view);
    return d;
}

template <typename Scalar>
LayerDigest digestLayer(const std::vector<ops::RowMajorMatrix<Scalar>>& weights,
                        const std::vector<int>& attentionMask, bool causal, int layer,
                        RepeatedText repeated, const std::vector<int>* separators) {
    LayerDigest digest;
    if (weights.empty()) return digest;
    const int T = static_cast<int>(weights.front().rows());
    digest.pool = poolShape(T, T, kDigestCells, kDigestCells);
    digest.heads.resize(weights.size());
    // Summed in the weights' own row-major order, then stored (the pass sums the same way).
    ops::RowMajorMatrix<double> weightSum = ops::RowMajorMatrix<double>::Zero(T, T);
    for (std::size_t h = 0; h < weights.size(); ++h) {
        digest.heads[h] = digestHead(weights[h], attentionMask, causal, layer, static_cast<int>(h),
                                     repeated, separators);
        weightSum += weights[h].template cast<double>();
    }
    digest.weightSum = weightSum;
    return digest;
}

#define AE_INSTANTIATE_LAYER_DIGEST(Scalar)                                                       \
    template HeadDigest poolHead<Scalar>(const ops::RowMajorMatrix<Scalar>&, bool);               \
    template HeadDigest digestHead<Scalar>(const ops::RowMajorMatrix<Scalar>&,                    \
                                           const std::vector<int>&, bool, int, int, RepeatedText, \
                                           const std::vector<int>*);                              \
    template LayerDigest digestLayer<Scalar>(const std::vector<ops::RowMajorMatrix<Scalar>>&,     \
                                             const std::vector<int>&, bool, int, RepeatedText,    \
                                             const std::vector<int>*);
AE_INSTANTIATE_LAYER_DIGEST(float)
AE_INSTANTIATE_LAYER_DIGEST(double)
#undef AE_INSTANTIATE_LAYER_DIGEST

}  // namespace ae::model
