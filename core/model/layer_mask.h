#pragma once
// Which keys each query of a model's layer sees, as a one-layer scene's Mask: the one statement of
// a model's masking that the forward, a layer's scene and the figures of every head share.

#include <vector>

#include "core/model/model.h"
#include "core/scene.h"

namespace ae::model {

// Layer `layer` of a model with configuration `c`: causal for a decoder; its sliding window W
// (key j visible to query i when i − j < W; |i − j| < W in an encoder) as the scene's window
// W − 1, which with the causal part is the same set; padding where `attentionMask` (one entry per
// key, or empty: none) has 0. With DeBERTa's padding a padding query sees no key either (the
// rows of `allowed`), and the fill below makes its weights uniform.
Mask layerMask(const Config& c, int layer, const std::vector<int>& attentionMask = {});

// What stands in for a hidden score: −∞ (a row with no visible key gets zeros), or with
// DeBERTa's padding the lowest float, as its masked_fill of finfo.min: a padding query's row is
// then all alike, its softmax uniform over every key, while a row that sees a key gives every
// hidden one exactly 0.
double layerMaskFill(const Config& c);

}  // namespace ae::model
