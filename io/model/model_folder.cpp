#include "io/model/model_folder.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>
#include <QMap>
#include <QSet>
#include <QVariant>
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "io/formats/matrix_files.h"
#include "io/formats/safetensors.h"

namespace ae::io {
namespace {

using model::Activation;
using model::Config;
using model::Family;
using model::ModelError;

[[noreturn]] void fail(const QString& message) {
    throw ModelError(message.toStdString());
}

QString jsonText(const QJsonValue& v) {
    if (v.isString()) return '"' + v.toString() + '"';
    if (v.isNull() || v.isUndefined()) return "null";
    if (v.isBool()) return v.toBool() ? "true" : "false";
    if (v.isDouble()) return QString::number(v.toDouble(), 'g', 17);
    return QString::fromUtf8(
        QJsonDocument(v.isArray() ? QJsonDocument(v.toArray()) : QJsonDocument(v.toObject()))
            .toJson(QJsonDocument::Compact));
}

// Python's truthiness, for the reference's `cfg.get(...) or {}`.
bool falsy(const QJsonValue& v) {
    if (v.isNull() || v.isUndefined()) return true;
    if (v.isBool()) return !v.toBool();
    if (v.isDouble()) return v.toDouble() == 0;
    if (v.isString()) return v.toString().isEmpty();
    if (v.isArray()) return v.toArray().isEmpty();
    return v.toObject().isEmpty();
}

// The top-level keys of a JSON object text whose values are numbers written with a fraction or
// an exponent ("2.0", "1e3"): Python reads those as float, not int, and the reference refuses
// them where an integer belongs, but QJsonValue keeps an integral 2.0 as the integer 2. `text`
// has already parsed as a JSON object, so this scan needs no error handling.
QSet<QString> topLevelFloatLiterals(const QByteArray& text) {
    QSet<QString> keys;
    int depth = 0;
    QByteArray key;
    bool expectKey = false, afterColon = false;
    for (qsizetype i = 0; i < text.size(); ++i) {
        const char ch = text[i];
        if (ch == '"') {
            const qsizetype start = ++i;
            while (i < text.size() && text[i] != '"')
                i += text[i] == '\\' ? 2 : 1;
            if (depth == 1 && expectKey) key = text.mid(start, i - start);
            expectKey = false;
            afterColon = false;
        } else if (ch == '{' || ch == '[') {
            ++depth;
            expectKey = ch == '{' && depth == 1;
            afterColon = false;
        } else if (ch == '}' || ch == ']') {
            --depth;
        } else if (ch == ',') {
            expectKey = depth == 1;
        } else if (ch == ':') {
            afterColon = depth == 1;
        } else if (afterColon && (ch == '-' || (ch >= '0' && ch <= '9'))) {
            qsizetype end = i;
            while (end < text.size() && QByteArrayView("+-.eE0123456789").contains(text[end]))
                ++end;
            const QByteArray literal = text.mid(i, end - i);
            // The key as QJsonDocument decodes it: parse the quoted text.
            const QString name = QJsonDocument::fromJson("[\"" + key + "\"]").array()[0].toString();
            if (literal.contains('.') || literal.contains('e') || literal.contains('E')) {
                keys.insert(name);
            } else {
                keys.remove(name);  // a later duplicate wins, as in Python
            }
            i = end - 1;
            afterColon = false;
        } else if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r') {
            afterColon = false;
        }
    }
    return keys;
}

// A JSON number that Python reads as an int: no fraction or exponent in its text.
bool isJsonInteger(const QJsonValue& v, const QSet<QString>& floatLiterals, const QString& name) {
    return v.isDouble() && v.toDouble() == std::floor(v.toDouble()) &&
           !floatLiterals.contains(name);
}

// The reference's config_value: the first of `names` present and not null, type-checked, else
// the default. `file` starts messages.
class ConfigReader {
public:
    ConfigReader(const QJsonObject& object, QString file, QSet<QString> floatLiterals = {})
        : o_(object), file_(std::move(file)), floatLiterals_(std::move(floatLiterals)) {}

