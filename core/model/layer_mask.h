#pragma once
// Which keys each query of a model's layer sees, as a one-layer scene's Mask: the one statement of
// a model's masking that the forward, a layer's scene and the figures of every head share.

#include <vector>

#include "core/model/model.h"
#include "core/scene.h"

namespace ae::model {

// Layer `layer` of a model with configuration `c`: causal for a decoder; its sliding window W
// (key j visible to query i when i − j < W) as the scene's window W − 1, which with the causal
// part is the same set; padding where `attentionMask` (one entry per key, or empty: none) has 0.
Mask layerMask(const Config& c, int layer, const std::vector<int>& attentionMask = {});

}  // namespace ae::model
