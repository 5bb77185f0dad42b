#pragma once
// One layer of a whole model as a scene (format version 2): its attention sub-block with the
// layer's residual input as the embeddings, so the one-layer engine, the maps and the editors
// work on a real model's layer. `attention-explorer scene` writes it; the engine then reproduces
// that layer's q, k, v, scores and weights (tests/core/model/test_model_layer_scene.cpp).

#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/scene.h"

namespace ae::model {

// Layer `layer` (from 0) of `model`, as `run` (a double run of the same model) saw it: the
// embeddings are run.layers[layer].hiddenIn (T x d); the pre-norm (gpt2 LayerNorm, llama/qwen3
// RMSNorm; bert's norms come after attention, so none), Q, K and V in X·W orientation (d x
// heads·hd, d x kvHeads·hd) with their biases, the output projection (heads·hd x d), kv heads,
// Qwen3's q/k norm, the rotary parameters, the scale as a divisor (1 / attentionScale), the
// score terms (MPNet's position bias after the scale) and the mask (causal for decoders; padding
// from the run's attention mask). `tokens`: one label a token.
Scene layerScene(const Model& model, const ModelRun<double>& run, int layer,
                 const std::vector<std::string>& tokens);

// Layer `layer`'s cross-attention in an encoder–decoder model, as a cross scene: `decoder` is
// the decoder stack (model.decoder), `run` its run in an EncoderDecoderRun of double; the
// queries' embeddings are what the layer projects them from (the decoder's stream after the
// self-attention, normed by the cross-attention's norm in T5's pre-norm stack; the scene has no
// norm of its own, since the source is not normed), the source embeddings are the encoder's
// output (encoder.lastHidden), keys and values come from them, the encoder's padding is the
// mask, and there are no position terms. `targetTokens`, `sourceTokens`: one label a token.
Scene crossLayerScene(const Model& decoder, const ModelRun<double>& run,
                      const ModelRun<double>& encoder, int layer,
                      const std::vector<std::string>& targetTokens,
                      const std::vector<std::string>& sourceTokens);

// Puts `run`'s input to layer `layer` into `scene`, a layerScene of the same model and layer made
// for another run: the tokens, the embeddings, the padding and the score terms, the only parts that
// depend on the run. Converting the weights again (from the file's type, transposed for nn.Linear)
// is most of layerScene's cost; a copy of a scene that has them is several times cheaper.
void putLayerInput(Scene& scene, const Model& model, const ModelRun<double>& run, int layer,
                   const std::vector<std::string>& tokens);

}  // namespace ae::model