    std::optional<std::pair<QString, QJsonValue>> first(
        std::initializer_list<const char*> names) const {
        for (const char* n : names) {
            const QJsonValue v = o_.value(QLatin1String(n));
            if (!v.isUndefined() && !v.isNull()) return std::make_pair(QString(n), v);
        }
        return std::nullopt;
    }
    int integer(std::initializer_list<const char*> names, int fallback) const {
        const auto found = first(names);
        if (!found) return fallback;
        const auto& [name, v] = *found;
        if (!isJsonInteger(v, floatLiterals_, name) || v.toInteger() < 1 ||
            v.toInteger() > 1'000'000'000) {
            fail(QStringLiteral("%1: %2 must be a positive integer, got %3")
                     .arg(file_, name, jsonText(v)));
        }
        return static_cast<int>(v.toInteger());
    }
    double number(std::initializer_list<const char*> names, double fallback) const {
        const auto found = first(names);
        if (!found) return fallback;
        const auto& [name, v] = *found;
        if (!v.isDouble() || !std::isfinite(v.toDouble())) {
            fail(QStringLiteral("%1: %2 must be a number, got %3").arg(file_, name, jsonText(v)));
        }
        return v.toDouble();
    }
    bool boolean(std::initializer_list<const char*> names, bool fallback) const {
        const auto found = first(names);
        if (!found) return fallback;
        const auto& [name, v] = *found;
        if (!v.isBool()) {
            fail(QStringLiteral("%1: %2 must be true or false, got %3")
                     .arg(file_, name, jsonText(v)));
        }
        return v.toBool();
    }
    QString string(std::initializer_list<const char*> names, const QString& fallback) const {
        const auto found = first(names);
        if (!found) return fallback;
        const auto& [name, v] = *found;
        if (!v.isString()) {
            fail(QStringLiteral("%1: %2 must be a string, got %3").arg(file_, name, jsonText(v)));
        }
        return v.toString();
    }

private:
    const QJsonObject& o_;
    QString file_;
    QSet<QString> floatLiterals_;
};

Activation activationNamed(const QString& name, const QString& file, const char* field) {
    // activations.py ACT2FN
    if (name == "gelu") return Activation::GeluExact;
    if (name == "gelu_new" || name == "gelu_pytorch_tanh") return Activation::GeluTanh;
    if (name == "silu" || name == "swish") return Activation::Silu;
    if (name == "relu") return Activation::Relu;
    fail(QStringLiteral("%1: %2 \"%3\" is not supported (gelu, gelu_new, gelu_pytorch_tanh, "
                        "silu, swish, relu)")
             .arg(file, field, name));
}

void readGpt2(const QJsonObject&, const ConfigReader& r, const QString& file, Config& c) {
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
        fail(file + ": add_cross_attention is not supported");
    if (c.hidden % c.heads) {
        fail(QStringLiteral("%1: n_embd %2 is not a multiple of n_head %3")
                 .arg(file)
                 .arg(c.hidden)
                 .arg(c.heads));
    }
    c.kvHeads = c.heads;
    c.headDim = c.hidden / c.heads;
    c.activation = activationNamed(act, file, "activation_function");
}

void readBert(const QJsonObject&, const ConfigReader& r, const QString& file, Config& c) {
    // configuration_bert.BertConfig defaults
    c.hidden = r.integer({"hidden_size"}, 768);
    c.layers = r.integer({"num_hidden_layers"}, 12);
    c.heads = r.integer({"num_attention_heads"}, 12);
    c.positions = r.integer({"max_position_embeddings"}, 512);
    c.vocab = r.integer({"vocab_size"}, 30522);
    c.tokenTypes = r.integer({"type_vocab_size"}, 2);
    c.intermediate = r.integer({"intermediate_size"}, 3072);
    const QString act = r.string({"hidden_act"}, "gelu");
    c.normEps = r.number({"layer_norm_eps"}, 1e-12);
    if (r.string({"position_embedding_type"}, "absolute") != "absolute")
        fail(file + ": position_embedding_type: only \"absolute\" is supported");
    if (r.boolean({"is_decoder"}, false) || r.boolean({"add_cross_attention"}, false))
        fail(file + ": is_decoder / add_cross_attention are not supported");
    if (c.hidden % c.heads) {
        fail(QStringLiteral("%1: hidden_size %2 is not a multiple of num_attention_heads %3")
                 .arg(file)
                 .arg(c.hidden)
                 .arg(c.heads));
    }
    c.kvHeads = c.heads;
    c.headDim = c.hidden / c.heads;
    c.activation = activationNamed(act, file, "hidden_act");
}

// The defaults a Llama-shaped config falls back on, where its family's differ.
struct LlamaDefaults {
    int vocab = 32000;
    int intermediate = 11008;
    int kvHeads = 0;  // 0: num_attention_heads
    int headDim = 0;  // 0: hidden_size / num_attention_heads
    bool readsMlpBias = true;
    bool mayUseSlidingWindow = false;  // the config has use_sliding_window and layer_types
};

void readLlamaShaped(const QJsonObject& o, const ConfigReader& r, const QString& file, Config& c,
                     const LlamaDefaults& defaults) {
    c.hidden = r.integer({"hidden_size"}, 4096);
    c.heads = r.integer({"num_attention_heads"}, 32);
    c.layers = r.integer({"num_hidden_layers"}, 32);
    c.kvHeads = r.integer({"num_key_value_heads"}, defaults.kvHeads ? defaults.kvHeads : c.heads);
    c.vocab = r.integer({"vocab_size"}, defaults.vocab);
    c.intermediate = r.integer({"intermediate_size"}, defaults.intermediate);
    c.headDim = r.integer({"head_dim"}, defaults.headDim ? defaults.headDim : c.hidden / c.heads);
    const QString act = r.string({"hidden_act"}, "silu");
    c.normEps = r.number({"rms_norm_eps"}, 1e-6);
    c.attentionBias = r.boolean({"attention_bias"}, false);
    c.mlpBias = defaults.readsMlpBias ? r.boolean({"mlp_bias"}, false) : false;
    c.tieWordEmbeddings = r.boolean({"tie_word_embeddings"}, false);
    if (c.heads % c.kvHeads) {
        fail(QStringLiteral("%1: num_attention_heads %2 is not a multiple of "
                            "num_key_value_heads %3")
                 .arg(file)
                 .arg(c.heads)
                 .arg(c.kvHeads));
    }
    if (c.headDim < 1) {
        fail(QStringLiteral("%1: head_dim: hidden_size %2 / num_attention_heads %3 is 0")
                 .arg(file)
                 .arg(c.hidden)
                 .arg(c.heads));
    }
    if (c.headDim % 2) {
        fail(QStringLiteral("%1: head_dim %2 must be even for RoPE").arg(file).arg(c.headDim));
    }
    c.activation = activationNamed(act, file, "hidden_act");
    if (defaults.mayUseSlidingWindow) {
        bool sliding = r.boolean({"use_sliding_window"}, false);
        const QJsonValue types = o.value("layer_types");
        if (!falsy(types)) {
            if (!types.isArray()) fail(file + ": layer_types must be a list");
            for (const QJsonValue& t : types.toArray())
                sliding = sliding || t != QJsonValue("full_attention");
        }
        if (sliding) fail(file + ": sliding-window attention is not supported");
    }
    // RoPE: rope_theta + rope_scaling (transformers 4.x) or rope_parameters (5.x); "type" is the
    // old spelling of "rope_type".
    QJsonObject s = o.value("rope_parameters").toObject();
    const QJsonValue scalingValue = o.value("rope_scaling");
    if (!falsy(scalingValue)) {
        if (!scalingValue.isObject()) fail(file + ": rope_scaling must be an object or null");
        const QJsonObject scaling = scalingValue.toObject();
        for (auto it = scaling.begin(); it != scaling.end(); ++it)
            s.insert(it.key(), it.value());
    }
    const ConfigReader sr(s, file + ": rope_scaling");
    c.rope.theta = r.number({"rope_theta"}, sr.number({"rope_theta"}, 10000.0));
    if (!(c.rope.theta > 0)) {
        fail(QStringLiteral("%1: rope_theta must be positive, got %2").arg(file).arg(c.rope.theta));
    }
    const QJsonValue type = s.contains("rope_type")         ? s.value("rope_type")
                            : s.value("type").isUndefined() ? QJsonValue("default")
                                                            : s.value("type");
    const QString typeName = type.isString() ? type.toString() : QString();
    std::vector<const char*> need;
    if (typeName == "default") {
        c.rope.scaling = ops::RopeScaling::None;
    } else if (typeName == "linear") {
        c.rope.scaling = ops::RopeScaling::Linear;
        need = {"factor"};
    } else if (typeName == "llama3") {
        c.rope.scaling = ops::RopeScaling::Llama3;
        need = {"factor", "low_freq_factor", "high_freq_factor",
                "original_max_position_embeddings"};
    } else {
        fail(QStringLiteral("%1: rope type %2 is not supported (default, linear, llama3)")
                 .arg(file, jsonText(type)));
    }
    for (const char* k : need) {
        const QJsonValue v = s.value(QLatin1String(k));
        if (v.isUndefined()) fail(QStringLiteral("%1: rope_scaling.%2 is missing").arg(file, k));
        if (!v.isDouble() || !std::isfinite(v.toDouble()) || !(v.toDouble() > 0)) {
            fail(QStringLiteral("%1: rope_scaling.%2 must be a positive number, got %3")
                     .arg(file, k, jsonText(v)));
        }
    }
    if (!need.empty()) c.rope.factor = s.value("factor").toDouble();
    if (c.rope.scaling == ops::RopeScaling::Llama3) {
        c.rope.lowFrequencyFactor = s.value("low_freq_factor").toDouble();
        c.rope.highFrequencyFactor = s.value("high_freq_factor").toDouble();
        c.rope.originalMaxPositions = s.value("original_max_position_embeddings").toDouble();
        if (!(c.rope.highFrequencyFactor > c.rope.lowFrequencyFactor)) {
            fail(QStringLiteral("%1: rope_scaling.high_freq_factor %2 must exceed "
                                "low_freq_factor %3")
                     .arg(file)
                     .arg(c.rope.highFrequencyFactor)
                     .arg(c.rope.lowFrequencyFactor));
        }
    }
    if (r.number({"partial_rotary_factor"}, sr.number({"partial_rotary_factor"}, 1.0)) != 1.0)
        fail(file + ": partial_rotary_factor is not supported");
}

// configuration_llama.LlamaConfig defaults.
void readLlama(const QJsonObject& o, const ConfigReader& r, const QString& file, Config& c) {
    readLlamaShaped(o, r, file, c, LlamaDefaults{});
}

// configuration_qwen3.Qwen3Config defaults: no mlp_bias, and sliding windows it may ask for.
void readQwen3(const QJsonObject& o, const ConfigReader& r, const QString& file, Config& c) {
    LlamaDefaults defaults;
    defaults.vocab = 151936;
    defaults.intermediate = 22016;
    defaults.kvHeads = 32;
    defaults.headDim = 128;
    defaults.readsMlpBias = false;
    defaults.mayUseSlidingWindow = true;
    readLlamaShaped(o, r, file, c, defaults);
}

// Each family's config reader, beside its row in the family table (core/model/family.h).
using ConfigRead = void (*)(const QJsonObject&, const ConfigReader&, const QString&, Config&);
struct FamilyConfigReader {
    Family family;
    ConfigRead read;
};
constexpr FamilyConfigReader kConfigReaders[] = {
    {Family::Gpt2, readGpt2},
    {Family::Bert, readBert},
    {Family::Llama, readLlama},
    {Family::Qwen3, readQwen3},
};

ConfigRead configReaderFor(Family family) {
    for (const FamilyConfigReader& reader : kConfigReaders) {
        if (reader.family == family) return reader.read;
    }
    return nullptr;
}

}  // namespace

