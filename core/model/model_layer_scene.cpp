#include "core/model/model_layer_scene.h"

#include <algorithm>
#include <cmath>

#include "core/model/layer_mask.h"

namespace ae::model {
namespace {

// A stored tensor as a double matrix of its stored shape (rows x cols; a vector is 1 x n).
MatrixD storedMatrix(const TensorRef& tensor) {
    MatrixD m(tensor.rows, tensor.cols);
    convertElements(tensor.data, tensor.dtype, 0, tensor.count(), m.data());
    return m;
}

VectorD storedVector(const TensorRef& tensor) {
    VectorD v(tensor.count());
    convertElements(tensor.data, tensor.dtype, 0, tensor.count(), v.data());
    return v;
}

// nn.Linear keeps [out, in] (y = x·Wᵀ); the scene holds X·W: in x out. Converted a block of
// stored rows at a time straight into its transposed place, on every core: a converted copy
// and then a transposing pass took seconds of the window's thread for an 8B layer.
MatrixD linearAsXW(const TensorRef& tensor) {
    MatrixD xw(tensor.cols, tensor.rows);
    constexpr long long kBlock = 64;
    const long long blocks = (tensor.rows + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static)
    for (long long b = 0; b < blocks; ++b) {
        const long long first = b * kBlock, rows = std::min(kBlock, tensor.rows - first);
        MatrixD stored(rows, tensor.cols);
        convertElements(tensor.data, tensor.dtype, first * tensor.cols, rows * tensor.cols,
                        stored.data());
        xw.middleCols(first, rows) = stored.transpose();
    }
    return xw;
}

VectorD biasOrZeros(const TensorRef& tensor, long long size) {
    return tensor.present() ? storedVector(tensor) : VectorD::Zero(size);
}

// A norm's weight as the multiplier it applies: Gemma's RMSNorm stores w and multiplies by 1 + w.
VectorD normMultiplier(const Architecture& a, const TensorRef& weight) {
    VectorD w = storedVector(weight);
    if (a.norm == NormType::RmsNormPlusOneWeight) w.array() += 1.0;
    return w;
}

// The relative-position terms on layer `layer`'s scores: MPNet's bias after the scale, DeBERTa's
// c2p + p2c before it. The run's when it kept them; otherwise (a run without this layer's maps,
// or the window's run, which lends its residual input alone) the layer computes them again from
// its input, as the pass does.
void putScoreTerms(Scene& scene, const Model& model, const ModelRun<double>& run, int layer) {
    scene.scoreTerms = {};
    const Config& c = model.config;
    const ScoreTermKind kind = c.architecture().scoreTerms;
    if (kind == ScoreTermKind::None) return;
    const LayerRecord<double>& record = run.layers[static_cast<std::size_t>(layer)];
    const bool missing = kind == ScoreTermKind::BucketBias
                             ? run.positionBias.empty()
                             : c.disentangled.any() && record.contentToPosition.empty() &&
                                   record.positionToContent.empty();
    LayerMaps<double> again;
    if (missing) {
        ModelRun<double> input;
        input.config = c;
        input.tokens = run.tokens;
        input.attentionMask = run.attentionMask;
        input.options = run.options;
        input.options.attentionMask = run.attentionMask;
        input.layers.resize(run.layers.size());
        input.layers[static_cast<std::size_t>(layer)].hiddenIn = record.hiddenIn;
        again = recomputedLayerMaps(model, input, layer);
    }
    const std::vector<MatrixD>& bias = missing ? again.positionBias : run.positionBias;
    scene.scoreTerms.afterScale.assign(bias.begin(), bias.end());
    const std::vector<MatrixD>& c2p = missing ? again.contentToPosition : record.contentToPosition;
    const std::vector<MatrixD>& p2c = missing ? again.positionToContent : record.positionToContent;
    std::vector<MatrixD>& before = scene.scoreTerms.beforeScale;
    before.assign(c2p.empty() ? p2c.begin() : c2p.begin(), c2p.empty() ? p2c.end() : c2p.end());
    if (!c2p.empty() && !p2c.empty())
        for (std::size_t h = 0; h < before.size(); ++h)
            before[h] += p2c[h];
}

}  // namespace

Scene layerScene(const Model& model, const ModelRun<double>& run, int layer,
                 const std::vector<std::string>& tokens) {
    const Config& c = model.config;
    if (layer < 0 || layer >= c.layers) {
        throw ModelError("--layer: expected 0 to " + std::to_string(c.layers - 1) + ", got " +
                         std::to_string(layer));
    }
    const LayerWeights& w = model.weights.layers[static_cast<std::size_t>(layer)];
    const long long d = c.hidden, width = static_cast<long long>(c.heads) * c.headDim,
                    kvWidth = static_cast<long long>(c.kvHeads) * c.headDim;
    Scene scene;
    scene.title = std::string(familyName(c.family)) + " layer " + std::to_string(layer);
    scene.tokens = tokens;
    scene.embeddings = run.layers[static_cast<std::size_t>(layer)].hiddenIn;
    scene.heads = c.heads;
    if (c.kvHeads != c.heads) scene.kvHeads = c.kvHeads;

    Projections& p = scene.projections;
    p.mode = ProjectionMode::Separate;
    const Architecture& a = c.architecture();
    // A scene's projections are X·W: a weight stored [out, in] (nn.Linear) is transposed.
    const auto asXW = [&a](const TensorRef& t) {
        return a.layout == WeightLayout::Conv1D ? storedMatrix(t) : linearAsXW(t);
    };
    if (a.qkv == QkvStorage::Fused) {
        // One [Q | K | V] product (GPT-2's c_attn, Phi-3's qkv_proj): Q, K, V side by side.
        const MatrixD qkv = asXW(w.qkv);
        const VectorD bias = biasOrZeros(w.qkvBias, width + 2 * kvWidth);
        p.query = qkv.leftCols(width);
        p.key = qkv.middleCols(width, kvWidth);
        p.value = qkv.rightCols(kvWidth);
        p.queryBias = bias.segment(0, width);
        p.keyBias = bias.segment(width, kvWidth);
        p.valueBias = bias.segment(width + kvWidth, kvWidth);
    } else if (a.qkv == QkvStorage::FusedInterleaved) {
        // GPT-NeoX's query_key_value: each head's [q | k | v] in turn.
        const MatrixD qkv = asXW(w.qkv);
        const VectorD bias = biasOrZeros(w.qkvBias, 3 * width);
        const long long hd = c.headDim;
        p.query.resize(d, width);
        p.key.resize(d, width);
        p.value.resize(d, width);
        p.queryBias.resize(width);
        p.keyBias.resize(width);
        p.valueBias.resize(width);
        for (long long h = 0; h < c.heads; ++h) {
            const long long from = 3 * hd * h;
            p.query.middleCols(h * hd, hd) = qkv.middleCols(from, hd);
            p.key.middleCols(h * hd, hd) = qkv.middleCols(from + hd, hd);
            p.value.middleCols(h * hd, hd) = qkv.middleCols(from + 2 * hd, hd);
            p.queryBias.segment(h * hd, hd) = bias.segment(from, hd);
            p.keyBias.segment(h * hd, hd) = bias.segment(from + hd, hd);
            p.valueBias.segment(h * hd, hd) = bias.segment(from + 2 * hd, hd);
        }
    } else {
        p.query = asXW(w.query);
        p.key = asXW(w.key);
        p.value = asXW(w.value);
        p.queryBias = biasOrZeros(w.queryBias, width);
        p.keyBias = biasOrZeros(w.keyBias, kvWidth);
        p.valueBias = biasOrZeros(w.valueBias, kvWidth);
    }
    p.output = asXW(w.output);
    p.outputBias = biasOrZeros(w.outputBias, d);
    p.hasOutput = true;

    // The scene is the attention sub-block: its pre-norm when a norm comes before it (with
    // post-norms, as BERT's and OLMo 2's, the block reads the stream itself). A norm after the
    // block (Gemma 2's, OLMo 2's) belongs to the rest of the layer.
    // ModernBERT's layer 0 has none.
    if ((a.placement == NormPlacement::Pre || a.placement == NormPlacement::Sandwich ||
         a.placement == NormPlacement::Parallel) &&
        (layer > 0 || a.firstLayerAttentionNorm)) {
        const bool rms = a.norm == NormType::RmsNorm || a.norm == NormType::RmsNormPlusOneWeight;
        scene.norm.enabled = true;
        scene.norm.kind = rms ? NormKind::Rms : NormKind::Layer;
        scene.norm.weight = normMultiplier(a, w.norm1);
        scene.norm.bias =
            a.norm == NormType::LayerNorm ? storedVector(w.norm1Bias) : VectorD::Zero(d);
        scene.norm.eps = c.normEps;
    }
    const long long positionsEnd =
        run.options.positionOffset + static_cast<long long>(run.tokens.size());
    if (a.positions == PositionKind::Rotary) scene.rotary = c.layerRope(layer, positionsEnd);
    if (a.qkNorm != QkNormKind::None) {
        scene.qkNorm.enabled = true;
        scene.qkNorm.fullWidth = a.qkNorm == QkNormKind::FullWidth;
        scene.qkNorm.queryWeight = normMultiplier(a, w.queryNorm);
        scene.qkNorm.keyWeight = normMultiplier(a, w.keyNorm);
        scene.qkNorm.eps = c.normEps;
    }
    if (c.attentionSoftCap > 0) scene.softCap = c.attentionSoftCap;
    scene.scale.kind = ScaleKind::Divisor;
    scene.scale.divisor = 1.0 / c.attentionScale(layer);
    scene.mask = layerMask(c, layer, run.attentionMask);
    scene.maskFill = layerMaskFill(c);
    putScoreTerms(scene, model, run, layer);
    return scene;
}

Scene crossLayerScene(const Model& decoder, const ModelRun<double>& run,
                      const ModelRun<double>& encoder, int layer,
                      const std::vector<std::string>& targetTokens,
                      const std::vector<std::string>& sourceTokens) {
    const Config& c = decoder.config;
    if (!c.hasCrossAttention())
        throw ModelError(std::string(familyName(c.family)) +
                         ": this stack has no cross-attention (the decoder's has)");
    if (layer < 0 || layer >= c.layers) {
        throw ModelError("--layer: expected 0 to " + std::to_string(c.layers - 1) + ", got " +
                         std::to_string(layer));
    }
    const LayerRecord<double>& record = run.layers[static_cast<std::size_t>(layer)];
    if (record.cross.empty())
        throw ModelError("cross-attention of layer " + std::to_string(layer) +
                         ": the run holds none (not an encoder-decoder run)");
    const LayerWeights& w = decoder.weights.layers[static_cast<std::size_t>(layer)];
    const long long d = c.hidden, width = static_cast<long long>(c.heads) * c.headDim;
    Scene scene;
    scene.title = std::string(familyName(c.family)) + " decoder layer " + std::to_string(layer) +
                  " cross-attention";
    scene.tokens = targetTokens;
    scene.embeddings = record.cross.queryInput;
    scene.hasSource = true;
    scene.sourceTokens = sourceTokens;
    scene.sourceEmbeddings = encoder.lastHidden;
    scene.heads = c.heads;
    Projections& p = scene.projections;
    p.mode = ProjectionMode::Separate;
    p.query = linearAsXW(w.crossQuery);
    p.key = linearAsXW(w.crossKey);
    p.value = linearAsXW(w.crossValue);
    p.queryBias = biasOrZeros(w.crossQueryBias, width);
    p.keyBias = biasOrZeros(w.crossKeyBias, width);
    p.valueBias = biasOrZeros(w.crossValueBias, width);
    p.output = linearAsXW(w.crossOutput);
    p.outputBias = biasOrZeros(w.crossOutputBias, d);
    p.hasOutput = true;
    scene.scale.kind = ScaleKind::Divisor;
    scene.scale.divisor = 1.0 / c.attentionScale(layer);
    for (int attended : encoder.attentionMask)
        scene.mask.padding.push_back(attended == 0);
    return scene;
}

void putLayerInput(Scene& scene, const Model& model, const ModelRun<double>& run, int layer,
                   const std::vector<std::string>& tokens) {
    // Longrope's factors depend on the text's length: a scene given another input takes the set
    // that input picks (any other rotary setting stays as the scene has it).
    if (scene.rotary && scene.rotary->scaling == RopeScaling::LongRope) {
        const long long positionsEnd =
            run.options.positionOffset + static_cast<long long>(run.tokens.size());
        const std::optional<ops::RopeParameters> rope = run.config.layerRope(layer, positionsEnd);
        if (rope && rope->scaling == RopeScaling::LongRope)
            scene.rotary->longRopeFactors = rope->longRopeFactors;
    }
    scene.tokens = tokens;
    scene.embeddings = run.layers[static_cast<std::size_t>(layer)].hiddenIn;
    const Mask mask = layerMask(run.config, layer, run.attentionMask);
    scene.mask.padding = mask.padding;
    scene.mask.allowed = mask.allowed;
    putScoreTerms(scene, model, run, layer);
}

}  // namespace ae::model
