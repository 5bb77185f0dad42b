#pragma once
// A what-if on a model's weights as a model of its own: the explorer edits layer l's scene
// (core/model/model_layer_scene.h), and the analyses that run the model on other texts (the
// workbench's corrupted prompt, a lens on any text) need the edited model, not one edited run.
// An edit to the weights the scene holds (W_Q, W_K, W_V, W_O, their biases, the pre-norm, the
// q/k norm) is written back into the model in its family's layout; an edit to what belongs to the
// text (its residual stream, the mask) or to what the model does not store as a weight (the
// scale, the soft-cap) is named instead, and the model stays without it.
//
// Shapes: d = config.hidden, hd = config.headDim; the scene's projections are X·W (in x out).

#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/scene.h"

namespace ae::model {

// What `scene`, made by layerScene for a layer of a model of `config` (`pristine`, as made) and
// then edited, changed that the model's weights cannot hold, as a phrase ("this text's residual
// stream", "the scale", "the norm's bias, which the model's RMSNorm does not have"); empty when
// every change is to the weights withLayerWeights writes or switches heads off by zeros. The
// first such change found is named.
std::string editOutsideWeights(const Scene& scene, const Scene& pristine, const Config& config);

// The weights `scene` changed from `pristine`, as the explorer names them, in pipeline order:
// "the norm", "W_Q", "b_Q", "W_K", "b_K", "W_V", "b_V", "the q/k norm", "W_O", "b_O".
std::vector<std::string> editedWeightNames(const Scene& scene, const Scene& pristine);

// `model` with layer `layer`'s attention weights taken from `scene`, an edit of `pristine` (both
// layerScenes of that layer) that editOutsideWeights accepts: each stored tensor holding a changed
// weight is replaced by an F64 tensor in the family's layout and name (fused q/k/v as one tensor,
// nn.Linear's [out, in] transposed back, Gemma's norms stored as w for the multiplier 1 + w); a
// bias the family does not store is added. Every other tensor is the model's own: the copy reads
// the same mapped file, which must outlive it. Throws ModelError for an edit editOutsideWeights
// refuses.
Model withLayerWeights(const Model& model, int layer, const Scene& scene, const Scene& pristine);

}  // namespace ae::model
