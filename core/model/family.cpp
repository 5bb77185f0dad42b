#include "core/model/family.h"

#include <algorithm>

#include "core/model/model.h"

namespace ae::model {
namespace {

// The tensors of one config, in the order they are listed: a name after the prefix, its shape,
// the slot it fills, and an older spelling it may have instead.
class TensorList {
public:
    TensorList(const Config& c, ModelWeights& w) : w_(w) {
        w.layers.assign(static_cast<std::size_t>(c.layers), LayerWeights{});
    }
    void add(std::string name, std::vector<long long> shape, TensorRef* slot,
             std::string alias = {}) {
        specs_.push_back({std::move(name), std::move(alias), std::move(shape), false, slot});
    }
    // nn.Linear's weight [out, in] and, when the model has it, its bias [out].
    void linear(const std::string& name, long long out, long long in, TensorRef* weight,
                TensorRef* bias, bool hasBias = true) {
        add(name + ".weight", {out, in}, weight);
        if (hasBias) add(name + ".bias", {out}, bias);
    }
    // A decoder's LM head when it is not tied to the token table: never prefixed.
    void languageModelHead(const Config& c) {
        if (!c.tieWordEmbeddings) {
            specs_.push_back({"lm_head.weight", {}, {c.vocab, c.hidden}, true, &w_.lmHead});
        }
    }
    LayerWeights& layer(int i) { return w_.layers[static_cast<std::size_t>(i)]; }
    std::vector<TensorSpec> take() { return std::move(specs_); }

private:
    ModelWeights& w_;
    std::vector<TensorSpec> specs_;
};

// GPT2LMHeadModel (transformer.*); its Conv1D weights are [in, out].
std::vector<TensorSpec> gpt2Names(const Config& c, ModelWeights& w) {
    TensorList list(c, w);
    const long long d = c.hidden, I = c.intermediate;
    list.add("wte.weight", {c.vocab, d}, &w.tokenEmbedding);
    list.add("wpe.weight", {c.positions, d}, &w.positionEmbedding);
    for (int i = 0; i < c.layers; ++i) {
        const std::string p = "h." + std::to_string(i) + ".";
        LayerWeights& l = list.layer(i);
        list.add(p + "ln_1.weight", {d}, &l.norm1);
        list.add(p + "ln_1.bias", {d}, &l.norm1Bias);
        list.add(p + "ln_2.weight", {d}, &l.norm2);
        list.add(p + "ln_2.bias", {d}, &l.norm2Bias);
        list.add(p + "attn.c_attn.weight", {d, 3 * d}, &l.qkv);
        list.add(p + "attn.c_attn.bias", {3 * d}, &l.qkvBias);
        list.add(p + "attn.c_proj.weight", {d, d}, &l.output);
        list.add(p + "attn.c_proj.bias", {d}, &l.outputBias);
        list.add(p + "mlp.c_fc.weight", {d, I}, &l.up);
        list.add(p + "mlp.c_fc.bias", {I}, &l.upBias);
        list.add(p + "mlp.c_proj.weight", {I, d}, &l.down);
        list.add(p + "mlp.c_proj.bias", {d}, &l.downBias);
    }
    list.add("ln_f.weight", {d}, &w.finalNorm);
    list.add("ln_f.bias", {d}, &w.finalNormBias);
    list.languageModelHead(c);
    return list.take();
}

// BertModel (bert.*). BertFor* checkpoints (bert-base-uncased) spell LayerNorm's weight and bias
// gamma and beta.
std::vector<TensorSpec> bertNames(const Config& c, ModelWeights& w) {
    TensorList list(c, w);
    const long long d = c.hidden, I = c.intermediate;
    auto norm = [&](const std::string& p, TensorRef* weight, TensorRef* bias) {
        list.add(p + "LayerNorm.weight", {d}, weight, p + "LayerNorm.gamma");
        list.add(p + "LayerNorm.bias", {d}, bias, p + "LayerNorm.beta");
    };
    list.add("embeddings.word_embeddings.weight", {c.vocab, d}, &w.tokenEmbedding);
    list.add("embeddings.position_embeddings.weight", {c.positions, d}, &w.positionEmbedding);
    list.add("embeddings.token_type_embeddings.weight", {c.tokenTypes, d}, &w.tokenTypeEmbedding);
    norm("embeddings.", &w.embeddingNorm, &w.embeddingNormBias);
    for (int i = 0; i < c.layers; ++i) {
        const std::string p = "encoder.layer." + std::to_string(i) + ".";
        LayerWeights& l = list.layer(i);
        list.linear(p + "attention.self.query", d, d, &l.query, &l.queryBias);
        list.linear(p + "attention.self.key", d, d, &l.key, &l.keyBias);
        list.linear(p + "attention.self.value", d, d, &l.value, &l.valueBias);
        list.linear(p + "attention.output.dense", d, d, &l.output, &l.outputBias);
        list.linear(p + "intermediate.dense", I, d, &l.up, &l.upBias);
        list.linear(p + "output.dense", d, I, &l.down, &l.downBias);
        norm(p + "attention.output.", &l.norm1, &l.norm1Bias);
        norm(p + "output.", &l.norm2, &l.norm2Bias);
    }
    return list.take();
}

// LlamaForCausalLM and the families that keep its names (model.*): q_norm and k_norm when the
// architecture norms each head's q and k.
std::vector<TensorSpec> llamaNames(const Config& c, ModelWeights& w) {
    TensorList list(c, w);
    const long long d = c.hidden, I = c.intermediate, hd = c.headDim;
    const long long width = static_cast<long long>(c.heads) * hd, kvWidth = c.kvHeads * hd;
    const bool qkNorm = c.architecture().qkNorm == QkNormKind::PerHead;
    list.add("embed_tokens.weight", {c.vocab, d}, &w.tokenEmbedding);
    for (int i = 0; i < c.layers; ++i) {
        const std::string p = "layers." + std::to_string(i) + ".";
        LayerWeights& l = list.layer(i);
        list.add(p + "input_layernorm.weight", {d}, &l.norm1);
        list.add(p + "post_attention_layernorm.weight", {d}, &l.norm2);
        const bool bias = c.attentionBias, mlpBias = c.mlpBias;
        list.linear(p + "self_attn.q_proj", width, d, &l.query, &l.queryBias, bias);
        list.linear(p + "self_attn.k_proj", kvWidth, d, &l.key, &l.keyBias, bias);
        list.linear(p + "self_attn.v_proj", kvWidth, d, &l.value, &l.valueBias, bias);
        list.linear(p + "self_attn.o_proj", d, width, &l.output, &l.outputBias, bias);
        list.linear(p + "mlp.gate_proj", I, d, &l.gate, &l.gateBias, mlpBias);
        list.linear(p + "mlp.up_proj", I, d, &l.up, &l.upBias, mlpBias);
        list.linear(p + "mlp.down_proj", d, I, &l.down, &l.downBias, mlpBias);
        if (qkNorm) {
            list.add(p + "self_attn.q_norm.weight", {hd}, &l.queryNorm);
            list.add(p + "self_attn.k_norm.weight", {hd}, &l.keyNorm);
        }
    }
    list.add("norm.weight", {d}, &w.finalNorm);
    list.languageModelHead(c);
    return list.take();
}

Architecture gpt2Architecture() {
    Architecture a;
    a.decoder = true;
    a.norm = NormType::LayerNorm;
    a.placement = NormPlacement::Pre;
    a.qkv = QkvStorage::Fused;
    a.layout = WeightLayout::Conv1D;
    a.positions = PositionKind::Learned;
    a.mlp = MlpKind::Plain;
    return a;
}

Architecture bertArchitecture() {
    Architecture a;
    a.decoder = false;
    a.norm = NormType::LayerNorm;
    a.placement = NormPlacement::Post;
    a.qkv = QkvStorage::Separate;
    a.layout = WeightLayout::Linear;
    a.positions = PositionKind::Learned;
    a.mlp = MlpKind::Plain;
    a.tokenTypes = true;
    a.embeddingNorm = true;
    return a;
}

Architecture llamaArchitecture(QkNormKind qkNorm) {
    Architecture a;
    a.decoder = true;
    a.norm = NormType::RmsNorm;
    a.placement = NormPlacement::Pre;
    a.qkv = QkvStorage::Separate;
    a.layout = WeightLayout::Linear;
    a.positions = PositionKind::Rotary;
    a.mlp = MlpKind::Gated;
    a.qkNorm = qkNorm;
    return a;
}

}  // namespace

const std::vector<FamilyRow>& familyTable() {
    // Indexed by Family: familyRow checks that each row sits at its own value.
    static const std::vector<FamilyRow> table = {
        {Family::Gpt2,
         "gpt2",
         gpt2Architecture(),
         {"transformer.", ""},
         "wte.weight",
         "n_positions",
         50256,
         2,
         gpt2Names},
        {Family::Bert,
         "bert",
         bertArchitecture(),
         {"bert.", ""},
         "embeddings.word_embeddings.weight",
         "max_position_embeddings",
         -1,
         0,
         bertNames},
        {Family::Llama,
         "llama",
         llamaArchitecture(QkNormKind::None),
         {"model.", ""},
         "embed_tokens.weight",
         "max_position_embeddings",
         1,
         1,
         llamaNames},
        {Family::Qwen3,
         "qwen3",
         llamaArchitecture(QkNormKind::PerHead),
         {"model.", ""},
         "embed_tokens.weight",
         "max_position_embeddings",
         -1,
         0,
         llamaNames},
    };
    return table;
}

const FamilyRow& familyRow(Family family) {
    const std::vector<FamilyRow>& table = familyTable();
    const auto index = static_cast<std::size_t>(family);
    if (index >= table.size() || table[index].family != family)
        throw ModelError("the family table has no row for family " + std::to_string(index));
    return table[index];
}

const FamilyRow* familyRowNamed(std::string_view modelType) {
    for (const FamilyRow& row : familyTable()) {
        if (modelType == row.modelType) return &row;
    }
    return nullptr;
}

std::string supportedFamilies() {
    std::string names;
    for (const FamilyRow& row : familyTable())
        names += (names.empty() ? "" : ", ") + std::string(row.modelType);
    return names;
}

std::vector<const FamilyRow*> trainableFamilies() {
    std::vector<const FamilyRow*> rows;
    for (const FamilyRow& row : familyTable()) {
        if (row.trainingChoice > 0) rows.push_back(&row);
    }
    std::sort(rows.begin(), rows.end(), [](const FamilyRow* a, const FamilyRow* b) {
        return a->trainingChoice < b->trainingChoice;
    });
    return rows;
}

std::string trainableFamilyNames() {
    std::string names;
    const std::vector<const FamilyRow*> rows = trainableFamilies();
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (i > 0) names += i + 1 == rows.size() ? " or " : ", ";
        names += rows[i]->modelType;
    }
    return names;
}