model::Config parseModelConfig(const QByteArray& json, const QString& file) {
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(json, &error);
    if (error.error != QJsonParseError::NoError) {
        fail(QStringLiteral("%1: not JSON (%2 at byte %3)")
                 .arg(file, error.errorString())
                 .arg(error.offset));
    }
    if (!document.isObject()) fail(file + ": not a JSON object");
    const QJsonObject o = document.object();
    const QJsonValue type = o.value("model_type");
    const QString name = type.isString() ? type.toString() : QString();
    const model::FamilyRow* row = model::familyRowNamed(name.toStdString());
    const ConfigRead read = row ? configReaderFor(row->family) : nullptr;
    if (!read) {
        fail(QStringLiteral("%1: model_type %2 is not supported (%3)")
                 .arg(file, jsonText(type), QString::fromStdString(model::supportedFamilies())));
    }
    const std::string missing = model::unimplementedAxes(row->architecture);
    if (!missing.empty()) {
        fail(QStringLiteral("%1: model_type %2: not implemented: %3")
                 .arg(file, jsonText(type), QString::fromStdString(missing)));
    }
    Config c;
    c.family = row->family;
    const ConfigReader r(o, file, topLevelFloatLiterals(json));
    read(o, r, file, c);
    // GPT2Config and LlamaConfig default it (50256, 1); BertConfig and Qwen3Config do not (the
    // row's bosDefault). Only the induction measurement reads it, so a value that is no token id
    // means "no BOS" rather than refusing a model that runs.
    const QJsonValue bos = o.value("bos_token_id");
    const long long bosDefault = row->bosDefault;
    const long long bosId = bos.isUndefined() ? bosDefault
                            : isJsonInteger(bos, topLevelFloatLiterals(json), "bos_token_id")
                                ? bos.toInteger()
                                : -1;
    c.bosToken = bosId >= 0 && bosId < c.vocab ? bosId : -1;
    return c;
}

