#include "core/model/what_if.h"

#include <algorithm>
#include <utility>

namespace ae::model {

namespace {

std::string number(long long value) {
    return std::to_string(value);
}

// What both kinds of layer must keep of the model's: its width, its heads and their size, and
// separate projections with W_O back to the width.
std::string widthAndHeadsProblem(const Scene& scene, const Config& c) {
    if (scene.dModel() != c.hidden)
        return "d_model is " + number(scene.dModel()) + ", the model's " + number(c.hidden);
    if (scene.heads != c.heads || scene.dHead() != c.headDim)
        return "the layer has " + number(scene.heads) + " heads of " + number(scene.dHead()) +
               ", the model " + number(c.heads) + " of " + number(c.headDim);
    if (scene.projections.mode != ProjectionMode::Separate || !scene.projections.hasOutput ||
        scene.dOut() != c.hidden)
        return "the projections are no longer the model's (separate, with W_O)";
    return {};
}

}  // namespace

std::string whatIfShapeProblem(const Scene& scene, const Config& c, int tokens) {
    if (scene.hasSource) return "the layer has a source (cross-attention)";
    if (scene.queryCount() != tokens)
        return "the layer has " + number(scene.queryCount()) + " tokens, the text " +
               number(tokens);
    return widthAndHeadsProblem(scene, c);
}

std::string crossWhatIfShapeProblem(const Scene& scene, const Config& c, int decoderTokens,
                                    int sourceTokens) {
    if (!scene.hasSource) return "the layer has no source (not a cross-attention)";
    if (scene.queryCount() != decoderTokens)
        return "the layer has " + number(scene.queryCount()) +
               " target tokens, the decoder input " + number(decoderTokens);
    if (scene.keyCount() != sourceTokens)
        return "the layer has " + number(scene.keyCount()) + " source tokens, the source " +
               number(sourceTokens);
    // Cross-attention has no grouped keys: every head its own K and V.
    if (scene.keyValueHeads() != scene.heads)
        return "the layer shares K and V among " + number(scene.keyValueHeads()) +
               " groups, the model's cross-attention gives each of its " + number(c.heads) +
               " heads its own";
    return widthAndHeadsProblem(scene, c);
}

template <typename Scalar>
EditedLayer<Scalar> editedLayer(const Scene& scene, const AttentionEngine<Scalar>& engine,
                                int layer, int modelKeyValueHeads) {
    EditedLayer<Scalar> edited;
    edited.layer = layer;
    LayerRecord<Scalar>& record = edited.record;
    record.hiddenIn = scene.embeddings.template cast<Scalar>();
    record.query = engine.query();
    record.key = engine.key();
    record.value = engine.value();
    if (scene.keyValueHeads() != modelKeyValueHeads) record.keyValueHeads = scene.keyValueHeads();
    for (int h = 0; h < scene.heads; ++h) {
        record.scores.push_back(engine.scores(h));
        record.weights.push_back(engine.weights(h));
    }
    edited.attentionOut = engine.output();
    return edited;
}

template <typename Scalar>
ModelRun<Scalar> resumeWhatIf(const Model& model, const ModelRun<Scalar>& base,
                              EditedLayer<Scalar> edited, const RunOptions& options) {
    const int layer = edited.layer;
    if (layer < 0 || layer >= static_cast<int>(base.layers.size()))
        throw ModelError("resume: layer " + std::to_string(layer) + " is outside 0 to " +
                         std::to_string(static_cast<int>(base.layers.size()) - 1));
    // The base run's layers before this one; this layer's record and every later one are
    // computed below, so copying them would be wasted.
    ModelRun<Scalar> run;
    run.config = base.config;
    run.tokens = base.tokens;
    run.attentionMask = base.attentionMask;
    run.options = base.options;
    run.layers.resize(base.layers.size());
    std::copy(base.layers.begin(), base.layers.begin() + layer, run.layers.begin());
    const Matrix<Scalar> residualIn = edited.record.hiddenIn;
    run.layers[static_cast<std::size_t>(layer)] = std::move(edited.record);
    resumeAfterAttention<Scalar>(model, run, layer, residualIn, edited.attentionOut, options);
    return run;
}

template EditedLayer<float> editedLayer<float>(const Scene&, const AttentionEngine<float>&, int,
                                               int);
template EditedLayer<double> editedLayer<double>(const Scene&, const AttentionEngine<double>&, int,
                                                 int);
template ModelRun<float> resumeWhatIf<float>(const Model&, const ModelRun<float>&,
                                             EditedLayer<float>, const RunOptions&);
template ModelRun<double> resumeWhatIf<double>(const Model&, const ModelRun<double>&,
                                               EditedLayer<double>, const RunOptions&);

}  // namespace ae::model
