#include "bench/model_benchmark.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <QStandardPaths>
#include <QStorageInfo>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/model/family.h"
#include "core/model/model.h"
#include "core/model/workbench.h"
#include "core/scene.h"
#include "io/formats/safetensors_writer.h"
#include "io/model/model_folder.h"

namespace ae::cli {
namespace {

// The shapes `bench --model --shape` writes: each a real checkpoint's config.json (its sizes and
// options), filled with random weights. gpt2-small's text is the one earlier builds wrote, so a
// cached folder stays valid.
struct BenchShape {
    const char* name;
    const char* config;
    DType dtype = DType::F32;  // as the checkpoint stores its weights
    int shards = 1;            // more than one: model-0000k-of-0000n.safetensors and an index
};

const BenchShape kShapes[] = {
    {"gpt2-small", R"({
  "architectures": ["GPT2LMHeadModel"],
  "model_type": "gpt2",
  "vocab_size": 50257,
  "n_positions": 1024,
  "n_embd": 768,
  "n_layer": 12,
  "n_head": 12,
  "n_inner": 3072,
  "activation_function": "gelu_new",
  "layer_norm_epsilon": 1e-05,
  "scale_attn_weights": true,
  "scale_attn_by_inverse_layer_idx": false,
  "tie_word_embeddings": true,
  "torch_dtype": "float32"
}
)"},
    // Qwen2.5-0.5B: grouped-query attention (14 heads, 2 kv heads), q/k/v biases, SwiGLU, a
    // tied head over 151 936 tokens.
    {"qwen2.5-0.5b", R"({
  "architectures": ["Qwen2ForCausalLM"],
  "model_type": "qwen2",
  "vocab_size": 151936,
  "hidden_size": 896,
  "intermediate_size": 4864,
  "num_hidden_layers": 24,
  "num_attention_heads": 14,
  "num_key_value_heads": 2,
  "hidden_act": "silu",
  "max_position_embeddings": 32768,
  "rms_norm_eps": 1e-06,
  "rope_theta": 1000000.0,
  "sliding_window": 32768,
  "use_sliding_window": false,
  "max_window_layers": 24,
  "tie_word_embeddings": true,
  "bos_token_id": 151643,
  "eos_token_id": 151643,
  "torch_dtype": "float32"
}
)"},
    // Pythia-410M (GPT-NeoX): LayerNorm, a quarter of each head turned, the parallel residual,
    // an untied head.
    {"pythia-410m", R"({
  "architectures": ["GPTNeoXForCausalLM"],
  "model_type": "gpt_neox",
  "vocab_size": 50304,
  "hidden_size": 1024,
  "intermediate_size": 4096,
  "num_hidden_layers": 24,
  "num_attention_heads": 16,
  "hidden_act": "gelu",
  "max_position_embeddings": 2048,
  "rotary_pct": 0.25,
  "rotary_emb_base": 10000,
  "layer_norm_eps": 1e-05,
  "use_parallel_residual": true,
  "tie_word_embeddings": false,
  "bos_token_id": 0,
  "eos_token_id": 0,
  "torch_dtype": "float32"
}
)"},
    // Llama-3.2-1B: grouped-query attention (32 heads, 8 kv heads), llama3 rotary scaling, a tied
    // head over 128 256 tokens, BF16 as released.
    {"llama3-1b", R"({
  "architectures": ["LlamaForCausalLM"],
  "model_type": "llama",
  "vocab_size": 128256,
  "hidden_size": 2048,
  "intermediate_size": 8192,
  "num_hidden_layers": 16,
  "num_attention_heads": 32,
  "num_key_value_heads": 8,
  "head_dim": 64,
  "hidden_act": "silu",
  "max_position_embeddings": 131072,
  "rms_norm_eps": 1e-05,
  "rope_theta": 500000.0,
  "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                   "original_max_position_embeddings": 8192, "rope_type": "llama3"},
  "tie_word_embeddings": true,
  "bos_token_id": 128000,
  "eos_token_id": 128001,
  "torch_dtype": "bfloat16"
}
)",
     DType::BF16, 1},
    // Llama-3.1-8B: 32 layers of 4096, an untied head, BF16 in four shards with an index, as the
    // hub serves it (15 GiB).
    {"llama3-8b", R"({
  "architectures": ["LlamaForCausalLM"],
  "model_type": "llama",
  "vocab_size": 128256,
  "hidden_size": 4096,
  "intermediate_size": 14336,
  "num_hidden_layers": 32,
  "num_attention_heads": 32,
  "num_key_value_heads": 8,
  "hidden_act": "silu",
  "max_position_embeddings": 131072,
  "rms_norm_eps": 1e-05,
  "rope_theta": 500000.0,
  "rope_scaling": {"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                   "original_max_position_embeddings": 8192, "rope_type": "llama3"},
  "tie_word_embeddings": false,
  "bos_token_id": 128000,
  "eos_token_id": 128001,
  "torch_dtype": "bfloat16"
}
)",
     DType::BF16, 4},
    // t5-small: the original T5, encoder-decoder, 6 + 6 layers of 512, ReLU feed-forward, one
    // bucketed position bias per stack, the head tied and rescaled. Run with source and decoder
    // inputs of L tokens each.
    {"t5-small", R"({
  "architectures": ["T5ForConditionalGeneration"],
  "model_type": "t5",
  "vocab_size": 32128,
  "d_model": 512,
  "d_kv": 64,
  "d_ff": 2048,
  "num_layers": 6,
  "num_decoder_layers": 6,
  "num_heads": 8,
  "relative_attention_num_buckets": 32,
  "relative_attention_max_distance": 128,
  "feed_forward_proj": "relu",
  "layer_norm_epsilon": 1e-06,
  "is_encoder_decoder": true,
  "pad_token_id": 0,
  "eos_token_id": 1,
  "decoder_start_token_id": 0,
  "torch_dtype": "float32"
}
)"},
    // bart-base: encoder-decoder, 6 + 6 post-norm layers of 768, learned positions, gelu, a tied
    // head with final_logits_bias over 50 265 tokens.
    {"bart-base", R"({
  "architectures": ["BartForConditionalGeneration"],
  "model_type": "bart",
  "vocab_size": 50265,
  "d_model": 768,
  "encoder_layers": 6,
  "decoder_layers": 6,
  "encoder_attention_heads": 12,
  "decoder_attention_heads": 12,
  "encoder_ffn_dim": 3072,
  "decoder_ffn_dim": 3072,
  "activation_function": "gelu",
  "max_position_embeddings": 1024,
  "scale_embedding": false,
  "is_encoder_decoder": true,
  "pad_token_id": 1,
  "bos_token_id": 0,
  "eos_token_id": 2,
  "decoder_start_token_id": 2,
  "torch_dtype": "float32"
}
)"},
    // Helsinki-NLP/opus-mt-en-de (Marian): encoder-decoder, 6 + 6 post-norm layers of 512,
    // sinusoid positions (stored, as the converted checkpoints hold them), embeddings × √512,
    // swish, a shared table of 58 101 tokens.
    {"opus-mt", R"({
  "architectures": ["MarianMTModel"],
  "model_type": "marian",
  "vocab_size": 58101,
  "decoder_vocab_size": 58101,
  "d_model": 512,
  "encoder_layers": 6,
  "decoder_layers": 6,
  "encoder_attention_heads": 8,
  "decoder_attention_heads": 8,
  "encoder_ffn_dim": 2048,
  "decoder_ffn_dim": 2048,
  "activation_function": "swish",
  "max_position_embeddings": 512,
  "scale_embedding": true,
  "share_encoder_decoder_embeddings": true,
  "static_position_embeddings": true,
  "is_encoder_decoder": true,
  "pad_token_id": 58100,
  "eos_token_id": 0,
  "decoder_start_token_id": 58100,
  "torch_dtype": "float32"
}
)"},
};

