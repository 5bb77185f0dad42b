#include "scene.h"

#include <cmath>
#include <cstdlib>

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

#include "scene_error.h"

namespace ae {

double engineBytes(const Scene& scene, int scalarSize) {
    const double lq = scene.queryCount(), lk = scene.keyCount(), d = scene.dModel();
    const double dp = scene.dProj(), heads = scene.heads, dOut = scene.dOut();
    const double numbers = lq * d + (scene.hasSource ? lk * d : 0.0) + lq * dp + 2.0 * lk * dp +
                           3.0 * heads * lq * lk + lq * dp + lq * dOut;
    return numbers * scalarSize;
}

double physicalMemoryBytes() {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long pageSize = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && pageSize > 0 ? static_cast<double>(pages) * static_cast<double>(pageSize)
                                     : 0.0;
}

void checkFitsInMemory(const Scene& scene, int scalarSize, double extraBytesPerNumber) {
    const double bytes = engineBytes(scene, scalarSize) * (1.0 + extraBytesPerNumber / scalarSize);
    const double available = physicalMemoryBytes();
    if (available > 0 && bytes > available) {
        char text[160];
        std::snprintf(text, sizeof text,
                      "too large: this layer would need about %.1f GiB, more than the %.1f GiB "
                      "this machine has",
                      bytes / (1 << 30), available / (1 << 30));
        throw SceneError("scene", text);
    }
}

}  // namespace ae
