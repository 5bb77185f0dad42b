#include "core/scene.h"

#include <cmath>
#include <cstdlib>

#include "core/scene_error.h"

namespace ae {

int Scene::dProj() const {
    if (projections.mode == ProjectionMode::Identity) return dModel();
    return static_cast<int>(projections.query.cols());
}

double Scene::divisor() const {
    switch (scale.kind) {
        case ScaleKind::SqrtDk:
            return std::sqrt(static_cast<double>(dProj() / heads));
        case ScaleKind::SqrtDmodel:
            return std::sqrt(static_cast<double>(dModel()));
        case ScaleKind::None:
            return 1.0;
        case ScaleKind::Divisor:
            return scale.divisor;
    }
    return 1.0;
}

bool Scene::usesVersion2() const {
    return (norm.enabled && norm.kind == NormKind::Rms) || kvHeads.has_value() || qkNorm.enabled ||
           rotary.has_value() || !ablation.heads.empty() || softCap.has_value() ||
           !scoreTerms.empty();
}

void checkHeadCount(const Scene& scene, int heads) {
    const int dProj = scene.dProj();
    if (heads < 1) throw SceneError("heads", "must be at least 1");
    if (dProj % heads != 0) {
        throw SceneError("heads", std::to_string(heads) + " does not divide the projection width " +
                                      std::to_string(dProj));
    }
    if (heads == scene.heads) return;
    const std::string now = std::to_string(scene.heads) + " heads";
    if (!scene.ablation.heads.empty()) {
        throw SceneError("ablation", "switch every head back on before changing the head count (" +
                                         now + ", " + std::to_string(scene.ablation.heads.size()) +
                                         " switched off)");
    }
    if (scene.kvHeads) {
        throw SceneError("kv_heads", "a grouped-query layer keeps its " + now + ": K and V hold " +
                                         std::to_string(*scene.kvHeads) + " kv heads of " +
                                         std::to_string(scene.dHead()) + " columns");
    }
    if (scene.qkNorm.enabled && !scene.qkNorm.fullWidth) {
        throw SceneError("qk_norm", "its weights have head_dim = " + std::to_string(scene.dHead()) +
                                        " values, so the layer keeps its " + now);
    }
    if (!scene.scoreTerms.empty()) {
        throw SceneError("score_terms", "one matrix a head, so the layer keeps its " + now);
    }
    if (scene.rotary && (dProj / heads) % 2 != 0) {
        throw SceneError("rotary", "needs an even head_dim: " + std::to_string(heads) +
                                       " heads of the projection width " + std::to_string(dProj) +
                                       " give " + std::to_string(dProj / heads));
    }
}

bool headCountAllowed(const Scene& scene, int heads) {
    try {
        checkHeadCount(scene, heads);
        return true;
    } catch (const SceneError&) {
        return false;
    }
}

BoolMatrix allowedMatrix(const Mask& mask, int queryCount, int keyCount) {
    BoolMatrix ok = BoolMatrix::Constant(queryCount, keyCount, true);
    for (int i = 0; i < queryCount; ++i) {
        for (int j = 0; j < keyCount; ++j) {
            bool visible = true;
            if (mask.causal && j > i) visible = false;
            if (mask.window && std::abs(i - j) > *mask.window) visible = false;
            if (!mask.padding.empty() && mask.padding[static_cast<size_t>(j)]) visible = false;
            if (mask.allowed && !(*mask.allowed)(i, j)) visible = false;
            ok(i, j) = visible;
        }
    }
    return ok;
}

}  // namespace ae

#include <unistd.h>
#include <cstdio>

#include "core/scene_error.h"

