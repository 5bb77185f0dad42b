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

// ---- Encoder–decoder models ----

// Which attention of an encoder–decoder model a layer scene holds (model_layer_scene.h's
// layerScene of either stack, or crossLayerScene).
enum class AttentionKind { EncoderSelf, DecoderSelf, Cross };

// Why a cross scene (crossLayerScene's) no longer fits the decoder stack of `decoder` on S
// decoder and T source tokens, or empty when it can flow forward.
std::string crossWhatIfShapeProblem(const Scene& scene, const Config& decoder, int decoderTokens,
                                    int sourceTokens);

// `base` (an encoder–decoder run of `model`) with layer `layer`'s attention of `kind` replaced by
// what the engine computed on its edited scene: `record` (editedLayer's: the scene's embeddings as
// hiddenIn, q, k, v, scores and weights) and `attentionOut` (after W_O and its bias). Then:
//   EncoderSelf: the encoder's later layers and output, and the whole decoder again (every
//     cross-attention reads the new output);
//   DecoderSelf: the rest of that decoder layer (its cross-attention on the encoder's output as
//     it was), the later layers and the logits;
//   Cross: the layer's cross-attention output added to the stream that entered it (the scene's
//     embeddings in a post-norm stack; in T5's pre-norm one they are the normed queries, and the
//     stream is the base run's), the rest of the layer, the later layers and the logits.
// Everything before the edit is base's, bit for bit; an unedited scene gives base back to
// rounding. `options`: base's (the encoder's padding). Throws ModelError for a layer outside the
// stack or an output of the wrong shape.
template <typename Scalar>
EncoderDecoderRun<Scalar> resumeEncoderDecoder(
    const Model& model, const EncoderDecoderRun<Scalar>& base, AttentionKind kind, int layer,
    LayerRecord<Scalar> record, const Matrix<Scalar>& attentionOut, const RunOptions& options = {});

extern template EditedLayer<float> editedLayer<float>(const Scene&, const AttentionEngine<float>&,
                                                      int, int);
extern template EditedLayer<double> editedLayer<double>(const Scene&,
                                                        const AttentionEngine<double>&, int, int);
extern template ModelRun<float> resumeWhatIf<float>(const Model&, const ModelRun<float>&,
                                                    EditedLayer<float>, const RunOptions&);
extern template EncoderDecoderRun<float> resumeEncoderDecoder<float>(
    const Model&, const EncoderDecoderRun<float>&, AttentionKind, int, LayerRecord<float>,
    const Matrix<float>&, const RunOptions&);
extern template EncoderDecoderRun<double> resumeEncoderDecoder<double>(
    const Model&, const EncoderDecoderRun<double>&, AttentionKind, int, LayerRecord<double>,
    const Matrix<double>&, const RunOptions&);
extern template ModelRun<double> resumeWhatIf<double>(const Model&, const ModelRun<double>&,
                                                      EditedLayer<double>, const RunOptions&);

}  // namespace ae::model
