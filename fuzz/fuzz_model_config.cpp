// Fuzz target: a model folder's config.json. io::parseModelConfig on arbitrary bytes; a config it
// accepts must be computable: its shapes are consistent (heads a multiple of kv heads, an even
// head_dim for rotary models), and when the model is small it is run, in float, on three tokens
// with every weight pointing at one buffer of small numbers, as `run` would. A refusal
// (ModelError) is the expected answer to garbage; anything else that escapes, and every sanitizer
// report, is a finding.
#include <QByteArray>
#include <QString>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/model/model.h"
#include "io/model/model_folder.h"

namespace {

// Weights above this many numbers are only parsed (the fuzzer runs with -rss_limit_mb=2048).
constexpr double kMaxNumbers = 1 << 20;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace ae::model;
    Config c;
    try {
        c = ae::io::parseModelConfig(
            QByteArray(reinterpret_cast<const char*>(data), static_cast<qsizetype>(size)),
            QStringLiteral("config.json"));
    } catch (const ModelError&) {
        return 0;
    }
    if (c.hidden < 1 || c.layers < 1 || c.heads < 1 || c.kvHeads < 1 || c.headDim < 1 ||
        c.vocab < 1 || c.intermediate < 1 || c.heads % c.kvHeads != 0)
        __builtin_trap();
    if (c.rotary() && c.headDim % 2 != 0) __builtin_trap();
    if (!c.rotary() && (c.positions < 1 || c.heads * c.headDim != c.hidden)) __builtin_trap();

    if (c.layers > 8) return 0;  // a slot per layer is made below; the folder reader bounds it
    Model model;
    model.config = c;
    model.folder = "fuzz";
    double numbers = 0;
    std::vector<TensorSpec> specs = tensorSpecs(c, model.weights);
    for (const TensorSpec& s : specs) {
        double n = 1;
        for (long long d : s.shape)
            n *= static_cast<double>(d);
        numbers = std::max(numbers, n);
    }
    if (numbers * c.layers > kMaxNumbers) return 0;
    // One buffer of 1/64 for every tensor: finite, small, and the forward pass has work to do.
    static std::vector<float> values;
    values.assign(static_cast<std::size_t>(numbers), 1.0f / 64);
    for (const TensorSpec& s : specs) {
        TensorRef& t = *s.slot;
        t.name = s.name;
        t.file = "fuzz";
        t.dtype = ae::DType::F32;
        t.rows = s.shape.size() == 2 ? s.shape[0] : 1;
        t.cols = s.shape.back();
        t.data = reinterpret_cast<const unsigned char*>(values.data());
    }
    if (c.isDecoder() && c.tieWordEmbeddings) model.weights.lmHead = model.weights.tokenEmbedding;
    const std::vector<long long> ids = {0, c.vocab > 1 ? 1 : 0, 0};
    try {
        const ModelRun<float> run = runModel<float>(model, ids);
        if (static_cast<int>(run.layers.size()) != c.layers) __builtin_trap();
        if (c.isDecoder() && (run.logits.rows() != 3 || run.logits.cols() != c.vocab))
            __builtin_trap();
    } catch (const ModelError&) {
        // a learned position table shorter than 3 tokens, or an overflow: refused, not a bug
    }
    return 0;
}
