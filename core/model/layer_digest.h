#pragma once
// What the model view needs of a layer's heads, kept whether or not the run keeps their maps:
// each head's summary (head_scores.h, induction aside), its map max-pooled to the grid's cells,
// and the sum of the layer's weights over heads (attention rollout's input). A long run keeps
// these and drops its T x T maps (RunOptions::keptMaps), which recomputeLayerMaps gives back
// exactly when a view asks; at T = 2048 an 8B model's digests take 1 GB against its maps' 34 GB.
//
// Shapes: T tokens; a pooled map is shownRows x shownColumns of PoolShape, at most
// kDigestCells a side.

#include <Eigen/Core>
#include <vector>

#include "core/model/head_scores.h"
#include "core/ops.h"
#include "core/pooling.h"

namespace ae::model {

// The cells a side of a kept pooled map: the model view's grid draws each head at most this
// many cells a side, so the grid draws from the digest alone.
inline constexpr int kDigestCells = 64;

struct HeadDigest {
    HeadSummary summary;        // induction NaN unless measured on a run of a repeated text
    std::vector<float> pooled;  // row-major, LayerDigest::pool's shown cells; non-finite as 0
    // The largest weight of the rows that choose between keys (a decoder's row 0 sees only
    // itself and says nothing about the head): the grid's own colour range.
    float largest = 0;
};

struct LayerDigest {
    PoolShape pool;  // T x T cut into at most kDigestCells a side
    std::vector<HeadDigest> heads;
    Eigen::MatrixXd weightSum;  // T x T: the sum over heads of their weights, in double
    bool empty() const { return heads.empty(); }
};

// Head `head` of layer `layer`: weights T x T (a softmax, hidden keys 0), `attentionMask` the
// run's (empty: every position a token); `causal` for a decoder. On a run of a repeated text
// (`repeated.period` > 0) the scores that need one are measured too; `separators` are the
// separator tokens' positions (null: none).
template <typename Scalar>
HeadDigest digestHead(const ops::RowMajorMatrix<Scalar>& weights,
                      const std::vector<int>& attentionMask, bool causal, int layer, int head,
                      RepeatedText repeated = {}, const std::vector<int>* separators = nullptr);

// The same with the pooled map and the largest weight alone (its summary left as constructed).
template <typename Scalar>
HeadDigest poolHead(const ops::RowMajorMatrix<Scalar>& weights, bool causal);

// Every head of a layer whose weights are all at hand (a what-if's edited layer), T x T each.
template <typename Scalar>
LayerDigest digestLayer(const std::vector<ops::RowMajorMatrix<Scalar>>& weights,
                        const std::vector<int>& attentionMask, bool causal, int layer,
                        RepeatedText repeated = {}, const std::vector<int>* separators = nullptr);

}  // namespace ae::model