namespace ae {

namespace {
double size(const Eigen::EigenBase<MatrixD>& m) {
    return static_cast<double>(m.size());
}
}  // namespace

double sceneBytes(const Scene& scene) {
    const Projections& p = scene.projections;
    double doubles =
        size(scene.embeddings) + size(scene.sourceEmbeddings) + size(scene.positional.table) +
        static_cast<double>(scene.norm.weight.size() + scene.norm.bias.size()) + size(p.query) +
        size(p.key) + size(p.value) + size(p.output) +
        static_cast<double>(p.queryBias.size() + p.keyBias.size() + p.valueBias.size() +
                            p.outputBias.size()) +
        static_cast<double>(scene.qkNorm.queryWeight.size() + scene.qkNorm.keyWeight.size());
    double terms = 0;
    for (const std::vector<MatrixD>* list :
         {&scene.scoreTerms.beforeScale, &scene.scoreTerms.afterScale})
        for (const MatrixD& m : *list)
            terms += size(m);
    doubles += terms;
    const double maskCells =
        scene.mask.allowed ? static_cast<double>(scene.mask.allowed->size()) : 0.0;
    return doubles * sizeof(double) + maskCells;
}

double engineBytes(const Scene& scene, int scalarSize) {
    const double lq = scene.queryCount(), lk = scene.keyCount(), d = scene.dModel();
    const double dp = scene.dProj(), heads = scene.heads, dOut = scene.dOut();
    const double dkv = scene.dKeyValue();
    const Projections& p = scene.projections;
    const bool identity = p.mode == ProjectionMode::Identity;
    // The weights in Scalar; an absent bias becomes dProj zeros (dKV for K's and V's, dOut for
    // the output's).
    double weights = size(p.query) + size(p.key) + size(p.value) + size(p.output) +
                     static_cast<double>(p.outputBias.size());
    for (const VectorD* bias : {&p.queryBias, &p.keyBias, &p.valueBias}) {
        // Identity mode converts whatever biases the scene holds and adds none.
        const double width = bias == &p.queryBias ? dp : dkv;
        weights += bias->size() > 0 || identity ? static_cast<double>(bias->size()) : width;
    }
    if (p.hasOutput && p.outputBias.size() == 0) weights += dOut;
    if (scene.qkNorm.enabled) weights += scene.qkNorm.fullWidth ? dp + dkv : 2.0 * scene.dHead();
    // The capped scores: one more Lq x Lk map a head; each list of score terms, converted to
    // Scalar, one more.
    const double stageMaps = (scene.softCap ? 4.0 : 3.0) +
                             (scene.scoreTerms.beforeScale.empty() ? 0.0 : 1.0) +
                             (scene.scoreTerms.afterScale.empty() ? 0.0 : 1.0);
    // K is its own matrix with a source, separate weights or its own norm; otherwise the keys
    // are Q.
    const bool ownKeys =
        scene.hasSource || p.mode == ProjectionMode::Separate || scene.qkNorm.enabled;
    const double stages = lq * d + (scene.hasSource ? lk * d : 0.0) + lq * dp +
                          (ownKeys ? lk * dkv : 0.0) + lk * dkv + stageMaps * heads * lq * lk +
                          lq * dp + lq * dOut;
    const double maskArrays = 2.0 * lq * lk;  // the mask as 1/0 and as 0/-inf, in Scalar
    return sceneBytes(scene) + (weights + stages + maskArrays) * scalarSize +
           lq * lk * sizeof(bool);
}

double selfAttentionEngineBytes(double length, double dModel, double dProj, double heads,
                                double dOut, int scalarSize) {
    const double l = length, d = dModel, dp = dProj;
    const double sceneNumbers = l * d + 3.0 * d * dp + dp * dOut + 3.0 * dp + dOut;
    const double weights = 3.0 * d * dp + 3.0 * dp + dp * dOut + dOut;  // biases as zeros
    const double stages = l * d + 3.0 * l * dp + 3.0 * heads * l * l + l * dp + l * dOut;
    return sceneNumbers * sizeof(double) + (weights + stages + 2.0 * l * l) * scalarSize +
           l * l * sizeof(bool);
}

double windowBytes(const Scene& scene) {
    return 2.0 * engineBytes(scene, sizeof(float)) + 3.0 * sceneBytes(scene);
}

double physicalMemoryBytes() {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long pageSize = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && pageSize > 0 ? static_cast<double>(pages) * static_cast<double>(pageSize)
                                     : 0.0;
}

std::string gibibytesText(double bytes) {
    char text[64];
    std::snprintf(text, sizeof text, "%.1f GiB", bytes / (1 << 30));
    return text;
}

void checkFitsInMemory(double bytes, const std::string& what) {
    const double available = physicalMemoryBytes();
    if (available > 0 && !(bytes <= available)) {
        throw SceneError("scene", "too large: needs about " + gibibytesText(bytes) + " (" + what +
                                      "), this machine has " + gibibytesText(available));
    }
}

void checkFitsInMemory(const Scene& scene, int scalarSize, double extraBytesPerNumber) {
    const double engine = engineBytes(scene, scalarSize);
    std::string what = scalarSize == sizeof(float) ? "the layer in float" : "the layer in double";
    if (extraBytesPerNumber > 0) what += " and the result file";
    checkFitsInMemory(engine * (1.0 + extraBytesPerNumber / scalarSize), what);
}

}  // namespace ae