const BenchShape& shapeNamed(const QString& name) {
    for (const BenchShape& shape : kShapes)
        if (name == QLatin1String(shape.name)) return shape;
    throw std::invalid_argument("bench --model: --shape: expected " +
                                modelBenchShapes().join(", ").toStdString() + ", got " +
                                name.toStdString());
}

model::Config shapeConfig(const BenchShape& shape) {
    return io::parseModelConfig(QByteArray(shape.config), QStringLiteral("config.json"));
}

enum class Fill { Random, One, Zero };
struct TensorPlan {
    std::string name;
    std::vector<long long> shape;
    Fill fill;
    long long count() const {
        long long n = 1;
        for (long long s : shape)
            n *= s;
        return n;
    }
};

// Every tensor the family reads for `config` (core/model/model.h's tensorSpecs; an
// encoder–decoder model's two stacks, a tensor they share once), under the family's first
// prefix: a norm's weight 1 and bias 0, everything else random.
std::vector<TensorPlan> tensorPlan(const model::Config& config) {
    const std::string prefix = model::familyRow(config.family).prefixes.front();
    std::vector<model::Config> stacks{config};
    if (config.isEncoderDecoder())
        stacks = {model::stackConfig(config, model::Config::Stack::Encoder),
                  model::stackConfig(config, model::Config::Stack::Decoder)};
    std::vector<model::TensorSpec> specs;
    std::vector<model::ModelWeights> weights(stacks.size());
    for (std::size_t i = 0; i < stacks.size(); ++i)
        for (model::TensorSpec& spec : model::tensorSpecs(stacks[i], weights[i]))
            if (std::none_of(specs.begin(), specs.end(),
                             [&](const model::TensorSpec& s) { return s.name == spec.name; }))
                specs.push_back(std::move(spec));
    std::vector<TensorPlan> plan;
    for (const model::TensorSpec& spec : specs) {
        const std::string& name = spec.name;
        const bool norm = spec.shape.size() == 1 && (name.find("norm") != std::string::npos ||
                                                     name.find("ln_") != std::string::npos);
        const bool bias = name.size() > 5 && name.compare(name.size() - 5, 5, ".bias") == 0;
        plan.push_back({spec.topLevel ? name : prefix + name, spec.shape,
                        !norm  ? Fill::Random
                        : bias ? Fill::Zero
                               : Fill::One});
    }
    return plan;
}

