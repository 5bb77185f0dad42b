#include "core/scaling_study.h"

#include <cmath>
#include <string>

#include "core/attention_engine.h"
#include "core/init_draw.h"

namespace ae {
namespace {

struct RowStatistics {
    double variance = 0, maxWeight = 0, entropy = 0;
};

// Sums over every score and every row of one computed head-0 layer.
void accumulate(const AttentionEngine<double>& engine, const MatrixD& scores, RowStatistics& sums) {
    sums.variance += scores.array().square().sum();  // the mean is 0 by symmetry
    const MatrixD& weights = engine.weights(0);
    for (Eigen::Index i = 0; i < weights.rows(); ++i) {
        sums.maxWeight += weights.row(i).maxCoeff();
        double entropy = 0;
        for (Eigen::Index j = 0; j < weights.cols(); ++j) {
            const double w = weights(i, j);
            if (w > 0) entropy -= w * std::log(w);
        }
        sums.entropy += entropy;
    }
}

}  // namespace

std::vector<ScalingPoint> scalingStudy(const std::vector<int>& dks, int tokens, int trials,
                                       std::uint64_t seed) {
    InitSpec unitNormal;
    unitNormal.std = 1.0;
    SplitMix64 rng(seed);
    std::vector<ScalingPoint> points;
    for (int dk : dks) {
        RowStatistics raw, scaled;
        for (int t = 0; t < trials; ++t) {
            Scene scene;
            for (int i = 0; i < tokens; ++i)
                scene.tokens.push_back("q" + std::to_string(i));
            scene.embeddings = drawMatrix(rng, unitNormal, tokens, dk);
            scene.hasSource = true;
            scene.sourceTokens = scene.tokens;
            scene.sourceEmbeddings = drawMatrix(rng, unitNormal, tokens, dk);
            scene.projections.mode = ProjectionMode::Identity;
            scene.scale.kind = ScaleKind::None;
            AttentionEngine<double> engine(scene);
            engine.compute();
            accumulate(engine, engine.scores(0), raw);
            engine.setScale({ScaleKind::SqrtDk, 1.0});
            engine.compute();
            accumulate(engine, engine.scaled(0), scaled);
        }
        const double cells = static_cast<double>(trials) * tokens * tokens;
        const double rows = static_cast<double>(trials) * tokens;
        points.push_back({dk, raw.variance / cells, scaled.variance / cells, raw.maxWeight / rows,
                          scaled.maxWeight / rows, raw.entropy / rows, scaled.entropy / rows});
    }
    return points;
}

}  // namespace ae
