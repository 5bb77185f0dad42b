#pragma once
// "Why rotary positions?", answered by the engine's own operations: one query and one key of a
// head, taken from a scene before the rotation, turned to any two positions by ops::rotateHalf;
// their score against the distance between the positions, beside the score the same two tokens
// get when sinusoidal positions are added to their vectors before the projections (GPT-style
// absolute positions, computed by AttentionEngine itself); and the wavelength of every frequency
// pair, with and without a checkpoint's scaling (ops::ropeInverseFrequencies).
//
// Pairs follow the engine's rotate-half layout (Hugging Face's rotate_half): pair i of a head of
// width d is columns i and i + d/2, turned by θ_i per position.

#include <vector>

#include "core/ops.h"
#include "core/scene.h"

namespace ae {

// Where the two tokens sit: the query at position `query`, the key at position `key`.
struct TokenPositions {
    int query = 0;
    int key = 0;
    bool operator==(const TokenPositions& o) const { return query == o.query && key == o.key; }
};

// distance = query − key (negative: the key comes after the query); the earlier of the two sits at
// `start` (>= 0), so neither position is negative. Moving `start` moves both together.
TokenPositions positionsAt(int distance, int start);

// Pair i of a rotated query and key: (x, y) = columns (i, i + d/2).
struct RotatedPair {
    double queryX = 0, queryY = 0;
    double keyX = 0, keyY = 0;
    // This pair's share of q·k (the shares of every pair, and an odd head's unpaired last
    // column, add up to the score).
    double dot() const { return queryX * keyX + queryY * keyY; }
};

class RotaryStudy {
public:
    // The query row `queryRow` and key row `keyRow` of head `head`, as the rotation receives them:
    // projected (and q/k-normed) by AttentionEngine<double> from the token vectors alone, the
    // scene's own absolute positions, rotation and mask left out. The rotary parameters start as
    // the scene's, or the defaults (θ = 10000, no scaling) when it has none. Throws SceneError when
    // the scene cannot be computed; rows and head must be in range.
    RotaryStudy(const Scene& scene, int head, int queryRow, int keyRow);

    bool sceneHasRotary() const { return sceneHasRotary_; }
    int headDim() const { return static_cast<int>(query_.size()); }
    // The leading columns that turn: the whole head, or a partial rotation's rotaryDim (Phi-3,
    // GPT-NeoX); an odd head's last column has no partner.
    int turnedDims() const { return parameters_.turnedDims(headDim()) / 2 * 2; }
    int pairCount() const { return turnedDims() / 2; }
    const std::vector<double>& query() const { return query_; }  // dHead, before rotation
    const std::vector<double>& key() const { return key_; }      // dHead, before rotation

    const RopeParameters& parameters() const { return parameters_; }
    void setParameters(const RopeParameters& parameters);
    // θ_i of every pair under parameters() (ops::ropeInverseFrequencies), and with the same θ
    // but no scaling.
    const std::vector<double>& inverseFrequencies() const { return inverseFrequencies_; }
    std::vector<double> unscaledInverseFrequencies() const;
    // 2π / θ_i: positions per full turn of pair i, with parameters() and unscaled.
    std::vector<double> wavelengths() const;
    std::vector<double> unscaledWavelengths() const;

    // The query rotated to positions.query and the key to positions.key (ops::rotateHalf), pair
    // by pair: pairCount() entries. Pair i is columns i and i + turnedDims()/2.
    std::vector<RotatedPair> rotatedPairs(TokenPositions positions) const;
    // The share of q·k from the columns that do not turn (a partial rotation's, an odd head's
    // last): the same at every position. With the pairs' shares it adds up to the score.
    double unturnedShare() const;
    // Their dot product, the head's raw score (ops::rotatedDot): AttentionEngine's scores(head)
    // for a rotary scene when the positions are the rows' own.
    double rotaryScore(TokenPositions positions) const;
    std::vector<double> rotaryScores(const std::vector<TokenPositions>& positions) const;
    // The raw score with no rotation but sinusoidal positions (base 10000, ops::
    // addSinusoidalPositions) added to the two token vectors before the norm and projections:
    // the query's token placed at positions[n].query, the key's at positions[n].key. Computed by
    // one AttentionEngine<double> pass over a cross-attention scene that holds each distinct
    // placement once (queries: the query token's, source: the key token's).
    std::vector<double> sinusoidalScores(const std::vector<TokenPositions>& positions) const;

private:
    // `row` (a head's dHead values) turned to `position` as the engine turns it.
    ops::RowMajorMatrix<double> rotated(const std::vector<double>& row, int position) const;

    // The weights, and the two tokens as a cross-attention layer (one query row, one source
    // row), without the parts the study leaves out.
    Scene scene_;
    int head_;
    bool sceneHasRotary_;
    std::vector<double> query_, key_;
    RopeParameters parameters_;
    std::vector<double> inverseFrequencies_;
};

// The positions of distances from, to (inclusive) with the earlier token at `start`.
std::vector<TokenPositions> positionsOverDistances(int from, int to, int start);

}  // namespace ae
