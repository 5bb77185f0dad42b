#pragma once
// A what-if flowing forward: one layer of a model, edited in the explorer and recomputed there by
// the one-layer engine on its scene (core/model/model_layer_scene.h), put in place of the model's
// own layer, and every later layer run again on what it now gives (resumeAfterAttention). The
// model session (document/model_session.h) does this on a worker thread after each edit of a
// model's layer; this is its arithmetic, without the threads.
//
// Shapes: T tokens, d = config.hidden, hd = config.headDim.

#include <string>

#include "core/attention_engine.h"
#include "core/model/model.h"
#include "core/scene.h"

namespace ae::model {

// One layer of a model as the explorer's engine computed it on the layer's scene.
template <typename Scalar>
struct EditedLayer {
    int layer = 0;
    // hiddenIn: the scene's embeddings (T x d), the residual stream entering the layer as edited;
    // query, key, value, per-head scores and weights: the engine's; keyValueHeads: the scene's
    // when they are not the model's (its K and V grouped its own way), else 0.
    LayerRecord<Scalar> record;
    Matrix<Scalar> attentionOut;  // T x d: the engine's output, after W_O and its bias
};

// Why the layer scene `scene` no longer fits a model of `config` run on `tokens` tokens, so that
// it cannot flow forward ("the layer has 5 tokens, the text 7"), or empty when it can. Another
// number of kv heads fits: the layer's record keeps its own grouping, and later layers only read
// its output.
std::string whatIfShapeProblem(const Scene& scene, const Config& config, int tokens);

// The engine's results on `scene`, copied into an EditedLayer for layer `layer` of a model with
// `modelKeyValueHeads` kv heads: the resume may then run on another thread than the engine's.
// `engine` has computed `scene` (no error), which whatIfShapeProblem accepts.
template <typename Scalar>
EditedLayer<Scalar> editedLayer(const Scene& scene, const AttentionEngine<Scalar>& engine,
                                int layer, int modelKeyValueHeads);

// `base` (a run of `model`, not itself a what-if) with `edited` in place of its layer: the layers
// before it are base's, bit for bit; it is finished and every later layer, and the logits or last
// hidden state, computed again with `options` (base's attention mask; which logits to keep). The
// result is marked whatIf. Throws ModelError as resumeAfterAttention does.
template <typename Scalar>
ModelRun<Scalar> resumeWhatIf(const Model& model, const ModelRun<Scalar>& base,
                              EditedLayer<Scalar> edited, const RunOptions& options);

extern template EditedLayer<float> editedLayer<float>(const Scene&, const AttentionEngine<float>&,
                                                      int, int);
extern template EditedLayer<double> editedLayer<double>(const Scene&,
                                                        const AttentionEngine<double>&, int, int);
extern template ModelRun<float> resumeWhatIf<float>(const Model&, const ModelRun<float>&,
                                                    EditedLayer<float>, const RunOptions&);
extern template ModelRun<double> resumeWhatIf<double>(const Model&, const ModelRun<double>&,
                                                      EditedLayer<double>, const RunOptions&);

}  // namespace ae::model
