#include "core/model/model_layer_scene.h"

#include <cmath>

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

// nn.Linear keeps [out, in] (y = x·Wᵀ); the scene holds X·W: in x out.
MatrixD linearAsXW(const TensorRef& tensor) {
    return storedMatrix(tensor).transpose();
}

VectorD biasOrZeros(const TensorRef& tensor, long long size) {
    return tensor.present() ? storedVector(tensor) : VectorD::Zero(size);
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
    putLayerInput(scene, run, layer, tokens);
    scene.heads = c.heads;
    if (c.kvHeads != c.heads) scene.kvHeads = c.kvHeads;

    Projections& p = scene.projections;
    p.mode = ProjectionMode::Separate;
    if (c.family == Family::Gpt2) {
        // Conv1D c_attn [d, 3d] in X·W already: Q, K, V side by side.
        const MatrixD qkv = storedMatrix(w.qkv);
        const VectorD bias = biasOrZeros(w.qkvBias, 3 * d);
        p.query = qkv.leftCols(d);
        p.key = qkv.middleCols(d, d);
        p.value = qkv.rightCols(d);
        p.queryBias = bias.segment(0, d);
        p.keyBias = bias.segment(d, d);
        p.valueBias = bias.segment(2 * d, d);
        p.output = storedMatrix(w.output);
        p.outputBias = biasOrZeros(w.outputBias, d);
    } else {
        p.query = linearAsXW(w.query);
        p.key = linearAsXW(w.key);
        p.value = linearAsXW(w.value);
        p.queryBias = biasOrZeros(w.queryBias, width);
        p.keyBias = biasOrZeros(w.keyBias, kvWidth);
        p.valueBias = biasOrZeros(w.valueBias, kvWidth);
        p.output = linearAsXW(w.output);
        p.outputBias = biasOrZeros(w.outputBias, d);
    }
    p.hasOutput = true;

    if (c.family == Family::Gpt2) {
        scene.norm.enabled = true;
        scene.norm.kind = NormKind::Layer;
        scene.norm.weight = storedVector(w.norm1);
        scene.norm.bias = storedVector(w.norm1Bias);
        scene.norm.eps = c.normEps;
    } else if (c.rotary()) {
        scene.norm.enabled = true;
        scene.norm.kind = NormKind::Rms;
        scene.norm.weight = storedVector(w.norm1);
        scene.norm.bias = VectorD::Zero(d);
        scene.norm.eps = c.normEps;
        scene.rotary = c.rope;
    }
    if (c.qkNorm) {
        scene.qkNorm.enabled = true;
        scene.qkNorm.queryWeight = storedVector(w.queryNorm);
        scene.qkNorm.keyWeight = storedVector(w.keyNorm);
        scene.qkNorm.eps = c.normEps;
    }
    scene.scale.kind = ScaleKind::Divisor;
    scene.scale.divisor = 1.0 / c.attentionScale(layer);
    scene.mask.causal = c.isDecoder();
    return scene;
}

void putLayerInput(Scene& scene, const ModelRun<double>& run, int layer,
                   const std::vector<std::string>& tokens) {
    scene.tokens = tokens;
    scene.embeddings = run.layers[static_cast<std::size_t>(layer)].hiddenIn;
    scene.mask.padding.clear();
    if (!run.attentionMask.empty()) {
        scene.mask.padding.resize(run.attentionMask.size());
        for (std::size_t j = 0; j < run.attentionMask.size(); ++j)
            scene.mask.padding[j] = run.attentionMask[j] == 0;
    }
}

}  // namespace ae::model