// One weights file of a shape: its name, its tensors (in plan order) and its header.
struct Shard {
    QString file;
    std::vector<TensorPlan> tensors;
    std::string header;  // io/formats/safetensors_writer.h's layout
    long long dataBytes = 0;
};

// The plan split into the shape's files: one model.safetensors, or n shards of about equal size
// (whole tensors, in order) named as the hub names them.
std::vector<Shard> shardsOf(const BenchShape& shape, const std::vector<TensorPlan>& plan) {
    const double bytesPerValue = dtypeSize(shape.dtype);
    double total = 0;
    for (const TensorPlan& t : plan)
        total += static_cast<double>(t.count()) * bytesPerValue;
    std::vector<Shard> shards(static_cast<size_t>(shape.shards));
    double written = 0;
    for (const TensorPlan& t : plan) {
        const auto index = std::min<size_t>(
            shards.size() - 1,
            static_cast<size_t>(written / total * static_cast<double>(shards.size())));
        shards[index].tensors.push_back(t);
        written += static_cast<double>(t.count()) * bytesPerValue;
    }
    for (size_t i = 0; i < shards.size(); ++i) {
        Shard& shard = shards[i];
        shard.file = shape.shards == 1 ? QStringLiteral("model.safetensors")
                                       : QStringLiteral("model-%1-of-%2.safetensors")
                                             .arg(i + 1, 5, 10, QLatin1Char('0'))
                                             .arg(shape.shards, 5, 10, QLatin1Char('0'));
        std::vector<io::TensorHeaderEntry> entries;
        for (const TensorPlan& t : shard.tensors)
            entries.push_back({t.name, shape.dtype, t.shape});
        const io::SafetensorsLayout layout =
            io::safetensorsLayout(entries, {{"format", "pt"}, {"written_by", "bench --model"}});
        shard.header = layout.header.toStdString();
        shard.dataBytes = layout.dataBytes;
    }
    return shards;
}

// model.safetensors.index.json of sharded weights: every tensor's file.
QByteArray indexOf(const std::vector<Shard>& shards) {
    QJsonObject weightMap;
    double total = 0;
    for (const Shard& shard : shards) {
        total += static_cast<double>(shard.dataBytes);
        for (const TensorPlan& t : shard.tensors)
            weightMap.insert(QString::fromStdString(t.name), shard.file);
    }
    return QJsonDocument(QJsonObject{{"metadata", QJsonObject{{"total_size", total}}},
                                     {"weight_map", weightMap}})
        .toJson();
}

// A folder is reused when its config is ours and each weights file has exactly the size and
// header ours would (the reader then checks every tensor's shape when it opens it).
bool cachedModelValid(const QString& folder, const BenchShape& shape,
                      const std::vector<Shard>& shards) {
    QFile config(QDir(folder).filePath("config.json"));
    if (!config.open(QIODevice::ReadOnly) || config.readAll() != QByteArray(shape.config))
        return false;
    for (const Shard& shard : shards) {
        QFile weights(QDir(folder).filePath(shard.file));
        if (weights.size() != static_cast<qint64>(shard.header.size()) + shard.dataBytes ||
            !weights.open(QIODevice::ReadOnly) ||
            weights.read(static_cast<qint64>(shard.header.size())) !=
                QByteArray::fromStdString(shard.header))
            return false;
    }
    return true;
}