std::string unimplementedAxes(const Architecture& a) {
    // Each axis is implemented on its own (core/model/model_forward.cpp combines them freely);
    // these values are not implemented yet.
    std::vector<std::string> missing;
    if (a.norm == NormType::LayerNormNoBias) missing.push_back("norm: LayerNorm without bias");
    if (a.norm == NormType::RmsNormPlusOneWeight) missing.push_back("norm: RMSNorm with (1 + w)");
    if (a.placement == NormPlacement::Sandwich) missing.push_back("norm placement: sandwich");
    if (a.placement == NormPlacement::PostOnly) missing.push_back("norm placement: post-only");
    if (a.placement == NormPlacement::Parallel) missing.push_back("norm placement: parallel");
    if (a.qkv == QkvStorage::FusedInterleaved) missing.push_back("q, k, v: fused per head");
    if (a.positions == PositionKind::LearnedWithOffset)
        missing.push_back("positions: learned with an offset");
    if (a.positions == PositionKind::Sinusoid) missing.push_back("positions: sinusoid");
    if (a.positions == PositionKind::RelativeBias) missing.push_back("positions: relative bias");
    if (a.qkNorm == QkNormKind::FullWidth) missing.push_back("q/k norm: full width");
    std::string text;
    for (const std::string& m : missing)
        text += (text.empty() ? "" : "; ") + m;
    return text;
}

}  // namespace ae::model
