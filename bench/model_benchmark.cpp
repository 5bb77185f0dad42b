#include "bench/model_benchmark.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <QStandardPaths>
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

#include "core/model/model.h"
#include "io/formats/safetensors_writer.h"
#include "io/model/model_folder.h"

namespace ae::cli {
namespace {

// GPT-2 small's shape.
constexpr int kLayers = 12, kHeads = 12, kWidth = 768, kInner = 3072, kVocab = 50257,
              kPositions = 1024;

const char* const kConfig = R"({
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
)";

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

std::vector<TensorPlan> gpt2SmallTensors() {
    std::vector<TensorPlan> plan{{"wte.weight", {kVocab, kWidth}, Fill::Random},
                                 {"wpe.weight", {kPositions, kWidth}, Fill::Random}};
    for (int l = 0; l < kLayers; ++l) {
        const std::string p = "h." + std::to_string(l) + ".";
        plan.push_back({p + "ln_1.weight", {kWidth}, Fill::One});
        plan.push_back({p + "ln_1.bias", {kWidth}, Fill::Zero});
        plan.push_back({p + "attn.c_attn.weight", {kWidth, 3 * kWidth}, Fill::Random});
        plan.push_back({p + "attn.c_attn.bias", {3 * kWidth}, Fill::Random});
        plan.push_back({p + "attn.c_proj.weight", {kWidth, kWidth}, Fill::Random});
        plan.push_back({p + "attn.c_proj.bias", {kWidth}, Fill::Random});
        plan.push_back({p + "ln_2.weight", {kWidth}, Fill::One});
        plan.push_back({p + "ln_2.bias", {kWidth}, Fill::Zero});
        plan.push_back({p + "mlp.c_fc.weight", {kWidth, kInner}, Fill::Random});
        plan.push_back({p + "mlp.c_fc.bias", {kInner}, Fill::Random});
        plan.push_back({p + "mlp.c_proj.weight", {kInner, kWidth}, Fill::Random});
        plan.push_back({p + "mlp.c_proj.bias", {kWidth}, Fill::Random});
    }
    plan.push_back({"ln_f.weight", {kWidth}, Fill::One});
    plan.push_back({"ln_f.bias", {kWidth}, Fill::Zero});
    return plan;
}

// The safetensors header (io/formats/safetensors_writer.h's layout, all F32) and the data section's
// length.
std::pair<std::string, long long> safetensorsHeader(const std::vector<TensorPlan>& plan) {
    std::vector<io::TensorHeaderEntry> entries;
    for (const TensorPlan& t : plan)
        entries.push_back({t.name, DType::F32, t.shape});
    const io::SafetensorsLayout layout =
        io::safetensorsLayout(entries, {{"format", "pt"}, {"written_by", "bench --model"}});
    return {layout.header.toStdString(), layout.dataBytes};
}

// A folder is reused when its config is ours and its weights file has exactly the size ours
// would (the reader then checks every tensor's shape and finiteness when it opens it).
bool cachedModelValid(const QString& folder, const std::string& header, long long dataBytes) {
    QFile config(QDir(folder).filePath("config.json"));
    if (!config.open(QIODevice::ReadOnly) || config.readAll() != QByteArray(kConfig)) return false;
    const QFileInfo weights(QDir(folder).filePath("model.safetensors"));
    return weights.isFile() && weights.size() == static_cast<qint64>(header.size()) + dataBytes;
}

// Random weights with a fixed seed: uniform with GPT-2's initial standard deviation 0.02, which
// keeps the residual stream and logits of 12 layers finite and unremarkable.
void writeModel(const QString& folder, const std::vector<TensorPlan>& plan,
                const std::string& header) {
    if (!QDir().mkpath(folder))
        throw std::invalid_argument("bench --model: cannot create " + folder.toStdString());
    QSaveFile weights(QDir(folder).filePath("model.safetensors"));
    if (!weights.open(QIODevice::WriteOnly))
        throw std::invalid_argument("bench --model: cannot write " +
                                    weights.fileName().toStdString());
    weights.write(header.data(), static_cast<qint64>(header.size()));
    uint64_t state = 0x9E3779B97F4A7C15ull;  // SplitMix64, seed fixed
    auto next = [&state] {
        uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    };
    const float halfWidth = 0.02f * std::sqrt(3.0f);  // uniform on ±a has sd a/√3
    std::vector<float> chunk;
    for (const TensorPlan& t : plan) {
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
            weights.write(reinterpret_cast<const char*>(chunk.data()),
                          static_cast<qint64>(n * sizeof(float)));
            done += n;
        }
    }
    if (!weights.commit())
        throw std::invalid_argument("bench --model: cannot write " +
                                    weights.fileName().toStdString() + ": " +
                                    weights.errorString().toStdString());
    // The config last: a folder with our config is a complete one.
    QSaveFile config(QDir(folder).filePath("config.json"));
    if (!config.open(QIODevice::WriteOnly) || config.write(kConfig) < 0 || !config.commit())
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

// Multiply-adds ×2 of one GPT-2 forward pass at length L: per layer the four projections
// (qkv, output, the MLP's two), q·kᵀ and weights·v over every head; then the LM head.
double forwardGflop(long long L) {
    const double d = kWidth, inner = kInner,
                 layerMacs = L * d * 3 * d + L * d * d + 2 * L * d * inner + 2.0 * L * L * d;
    return 2.0 * (kLayers * layerMacs + L * d * kVocab) / 1e9;
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

QString defaultModelBenchFolder() {
    QString cache = qEnvironmentVariable("XDG_CACHE_HOME");
    if (cache.isEmpty()) cache = QDir::home().filePath(".cache");
    return QDir(cache).filePath("attention-explorer/bench-gpt2-small");
}

void ensureModelBenchFolder(const QString& cacheFolder) {
    const std::vector<TensorPlan> plan = gpt2SmallTensors();
    const auto [header, dataBytes] = safetensorsHeader(plan);
    if (cachedModelValid(cacheFolder, header, dataBytes)) return;
    const auto start = std::chrono::steady_clock::now();
    writeModel(cacheFolder, plan, header);
    std::printf("%s\n", jsonLine(QJsonObject{{"wrote", cacheFolder},
                                             {"write_ms", rounded(elapsedMs(start), 0.1)}})
                            .constData());
    std::fflush(stdout);
}

int modelBenchmark(const std::vector<int>& sizes, int reps, const QString& cacheFolder) {
    for (int length : sizes)
        if (length > kPositions)
            throw std::invalid_argument("bench --model: --sizes " + std::to_string(length) +
                                        ": GPT-2 small has 1024 positions");
    ensureModelBenchFolder(cacheFolder);

    for (int length : sizes) {
        resetPeakRss();
        const auto openStart = std::chrono::steady_clock::now();
        const io::ModelFolder folder(cacheFolder);
        const double openMs = elapsedMs(openStart);
        const model::Model& m = folder.model();
        std::vector<long long> ids(static_cast<size_t>(length));
        for (int i = 0; i < length; ++i)
            ids[static_cast<size_t>(i)] = i % kVocab;
        std::vector<double> times;
        for (int r = 0; r <= reps; ++r) {
            const auto start = std::chrono::steady_clock::now();
            model::ModelRun<float> run = model::runModel<float>(m, ids);
            const double ms = elapsedMs(start);
            if (r > 0) times.push_back(ms);  // the first run is the warm-up
        }
        std::sort(times.begin(), times.end());
        const model::RunMemory memory = model::runMemory(m, length, sizeof(float));
        const double mib = 1024.0 * 1024.0;
        std::printf("%s\n",
                    jsonLine(QJsonObject{{"L", length},
                                         {"full_ms", rounded(times[times.size() / 2], 0.01)},
                                         {"open_ms", rounded(openMs, 0.01)},
                                         {"peak_rss_mb", rounded(peakRssMb(), 0.1)},
                                         {"weights_mb", rounded(memory.storedWeights / mib, 0.1)},
                                         {"kept_mb", rounded(memory.kept / mib, 0.1)},
                                         {"gflop", rounded(forwardGflop(length), 0.01)}})
                        .constData());
        std::fflush(stdout);
    }
    std::printf(
        "%s\n",
        jsonLine(QJsonObject{{"sgemm_gflops", rounded(sgemmGflops(reps), 0.1)}}).constData());
    return 0;
}

}  // namespace ae::cli