// Refuses, before writing anything, a folder whose disk cannot hold the weights with 1 GiB to
// spare.
void requireDiskRoom(const QString& folder, const std::vector<Shard>& shards) {
    double needed = 0;
    for (const Shard& shard : shards)
        needed += static_cast<double>(shard.header.size() + shard.dataBytes);
    const QStorageInfo disk(folder);
    const double available = static_cast<double>(disk.bytesAvailable());
    if (disk.isValid() && available >= 0 && needed + (1 << 30) > available) {
        throw std::invalid_argument("bench --model: " + folder.toStdString() +
                                    ": the weights need " + gibibytesText(needed) +
                                    " and the disk has " + gibibytesText(available) +
                                    " free (keep 1 GiB spare); give --cache-dir on a larger disk");
    }
}

// Random weights with a fixed seed: uniform with GPT-2's initial standard deviation 0.02, which
// keeps the residual stream and logits of many layers finite and unremarkable. BF16 values are
// the floats' top halves.
void writeModel(const QString& folder, const BenchShape& shape, const std::vector<Shard>& shards) {
    if (!QDir().mkpath(folder))
        throw std::invalid_argument("bench --model: cannot create " + folder.toStdString());
    requireDiskRoom(folder, shards);
    // The config first goes: a folder with our config and weights of the right sizes is complete.
    QFile::remove(QDir(folder).filePath("config.json"));
    uint64_t state = 0x9E3779B97F4A7C15ull;  // SplitMix64, seed fixed
    auto next = [&state] {
        uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    };
    const float halfWidth = 0.02f * std::sqrt(3.0f);  // uniform on ±a has sd a/√3
    std::vector<float> chunk;
    std::vector<uint16_t> halves;
    for (const Shard& shard : shards) {
        QSaveFile weights(QDir(folder).filePath(shard.file));
        if (!weights.open(QIODevice::WriteOnly))
            throw std::invalid_argument("bench --model: cannot write " +
                                        weights.fileName().toStdString());
        weights.write(shard.header.data(), static_cast<qint64>(shard.header.size()));
        for (const TensorPlan& t : shard.tensors) {
            const long long count = t.count();
            for (long long done = 0; done < count;) {
                const long long n = std::min<long long>(count - done, 1 << 20);
                chunk.resize(static_cast<size_t>(n));
                for (float& x : chunk) {
                    if (t.fill == Fill::Random)
                        x = halfWidth *
                            (static_cast<float>(next() >> 40) * (2.0f / 16777216.0f) - 1.0f);
                    else
                        x = t.fill == Fill::One ? 1.0f : 0.0f;
                }
                if (shape.dtype == DType::BF16) {
                    halves.resize(chunk.size());
                    for (size_t i = 0; i < chunk.size(); ++i) {
                        uint32_t bits;
                        std::memcpy(&bits, &chunk[i], sizeof bits);
                        halves[i] = static_cast<uint16_t>(bits >> 16);
                    }
                    weights.write(reinterpret_cast<const char*>(halves.data()),
                                  static_cast<qint64>(n * sizeof(uint16_t)));
                } else {
                    weights.write(reinterpret_cast<const char*>(chunk.data()),
                                  static_cast<qint64>(n * sizeof(float)));
                }
                done += n;
            }
        }
        if (!weights.commit())
            throw std::invalid_argument("bench --model: cannot write " +
                                        weights.fileName().toStdString() + ": " +
                                        weights.errorString().toStdString());
    }
    if (shards.size() > 1) {
        QSaveFile index(QDir(folder).filePath("model.safetensors.index.json"));
        if (!index.open(QIODevice::WriteOnly) || index.write(indexOf(shards)) < 0 ||
            !index.commit())
            throw std::invalid_argument("bench --model: cannot write " +
                                        index.fileName().toStdString());
    }
    // The config last: a folder with our config is a complete one.
    QSaveFile config(QDir(folder).filePath("config.json"));
    if (!config.open(QIODevice::WriteOnly) || config.write(shape.config) < 0 || !config.commit())
        throw std::invalid_argument("bench --model: cannot write " +
                                    config.fileName().toStdString());
}

double elapsedMs(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
}

