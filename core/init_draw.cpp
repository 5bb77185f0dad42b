#include "core/init_draw.h"

#include <cmath>
#include <string>

namespace ae {

std::uint64_t SplitMix64::next() {
    state_ += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

MatrixD drawMatrix(SplitMix64& rng, const InitSpec& spec, int rows, int cols) {
    constexpr double kTwoPi = 6.283185307179586;
    MatrixD out(rows, cols);
    for (int i = 0; i < rows; ++i) {
        for (int j = 0; j < cols; ++j) {
            double value = 0.0;
            switch (spec.distribution) {
                case InitDistribution::Normal: {
                    const double u1 = rng.uniform01();
                    const double u2 = rng.uniform01();
                    value = std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(kTwoPi * u2) * spec.std;
                    break;
                }
                case InitDistribution::Uniform:
                    value = spec.low + (spec.high - spec.low) * rng.uniform01();
                    break;
                case InitDistribution::Integers:
                    value = spec.low + std::floor(rng.uniform01() * (spec.high - spec.low));
                    break;
            }
            out(i, j) = value;
        }
    }
    return out;
}

Projections drawProjections(SplitMix64& rng, const InitSpec& spec, int dModel) {
    const int dProj = spec.dProj.value_or(dModel);
    const bool shared = spec.mode == ProjectionMode::SharedQK;
    Projections p;
    p.mode = spec.mode;
    p.query = drawMatrix(rng, spec, dModel, dProj);
    if (!shared) p.key = drawMatrix(rng, spec, dModel, dProj);
    p.value = drawMatrix(rng, spec, dModel, dProj);
    p.hasOutput = spec.output;
    if (spec.output) p.output = drawMatrix(rng, spec, dProj, dModel);
    p.queryBias = VectorD::Zero(dProj);
    p.keyBias = VectorD::Zero(dProj);
    p.valueBias = VectorD::Zero(dProj);
    if (spec.output) p.outputBias = VectorD::Zero(dModel);
    if (spec.bias) {
        p.queryBias = drawMatrix(rng, spec, 1, dProj).row(0).transpose();
        if (!shared) p.keyBias = drawMatrix(rng, spec, 1, dProj).row(0).transpose();
        p.valueBias = drawMatrix(rng, spec, 1, dProj).row(0).transpose();
        if (spec.output) p.outputBias = drawMatrix(rng, spec, 1, dModel).row(0).transpose();
    }
    return p;
}

Scene drawnScene(const InitSpec& spec, int length, int heads) {
    SplitMix64 rng(spec.seed);
    Scene scene;
    for (int i = 0; i < length; ++i)
        scene.tokens.push_back("t" + std::to_string(i));
    const int dModel = spec.dModel.value();
    scene.embeddings = drawMatrix(rng, spec, length, dModel);
    scene.projections = drawProjections(rng, spec, dModel);
    scene.heads = heads;
    scene.init = spec;
    return scene;
}

}  // namespace ae
