#include "core/model/edited_model.h"

#include <cmath>
#include <memory>

#include "core/scene_compare.h"

namespace ae::model {
namespace {

const char* normName(NormType norm) {
    switch (norm) {
        case NormType::LayerNorm:
            return "LayerNorm";
        case NormType::LayerNormNoBias:
            return "LayerNorm without bias";
        case NormType::RmsNorm:
        case NormType::RmsNormPlusOneWeight:
            return "RMSNorm";
    }
    return "norm";
}

// The tensors the copy owns, in the family's stored layout.
class TensorWriter {
public:
    explicit TensorWriter(Model& model) : model_(model) {}

    // `values` (rows x cols, row-major) stored under `like`'s name, or `name` when the family
    // stores no such tensor.
    TensorRef add(const TensorRef& like, const std::string& name, const MatrixD& values) {
        auto owned =
            std::make_shared<std::vector<double>>(values.data(), values.data() + values.size());
        TensorRef t;
        t.name = like.present() ? like.name : name;
        t.file = "(edited in the explorer)";
        t.dtype = DType::F64;
        t.rows = values.rows();
        t.cols = values.cols();
        t.data = reinterpret_cast<const unsigned char*>(owned->data());
        model_.editedTensors.push_back(std::move(owned));
        return t;
    }
    // An X·W matrix (in x out) in the family's layout: as it is for Conv1D, [out, in] for
    // nn.Linear.
    TensorRef addXW(const TensorRef& like, const std::string& name, const MatrixD& xw) {
        if (model_.config.architecture().layout == WeightLayout::Conv1D) return add(like, name, xw);
        return add(like, name, MatrixD(xw.transpose()));
    }
    TensorRef addVector(const TensorRef& like, const std::string& name, const VectorD& v) {
        return add(like, name, MatrixD(v.transpose()));
    }

private:
    Model& model_;
};

}  // namespace

std::string editOutsideWeights(const Scene& scene, const Scene& pristine, const Config& config) {
    const Architecture& a = config.architecture();
    if (!sameMatrix(scene.embeddings, pristine.embeddings) || scene.hasSource != pristine.hasSource)
        return "this text's residual stream entering the layer";
    if (!sameMask(scene.mask, pristine.mask) ||
        !(scene.maskFill == pristine.maskFill ||
          (std::isnan(scene.maskFill) && std::isnan(pristine.maskFill))))
        return "the mask";
    if (scene.scale.kind != pristine.scale.kind || scene.scale.divisor != pristine.scale.divisor)
        return "the scale";
    if (scene.softCap != pristine.softCap) return "the soft-cap";
    if (!(scene.rotary == pristine.rotary) || scene.positional.kind != pristine.positional.kind)
        return "the positions";
    if (scene.heads != pristine.heads || scene.kvHeads != pristine.kvHeads)
        return "the number of heads";
    if (!(scene.scoreTerms == pristine.scoreTerms)) return "the position terms on the scores";
    if (scene.ablation.byMean && !scene.ablation.heads.empty())
        return "heads switched off by their mean over this text";
    const Projections &p = scene.projections, &q = pristine.projections;
    if (p.mode != q.mode || p.hasOutput != q.hasOutput) return "the kind of projections";
    if (scene.norm.enabled != pristine.norm.enabled || scene.norm.kind != pristine.norm.kind ||
        scene.norm.eps != pristine.norm.eps)
        return "the kind of norm";
    if (a.norm != NormType::LayerNorm && !sameMatrix(scene.norm.bias, pristine.norm.bias))
        return std::string("the norm's bias, which the model's ") + normName(a.norm) +
               " does not have";
    if (scene.qkNorm.enabled != pristine.qkNorm.enabled ||
        scene.qkNorm.fullWidth != pristine.qkNorm.fullWidth ||
        scene.qkNorm.eps != pristine.qkNorm.eps)
        return "the kind of q/k norm";
    // DeBERTa's c2p and p2c read the layer's content query and key: the scene holds those terms
    // as numbers, so an edit there would differ between the layer and the model.
    if (a.scoreTerms == ScoreTermKind::Disentangled && config.disentangled.any() &&
        (!sameMatrix(p.query, q.query) || !sameMatrix(p.key, q.key) ||
         !sameMatrix(p.queryBias, q.queryBias) || !sameMatrix(p.keyBias, q.keyBias)))
        return "W_Q or W_K, which this model's relative-position terms also read";
    return {};
}

std::vector<std::string> editedWeightNames(const Scene& scene, const Scene& pristine) {
    const Projections &p = scene.projections, &q = pristine.projections;
    std::vector<std::string> names;
    const auto note = [&names](bool changed, const char* name) {
        if (changed) names.emplace_back(name);
    };
    note(!sameMatrix(scene.norm.weight, pristine.norm.weight) ||
             !sameMatrix(scene.norm.bias, pristine.norm.bias),
         "the norm");
    note(!sameMatrix(p.query, q.query), "W_Q");
    note(!sameMatrix(p.queryBias, q.queryBias), "b_Q");
    note(!sameMatrix(p.key, q.key), "W_K");
    note(!sameMatrix(p.keyBias, q.keyBias), "b_K");
    note(!sameMatrix(p.value, q.value), "W_V");
    note(!sameMatrix(p.valueBias, q.valueBias), "b_V");
    note(!sameMatrix(scene.qkNorm.queryWeight, pristine.qkNorm.queryWeight) ||
             !sameMatrix(scene.qkNorm.keyWeight, pristine.qkNorm.keyWeight),
         "the q/k norm");
    note(!sameMatrix(p.output, q.output), "W_O");
    note(!sameMatrix(p.outputBias, q.outputBias), "b_O");
    return names;
}

Model withLayerWeights(const Model& model, int layer, const Scene& scene, const Scene& pristine) {
    const Config& c = model.config;
    if (layer < 0 || layer >= c.layers)
        throw ModelError("layer " + std::to_string(layer) + " is not in the model");
    const std::string outside = editOutsideWeights(scene, pristine, c);
    if (!outside.empty())
        throw ModelError("the edit of layer " + std::to_string(layer) + " changes " + outside +
                         ", which the model's weights do not hold");
    Model edited = model;
    LayerWeights& w = edited.weights.layers[static_cast<std::size_t>(layer)];
    const Architecture& a = c.architecture();
    TensorWriter writer(edited);
    const std::string prefix = "layer " + std::to_string(layer) + " ";
    const Projections &p = scene.projections, &q = pristine.projections;
    const long long hd = c.headDim, width = static_cast<long long>(c.heads) * hd,
                    kvWidth = static_cast<long long>(c.kvHeads) * hd;

    const bool weightsChanged =
        !sameMatrix(p.query, q.query) || !sameMatrix(p.key, q.key) || !sameMatrix(p.value, q.value);
    const bool biasesChanged = !sameMatrix(p.queryBias, q.queryBias) ||
                               !sameMatrix(p.keyBias, q.keyBias) ||
                               !sameMatrix(p.valueBias, q.valueBias);
    if (a.qkv == QkvStorage::Fused) {
        // One [Q | K | V] product (GPT-2's c_attn, Phi-3's qkv_proj).
        if (weightsChanged) {
            MatrixD qkv(c.hidden, width + 2 * kvWidth);
            qkv << p.query, p.key, p.value;
            w.qkv = writer.addXW(w.qkv, prefix + "qkv", qkv);
        }
        if (biasesChanged) {
            VectorD bias(width + 2 * kvWidth);
            bias << p.queryBias, p.keyBias, p.valueBias;
            w.qkvBias = writer.addVector(w.qkvBias, prefix + "qkv bias", bias);
        }
    } else if (a.qkv == QkvStorage::FusedInterleaved) {
        // GPT-NeoX's query_key_value: each head's [q | k | v] in turn.
        if (weightsChanged) {
            MatrixD qkv(c.hidden, 3 * width);
            for (long long h = 0; h < c.heads; ++h) {
                qkv.middleCols(3 * hd * h, hd) = p.query.middleCols(h * hd, hd);
                qkv.middleCols(3 * hd * h + hd, hd) = p.key.middleCols(h * hd, hd);
                qkv.middleCols(3 * hd * h + 2 * hd, hd) = p.value.middleCols(h * hd, hd);
            }
            w.qkv = writer.addXW(w.qkv, prefix + "query_key_value", qkv);
        }
        if (biasesChanged) {
            VectorD bias(3 * width);
            for (long long h = 0; h < c.heads; ++h) {
                bias.segment(3 * hd * h, hd) = p.queryBias.segment(h * hd, hd);
                bias.segment(3 * hd * h + hd, hd) = p.keyBias.segment(h * hd, hd);
                bias.segment(3 * hd * h + 2 * hd, hd) = p.valueBias.segment(h * hd, hd);
            }
            w.qkvBias = writer.addVector(w.qkvBias, prefix + "query_key_value bias", bias);
        }
    } else {
        if (!sameMatrix(p.query, q.query)) w.query = writer.addXW(w.query, prefix + "W_Q", p.query);
        if (!sameMatrix(p.key, q.key)) w.key = writer.addXW(w.key, prefix + "W_K", p.key);
        if (!sameMatrix(p.value, q.value)) w.value = writer.addXW(w.value, prefix + "W_V", p.value);
        if (!sameMatrix(p.queryBias, q.queryBias))
            w.queryBias = writer.addVector(w.queryBias, prefix + "b_Q", p.queryBias);
        if (!sameMatrix(p.keyBias, q.keyBias))
            w.keyBias = writer.addVector(w.keyBias, prefix + "b_K", p.keyBias);
        if (!sameMatrix(p.valueBias, q.valueBias))
            w.valueBias = writer.addVector(w.valueBias, prefix + "b_V", p.valueBias);
    }
    if (!sameMatrix(p.output, q.output))
        w.output = writer.addXW(w.output, prefix + "W_O", p.output);
    if (!sameMatrix(p.outputBias, q.outputBias))
        w.outputBias = writer.addVector(w.outputBias, prefix + "b_O", p.outputBias);

    // The scene holds a norm's multiplier; Gemma stores w for the multiplier 1 + w.
    const auto stored = [&a](const VectorD& multiplier) {
        return a.norm == NormType::RmsNormPlusOneWeight ? VectorD(multiplier.array() - 1.0)
                                                        : multiplier;
    };
    if (!sameMatrix(scene.norm.weight, pristine.norm.weight))
        w.norm1 = writer.addVector(w.norm1, prefix + "norm", stored(scene.norm.weight));
    if (!sameMatrix(scene.norm.bias, pristine.norm.bias))
        w.norm1Bias = writer.addVector(w.norm1Bias, prefix + "norm bias", scene.norm.bias);
    if (!sameMatrix(scene.qkNorm.queryWeight, pristine.qkNorm.queryWeight))
        w.queryNorm =
            writer.addVector(w.queryNorm, prefix + "q_norm", stored(scene.qkNorm.queryWeight));
    if (!sameMatrix(scene.qkNorm.keyWeight, pristine.qkNorm.keyWeight))
        w.keyNorm = writer.addVector(w.keyNorm, prefix + "k_norm", stored(scene.qkNorm.keyWeight));
    return edited;
}

}  // namespace ae::model
