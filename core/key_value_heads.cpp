#include "core/key_value_heads.h"

#include <cmath>
#include <cstdio>

#include "core/scene_edit.h"
#include "core/scene_error.h"

namespace ae {
namespace {

void checkGrouping(Eigen::Index width, int heads, int kvHeads) {
    if (heads < 1 || width % heads != 0) {
        throw SceneError("heads", std::to_string(heads) + " heads do not divide " +
                                      std::to_string(width) + " columns");
    }
    if (kvHeads < 1 || heads % kvHeads != 0) {
        throw SceneError("kv_heads", std::to_string(kvHeads) + " does not divide the " +
                                         std::to_string(heads) + " heads");
    }
}

template <typename M>
bool bitEqual(const M& a, const M& b) {
    if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
    // Bit for bit: exact equality of every number (no NaN is a weight the engine computes with).
    return a.size() == 0 || (a.array() == b.array()).all();
}

}  // namespace

MatrixD meanPoolHeadColumns(const MatrixD& columns, int heads, int kvHeads) {
    checkGrouping(columns.cols(), heads, kvHeads);
    const Eigen::Index dHead = columns.cols() / heads;
    const int groupSize = heads / kvHeads;
    MatrixD pooled(columns.rows(), kvHeads * dHead);
    for (int g = 0; g < kvHeads; ++g) {
        auto block = pooled.middleCols(g * dHead, dHead);
        block = columns.middleCols(g * groupSize * dHead, dHead);
        for (int m = 1; m < groupSize; ++m)
            block += columns.middleCols((g * groupSize + m) * dHead, dHead);
        block /= static_cast<double>(groupSize);
    }
    return pooled;
}

VectorD meanPoolHeadColumns(const VectorD& bias, int heads, int kvHeads) {
    if (bias.size() == 0) return bias;
    const MatrixD row = bias.transpose();
    return meanPoolHeadColumns(row, heads, kvHeads).row(0).transpose();
}

KeyValueSource keyValueSource(const Scene& scene) {
    if (scene.projections.mode != ProjectionMode::Separate) {
        throw SceneError("projections.mode", "kv heads need separate W_Q, W_K and W_V");
    }
    Scene ungrouped = scene;
    ungroupKeyValueHeads(ungrouped);
    KeyValueSource source;
    const Projections& p = ungrouped.projections;
    source.key = p.key;
    source.value = p.value;
    source.keyBias = p.keyBias;
    source.valueBias = p.valueBias;
    return source;
}

bool isGroupedFrom(const Scene& scene, const KeyValueSource& source) {
    const Projections& p = scene.projections;
    if (p.mode != ProjectionMode::Separate) return false;
    if (source.key.rows() != scene.dModel() || source.key.cols() != scene.dProj() ||
        source.value.rows() != scene.dModel() || source.value.cols() != scene.dProj())
        return false;
    const int heads = scene.heads, kv = scene.keyValueHeads();
    if (scene.dProj() % heads != 0 || heads % kv != 0) return false;
    if (source.keyBias.size() != 0 && source.keyBias.size() != scene.dProj()) return false;
    if (source.valueBias.size() != 0 && source.valueBias.size() != scene.dProj()) return false;
    return bitEqual(meanPoolHeadColumns(source.key, heads, kv), p.key) &&
           bitEqual(meanPoolHeadColumns(source.value, heads, kv), p.value) &&
           bitEqual(meanPoolHeadColumns(source.keyBias, heads, kv), p.keyBias) &&
           bitEqual(meanPoolHeadColumns(source.valueBias, heads, kv), p.valueBias);
}

void setKeyValueHeads(Scene& scene, const KeyValueSource& source, int heads, int kvHeads) {
    if (scene.projections.mode != ProjectionMode::Separate) {
        throw SceneError("projections.mode", "kv heads need separate W_Q, W_K and W_V");
    }
    const int dProj = scene.dProj();
    if (source.key.rows() != scene.dModel() || source.key.cols() != dProj ||
        source.value.rows() != scene.dModel() || source.value.cols() != dProj) {
        throw SceneError("projections.key", "the multi-head source is not d_model x d_proj");
    }
    // The head count as if the layer were ungrouped: the q/k norm, rotary and switched-off heads
    // still have their say.
    Scene asUngrouped = scene;
    asUngrouped.kvHeads.reset();
    checkHeadCount(asUngrouped, heads);
    checkGrouping(dProj, heads, kvHeads);

    Projections& p = scene.projections;
    MatrixD key = meanPoolHeadColumns(source.key, heads, kvHeads);
    MatrixD value = meanPoolHeadColumns(source.value, heads, kvHeads);
    VectorD keyBias = meanPoolHeadColumns(source.keyBias, heads, kvHeads);
    VectorD valueBias = meanPoolHeadColumns(source.valueBias, heads, kvHeads);
    p.key = std::move(key);
    p.value = std::move(value);
    p.keyBias = std::move(keyBias);
    p.valueBias = std::move(valueBias);
    scene.heads = heads;
    // `init` is left alone: while grouped, Save writes the matrices (init describes dProj-wide
    // K and V); back at kvHeads = heads the source's own matrices are there again, which init
    // still describes unless a weight was edited, and that edit dropped init already.
    if (kvHeads == heads)
        scene.kvHeads.reset();
    else
        scene.kvHeads = kvHeads;
}

std::vector<int> keyValueHeadChoices(int heads) {
    std::vector<int> choices;
    for (int k = 1; k <= heads; ++k) {
        if (heads % k == 0) choices.push_back(k);
    }
    return choices;
}

int nearestKeyValueHeads(int heads, int kvHeads) {
    int best = 1;
    for (int k : keyValueHeadChoices(heads)) {
        if (std::abs(k - kvHeads) <= std::abs(best - kvHeads)) best = k;  // ties: the larger
    }
    return best;
}

std::string keyValueRegimeName(int heads, int kvHeads) {
    if (kvHeads >= heads) return "multi-head";
    if (kvHeads == 1) return "multi-query";
    return "grouped (" + std::to_string(kvHeads) + " groups)";
}

double keyValueCacheNumbersPerTokenPerLayer(int kvHeads, int headDim) {
    return 2.0 * kvHeads * headDim;
}

double keyValueCacheBytesPerToken(int layers, int kvHeads, int headDim, int bytesPerNumber) {
    return layers * keyValueCacheNumbersPerTokenPerLayer(kvHeads, headDim) * bytesPerNumber;
}

std::string byteSizeText(double bytes) {
    static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int unit = 0;
    while (bytes >= 1024.0 && unit < 4) {
        bytes /= 1024.0;
        ++unit;
    }
    char text[64];
    const double tenths = std::round(bytes * 10.0) / 10.0;
    if (tenths == std::floor(tenths))
        std::snprintf(text, sizeof text, "%.0f %s", tenths, units[unit]);
    else
        std::snprintf(text, sizeof text, "%.1f %s", tenths, units[unit]);
    return text;
}

std::string keyValueCacheLayerText(int kvHeads, int headDim, int bytesPerNumber,
                                   const std::string& numberName) {
    const double numbers = keyValueCacheNumbersPerTokenPerLayer(kvHeads, headDim);
    char text[160];
    std::snprintf(text, sizeof text,
                  "KV cache 2 × %d kv head%s × %d = %.0f numbers/token/layer (%s at %s)", kvHeads,
                  kvHeads == 1 ? "" : "s", headDim, numbers,
                  byteSizeText(numbers * bytesPerNumber).c_str(), numberName.c_str());
    return text;
}

std::string keyValueCacheModelText(const std::string& name, const model::Config& config,
                                   DType dtype) {
    const double bytes =
        keyValueCacheBytesPerToken(config.layers, config.kvHeads, config.headDim, dtypeSize(dtype));
    return name + ": " + byteSizeText(bytes) + "/token";
}

DType attentionWeightsDType(const model::Model& model) {
    if (!model.weights.layers.empty()) {
        const model::LayerWeights& layer = model.weights.layers.front();
        if (layer.key.present()) return layer.key.dtype;
        if (layer.qkv.present()) return layer.qkv.dtype;
    }
    return model.weights.tokenEmbedding.dtype;
}

}  // namespace ae
