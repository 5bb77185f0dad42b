#include "io/model/model_writer.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>

#include "io/formats/result_export.h"
#include "io/formats/safetensors_writer.h"

namespace ae::io {
namespace {

const char* activationName(model::Activation a) {
    switch (a) {
        case model::Activation::GeluExact:
            return "gelu";
        case model::Activation::GeluTanh:
            return "gelu_new";
        case model::Activation::GeluFast:
            return "gelu_fast";
        case model::Activation::Silu:
            return "silu";
        case model::Activation::Relu:
            return "relu";
        case model::Activation::Tanh:
            return "tanh";
    }
    return "?";
}

// Every TensorRef of `w` in a fixed order, so that a slot of one ModelWeights finds the field of
// the same name in another of the same shape.
template <typename Weights, typename Ref>
std::vector<Ref*> allTensors(Weights& w) {
    std::vector<Ref*> refs{
        &w.tokenEmbedding,    &w.positionEmbedding, &w.tokenTypeEmbedding, &w.embeddingNorm,
        &w.embeddingNormBias, &w.finalNorm,         &w.finalNormBias,      &w.lmHead,
        &w.relativeBias};
    for (auto& l : w.layers) {
        for (Ref* r : {&l.norm1,         &l.norm1Bias,  &l.norm2,     &l.norm2Bias,
                       &l.qkv,           &l.qkvBias,    &l.query,     &l.queryBias,
                       &l.key,           &l.keyBias,    &l.value,     &l.valueBias,
                       &l.output,        &l.outputBias, &l.queryNorm, &l.keyNorm,
                       &l.gate,          &l.gateBias,   &l.up,        &l.upBias,
                       &l.down,          &l.downBias,   &l.gateUp,    &l.attentionOutputNorm,
                       &l.mlpOutputNorm, &l.gateUpBias})
            refs.push_back(r);
    }
    return refs;
}

// Each family's config.json as its Hugging Face config class writes it, for the families models
// are made of here (the trainer's); the same fields io/model/model_folder.cpp reads back.
QJsonObject gpt2ConfigJson(const model::Config& c, const QJsonValue& bos) {
    const QJsonValue none = QJsonValue::Null;
    return QJsonObject{{"architectures", QJsonArray{"GPT2LMHeadModel"}},
                       {"model_type", "gpt2"},
                       {"vocab_size", c.vocab},
                       {"n_positions", c.positions},
                       {"n_embd", c.hidden},
                       {"n_layer", c.layers},
                       {"n_head", c.heads},
                       {"n_inner", c.intermediate},
                       {"activation_function", activationName(c.activation)},
                       {"layer_norm_epsilon", c.normEps},
                       {"scale_attn_weights", c.scaleAttentionWeights},
                       {"scale_attn_by_inverse_layer_idx", c.scaleByInverseLayer},
                       {"tie_word_embeddings", c.tieWordEmbeddings},
                       {"bos_token_id", bos},
                       {"eos_token_id", none},
                       {"torch_dtype", "float64"}};
}

QJsonObject llamaConfigJson(const model::Config& c, const QJsonValue& bos) {
    const QJsonValue none = QJsonValue::Null;
    return QJsonObject{{"architectures", QJsonArray{"LlamaForCausalLM"}},
                       {"model_type", "llama"},
                       {"vocab_size", c.vocab},
                       {"hidden_size", c.hidden},
                       {"intermediate_size", c.intermediate},
                       {"num_hidden_layers", c.layers},
                       {"num_attention_heads", c.heads},
                       {"num_key_value_heads", c.kvHeads},
                       {"head_dim", c.headDim},
                       {"hidden_act", activationName(c.activation)},
                       {"max_position_embeddings", 2048},
                       {"rms_norm_eps", c.normEps},
                       {"rope_theta", c.rope.theta},
                       {"attention_bias", c.attentionBias},
                       {"mlp_bias", c.mlpBias},
                       {"tie_word_embeddings", c.tieWordEmbeddings},
                       {"bos_token_id", bos},
                       {"eos_token_id", none},
                       {"torch_dtype", "float64"}};
}

struct FamilyConfigWriter {
    model::Family family;
    QJsonObject (*write)(const model::Config&, const QJsonValue& bos);
};
const FamilyConfigWriter kConfigWriters[] = {
    {model::Family::Gpt2, gpt2ConfigJson},
    {model::Family::Llama, llamaConfigJson},
};

}  // namespace

QByteArray modelConfigJson(const model::Config& c) {
    const QJsonValue none = QJsonValue::Null;  // no BOS: the models made here have none
    const QJsonValue bos = c.bosToken >= 0 ? QJsonValue(static_cast<double>(c.bosToken)) : none;
    for (const FamilyConfigWriter& writer : kConfigWriters) {
        // Rotary scaling is not among the fields written: such a model is refused as any other.
        if (writer.family == c.family && c.rope.scaling == RopeScaling::None)
            return QJsonDocument(writer.write(c, bos)).toJson(QJsonDocument::Indented);
    }
    throw WriteError(std::string("config.json: only gpt2 and plain llama models are written, "
                                 "not ") +
                     model::familyName(c.family));
}

void writeModelFolder(const QString& folder, const model::Model& model, DType dtype) {
    const QByteArray config = modelConfigJson(model.config);
    if (!QDir().mkpath(folder))
        throw WriteError((folder + ": cannot create the folder").toStdString());
    model::ModelWeights layout;
    const std::vector<model::TensorSpec> specs = model::tensorSpecs(model.config, layout);
    const std::vector<model::TensorRef*> fields =
        allTensors<model::ModelWeights, model::TensorRef>(layout);
    const std::vector<const model::TensorRef*> refs =
        allTensors<const model::ModelWeights, const model::TensorRef>(model.weights);
    std::vector<std::vector<double>> values;
    std::vector<TensorToWrite> tensors;
    values.reserve(specs.size());
    for (const model::TensorSpec& spec : specs) {
        const auto at = std::find(fields.begin(), fields.end(), spec.slot) - fields.begin();
        const model::TensorRef& ref = *refs[static_cast<std::size_t>(at)];
        long long count = 1;
        for (long long s : spec.shape)
            count *= s;
        if (!ref.present() || ref.count() != count) {
            throw WriteError((folder + ": tensor " + QString::fromStdString(spec.name) +
                              " is missing or of the wrong size")
                                 .toStdString());
        }
        values.emplace_back(static_cast<std::size_t>(count));
        convertElements(ref.data, ref.dtype, 0, count, values.back().data());
        tensors.push_back({{ref.name, dtype, spec.shape}, values.back().data()});
    }
    writeSafetensors(QDir(folder).filePath("model.safetensors"), tensors, {{"format", "pt"}});
    // The config last: a folder with a config is a complete one.
    writeFileAtomically(QDir(folder).filePath("config.json"), config);
}

void writeByteTokenizer(const QString& folder, int vocab) {
    // GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves, the others for
    // U+0100 onwards in byte order.
    QJsonObject tokens;
    int shifted = 0;
    for (int b = 0; b < 256; ++b) {
        const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
        const char32_t character = printable ? static_cast<char32_t>(b) : 256 + shifted++;
        if (b < vocab) tokens[QString::fromUcs4(&character, 1)] = b;
    }
    if (!QDir().mkpath(folder))
        throw WriteError((folder + ": cannot create the folder").toStdString());
    writeFileAtomically(QDir(folder).filePath("vocab.json"),
                        QJsonDocument(tokens).toJson(QJsonDocument::Compact));
    writeFileAtomically(QDir(folder).filePath("merges.txt"), "#version: 0.2\n");
}

}  // namespace ae::io