std::vector<std::pair<QString, QString>> parseSafetensorsIndex(const QByteArray& json,
                                                               const QString& file) {
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(json, &error);
    if (error.error != QJsonParseError::NoError) {
        fail(QStringLiteral("%1: not JSON (%2 at byte %3)")
                 .arg(file, error.errorString())
                 .arg(error.offset));
    }
    if (!document.isObject() || !document.object().value("weight_map").isObject())
        fail(file + ": weight_map: expected an object of tensor name -> file name");
    const QJsonObject map = document.object().value("weight_map").toObject();
    std::vector<std::pair<QString, QString>> entries;
    for (auto it = map.begin(); it != map.end(); ++it) {
        const QString shard = it.value().toString();
        if (!it.value().isString() || shard.isEmpty() || shard == "." || shard == ".." ||
            shard.contains('/') || shard.contains('\\')) {
            fail(QStringLiteral("%1: weight_map[%2] is %3, not a file name in the folder")
                     .arg(file, it.key(), jsonText(it.value())));
        }
        entries.emplace_back(it.key(), shard);
    }
    return entries;
}

ModelFolder::~ModelFolder() = default;

ModelFolder::ModelFolder(const QString& directory) : directory_(directory) {
    const QDir dir(directory);
    if (!QFileInfo(directory).isDir()) fail(directory + ": not a folder");
    const QString configPath = dir.filePath("config.json");
    QFile configFile(configPath);
    if (!configFile.exists()) fail(configPath + ": missing (a model folder needs config.json)");
    if (!configFile.open(QIODevice::ReadOnly))
        fail(configPath + ": cannot read: " + configFile.errorString());
    model_.config = parseModelConfig(configFile.readAll(), configPath);
    model_.folder = directory.toStdString();
    const model::Config& c = model_.config;

    // Where each tensor is: one file, or the index's shards (each opened once).
    std::map<QString, const SafetensorsFile*> where;
    const QString single = dir.filePath("model.safetensors");
    const QString indexPath = dir.filePath("model.safetensors.index.json");
    QString weightsLabel;  // what a missing tensor is reported against
    try {
        if (QFileInfo(single).isFile()) {
            files_.push_back(std::make_unique<SafetensorsFile>(single));
            for (const TensorInfo& t : files_.back()->tensors())
                where[t.name] = files_.back().get();
            weightsLabel = single;
        } else if (QFileInfo(indexPath).isFile()) {
            QFile indexFile(indexPath);
            if (!indexFile.open(QIODevice::ReadOnly))
                fail(indexPath + ": cannot read: " + indexFile.errorString());
            std::map<QString, const SafetensorsFile*> shards;
            for (const auto& [name, shard] :
                 parseSafetensorsIndex(indexFile.readAll(), indexPath)) {
                auto found = shards.find(shard);
                if (found == shards.end()) {
                    const QString path = dir.filePath(shard);
                    if (!QFileInfo(path).isFile())
                        fail(QStringLiteral("%1: shard %2 is missing").arg(indexPath, path));
                    files_.push_back(std::make_unique<SafetensorsFile>(path));
                    found = shards.emplace(shard, files_.back().get()).first;
                }
                if (!found->second->find(name))
                    fail(QStringLiteral("%1: %2 is not in %3").arg(indexPath, name, shard));
                where[name] = found->second;
            }
            weightsLabel = indexPath;
        } else if (QFileInfo(dir.filePath("pytorch_model.bin")).isFile() ||
                   QFileInfo(dir.filePath("pytorch_model.bin.index.json")).isFile()) {
            fail(directory +
                 ": holds only pytorch_model.bin: only safetensors weights are read (a pickle "
                 "can run code when loaded). Convert it once with Python: "
                 "transformers' AutoModel.from_pretrained(DIR).save_pretrained(DIR, "
                 "safe_serialization=True) writes model.safetensors");
        } else {
            fail(directory + ": neither model.safetensors nor model.safetensors.index.json");
        }
    } catch (const MatrixFileError& e) {
        fail(QString::fromStdString(e.what()));
    }

    // The prefix this checkpoint uses, then every tensor the family needs, shape-checked.
    const model::FamilyRow& row = model::familyRow(c.family);
    const std::vector<std::string>& prefixes = row.prefixes;
    const std::string probe = row.prefixProbe;
    std::string prefix;
    bool found = false;
    for (const std::string& p : prefixes) {
        if (where.count(QString::fromStdString(p + probe))) {
            prefix = p;
            found = true;
            break;
        }
    }
    if (!found) {
        QStringList names;
        for (const std::string& p : prefixes)
            names << QString::fromStdString(p + probe);
        fail(weightsLabel + ": no " + names.join(" or "));
    }
    // Every layer has at least two tensors: a config asking for more layers than that is refused
    // before a slot is made for each (n_layer may say a billion).
    if (static_cast<double>(c.layers) * 2 > static_cast<double>(where.size())) {
        fail(QStringLiteral("%1: %2 tensors cannot hold the %3 layers config.json asks for")
                 .arg(weightsLabel)
                 .arg(where.size())
                 .arg(c.layers));
    }
    model::ModelWeights& w = model_.weights;
    std::map<const unsigned char*, bool> counted;  // a tensor read twice is stored once
    for (const model::TensorSpec& spec : model::tensorSpecs(c, w)) {
        QString name = QString::fromStdString(spec.topLevel ? spec.name : prefix + spec.name);
        if (!where.count(name) && !spec.alias.empty() &&
            where.count(QString::fromStdString(prefix + spec.alias)))
            name = QString::fromStdString(prefix + spec.alias);
        const auto it = where.find(name);
        if (it == where.end()) {
            fail(QStringLiteral("%1: missing tensor %2 (expected %3)")
                     .arg(weightsLabel, name, shapeText(spec.shape)));
        }
        const SafetensorsFile& file = *it->second;
        const TensorInfo& info = *file.find(name);
        if (info.shape != spec.shape) {
            fail(QStringLiteral("%1: tensor %2 has shape %3, expected %4")
                     .arg(file.fileName(), name, shapeText(info.shape), shapeText(spec.shape)));
        }
        DType dtype;
        if (!dtypeFromName(info.dtype.toStdString(), &dtype)) {
            fail(QStringLiteral("%1: tensor %2 has dtype %3, expected F32, F16, BF16 or F64")
                     .arg(file.fileName(), name, info.dtype));
        }
        model::TensorRef& ref = *spec.slot;
        ref.name = name.toStdString();
        ref.file = file.fileName().toStdString();
        ref.dtype = dtype;
        ref.rows = spec.shape.size() == 2 ? spec.shape[0] : 1;
        ref.cols = spec.shape.back();
        ref.data = file.tensorData(info);
        const long long bad = firstNonFinite(ref.data, dtype, ref.count());
        if (bad >= 0) {
            fail(QStringLiteral("%1: tensor %2 %3 has a non-finite value at element %4")
                     .arg(file.fileName(), name, shapeText(info.shape))
                     .arg(bad));
        }
        if (!counted[ref.data]) model_.storedBytes += ref.bytes();
        counted[ref.data] = true;
    }
    // LlamaForCausalLM / GPT2LMHeadModel: with tie_word_embeddings the head is the token table
    // (a stored lm_head.weight is then ignored).
    if (c.isDecoder() && c.tieWordEmbeddings) w.lmHead = w.tokenEmbedding;
}

}  // namespace ae::io