// Linux: the peak resident set since the last resetPeakRss(), in MiB (-1 elsewhere).
double peakRssMb() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
    return -1;
}
void resetPeakRss() {
    std::ofstream clear("/proc/self/clear_refs");
    clear << "5";
}

// Multiply-adds ×2 of one forward pass at length L: per layer the projections (q, k and v at
// their widths, the output, the MLP's two or, gated, three), q·kᵀ and weights·v over every head;
// then the LM head.
double forwardGflop(const model::Config& c, long long L) {
    const double d = c.hidden, inner = c.intermediate, q = double(c.heads) * c.headDim,
                 kv = double(c.kvHeads) * c.headDim;
    const double mlpMatrices = c.architecture().mlp == model::MlpKind::Gated ? 3 : 2;
    const double layerMacs =
        L * d * (q + 2 * kv) + L * q * d + mlpMatrices * L * d * inner + 2.0 * L * L * q;
    return 2.0 * (c.layers * layerMacs + L * d * c.vocab) / 1e9;
}

// The same for an encoder–decoder model on L source and L decoder tokens: each stack's layers
// (the decoder's with its cross-attention: q and the output at L rows, k and v over the L encoder
// rows, q·kᵀ and weights·v), the LM head on the decoder's rows.
double encoderDecoderGflop(const model::Config& c, long long L) {
    const model::Config encoder = model::stackConfig(c, model::Config::Stack::Encoder);
    const model::Config decoder = model::stackConfig(c, model::Config::Stack::Decoder);
    const auto stack = [L](const model::Config& s) {
        const double d = s.hidden, inner = s.intermediate, q = double(s.heads) * s.headDim;
        const double mlp = s.architecture().mlp == model::MlpKind::Gated ? 3 : 2;
        return s.layers * (3 * L * d * q + L * q * d + mlp * L * d * inner + 2.0 * L * L * q);
    };
    const double q = double(decoder.heads) * decoder.headDim, d = decoder.hidden;
    const double cross = decoder.layers * (3 * L * d * q + L * q * d + 2.0 * L * L * q);
    return 2.0 * (stack(encoder) + stack(decoder) + cross + L * d * decoder.vocab) / 1e9;
}

QByteArray jsonLine(const QJsonObject& object) {
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}
// Rounded to `unit` (0.1, 0.01): divided by 1/unit, an integer, so that the JSON prints short.
double rounded(double value, double unit) {
    const double perUnit = std::round(1.0 / unit);
    return std::round(value * perUnit) / perUnit;
}

}  // namespace

QStringList modelBenchShapes() {
    QStringList names;
    for (const BenchShape& shape : kShapes)
        names << QLatin1String(shape.name);
    return names;
}

QString defaultModelBenchFolder(const QString& shape) {
    QString cache = qEnvironmentVariable("XDG_CACHE_HOME");
    if (cache.isEmpty()) cache = QDir::home().filePath(".cache");
    return QDir(cache).filePath(QStringLiteral("attention-explorer/bench-") +
                                QLatin1String(shapeNamed(shape).name));
}

void ensureModelBenchFolder(const QString& cacheFolder, const QString& shapeName) {
    const BenchShape& shape = shapeNamed(shapeName);
    const std::vector<Shard> shards = shardsOf(shape, tensorPlan(shapeConfig(shape)));
    if (cachedModelValid(cacheFolder, shape, shards)) return;
    const auto start = std::chrono::steady_clock::now();
    writeModel(cacheFolder, shape, shards);
    std::printf("%s\n", jsonLine(QJsonObject{{"wrote", cacheFolder},
                                             {"write_ms", rounded(elapsedMs(start), 0.1)}})
                            .constData());
    std::fflush(stdout);
}

