#include "core/model/model.h"

#include <algorithm>
#include <cmath>

#include "core/scene.h"

namespace ae::model {

const char* familyName(Family family) {
    switch (family) {
        case Family::Gpt2:
            return "gpt2";
        case Family::Bert:
            return "bert";
        case Family::Llama:
            return "llama";
        case Family::Qwen3:
            return "qwen3";
    }
    return "?";
}

const char* supportedFamilies() {
    return "gpt2, bert, llama, qwen3";
}

double Config::attentionScale(int layer) const {
    const double root = 1.0 / std::sqrt(static_cast<double>(headDim));
    if (family == Family::Gpt2) {
        // GPT2Attention: / value.size(-1) ** 0.5 if scale_attn_weights, / (layer + 1) if
        // scale_attn_by_inverse_layer_idx.
        double scale = scaleAttentionWeights ? root : 1.0;
        if (scaleByInverseLayer) scale /= static_cast<double>(layer + 1);
        return scale;
    }
    return root;  // bert: / sqrt(head size); llama, qwen3: head_dim ** -0.5
}

std::vector<std::string> weightPrefixes(Family family) {
    switch (family) {
        case Family::Gpt2:
            return {"transformer.", ""};
        case Family::Bert:
            return {"bert.", ""};
        default:
            return {"model.", ""};
    }
}

std::string prefixProbe(Family family) {
    switch (family) {
        case Family::Gpt2:
            return "wte.weight";
        case Family::Bert:
            return "embeddings.word_embeddings.weight";
        default:
            return "embed_tokens.weight";
    }
}

std::vector<TensorSpec> tensorSpecs(const Config& c, ModelWeights& w) {
    std::vector<TensorSpec> specs;
    const long long d = c.hidden, V = c.vocab, I = c.intermediate, hd = c.headDim;
    const long long H = c.heads, KV = c.kvHeads;
    auto add = [&](std::string name, std::vector<long long> shape, TensorRef* slot,
                   std::string alias = {}) {
        specs.push_back({std::move(name), std::move(alias), std::move(shape), false, slot});
    };
    w.layers.assign(static_cast<std::size_t>(c.layers), LayerWeights{});
    if (c.family == Family::Gpt2) {
        add("wte.weight", {V, d}, &w.tokenEmbedding);
        add("wpe.weight", {c.positions, d}, &w.positionEmbedding);
        for (int i = 0; i < c.layers; ++i) {
            const std::string p = "h." + std::to_string(i) + ".";
            LayerWeights& l = w.layers[static_cast<std::size_t>(i)];
            add(p + "ln_1.weight", {d}, &l.norm1);
            add(p + "ln_1.bias", {d}, &l.norm1Bias);
            add(p + "ln_2.weight", {d}, &l.norm2);
            add(p + "ln_2.bias", {d}, &l.norm2Bias);
            // pytorch_utils.Conv1D: weight [in, out], y = x·W + b
            add(p + "attn.c_attn.weight", {d, 3 * d}, &l.qkv);
            add(p + "attn.c_attn.bias", {3 * d}, &l.qkvBias);
            add(p + "attn.c_proj.weight", {d, d}, &l.output);
            add(p + "attn.c_proj.bias", {d}, &l.outputBias);
            add(p + "mlp.c_fc.weight", {d, I}, &l.up);
            add(p + "mlp.c_fc.bias", {I}, &l.upBias);
            add(p + "mlp.c_proj.weight", {I, d}, &l.down);
            add(p + "mlp.c_proj.bias", {d}, &l.downBias);
        }
        add("ln_f.weight", {d}, &w.finalNorm);
        add("ln_f.bias", {d}, &w.finalNormBias);
        if (!c.tieWordEmbeddings) {
            specs.push_back({"lm_head.weight", {}, {V, d}, true, &w.lmHead});
        }
    } else if (c.family == Family::Bert) {
        // BertFor* checkpoints (bert-base-uncased) spell LayerNorm's weight and bias gamma, beta.
        auto norm = [&](const std::string& p, TensorRef* weight, TensorRef* bias) {
            add(p + "LayerNorm.weight", {d}, weight, p + "LayerNorm.gamma");
            add(p + "LayerNorm.bias", {d}, bias, p + "LayerNorm.beta");
        };
        add("embeddings.word_embeddings.weight", {V, d}, &w.tokenEmbedding);
        add("embeddings.position_embeddings.weight", {c.positions, d}, &w.positionEmbedding);
        add("embeddings.token_type_embeddings.weight", {c.tokenTypes, d}, &w.tokenTypeEmbedding);
        norm("embeddings.", &w.embeddingNorm, &w.embeddingNormBias);
        for (int i = 0; i < c.layers; ++i) {
            const std::string p = "encoder.layer." + std::to_string(i) + ".";
            LayerWeights& l = w.layers[static_cast<std::size_t>(i)];
            auto linear = [&](const std::string& name, long long out, long long in,
                              TensorRef* weight, TensorRef* bias) {
                add(p + name + ".weight", {out, in}, weight);
                add(p + name + ".bias", {out}, bias);
            };
            linear("attention.self.query", d, d, &l.query, &l.queryBias);
            linear("attention.self.key", d, d, &l.key, &l.keyBias);
            linear("attention.self.value", d, d, &l.value, &l.valueBias);
            linear("attention.output.dense", d, d, &l.output, &l.outputBias);
            linear("intermediate.dense", I, d, &l.up, &l.upBias);
            linear("output.dense", d, I, &l.down, &l.downBias);
            norm(p + "attention.output.", &l.norm1, &l.norm1Bias);
            norm(p + "output.", &l.norm2, &l.norm2Bias);
        }
    } else {
        add("embed_tokens.weight", {V, d}, &w.tokenEmbedding);
        for (int i = 0; i < c.layers; ++i) {
            const std::string p = "layers." + std::to_string(i) + ".";
            LayerWeights& l = w.layers[static_cast<std::size_t>(i)];
            add(p + "input_layernorm.weight", {d}, &l.norm1);
            add(p + "post_attention_layernorm.weight", {d}, &l.norm2);
            auto linear = [&](const std::string& name, long long out, long long in,
                              TensorRef* weight, TensorRef* bias, bool hasBias) {
                add(p + name + ".weight", {out, in}, weight);
                if (hasBias) add(p + name + ".bias", {out}, bias);
            };
            linear("self_attn.q_proj", H * hd, d, &l.query, &l.queryBias, c.attentionBias);
            linear("self_attn.k_proj", KV * hd, d, &l.key, &l.keyBias, c.attentionBias);
            linear("self_attn.v_proj", KV * hd, d, &l.value, &l.valueBias, c.attentionBias);
            linear("self_attn.o_proj", d, H * hd, &l.output, &l.outputBias, c.attentionBias);
            linear("mlp.gate_proj", I, d, &l.gate, &l.gateBias, c.mlpBias);
            linear("mlp.up_proj", I, d, &l.up, &l.upBias, c.mlpBias);
            linear("mlp.down_proj", d, I, &l.down, &l.downBias, c.mlpBias);
            if (c.qkNorm) {
                add(p + "self_attn.q_norm.weight", {hd}, &l.queryNorm);
                add(p + "self_attn.k_norm.weight", {hd}, &l.keyNorm);
            }
        }
        add("norm.weight", {d}, &w.finalNorm);
        if (!c.tieWordEmbeddings) {
            specs.push_back({"lm_head.weight", {}, {V, d}, true, &w.lmHead});
        }
    }
    return specs;
}

void checkInputs(const Config& c, const std::vector<long long>& ids, const RunOptions& options) {
    if (ids.empty()) throw ModelError("token ids: expected at least one");
    for (std::size_t j = 0; j < ids.size(); ++j) {
        if (ids[j] < 0 || ids[j] >= c.vocab) {
            throw ModelError("token ids[" + std::to_string(j) + "]: " + std::to_string(ids[j]) +
                             " is not in [0, " + std::to_string(c.vocab) + ") (vocab_size)");
        }
    }
    const long long T = static_cast<long long>(ids.size());
    if (c.positions > 0 && options.positionOffset + T > c.positions) {
        throw ModelError("token ids: " + std::to_string(T) + " tokens exceed the model's " +
                         std::to_string(c.positions) + " learned positions (" +
                         (c.family == Family::Gpt2 ? "n_positions" : "max_position_embeddings") +
                         ")");
    }
    for (std::size_t a = 0; a < options.ablations.size(); ++a) {
        const HeadAblation& ablation = options.ablations[a];
        const std::string head =
            std::to_string(ablation.layer) + "." + std::to_string(ablation.head);
        if (ablation.layer < 0 || ablation.layer >= c.layers || ablation.head < 0 ||
            ablation.head >= c.heads) {
            throw ModelError(
                "ablation " + head + ": layer must be in 0 to " + std::to_string(c.layers - 1) +
                " and head in 0 to " + std::to_string(c.heads - 1) + " (the model has " +
                std::to_string(c.layers) + " layers of " + std::to_string(c.heads) + " heads)");
        }
        if (std::find(options.ablations.begin(), options.ablations.begin() + a, ablation) !=
            options.ablations.begin() + a) {
            throw ModelError("ablation " + head + ": listed twice");
        }
    }
    const std::vector<int>& mask = options.attentionMask;
    if (mask.empty()) return;
    if (static_cast<long long>(mask.size()) != T) {
        throw ModelError("attention mask: " + std::to_string(mask.size()) + " values for " +
                         std::to_string(T) + " tokens");
    }
    for (std::size_t j = 0; j < mask.size(); ++j) {
        if (mask[j] != 0 && mask[j] != 1) {
            throw ModelError("attention mask[" + std::to_string(j) +
                             "]: " + std::to_string(mask[j]) + " (values must be 0 or 1)");
        }
    }
    // Query i sees key j when j is not padding (and j <= i in a decoder). So bert has an empty
    // row only when every token is padding, a decoder whenever the first token is (row 0 then
    // sees nothing): in both cases position 0 is the first empty row.
    const bool firstIsPadding = mask.front() == 0;
    const bool allPadding = std::find(mask.begin(), mask.end(), 1) == mask.end();
    if (allPadding || (c.isDecoder() && firstIsPadding)) {
        std::string message =
            "attention mask: query position 0 sees no key (its softmax row would be empty)";
        if (!allPadding) {
            message +=
                ": in a decoder a token sees only itself and earlier ones, so left "
                "padding leaves the first positions nothing to attend to; pad on the right";
        }
        throw ModelError(message);
    }
}

RunMemory runMemory(const Model& model, long long tokens, int scalarSize) {
    const Config& c = model.config;
    const double T = static_cast<double>(tokens), d = c.hidden, H = c.heads, KV = c.kvHeads,
                 hd = c.headDim, V = c.vocab, I = c.intermediate, s = scalarSize;
    RunMemory m;
    m.storedWeights = model.storedBytes;
    // The largest set of weights converted at one time: a layer's, or the head's / table's.
    const DType compute = scalarSize == 8 ? DType::F64 : DType::F32;
    auto converted = [&](const TensorRef& t) {
        return t.present() && t.dtype != compute ? static_cast<double>(t.count()) * s : 0.0;
    };
    double largest = converted(model.weights.lmHead);
    for (const LayerWeights& l : model.weights.layers) {
        double layer = 0;
        for (const TensorRef* t :
             {&l.norm1,  &l.norm1Bias,  &l.norm2,     &l.norm2Bias, &l.qkv,   &l.qkvBias,
              &l.query,  &l.queryBias,  &l.key,       &l.keyBias,   &l.value, &l.valueBias,
              &l.output, &l.outputBias, &l.queryNorm, &l.keyNorm,   &l.gate,  &l.gateBias,
              &l.up,     &l.upBias,     &l.down,      &l.downBias})
            layer += converted(*t);
        largest = std::max(largest, layer);
    }
    m.convertedLayer = largest;
    const double perLayer = T * d + T * H * hd + 2 * T * KV * hd + 2 * H * T * T;
    m.keptNumbers = c.layers * perLayer + (c.isDecoder() ? T * V : T * d);
    m.kept = m.keptNumbers * s;
    // One layer's work: hidden and normed copies, fused q k v, the context, the MLP's two
    // intermediates, a scaled row per thread, and the mask (bools and two Scalar arrays).
    m.working =
        (3 * T * d + T * (H + 2 * KV) * hd + T * H * hd + 2 * T * I) * s + 2 * T * T * s + T * T;
    return m;
}

void checkRunFitsInMemory(const Model& model, double bytes, const std::string& what,
                          double available) {
    if (available < 0) available = physicalMemoryBytes();
    if (available > 0 && !(bytes <= available)) {
        throw ModelError(model.folder + ": too large: needs about " + gibibytesText(bytes) + " (" +
                         what + "), this machine has " + gibibytesText(available));
    }
}

}  // namespace ae::model
