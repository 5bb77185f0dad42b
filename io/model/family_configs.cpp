// Each family's config reader: config.json → Config with its Hugging Face configuration class's
// defaults, after shared/reference/model_reference.py (gpt2, bert, llama, qwen3) and
// decoder_families.py (the rest). What the reference refuses, these refuse, naming the field.
#include <QJsonArray>
#include <algorithm>
#include <cmath>

#include "io/model/config_reader.h"

namespace ae::io {
namespace {

// Refuses a width its heads do not divide, naming both fields as the config spells them
// ("config.json: n_embd 30 is not a multiple of n_head 4").
void requireWholeHeads(const QString& file, const model::Config& c, const char* widthField,
                       const char* headsField, int heads = 0) {
    // `heads`: another stack's count (an encoder–decoder model's decoder); 0: c.heads.
    if (heads <= 0) heads = c.heads;
    if (c.hidden % heads == 0) return;
    failConfig(QStringLiteral("%1: %2 %3 is not a multiple of %4 %5")
                   .arg(file, QLatin1String(widthField))
                   .arg(c.hidden)
                   .arg(QLatin1String(headsField))
                   .arg(heads));
}

using model::Activation;
using model::Config;
using model::Family;
using LayerRotary = model::Config::LayerRotary;

void readGpt2(const ConfigReader& r, Config& c) {
    const QString& file = r.file();
    // configuration_gpt2.GPT2Config defaults and attribute_map
    c.hidden = r.integer({"n_embd", "hidden_size"}, 768);
    c.layers = r.integer({"n_layer", "num_hidden_layers"}, 12);
    c.heads = r.integer({"n_head", "num_attention_heads"}, 12);
    c.positions = r.integer({"n_positions", "max_position_embeddings"}, 1024);
    c.vocab = r.integer({"vocab_size"}, 50257);
    // 4·n_embd, kept in int's range (a larger one cannot match any file's shapes anyway).
    c.intermediate =
        r.integer({"n_inner"}, static_cast<int>(std::min(4LL * c.hidden, 2'000'000'000LL)));
    const QString act = r.string({"activation_function"}, "gelu_new");
    c.normEps = r.number({"layer_norm_epsilon"}, 1e-5);
    c.scaleAttentionWeights = r.boolean({"scale_attn_weights"}, true);
    c.scaleByInverseLayer = r.boolean({"scale_attn_by_inverse_layer_idx"}, false);
    c.tieWordEmbeddings = r.boolean({"tie_word_embeddings"}, true);
    if (r.boolean({"add_cross_attention"}, false))
        failConfig(file + ": add_cross_attention is not supported");
    requireWholeHeads(file, c, "n_embd", "n_head");
    c.kvHeads = c.heads;
    c.headDim = c.hidden / c.heads;
    c.activation = activationNamed(act, file, "activation_function");
}

// BertConfig's fields with a family's defaults; MPNetConfig has no token types and no
// position_embedding_type.
struct BertLikeDefaults {
    int vocab = 30522;
    int positions = 512;
    bool tokenTypes = true;
};
void readBertLike(const ConfigReader& r, Config& c, BertLikeDefaults defaults) {
    const QString& file = r.file();
    // configuration_bert.BertConfig defaults
    c.hidden = r.integer({"hidden_size"}, 768);
    c.layers = r.integer({"num_hidden_layers"}, 12);
    c.heads = r.integer({"num_attention_heads"}, 12);
    c.positions = r.integer({"max_position_embeddings"}, defaults.positions);
    c.vocab = r.integer({"vocab_size"}, defaults.vocab);
    c.intermediate = r.integer({"intermediate_size"}, 3072);
    const QString act = r.string({"hidden_act"}, "gelu");
    c.normEps = r.number({"layer_norm_eps"}, 1e-12);
    if (defaults.tokenTypes) {
        c.tokenTypes = r.integer({"type_vocab_size"}, 2);
        if (r.string({"position_embedding_type"}, "absolute") != "absolute")
            failConfig(file + ": position_embedding_type: only \"absolute\" is supported");
    }
    if (r.boolean({"is_decoder"}, false) || r.boolean({"add_cross_attention"}, false))
        failConfig(file + ": is_decoder / add_cross_attention are not supported");
    requireWholeHeads(file, c, "hidden_size", "num_attention_heads");
    c.kvHeads = c.heads;
    c.headDim = c.hidden / c.heads;
    c.activation = activationNamed(act, file, "hidden_act");
    // The *ForMaskedLM heads' decoder is the word embeddings unless this says otherwise.
    c.tieWordEmbeddings = r.boolean({"tie_word_embeddings"}, true);
    c.maskedLm.normEps = c.normEps;
}

// BertForMaskedLM's transform runs the model's hidden_act.
void readBert(const ConfigReader& r, Config& c) {
    readBertLike(r, c, {});
    c.maskedLm.activation = c.activation;
}

// An integer field that may be 0 (a pad id), with its default when absent; null is refused by
// the caller that needs a value.
long long nonNegativeInteger(const ConfigReader& r, const char* name, long long fallback) {
    const QJsonValue v = r.object().value(QLatin1String(name));
    if (v.isUndefined()) return fallback;
    if (!isJsonInteger(v, {}, name) || v.toInteger() < 0)
        failConfig(QStringLiteral("%1: %2 must be an integer >= 0, got %3")
                       .arg(r.file(), QLatin1String(name), jsonText(v)));
    return v.toInteger();
}

// configuration_roberta.RobertaConfig / configuration_xlm_roberta.XLMRobertaConfig: BERT's fields;
// the positions are numbered after pad_token_id.
void readRobertaLike(const ConfigReader& r, Config& c, int vocabDefault) {
    readBertLike(r, c, {vocabDefault});
    if (r.object().value("pad_token_id").isNull())
        failConfig(r.file() + ": pad_token_id is null, but roberta numbers its positions from it");
    c.paddingIdx = nonNegativeInteger(r, "pad_token_id", 1);
    // RobertaLMHead: gelu (exact) whatever hidden_act says.
    c.maskedLm.activation = Activation::GeluExact;
}

void readRoberta(const ConfigReader& r, Config& c) {
    readRobertaLike(r, c, 50265);
}

void readXlmRoberta(const ConfigReader& r, Config& c) {
    readRobertaLike(r, c, 30522);
}

// configuration_mpnet.MPNetConfig: BERT's fields without token types; positions numbered from
// the ids after padding_idx 1 (MPNetEmbeddings hard-codes it, whatever pad_token_id says); the
// relative-position bias of MPNetEncoder.compute_position_bias, which always makes 32 buckets up
// to distance 128 and so indexes past a smaller table.
void readMpnet(const ConfigReader& r, Config& c) {
    readBertLike(r, c, {30527, 514, false});
    c.paddingIdx = 1;
    c.relativeBuckets = r.integer({"relative_attention_num_buckets"}, 32);
    c.relativeBucketsUsed = 32;
    c.relativeMaxDistance = 128;
    if (c.relativeBuckets < c.relativeBucketsUsed)
        failConfig(QStringLiteral("%1: relative_attention_num_buckets %2 is not supported: HF "
                                  "computes %3 buckets and indexes past a smaller table")
                       .arg(r.file())
                       .arg(c.relativeBuckets)
                       .arg(c.relativeBucketsUsed));
    // MPNetLMHead: gelu (exact) whatever hidden_act says.
    c.maskedLm.activation = Activation::GeluExact;
}

// configuration_distilbert.DistilBertConfig: its own field names (attribute_map gives BERT's
// as alternatives), LayerNorm eps 1e-12 everywhere (not a field), no token types.
void readDistilbert(const ConfigReader& r, Config& c) {
    const QString& file = r.file();
    c.hidden = r.integer({"dim", "hidden_size"}, 768);
    c.layers = r.integer({"n_layers", "num_hidden_layers"}, 6);
    c.heads = r.integer({"n_heads", "num_attention_heads"}, 12);
    c.vocab = r.integer({"vocab_size"}, 30522);
    c.positions = r.integer({"max_position_embeddings"}, 512);
    c.intermediate = r.integer({"hidden_dim"}, 4 * c.hidden);
    c.normEps = 1e-12;
    c.sinusoidalPositionTable = r.boolean({"sinusoidal_pos_embds"}, false);
    requireWholeHeads(file, c, "dim", "n_heads");
    c.kvHeads = c.heads;
    c.headDim = c.hidden / c.heads;
    c.activation = activationNamed(r.string({"activation"}, "gelu"), file, "activation");
    c.tieWordEmbeddings = r.boolean({"tie_word_embeddings"}, true);
    // DistilBertForMaskedLM: the model's activation, vocab_layer_norm's eps 1e-12.
    c.maskedLm.activation = c.activation;
    c.maskedLm.normEps = 1e-12;
}

// ---- Rotary positions ----

// rope_theta + rope_scaling (transformers 4.x) or a flat rope_parameters (5.x), merged; "type"
// is the old spelling of "rope_type".
QJsonObject ropeScalingObject(const ConfigReader& r) {
    const QJsonObject& o = r.object();
    QJsonObject s = o.value("rope_parameters").toObject();
    const QJsonValue scalingValue = o.value("rope_scaling");
    if (!falsy(scalingValue)) {
        if (!scalingValue.isObject())
            failConfig(r.file() + ": rope_scaling must be an object or null");
        const QJsonObject scaling = scalingValue.toObject();
        for (auto it = scaling.begin(); it != scaling.end(); ++it)
            s.insert(it.key(), it.value());
    }
    return s;
}

QString ropeTypeOf(const QJsonObject& s) {
    const QJsonValue type = s.contains("rope_type")         ? s.value("rope_type")
                            : s.value("type").isUndefined() ? QJsonValue("default")
                                                            : s.value("type");
    return type.isString() ? type.toString() : jsonText(type);
}

// The rotation of `dims` values a head with theta and the scaling of `s` (rope_type among
// `allowed`; longrope's own fields are read by the phi3 reader). `where` names s in messages.
ops::RopeParameters ropeFrom(const QString& file, const QJsonObject& s, double theta,
                             const QString& type, int dims, const QStringList& allowed,
                             const QString& where = "rope_scaling") {
    if (!allowed.contains(type)) {
        failConfig(
            QStringLiteral("%1: rope type %2 is not supported (%3)")
                .arg(file, type.startsWith('"') ? type : '"' + type + '"', allowed.join(", ")));
    }
    if (dims < 2 || dims % 2) {
        failConfig(QStringLiteral("%1: rotary dimension %2 must be even and at least 2")
                       .arg(file)
                       .arg(dims));
    }
    if (!(theta > 0))
        failConfig(QStringLiteral("%1: rope_theta must be positive, got %2").arg(file).arg(theta));
    ops::RopeParameters rope;
    rope.theta = theta;
    std::vector<const char*> need;
    if (type == "linear") {
        rope.scaling = ops::RopeScaling::Linear;
        need = {"factor"};
    } else if (type == "llama3") {
        rope.scaling = ops::RopeScaling::Llama3;
        need = {"factor", "low_freq_factor", "high_freq_factor",
                "original_max_position_embeddings"};
    } else if (type == "longrope") {
        rope.scaling = ops::RopeScaling::LongRope;
    }
    for (const char* k : need) {
        const QJsonValue v = s.value(QLatin1String(k));
        if (v.isUndefined()) failConfig(QStringLiteral("%1: %2.%3 is missing").arg(file, where, k));
        if (!v.isDouble() || !std::isfinite(v.toDouble()) || !(v.toDouble() > 0)) {
            failConfig(QStringLiteral("%1: %2.%3 must be a positive number, got %4")
                           .arg(file, where, k, jsonText(v)));
        }
    }
    if (!need.empty()) rope.factor = s.value("factor").toDouble();
    if (rope.scaling == ops::RopeScaling::Llama3) {
        rope.lowFrequencyFactor = s.value("low_freq_factor").toDouble();
        rope.highFrequencyFactor = s.value("high_freq_factor").toDouble();
        rope.originalMaxPositions = s.value("original_max_position_embeddings").toDouble();
        if (!(rope.highFrequencyFactor > rope.lowFrequencyFactor)) {
            failConfig(QStringLiteral("%1: %2.high_freq_factor %3 must exceed "
                                      "low_freq_factor %4")
                           .arg(file, where)
                           .arg(rope.highFrequencyFactor)
                           .arg(rope.lowFrequencyFactor));
        }
    }
    return rope;
}

// A family without partial rotation refuses a partial_rotary_factor other than 1.
void refusePartialRotary(const ConfigReader& r, const QJsonObject& s) {
    const ConfigReader sr(s, r.file() + ": rope_scaling");
    if (r.number({"partial_rotary_factor"}, sr.number({"partial_rotary_factor"}, 1.0)) != 1.0)
        failConfig(r.file() + ": partial_rotary_factor is not supported");
}

// LlamaRotaryEmbedding on every layer over the whole head (default, linear or llama3).
void readPlainRope(const ConfigReader& r, Config& c, double thetaDefault,
                   const QStringList& allowed = {"default", "linear", "llama3"}) {
    const QJsonObject s = ropeScalingObject(r);
    const ConfigReader sr(s, r.file() + ": rope_scaling");
    const double theta = r.number({"rope_theta"}, sr.number({"rope_theta"}, thetaDefault));
    if (!(theta > 0)) {
        failConfig(
            QStringLiteral("%1: rope_theta must be positive, got %2").arg(r.file()).arg(theta));
    }
    c.rope = ropeFrom(r.file(), s, theta, ropeTypeOf(s), c.headDim, allowed);
    refusePartialRotary(r, s);
}

// ---- Sliding windows ----

// config.layer_types when given (a list of `layers` entries, each full_attention or
// sliding_attention), else `fallback`. true: the layer slides.
std::vector<bool> slidingLayers(const ConfigReader& r, int layers, std::vector<bool> fallback) {
    const QJsonValue types = r.object().value("layer_types");
    if (types.isUndefined() || types.isNull()) return fallback;
    if (!types.isArray() || types.toArray().size() != layers) {
        failConfig(QStringLiteral("%1: layer_types must be a list of %2 entries, got %3")
                       .arg(r.file())
                       .arg(layers)
                       .arg(jsonText(types)));
    }
    std::vector<bool> sliding;
    for (const QJsonValue& t : types.toArray()) {
        if (t != QJsonValue("full_attention") && t != QJsonValue("sliding_attention")) {
            failConfig(QStringLiteral("%1: layer_types entry %2 is not supported "
                                      "(full_attention, sliding_attention)")
                           .arg(r.file(), jsonText(t)));
        }
        sliding.push_back(t == QJsonValue("sliding_attention"));
    }
    return sliding;
}

// Config::slidingWindows from which layers slide and the window W (0: none).
void setWindows(Config& c, const std::vector<bool>& sliding, int window) {
    c.slidingWindows.assign(static_cast<std::size_t>(c.layers), 0);
    for (int i = 0; i < c.layers; ++i) {
        if (sliding[static_cast<std::size_t>(i)])
            c.slidingWindows[static_cast<std::size_t>(i)] = window;
    }
    if (std::all_of(sliding.begin(), sliding.end(), [](bool s) { return !s; }))
        c.slidingWindows.clear();
}

// ---- The Llama-shaped families ----

// The defaults a Llama-shaped config falls back on (its configuration class's).
struct LlamaDefaults {
    int hidden = 4096;
    int heads = 32;
    int layers = 32;
    int vocab = 32000;
    int intermediate = 11008;
    int kvHeads = 0;  // 0: num_attention_heads
    int headDim = 0;  // 0: hidden_size / num_attention_heads
    double normEps = 1e-6;
    bool tie = false;
    const char* activation = "silu";
    const char* activationField = "hidden_act";
    bool readsAttentionBias = true;  // attention_bias: q, k, v and o biases
    bool readsMlpBias = true;
    bool fastGelu = false;  // gelu_fast among the activations (decoder_families.activation)
    // num_key_value_heads null means num_attention_heads (decoder_families.kv_heads); else the
    // null is skipped and the default taken (model_reference.config_value).
    bool nullKvHeadsMeansHeads = false;
};

// The shapes and common fields of a Llama-shaped config (LlamaConfig and those that keep its
// names), and its checks: heads a multiple of kv heads, a head_dim of at least 1.
void readLlamaShape(const ConfigReader& r, Config& c, const LlamaDefaults& defaults) {
    const QString& file = r.file();
    c.hidden = r.integer({"hidden_size"}, defaults.hidden);
    c.heads = r.integer({"num_attention_heads"}, defaults.heads);
    c.layers = r.integer({"num_hidden_layers"}, defaults.layers);
    // An explicit null means num_attention_heads (the config classes' "if None" branch).
    const bool kvNull =
        defaults.nullKvHeadsMeansHeads && r.object().value("num_key_value_heads").isNull();
    c.kvHeads = r.integer({"num_key_value_heads"},
                          defaults.kvHeads && !kvNull ? defaults.kvHeads : c.heads);
    c.vocab = r.integer({"vocab_size"}, defaults.vocab);
    c.intermediate = r.integer({"intermediate_size"}, defaults.intermediate);
    c.headDim = r.integer({"head_dim"}, defaults.headDim ? defaults.headDim : c.hidden / c.heads);
    const QString act = r.string({defaults.activationField}, defaults.activation);
    c.normEps = r.number({"rms_norm_eps"}, defaults.normEps);
    c.attentionBias = defaults.readsAttentionBias && r.boolean({"attention_bias"}, false);
    c.outputBias = c.attentionBias;
    c.mlpBias = defaults.readsMlpBias && r.boolean({"mlp_bias"}, false);
    c.tieWordEmbeddings = r.boolean({"tie_word_embeddings"}, defaults.tie);
    if (c.heads % c.kvHeads) {
        failConfig(QStringLiteral("%1: num_attention_heads %2 is not a multiple of "
                                  "num_key_value_heads %3")
                       .arg(file)
                       .arg(c.heads)
                       .arg(c.kvHeads));
    }
    if (c.headDim < 1) {
        failConfig(QStringLiteral("%1: head_dim: hidden_size %2 / num_attention_heads %3 is 0")
                       .arg(file)
                       .arg(c.hidden)
                       .arg(c.heads));
    }
    c.activation = activationNamed(act, file, defaults.activationField, defaults.fastGelu);
}

// LlamaConfig and Qwen3Config: an even head_dim, plain rotary positions and no sliding window.
void readLlamaOrQwen3(const ConfigReader& r, Config& c, const LlamaDefaults& defaults,
                      bool mayAskForWindows) {
    readLlamaShape(r, c, defaults);
    if (c.headDim % 2)
        failConfig(
            QStringLiteral("%1: head_dim %2 must be even for RoPE").arg(r.file()).arg(c.headDim));
    if (mayAskForWindows) {
        bool sliding = r.boolean({"use_sliding_window"}, false);
        const QJsonValue types = r.object().value("layer_types");
        if (!falsy(types)) {
            if (!types.isArray()) failConfig(r.file() + ": layer_types must be a list");
            for (const QJsonValue& t : types.toArray())
                sliding = sliding || t != QJsonValue("full_attention");
        }
        if (sliding) failConfig(r.file() + ": sliding-window attention is not supported");
    }
    readPlainRope(r, c, 10000.0);
}

// configuration_llama.LlamaConfig defaults.
void readLlama(const ConfigReader& r, Config& c) {
    readLlamaOrQwen3(r, c, LlamaDefaults{}, false);
}

// configuration_qwen3.Qwen3Config defaults: no mlp_bias, and sliding windows it may ask for.
void readQwen3(const ConfigReader& r, Config& c) {
    LlamaDefaults defaults;
    defaults.vocab = 151936;
    defaults.intermediate = 22016;
    defaults.kvHeads = 32;
    defaults.headDim = 128;
    defaults.readsMlpBias = false;
    readLlamaOrQwen3(r, c, defaults, true);
}

// The newer decoders' defaults (decoder_families.base_config): gelu_fast allowed, a null
// num_key_value_heads meaning every head.
LlamaDefaults decoderDefaults() {
    LlamaDefaults d;
    d.fastGelu = true;
    d.nullKvHeadsMeansHeads = true;
    return d;
}

// Qwen2Config: q, k and v biased (o not; attention_bias is not read), no MLP bias; a window
// when use_sliding_window, on the layers from max_window_layers (or as layer_types says).
void readQwen2(const ConfigReader& r, Config& c) {
    LlamaDefaults d = decoderDefaults();
    d.kvHeads = 32;
    d.vocab = 151936;
    d.intermediate = 22016;
    d.readsAttentionBias = false;
    d.readsMlpBias = false;
    readLlamaShape(r, c, d);
    c.attentionBias = true;
    c.outputBias = false;
    readPlainRope(r, c, 10000.0);
    const bool use = r.boolean({"use_sliding_window"}, false);
    const std::optional<int> window =
        use ? r.optionalInteger("sliding_window", 4096) : std::nullopt;
    const QJsonValue mwlValue = r.object().value("max_window_layers");
    int firstSliding = 28;
    if (!mwlValue.isUndefined() && !mwlValue.isNull()) {
        if (!mwlValue.isDouble() || mwlValue.toDouble() != std::floor(mwlValue.toDouble()) ||
            mwlValue.toDouble() < 0) {
            failConfig(
                QStringLiteral("%1: max_window_layers must be a non-negative integer, got %2")
                    .arg(r.file(), jsonText(mwlValue)));
        }
        firstSliding = static_cast<int>(std::min(mwlValue.toDouble(), 1e9));
    }
    std::vector<bool> fallback;
    for (int i = 0; i < c.layers; ++i)
        fallback.push_back(window.has_value() && i >= firstSliding);
    const std::vector<bool> sliding = slidingLayers(r, c.layers, fallback);
    if (std::count(sliding.begin(), sliding.end(), true) > 0 && !window) {
        failConfig(r.file() +
                   ": layer_types has sliding_attention but sliding_window is null (or "
                   "use_sliding_window is false)");
    }
    setWindows(c, sliding, window.value_or(0));
}

// MistralConfig: no biases at all; a window on every layer unless sliding_window is null.
void readMistral(const ConfigReader& r, Config& c) {
    LlamaDefaults d = decoderDefaults();
    d.kvHeads = 8;
    d.intermediate = 14336;
    d.readsAttentionBias = false;
    readLlamaShape(r, c, d);
    c.mlpBias = false;
    readPlainRope(r, c, 10000.0);
    const std::optional<int> window = r.optionalInteger("sliding_window", 4096);
    setWindows(c, std::vector<bool>(static_cast<std::size_t>(c.layers), window.has_value()),
               window.value_or(0));
}

// What GemmaConfig, Gemma2Config and Gemma3TextConfig share: embeddings times √d, RMSNorm with
// (1 + w), attention_bias on q, k, v and o, no MLP bias; EmbeddingGemma's bidirectional
// attention refused.
void readGemmaCommon(const ConfigReader& r, Config& c) {
    if (r.boolean({"use_bidirectional_attention"}, false))
        failConfig(r.file() + ": use_bidirectional_attention is not supported");
    c.embeddingScale = std::sqrt(static_cast<double>(c.hidden));
    c.mlpBias = false;
}

double positiveNumber(const ConfigReader& r, const char* name, double value) {
    if (!(value > 0)) {
        failConfig(QStringLiteral("%1: %2 must be > 0, got %3")
                       .arg(r.file(), name)
                       .arg(value, 0, 'g', 17));
    }
    return value;
}

// A soft-cap: absent takes `fallback`, null is none (0), any other must be > 0.
double softCap(const ConfigReader& r, const char* name, std::optional<double> fallback) {
    const std::optional<double> cap = r.optionalNumber(name, fallback);
    return cap ? positiveNumber(r, name, *cap) : 0.0;
}

// A window the family cannot do without: null refused.
int requiredWindow(const ConfigReader& r, const char* model) {
    const std::optional<int> window = r.optionalInteger("sliding_window", 4096);
    if (!window) {
        failConfig(QStringLiteral("%1: sliding_window is null (%2 needs it)").arg(r.file(), model));
    }
    return *window;
}

// GemmaConfig: gelu_pytorch_tanh GeGLU (hidden_act; hidden_activation is only type-checked),
// head_dim 256.
void readGemma(const ConfigReader& r, Config& c) {
    LlamaDefaults d = decoderDefaults();
    d.hidden = 3072;
    d.heads = 16;
    d.kvHeads = 16;
    d.layers = 28;
    d.vocab = 256000;
    d.intermediate = 24576;
    d.headDim = 256;
    d.tie = true;
    d.activation = "gelu_pytorch_tanh";
    d.readsMlpBias = false;
    readLlamaShape(r, c, d);
    r.string({"hidden_activation"}, QString());
    readGemmaCommon(r, c);
    readPlainRope(r, c, 10000.0);
}

// Gemma2Config's shapes; Gemma3TextConfig keeps them but for the vocabulary.
const LlamaDefaults& gemma2Defaults() {
    static const LlamaDefaults d = [] {
        LlamaDefaults g = decoderDefaults();
        g.hidden = 2304;
        g.heads = 8;
        g.kvHeads = 4;
        g.layers = 26;
        g.vocab = 256000;
        g.intermediate = 9216;
        g.headDim = 256;
        g.tie = true;
        g.activation = "gelu_pytorch_tanh";
        g.activationField = "hidden_activation";
        g.readsMlpBias = false;
        return g;
    }();
    return d;
}

// Gemma2Config: sandwich norms, query_pre_attn_scalar, the attention and final soft-caps, a
// window on the even layers (or as layer_types says).
void readGemma2(const ConfigReader& r, Config& c) {
    const LlamaDefaults& d = gemma2Defaults();
    readLlamaShape(r, c, d);
    requireWholeHeads(r.file(), c, "hidden_size", "num_attention_heads");
    readGemmaCommon(r, c);
    c.queryScalar =
        positiveNumber(r, "query_pre_attn_scalar", r.number({"query_pre_attn_scalar"}, 256));
    c.attentionSoftCap = softCap(r, "attn_logit_softcapping", 50.0);
    c.finalSoftCap = softCap(r, "final_logit_softcapping", 30.0);
    readPlainRope(r, c, 10000.0);
    std::vector<bool> fallback;
    for (int i = 0; i < c.layers; ++i)
        fallback.push_back((i + 1) % 2 != 0);
    const std::vector<bool> sliding = slidingLayers(r, c.layers, fallback);
    setWindows(c, sliding, requiredWindow(r, "Gemma2Model"));
}

const LlamaDefaults& gemma3TextDefaults() {
    static const LlamaDefaults d = [] {
        LlamaDefaults g = gemma2Defaults();
        g.vocab = 262208;
        return g;
    }();
    return d;
}

// Gemma3TextConfig's fields (gemma3_text, and the wrapper's text_config): per-head q/k norm, no
// attention soft-cap (Gemma3Attention would ignore it), a window on all but every
// sliding_window_pattern-th layer, and the sliding layers turned by rope_local_base_freq.
void readGemma3Text(const ConfigReader& r, Config& c) {
    readLlamaShape(r, c, gemma3TextDefaults());
    readGemmaCommon(r, c);
    c.queryScalar =
        positiveNumber(r, "query_pre_attn_scalar", r.number({"query_pre_attn_scalar"}, 256));
    if (r.optionalNumber("attn_logit_softcapping", std::nullopt)) {
        failConfig(r.file() +
                   ": attn_logit_softcapping is set, but Gemma3Attention does not pass it to the "
                   "attention function (HF ignores it); refused as ambiguous");
    }
    c.finalSoftCap = softCap(r, "final_logit_softcapping", std::nullopt);
    const int pattern = r.integer({"sliding_window_pattern"}, 6);
    std::vector<bool> fallback;
    for (int i = 0; i < c.layers; ++i)
        fallback.push_back((i + 1) % pattern != 0);
    const std::vector<bool> sliding = slidingLayers(r, c.layers, fallback);
    setWindows(c, sliding, requiredWindow(r, "Gemma3TextModel"));
    const QStringList allowed{"default", "linear"};
    const QJsonValue parameters = r.object().value("rope_parameters");
    const QJsonObject byType = parameters.toObject();
    if (parameters.isObject() &&
        (byType.contains("full_attention") || byType.contains("sliding_attention"))) {
        // transformers 5.x: {"full_attention": {...}, "sliding_attention": {...}}
        for (const char* type : {"full_attention", "sliding_attention"}) {
            const QJsonValue value = byType.value(QLatin1String(type));
            if (!falsy(value) && !value.isObject())
                failConfig(
                    QStringLiteral("%1: rope_parameters.%2 must be an object").arg(r.file(), type));
            const QJsonObject s = value.toObject();
            const QString where = QStringLiteral("rope_parameters.") + type;
            const ConfigReader sr(s, r.file() + ": " + where);
            if (sr.number({"partial_rotary_factor"}, 1.0) != 1.0)
                failConfig(r.file() + ": partial_rotary_factor is not supported");
            const bool full = QLatin1String(type) == QLatin1String("full_attention");
            const double theta = sr.number({"rope_theta"}, full ? 1e6 : 1e4);
            (full ? c.rope : c.localRope) =
                ropeFrom(r.file(), s, theta, ropeTypeOf(s), c.headDim, allowed, where);
        }
    } else {
        readPlainRope(r, c, 1e6, allowed);
        c.localRope = ropeFrom(r.file(), {}, r.number({"rope_local_base_freq"}, 1e4), "default",
                               c.headDim, allowed);
    }
    c.layerRotary.clear();
    for (int i = 0; i < c.layers; ++i)
        c.layerRotary.push_back(sliding[static_cast<std::size_t>(i)] ? LayerRotary::Local
                                                                     : LayerRotary::Global);
}

// Gemma3Config: its text_config (Gemma3TextConfig) is the model; tie_word_embeddings from the
// top level when the text config has none. Gemma3ForConditionalGeneration applies no final
// soft-cap: one set is refused.
void readGemma3(const ConfigReader& r, Config& c) {
    const QJsonValue textValue = r.object().value("text_config");
    if (!textValue.isUndefined() && !textValue.isNull() && !textValue.isObject())
        failConfig(r.file() + ": text_config must be an object");
    QJsonObject text = textValue.toObject();
    const ConfigReader textReader(text, r.file() + ": text_config");
    if (textReader.optionalNumber("final_logit_softcapping", std::nullopt)) {
        failConfig(r.file() +
                   ": text_config.final_logit_softcapping is set, but "
                   "Gemma3ForConditionalGeneration does not apply it (Gemma3ForCausalLM does); "
                   "refused as ambiguous");
    }
    if (!text.contains("tie_word_embeddings") && r.object().contains("tie_word_embeddings"))
        text.insert("tie_word_embeddings", r.object().value("tie_word_embeddings"));
    const ConfigReader inner(text, r.file() + ": text_config");
    readGemma3Text(inner, c);
}

// Phi3Config: fused qkv_proj and gate_up_proj, no biases, partial rotation with default or
// longrope positions ("su" and "yarn" are its old names), a window on every layer when set.
void readPhi3(const ConfigReader& r, Config& c) {
    LlamaDefaults d = decoderDefaults();
    d.hidden = 3072;
    d.intermediate = 8192;
    d.vocab = 32064;
    d.normEps = 1e-5;
    d.readsAttentionBias = false;
    d.readsMlpBias = false;
    readLlamaShape(r, c, d);
    const QString& file = r.file();
    if (c.headDim != c.hidden / c.heads)
        failConfig(QStringLiteral("%1: head_dim %2 differs from hidden_size // num_attention_heads")
                       .arg(file)
                       .arg(c.headDim));
    const QJsonObject s = ropeScalingObject(r);
    const ConfigReader sr(s, file + ": rope_scaling");
    const double theta = r.number({"rope_theta"}, sr.number({"rope_theta"}, 10000.0));
    QString type = ropeTypeOf(s);
    if (type == "su" || type == "yarn") type = "longrope";
    const double partial =
        r.number({"partial_rotary_factor"}, sr.number({"partial_rotary_factor"}, 1.0));
    if (!(partial > 0 && partial <= 1))
        failConfig(QStringLiteral("%1: partial_rotary_factor %2 must be in (0, 1]")
                       .arg(file)
                       .arg(partial));
    const int dims = static_cast<int>(c.headDim * partial);
    c.rope = ropeFrom(file, s, theta, type, dims, {"default", "longrope"});
    c.rope.rotaryDim = dims == c.headDim ? 0 : dims;
    if (c.rope.scaling == ops::RopeScaling::LongRope) {
        const int maxPositions = r.integer({"max_position_embeddings"}, 4096);
        const int original = r.integer({"original_max_position_embeddings"},
                                       sr.integer({"original_max_position_embeddings"}, 4096));
        const double factor = static_cast<double>(maxPositions) / original;
        const std::optional<double> stated = sr.optionalNumber("factor", std::nullopt);
        if (stated && *stated != factor) {
            failConfig(QStringLiteral("%1: rope_scaling.factor %2 differs from "
                                      "max_position_embeddings / original_max_position_embeddings "
                                      "= %3 (transformers versions disagree on which wins)")
                           .arg(file)
                           .arg(*stated, 0, 'g', 17)
                           .arg(factor, 0, 'g', 17));
        }
        const std::optional<double> attention = sr.optionalNumber("attention_factor", std::nullopt);
        c.rope.attentionFactor =
            attention
                ? *attention
                : (factor <= 1.0 ? 1.0 : std::sqrt(1 + std::log(factor) / std::log(original)));
        positiveNumber(r, "rope_scaling.attention_factor", c.rope.attentionFactor);
        c.rope.originalMaxPositions = original;
        for (const char* k : {"short_factor", "long_factor"}) {
            const QJsonValue value = s.value(QLatin1String(k));
            std::vector<double> factors;
            bool good = value.isArray() && value.toArray().size() == dims / 2;
            for (const QJsonValue& f : value.toArray()) {
                good = good && f.isDouble() && std::isfinite(f.toDouble()) && f.toDouble() > 0;
                factors.push_back(f.toDouble());
            }
            if (!good) {
                failConfig(
                    QStringLiteral("%1: rope_scaling.%2 must be a list of %3 positive numbers")
                        .arg(file, k)
                        .arg(dims / 2));
            }
            (QLatin1String(k) == QLatin1String("short_factor") ? c.shortRopeFactors
                                                               : c.longRopeFactors) = factors;
        }
    }
    const std::optional<int> window = r.optionalInteger("sliding_window", std::nullopt);
    setWindows(c, std::vector<bool>(static_cast<std::size_t>(c.layers), window.has_value()),
               window.value_or(0));
}

// Olmo2Config: post-norms only, q/k norm over the whole width, attention_bias on q, k, v, o.
void readOlmo2(const ConfigReader& r, Config& c) {
    LlamaDefaults d = decoderDefaults();
    d.vocab = 50304;
    d.normEps = 1e-5;
    d.readsMlpBias = false;
    readLlamaShape(r, c, d);
    readPlainRope(r, c, 10000.0);
}

// SmolLM3Config: no rotation on the layers no_rope_layers marks 0 (by default every
// no_rope_layer_interval-th), windows only with use_sliding_window.
void readSmolLm3(const ConfigReader& r, Config& c) {
    LlamaDefaults d = decoderDefaults();
    d.hidden = 2048;
    d.heads = 16;
    d.kvHeads = 4;
    d.layers = 36;
    d.vocab = 128256;
    d.intermediate = 11008;
    d.tie = true;
    readLlamaShape(r, c, d);
    readPlainRope(r, c, 2000000.0);
    const int interval = r.integer({"no_rope_layer_interval"}, 4);
    std::vector<bool> rotates;
    const QJsonValue list = r.object().value("no_rope_layers");
    if (list.isUndefined() || list.isNull()) {
        for (int i = 0; i < c.layers; ++i)
            rotates.push_back((i + 1) % interval != 0);
    } else {
        bool good = list.isArray() && list.toArray().size() >= c.layers;
        for (const QJsonValue& v : list.toArray()) {
            good = good && v.isDouble() && (v.toDouble() == 0 || v.toDouble() == 1);
            rotates.push_back(v.toDouble() == 1);
        }
        if (!good) {
            failConfig(QStringLiteral("%1: no_rope_layers must be a list of at least %2 values 0 "
                                      "or 1, got %3")
                           .arg(r.file())
                           .arg(c.layers)
                           .arg(jsonText(list)));
        }
    }
    c.layerRotary.clear();
    for (int i = 0; i < c.layers; ++i)
        c.layerRotary.push_back(rotates[static_cast<std::size_t>(i)] ? LayerRotary::Global
                                                                     : LayerRotary::None);
    const bool use = r.boolean({"use_sliding_window"}, false);
    const std::optional<int> window = r.optionalInteger("sliding_window", std::nullopt);
    std::vector<bool> fallback;
    for (int i = 0; i < c.layers; ++i)
        fallback.push_back(use && window && !rotates[static_cast<std::size_t>(i)]);
    const std::vector<bool> sliding = slidingLayers(r, c.layers, fallback);
    if (std::count(sliding.begin(), sliding.end(), true) > 0 && (!window || !use)) {
        failConfig(r.file() +
                   ": layer_types has sliding_attention but use_sliding_window is false or "
                   "sliding_window is null");
    }
    setWindows(c, sliding, window.value_or(0));
}

// GPTNeoXConfig: LayerNorm, per-head fused query_key_value, rotary_pct of each head turned
// (rotary_emb_base), the parallel residual unless use_parallel_residual is false, attention
// biases unless attention_bias is false, untied embed_out.
void readGptNeox(const ConfigReader& r, Config& c) {
    const QString& file = r.file();
    c.hidden = r.integer({"hidden_size"}, 6144);
    c.heads = r.integer({"num_attention_heads"}, 64);
    requireWholeHeads(file, c, "hidden_size", "num_attention_heads");
    c.kvHeads = c.heads;
    c.headDim = c.hidden / c.heads;
    c.layers = r.integer({"num_hidden_layers"}, 44);
    c.vocab = r.integer({"vocab_size"}, 50432);
    c.intermediate = r.integer({"intermediate_size"}, 24576);
    c.activation = activationNamed(r.string({"hidden_act"}, "gelu"), file, "hidden_act", true);
    c.normEps = r.number({"layer_norm_eps"}, 1e-5);
    c.placement = r.boolean({"use_parallel_residual"}, true) ? model::NormPlacement::Parallel
                                                             : model::NormPlacement::Pre;
    c.tieWordEmbeddings = r.boolean({"tie_word_embeddings"}, false);
    const QJsonObject s = ropeScalingObject(r);
    const ConfigReader sr(s, file + ": rope_scaling");
    double theta = r.number({"rope_theta"}, sr.number({"rope_theta"}, 10000.0));
    theta = r.number({"rotary_emb_base"}, theta);
    const double share = r.number({"rotary_pct", "partial_rotary_factor"},
                                  sr.number({"partial_rotary_factor"}, 0.25));
    if (!(share > 0 && share <= 1))
        failConfig(QStringLiteral("%1: rotary_pct %2 must be in (0, 1]").arg(file).arg(share));
    const int dims = static_cast<int>(c.headDim * share);
    c.rope = ropeFrom(file, s, theta, ropeTypeOf(s), dims, {"default", "linear", "llama3"});
    c.rope.rotaryDim = dims == c.headDim ? 0 : dims;
    c.attentionBias = c.outputBias = r.boolean({"attention_bias"}, true);
    c.mlpBias = true;
}

// configuration_modernbert.ModernBertConfig: pre-norm LayerNorms with biases only with
// norm_bias, every global_attn_every_n_layers-th layer global (transformers 5: layer_types), the
// others a bidirectional window |i − j| <= local_attention / 2, each kind with its own RoPE θ.
void readModernBert(const ConfigReader& r, Config& c) {
    const QString& file = r.file();
    c.hidden = r.integer({"hidden_size"}, 768);
    c.layers = r.integer({"num_hidden_layers"}, 22);
    c.heads = r.integer({"num_attention_heads"}, 12);
    c.vocab = r.integer({"vocab_size"}, 50368);
    c.intermediate = r.integer({"intermediate_size"}, 1152);
    c.normEps = r.number({"norm_eps"}, 1e-5);
    requireWholeHeads(file, c, "hidden_size", "num_attention_heads");
    c.kvHeads = c.heads;
    c.headDim = c.hidden / c.heads;
    c.activation =
        activationNamed(r.string({"hidden_activation"}, "gelu"), file, "hidden_activation");
    const bool normBias = r.boolean({"norm_bias"}, false);
    if (normBias) c.norm = model::NormType::LayerNorm;
    c.attentionBias = c.outputBias = r.boolean({"attention_bias"}, false);
    c.mlpBias = r.boolean({"mlp_bias"}, false);
    const QJsonValue causal = r.object().value("is_causal");
    if (!causal.isUndefined() && !causal.isNull() && causal != QJsonValue(false))
        failConfig(QStringLiteral("%1: is_causal %2 is not supported (the causal ModernBERT "
                                  "variant)")
                       .arg(file, jsonText(causal)));
    const QJsonValue scaling = r.object().value("rope_scaling");
    if (!scaling.isUndefined() && !scaling.isNull())
        failConfig(QStringLiteral("%1: rope_scaling %2 is not supported (ModernBERT uses plain "
                                  "RoPE)")
                       .arg(file, jsonText(scaling)));
    const int local = r.integer({"local_attention"}, 128);
    const int every = r.integer({"global_attn_every_n_layers"}, 3);
    std::vector<bool> fallback;
    for (int i = 0; i < c.layers; ++i)
        fallback.push_back(i % every != 0);
    const std::vector<bool> sliding = slidingLayers(r, c.layers, fallback);
    setWindows(c, sliding, local / 2 + 1);
    // ModernBertAttention: global_rope_theta for global layers; local_rope_theta for local ones,
    // the global θ when it is null, 10000 when it is absent.
    double global = r.number({"global_rope_theta"}, 160000.0);
    double localTheta = 10000.0;
    if (r.object().contains("local_rope_theta"))
        localTheta = r.number({"local_rope_theta"}, global);
    const QJsonValue parameters = r.object().value("rope_parameters");
    if (!parameters.isUndefined() && !parameters.isNull()) {
        if (!parameters.isObject()) failConfig(file + ": rope_parameters must be an object");
        for (const char* kind : {"full_attention", "sliding_attention"}) {
            const QJsonValue value = parameters.toObject().value(QLatin1String(kind));
            const QJsonObject o = value.toObject();
            const QJsonValue type = o.value("rope_type");
            if ((!falsy(value) && !value.isObject()) ||
                (!type.isUndefined() && type != QJsonValue("default")))
                failConfig(QStringLiteral("%1: rope_parameters.%2 %3 is not supported (default "
                                          "RoPE only)")
                               .arg(file, kind, jsonText(value)));
            const ConfigReader sr(o, file + ": rope_parameters." + kind);
            double& theta =
                QLatin1String(kind) == QLatin1String("full_attention") ? global : localTheta;
            theta = sr.number({"rope_theta"}, theta);
        }
    }
    c.rope = ropeFrom(file, {}, global, "default", c.headDim, {"default"});
    c.localRope = ropeFrom(file, {}, localTheta, "default", c.headDim, {"default"});
    c.layerRotary.clear();
    for (int i = 0; i < c.layers; ++i)
        c.layerRotary.push_back(sliding[static_cast<std::size_t>(i)] ? LayerRotary::Local
                                                                     : LayerRotary::Global);
    c.tieWordEmbeddings = r.boolean({"tie_word_embeddings"}, true);
    // ModernBertPredictionHead: dense (bias with classifier_bias), classifier_activation, norm;
    // the decoder's bias with decoder_bias.
    c.maskedLm.denseBias = r.boolean({"classifier_bias"}, false);
    c.maskedLm.normBias = normBias;
    c.maskedLm.decoderBias = r.boolean({"decoder_bias"}, true);
    c.maskedLm.normEps = c.normEps;
    try {
        c.maskedLm.activation = activationNamed(r.string({"classifier_activation"}, "gelu"), file,
                                                "classifier_activation (the masked-LM head's)");
    } catch (const model::ModelError& e) {
        c.maskedLm.activationProblem = e.what();
    }
}

// The reference's int_value: an integer field that may be 0 or negative (a -1 sentinel), its
// default when absent or null.
long long integerAtLeast(const ConfigReader& r, const char* name, long long fallback,
                         long long low) {
    const QJsonValue v = r.object().value(QLatin1String(name));
    if (v.isUndefined() || v.isNull()) return fallback;
    if (!isJsonInteger(v, {}, name) || v.toInteger() < low)
        failConfig(QStringLiteral("%1: %2 must be an integer >= %3, got %4")
                       .arg(r.file(), QLatin1String(name))
                       .arg(low)
                       .arg(jsonText(v)));
    return v.toInteger();
}

// A list of names, or the old "a|b" spelling of one (DebertaV2Config's pos_att_type and
// norm_rel_ebd), each one of `allowed`; absent or null: `fallback`.
QStringList nameList(const ConfigReader& r, const char* name, const QStringList& fallback,
                     const QStringList& allowed, const QString& expected) {
    const QJsonValue v = r.object().value(QLatin1String(name));
    if (v.isUndefined() || v.isNull()) return fallback;
    QStringList names;
    bool ok = v.isString() || v.isArray();
    if (v.isString()) {
        for (const QString& part : v.toString().toLower().split('|'))
            names << part.trimmed();
    } else if (v.isArray()) {
        for (const QJsonValue& item : v.toArray()) {
            ok = ok && item.isString();
            names << item.toString();
        }
    }
    for (const QString& n : names)
        ok = ok && allowed.contains(n);
    if (!ok)
        failConfig(QStringLiteral("%1: %2 %3 is not supported (%4)")
                       .arg(r.file(), QLatin1String(name), jsonText(v), expected));
    return names;
}

// configuration_deberta_v2.DebertaV2Config and the modeling code's getattr defaults: BERT's
// fields (DeBERTa's defaults), disentangled attention with pos_att_type's terms when
// relative_attention, log buckets with position_buckets, embeddings of embedding_size, positions
// only with position_biased_input, token types only when type_vocab_size > 0, the ConvLayer with
// conv_kernel_size, the legacy MLM head by default.
void readDebertaV2(const ConfigReader& r, Config& c) {
    const QString& file = r.file();
    c.hidden = r.integer({"hidden_size"}, 1536);
    c.layers = r.integer({"num_hidden_layers"}, 24);
    c.heads = r.integer({"num_attention_heads"}, 24);
    c.intermediate = r.integer({"intermediate_size"}, 6144);
    c.vocab = r.integer({"vocab_size"}, 128100);
    c.normEps = r.number({"layer_norm_eps"}, 1e-7);
    requireWholeHeads(file, c, "hidden_size", "num_attention_heads");
    c.kvHeads = c.heads;
    c.headDim = c.hidden / c.heads;
    c.activation = activationNamed(r.string({"hidden_act"}, "gelu"), file, "hidden_act");
    if (r.boolean({"is_decoder"}, false) || r.boolean({"add_cross_attention"}, false))
        failConfig(file + ": is_decoder / add_cross_attention are not supported");
    const QJsonValue headSize = r.object().value("attention_head_size");
    if (!headSize.isUndefined() && !headSize.isNull() && headSize != QJsonValue(c.headDim))
        failConfig(QStringLiteral("%1: attention_head_size %2 is not supported (only hidden_size "
                                  "/ num_attention_heads = %3)")
                       .arg(file, jsonText(headSize))
                       .arg(c.headDim));
    const QJsonValue positionType = r.object().value("position_embedding_type");
    if (!positionType.isUndefined() && !positionType.isNull() &&
        positionType != QJsonValue("absolute"))
        failConfig(QStringLiteral("%1: position_embedding_type %2 is not supported (only "
                                  "\"absolute\")")
                       .arg(file, jsonText(positionType)));
    const int maxPositions = r.integer({"max_position_embeddings"}, 512);
    c.tokenTypes = static_cast<int>(integerAtLeast(r, "type_vocab_size", 0, 0));
    c.embeddingSize = r.integer({"embedding_size"}, c.hidden);
    if (r.boolean({"position_biased_input"}, true)) {
        c.positions = maxPositions;
    } else {
        c.positionKind = model::PositionKind::None;
        c.positions = 0;
    }
    const bool relative = r.boolean({"relative_attention"}, false);
    const QStringList terms =
        nameList(r, "pos_att_type", {}, {"c2p", "p2c"}, "a list of \"c2p\", \"p2c\"");
    const QStringList norms =
        nameList(r, "norm_rel_ebd", {"none"}, {"none", "layer_norm"}, "\"none\", \"layer_norm\"");
    // DisentangledSelfAttention: the scale counts the terms even without relative_attention.
    c.attentionScaleFactor = 1.0 + terms.contains("c2p") + terms.contains("p2c");
    Config::DisentangledAttention& da = c.disentangled;
    da.contentToPosition = relative && terms.contains("c2p");
    da.positionToContent = relative && terms.contains("p2c");
    da.shareKeys = r.boolean({"share_att_key"}, false);
    da.normEmbeddings = norms.contains("layer_norm");
    const long long buckets = integerAtLeast(r, "position_buckets", -1, -1000000);
    long long maxRelative = integerAtLeast(r, "max_relative_positions", -1, -1000000);
    if (maxRelative < 1) maxRelative = maxPositions;
    if (buckets > 0 &&
        !(buckets >= 2 &&
          static_cast<double>(maxRelative - 1) / static_cast<double>(buckets / 2) > 1))
        failConfig(QStringLiteral("%1: position_buckets %2 with max_relative_positions %3: "
                                  "make_log_bucket_position needs (max_relative_positions - 1) / "
                                  "(position_buckets // 2) > 1")
                       .arg(file)
                       .arg(buckets)
                       .arg(maxRelative));
    da.buckets = static_cast<int>(std::max(0LL, buckets));
    da.maxRelative = static_cast<int>(std::min<long long>(maxRelative, 1'000'000'000));
    da.span = buckets > 0 ? da.buckets : da.maxRelative;
    c.convKernel = static_cast<int>(integerAtLeast(r, "conv_kernel_size", 0, 0));
    c.convGroups = r.integer({"conv_groups"}, 1);
    const QString convAct = r.string({"conv_act"}, "tanh");
    if (c.convKernel > 0) {
        if (c.convKernel % 2 == 0)
            failConfig(QStringLiteral("%1: conv_kernel_size %2 is not supported: with padding "
                                      "(k - 1) // 2 an even kernel shortens the sequence and HF's "
                                      "ConvLayer fails")
                           .arg(file)
                           .arg(c.convKernel));
        if (c.hidden % c.convGroups)
            failConfig(QStringLiteral("%1: conv_groups %2 does not divide hidden_size %3")
                           .arg(file)
                           .arg(c.convGroups)
                           .arg(c.hidden));
        c.convActivation =
            convAct == "tanh" ? Activation::Tanh : activationNamed(convAct, file, "conv_act");
    }
    c.tieWordEmbeddings = r.boolean({"tie_word_embeddings"}, true);
    c.maskedLm.legacy = r.boolean({"legacy"}, true);
    c.maskedLm.activation = c.activation;
    c.maskedLm.normEps = c.normEps;
}

// ---- Encoder–decoder families (seq2seq_families.py) ----

// A boolean as Hugging Face reads `if config.name:`: absent takes the class default, null is
// false.
bool truthyFlag(const ConfigReader& r, const char* name, bool fallback) {
    if (r.object().contains(QLatin1String(name)) && r.object().value(QLatin1String(name)).isNull())
        return false;
    return r.boolean({name}, fallback);
}

// tie_word_embeddings / scale_decoder_outputs (default true): null is refused, since
// transformers 4 reads it as false and 5 (T5Config: `is not False`) as true.
bool tieFlag(const ConfigReader& r, const char* name) {
    if (r.object().contains(QLatin1String(name)) && r.object().value(QLatin1String(name)).isNull())
        failConfig(QStringLiteral("%1: %2 null is not supported (transformers 4 reads it as false, "
                                  "5 as true)")
                       .arg(r.file(), QLatin1String(name)));
    return r.boolean({name}, true);
}

// An optional token id (decoder_start_token_id, eos_token_id): the config's when it is an
// integer, else the class default (−1: none).
long long tokenIdOr(const ConfigReader& r, const char* name, long long fallback) {
    const QJsonValue v = r.object().value(QLatin1String(name));
    if (v.isUndefined()) return fallback;
    if (!isJsonInteger(v, {}, name) || v.toInteger() < 0) return -1;
    return v.toInteger();
}

// configuration_t5.T5Config (T5, T5 v1.1, flan-t5): d_kv may make heads·d_kv ≠ d_model; the
// feed-forward is "ACT" or "gated-ACT" ("gated-gelu" is gelu_new), unless config.json stores
// dense_act_fn / is_gated_act; scores are not scaled; the buckets of the relative positions must
// leave HF's formula something to divide by. transformers 4 ties and rescales the head by
// tie_word_embeddings; a config.json written by 5 (scale_decoder_outputs) rescales by that and
// reads a stored lm_head.weight.
void readT5(const ConfigReader& r, Config& c) {
    const QString& file = r.file();
    c.hidden = r.integer({"d_model", "hidden_size"}, 512);
    c.heads = r.integer({"num_heads", "num_attention_heads"}, 8);
    c.headDim = r.integer({"d_kv", "head_dim"}, 64);
    c.layers = r.integer({"num_layers", "num_hidden_layers"}, 6);
    c.decoderLayers = r.integer({"num_decoder_layers"}, c.layers);
    c.intermediate = r.integer({"d_ff"}, 2048);
    c.vocab = r.integer({"vocab_size"}, 32128);
    c.normEps = r.number({"layer_norm_epsilon"}, 1e-6);
    c.relativeBuckets = r.integer({"relative_attention_num_buckets"}, 32);
    c.relativeBucketsUsed = c.relativeBuckets;
    c.relativeMaxDistance = r.integer({"relative_attention_max_distance"}, 128);
    const QString proj = r.string({"feed_forward_proj"}, "relu");
    const QStringList parts = proj.split('-');
    if (parts.size() > 2 || (parts.size() == 2 && parts[0] != "gated"))
        failConfig(QStringLiteral("%1: feed_forward_proj \"%2\" is not supported (T5Config takes "
                                  "\"ACT\" or \"gated-ACT\")")
                       .arg(file, proj));
    QString act = proj == "gated-gelu" ? QStringLiteral("gelu_new") : parts.last();
    bool gated = parts.size() == 2;
    if (r.object().contains("dense_act_fn") && r.object().value("dense_act_fn").isNull())
        failConfig(file +
                   ": dense_act_fn null is not supported (HF's ACT2FN has no activation "
                   "None)");
    act = r.string({"dense_act_fn"}, act);
    gated = truthyFlag(r, "is_gated_act", gated);
    c.activation = activationNamed(act, file, "feed_forward_proj / dense_act_fn");
    c.mlpKind = gated ? model::MlpKind::Gated : model::MlpKind::Plain;
    if (c.relativeBuckets < 4)
        failConfig(QStringLiteral("%1: relative_attention_num_buckets %2 is not supported (>= 4: "
                                  "the encoder's half has max_exact = num_buckets // 4, which HF "
                                  "divides by)")
                       .arg(file)
                       .arg(c.relativeBuckets));
    if (c.relativeMaxDistance <= c.relativeBuckets / 2)
        failConfig(QStringLiteral("%1: relative_attention_max_distance %2 is not supported: it "
                                  "must exceed relative_attention_num_buckets // 2 = %3 (HF "
                                  "divides by log(max_distance / max_exact))")
                       .arg(file)
                       .arg(c.relativeMaxDistance)
                       .arg(c.relativeBuckets / 2));
    const bool tie = tieFlag(r, "tie_word_embeddings");
    bool rescale = tie;
    if (r.object().contains("scale_decoder_outputs")) {
        rescale = tieFlag(r, "scale_decoder_outputs");
        c.storedLmHeadWins = true;
        c.tieWordEmbeddings = true;
    } else {
        c.tieWordEmbeddings = tie;
    }
    c.logitScale = rescale ? std::pow(static_cast<double>(c.hidden), -0.5) : 1.0;
    c.scaleAttentionWeights = false;
    c.kvHeads = c.heads;
    c.decoderHeads = c.heads;
    c.decoderHeadDim = c.headDim;
    c.decoderIntermediate = c.intermediate;
    c.decoderStartToken = tokenIdOr(r, "decoder_start_token_id", -1);
    c.eosToken = tokenIdOr(r, "eos_token_id", 1);
}

// configuration_bart.BartConfig / configuration_marian.MarianConfig: each stack its layers, heads
// and MLP width; nn.LayerNorm's fixed eps 1e-5; embeddings times √d with scale_embedding; BART's
// learned positions offset by 2, Marian's sinusoids; Marian's stacks share one token table unless
// share_encoder_decoder_embeddings is false. Legacy fields (normalize_before, ...) are ignored, as
// by transformers 4 and later.
void readBartLike(const ConfigReader& r, Config& c, bool marian) {
    const QString& file = r.file();
    c.hidden = r.integer({"d_model", "hidden_size"}, 1024);
    c.layers = r.integer({"encoder_layers"}, 12);
    c.decoderLayers = r.integer({"decoder_layers"}, 12);
    c.heads = r.integer({"encoder_attention_heads", "num_attention_heads"}, 16);
    c.decoderHeads = r.integer({"decoder_attention_heads"}, 16);
    c.intermediate = r.integer({"encoder_ffn_dim"}, 4096);
    c.decoderIntermediate = r.integer({"decoder_ffn_dim"}, 4096);
    const int maxPositions = r.integer({"max_position_embeddings"}, 1024);
    c.activation =
        activationNamed(r.string({"activation_function"}, "gelu"), file, "activation_function");
    c.vocab = r.integer({"vocab_size"}, marian ? 58101 : 50265);
    c.normEps = 1e-5;
    if (truthyFlag(r, "scale_embedding", false))
        c.embeddingScale = std::sqrt(static_cast<double>(c.hidden));
    requireWholeHeads(file, c, "d_model", "encoder_attention_heads");
    requireWholeHeads(file, c, "d_model", "decoder_attention_heads", c.decoderHeads);
    if (marian) {
        c.positions = maxPositions;
        c.sinusoidalPositionTable = true;
        c.sinusoidLayout = Config::SinusoidLayout::SplitHalves;
        c.shareStackEmbeddings = truthyFlag(r, "share_encoder_decoder_embeddings", true);
        const QJsonValue decoderVocab = r.object().value("decoder_vocab_size");
        if (!c.shareStackEmbeddings && !decoderVocab.isUndefined() && !decoderVocab.isNull() &&
            !(isJsonInteger(decoderVocab, {}, "decoder_vocab_size") &&
              decoderVocab.toInteger() == c.vocab))
            failConfig(QStringLiteral("%1: decoder_vocab_size %2 != vocab_size %3 with "
                                      "share_encoder_decoder_embeddings false is not supported "
                                      "(MarianModel copies a vocab_size table into the decoder "
                                      "while lm_head and final_logits_bias have "
                                      "decoder_vocab_size rows)")
                           .arg(file, jsonText(decoderVocab))
                           .arg(c.vocab));
    } else {
        c.positions = maxPositions + 2;
        c.positionRowOffset = 2;
    }
    c.tieWordEmbeddings = tieFlag(r, "tie_word_embeddings");
    c.kvHeads = c.heads;
    c.headDim = c.hidden / c.heads;
    c.decoderHeadDim = c.hidden / c.decoderHeads;
    c.decoderStartToken = tokenIdOr(r, "decoder_start_token_id", marian ? 58100 : 2);
    c.eosToken = tokenIdOr(r, "eos_token_id", marian ? 0 : 2);
}

void readBart(const ConfigReader& r, Config& c) {
    readBartLike(r, c, false);
}

void readMarian(const ConfigReader& r, Config& c) {
    readBartLike(r, c, true);
}

// Each family's config reader, beside its row in the family table (core/model/family.h).
struct FamilyConfigReader {
    Family family;
    ConfigRead read;
};
constexpr FamilyConfigReader kConfigReaders[] = {
    {Family::Gpt2, readGpt2},
    {Family::Bert, readBert},
    {Family::Llama, readLlama},
    {Family::Qwen3, readQwen3},
    {Family::Qwen2, readQwen2},
    {Family::Mistral, readMistral},
    {Family::Gemma, readGemma},
    {Family::Gemma2, readGemma2},
    {Family::Gemma3Text, readGemma3Text},
    {Family::Gemma3, readGemma3},
    {Family::Phi3, readPhi3},
    {Family::GptNeox, readGptNeox},
    {Family::Olmo2, readOlmo2},
    {Family::SmolLm3, readSmolLm3},
    {Family::Roberta, readRoberta},
    {Family::XlmRoberta, readXlmRoberta},
    {Family::DistilBert, readDistilbert},
    {Family::Mpnet, readMpnet},
    {Family::ModernBert, readModernBert},
    {Family::DebertaV2, readDebertaV2},
    {Family::T5, readT5},
    {Family::Bart, readBart},
    {Family::Marian, readMarian},
};

}  // namespace

ConfigRead configReaderFor(Family family) {
    for (const FamilyConfigReader& reader : kConfigReaders) {
        if (reader.family == family) return reader.read;
    }
    return nullptr;
}

}  // namespace ae::io