int workbenchBenchmark(const std::vector<int>& sizes, int reps, const QString& cacheFolder) {
    ensureModelBenchFolder(cacheFolder);
    const io::ModelFolder folder(cacheFolder);
    const model::Model& m = folder.model();
    const model::Config& c = m.config;
    for (int length : sizes) {
        if (length < 2 || (c.positions > 0 && length > c.positions))
            throw std::invalid_argument("bench --workbench: --sizes " + std::to_string(length) +
                                        ": expected 2 to " + std::to_string(c.positions));
        // Clean and corrupted texts differing at one position, the metric logit 0 − logit 1 at
        // the last.
        std::vector<long long> clean(static_cast<size_t>(length)), corrupt;
        for (int i = 0; i < length; ++i)
            clean[static_cast<size_t>(i)] = (i * 7919 + 13) % c.vocab;
        corrupt = clean;
        corrupt[static_cast<size_t>(length / 2)] =
            (clean[static_cast<size_t>(length / 2)] + 1) % c.vocab;
        std::vector<double> full;
        for (int r = 0; r <= reps; ++r) {
            const auto start = std::chrono::steady_clock::now();
            const model::ModelRun<float> run = model::runModel<float>(m, corrupt);
            if (r > 0) full.push_back(elapsedMs(start));  // the first is the warm-up
        }
        std::sort(full.begin(), full.end());
        const int patchedRuns = 2 * c.layers * c.heads;
        const double naiveMs = patchedRuns * full[full.size() / 2];
        std::vector<double> sweeps;
        for (int r = 0; r < std::max(1, reps / 3); ++r) {
            const auto start = std::chrono::steady_clock::now();
            model::activationPatching<float>(m, clean, corrupt, -1, 0, 1, {},
                                             model::PatchingSweeps{true, true, false});
            sweeps.push_back(elapsedMs(start));
        }
        std::sort(sweeps.begin(), sweeps.end());
        const double sweepMs = sweeps[sweeps.size() / 2];
        const QJsonObject line{{"L", length},
                               {"patched_runs", patchedRuns},
                               {"sweep_ms", rounded(sweepMs, 0.1)},
                               {"full_run_ms", rounded(full[full.size() / 2], 0.01)},
                               {"naive_ms", rounded(naiveMs, 0.1)},
                               {"speedup", rounded(naiveMs / sweepMs, 0.01)}};
        std::printf("%s\n", jsonLine(line).constData());
        std::fflush(stdout);
    }
    std::printf("%s\n", jsonLine(sgemmRates(reps)).constData());
    return 0;
}

int modelBenchmark(const std::vector<int>& sizes, int reps, const QString& cacheFolder,
                   const QString& shapeName) {
    const model::Config config = shapeConfig(shapeNamed(shapeName));
    for (int length : sizes)
        if (config.positions > 0 && length > config.positions - config.positionRowOffset)
            throw std::invalid_argument(
                "bench --model: --sizes " + std::to_string(length) + ": " +
                shapeName.toStdString() + " has " +
                std::to_string(config.positions - config.positionRowOffset) + " positions");
    ensureModelBenchFolder(cacheFolder, shapeName);
    // The default shape's lines stay as earlier builds printed them: scripts read them.
    const bool named = shapeName != QLatin1String(kShapes[0].name);

    for (int length : sizes) {
        resetPeakRss();
        const auto openStart = std::chrono::steady_clock::now();
        const io::ModelFolder folder(cacheFolder);
        const double openMs = elapsedMs(openStart);
        const model::Model& m = folder.model();
        std::vector<long long> ids(static_cast<size_t>(length));
        for (int i = 0; i < length; ++i)
            ids[static_cast<size_t>(i)] = i % config.vocab;
        // An encoder–decoder model reads the same L ids as source and as decoder input.
        const bool seq2seq = config.isEncoderDecoder();
        std::vector<double> times;
        for (int r = 0; r <= reps; ++r) {
            const auto start = std::chrono::steady_clock::now();
            if (seq2seq)
                model::runEncoderDecoder<float>(m, ids, ids);
            else
                model::runModel<float>(m, ids);
            const double ms = elapsedMs(start);
            if (r > 0) times.push_back(ms);  // the first run is the warm-up
        }
        std::sort(times.begin(), times.end());
        const model::RunMemory memory =
            seq2seq ? model::encoderDecoderRunMemory(m, length, length, sizeof(float))
                    : model::runMemory(m, length, sizeof(float));
        const double mib = 1024.0 * 1024.0;
        QJsonObject line{{"L", length},
                         {"full_ms", rounded(times[times.size() / 2], 0.01)},
                         {"open_ms", rounded(openMs, 0.01)},
                         {"peak_rss_mb", rounded(peakRssMb(), 0.1)},
                         {"weights_mb", rounded(memory.storedWeights / mib, 0.1)},
                         {"kept_mb", rounded(memory.kept / mib, 0.1)},
                         {"gflop", rounded(seq2seq ? encoderDecoderGflop(config, length)
                                                   : forwardGflop(config, length),
                                           0.01)}};
        if (named) line.insert("shape", shapeName);
        std::printf("%s\n", jsonLine(line).constData());
        std::fflush(stdout);
    }
    std::printf("%s\n", jsonLine(sgemmRates(reps)).constData());
    return 0;
}

}  // namespace ae::cli
