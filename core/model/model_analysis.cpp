#include "core/model/model_analysis.h"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace ae::model {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Whether position i is a token (every position without a mask) rather than padding.
bool isToken(const std::vector<int>& mask, int i) {
    return mask.empty() || mask[static_cast<size_t>(i)] != 0;
}

template <typename Scalar>
void checkHead(const ModelRun<Scalar>& run, int layer, int head, const char* what) {
    const int layers = static_cast<int>(run.layers.size());
    if (layer < 0 || layer >= layers || head < 0 || head >= run.config.heads) {
        throw ModelError(std::string(what) + ": layer " + std::to_string(layer) + ", head " +
                         std::to_string(head) + " is outside the model's " +
                         std::to_string(layers) + " layers of " + std::to_string(run.config.heads) +
                         " heads");
    }
}

// The two principal axes (hd x 2, orthonormal columns, largest variance first, each turned so
// that its largest-magnitude loading is positive) of the rows of `points` (n x hd) marked in
// `fit`, their mean (1 x hd) and the share of the variance they keep.
struct PrincipalPlane {
    Eigen::MatrixX2d axes;
    Eigen::RowVectorXd mean;
    double explained = 1;
};

PrincipalPlane principalPlane(const Eigen::MatrixXd& points, const std::vector<bool>& fit) {
    const Eigen::Index dims = points.cols();
    PrincipalPlane plane;
    plane.axes = Eigen::MatrixX2d::Zero(dims, 2);
    plane.mean = Eigen::RowVectorXd::Zero(dims);
    int n = 0;
    for (Eigen::Index i = 0; i < points.rows(); ++i) {
        if (!fit[static_cast<size_t>(i)]) continue;
        plane.mean += points.row(i);
        ++n;
    }
    if (n == 0 || dims == 0) return plane;
    plane.mean /= n;
    Eigen::MatrixXd centred(n, dims);
    for (Eigen::Index i = 0, r = 0; i < points.rows(); ++i)
        if (fit[static_cast<size_t>(i)]) centred.row(r++) = points.row(i) - plane.mean;
    const Eigen::MatrixXd covariance = centred.transpose() * centred / static_cast<double>(n);
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(covariance);
    // Ascending eigenvalues; rounding can leave a zero one slightly negative.
    const Eigen::VectorXd values = solver.eigenvalues().cwiseMax(0.0);
    const int kept = static_cast<int>(std::min<Eigen::Index>(2, dims));
    double keptVariance = 0;
    for (int c = 0; c < kept; ++c) {
        Eigen::VectorXd axis = solver.eigenvectors().col(dims - 1 - c);
        Eigen::Index largest = 0;
        axis.cwiseAbs().maxCoeff(&largest);
        if (axis(largest) < 0) axis = -axis;
        plane.axes.col(c) = axis;
        keptVariance += values(dims - 1 - c);
    }
    const double total = values.sum();
    plane.explained = total > 0 ? keptVariance / total : 1.0;
    return plane;
}

Eigen::MatrixX2d projectOnto(const Eigen::MatrixXd& points, const PrincipalPlane& plane) {
    return (points.rowwise() - plane.mean) * plane.axes;
}

}  // namespace

template <typename Scalar>
std::vector<HeadSummary> summarizeHeads(const ModelRun<Scalar>& run, int firstLayer) {
    const int heads = run.config.heads;
    firstLayer = std::clamp(firstLayer, 0, static_cast<int>(run.layers.size()));
    const int count = (static_cast<int>(run.layers.size()) - firstLayer) * heads;
    const std::vector<HeadScore>& scores = headScores();
    std::vector<HeadSummary> summaries(static_cast<size_t>(count));
    // Heads are independent; at GPT-2 small's 144 heads of 128 tokens (1.2 million logarithms)
    // this is part of every edit's wait.
#pragma omp parallel for schedule(dynamic)
    for (int n = 0; n < count; ++n) {
        const int layer = firstLayer + n / heads, head = n % heads;
        HeadSummary& s = summaries[static_cast<size_t>(n)];
        const LayerDigest& digest = run.layers[layer].digest;
        if (!digest.empty()) {
            // Measured by the pass, before it dropped the maps; a repeated-run score stays NaN
            // here, as below.
            s = digest.heads[static_cast<size_t>(head)].summary;
            for (const HeadScore& score : scores)
                if (score.needsRepeatedRun) s.*score.value = kNaN;
            continue;
        }
        const HeadWeights weights(run.layers[layer].weights[head], run.attentionMask, {},
                                  &run.options.separators);
        s.layer = layer;
        s.head = head;
        for (const HeadScore& score : scores)
            s.*score.value = score.needsRepeatedRun ? kNaN : score.measure(weights);
    }
    return summaries;
}

namespace {
// Throws unless `run` is a prefix of P tokens and a text of N tokens repeated twice.
template <typename Scalar>
void checkRepeatedRun(const ModelRun<Scalar>& run, int prefixLength, int period) {
    const long long T = static_cast<long long>(run.tokens.size());
    if (prefixLength < 0 || period < 1 || prefixLength + 2LL * period != T) {
        throw ModelError("induction score: a run of " + std::to_string(T) +
                         " tokens is not a prefix of " + std::to_string(prefixLength) +
                         " and a text of " + std::to_string(period) + " repeated twice");
    }
    const int P = prefixLength, N = period;
    for (int i = 0; i < N; ++i) {
        if (run.tokens[P + i] != run.tokens[P + N + i]) {
            throw ModelError("induction score: token " + std::to_string(P + N + i) + " (" +
                             std::to_string(run.tokens[P + N + i]) + ") does not repeat token " +
                             std::to_string(P + i) + " (" + std::to_string(run.tokens[P + i]) +
                             ")");
        }
    }
}
}  // namespace

template <typename Scalar>
std::vector<double> inductionScores(const ModelRun<Scalar>& run, int prefixLength, int period) {
    checkRepeatedRun(run, prefixLength, period);
    const HeadScore& induction = headScore("induction");
    std::vector<double> scores;
    scores.reserve(run.layers.size() * static_cast<size_t>(run.config.heads));
    const bool digestsMeasured = run.options.keepDigest &&
                                 run.options.repeated.prefixLength == prefixLength &&
                                 run.options.repeated.period == period;
    for (std::size_t layer = 0; layer < run.layers.size(); ++layer) {
        const LayerRecord<Scalar>& record = run.layers[layer];
        if (!record.hasMaps() && !digestsMeasured) {
            throw ModelError("induction score: layer " + std::to_string(layer) +
                             " kept neither its maps nor digests measured on the repeated text");
        }
        for (int head = 0; head < run.config.heads; ++head) {
            // A run that dropped its maps measured the score as it made them, with the same
            // measure.
            scores.push_back(
                record.hasMaps()
                    ? induction.measure(HeadWeights(record.weights[head], run.attentionMask,
                                                    {prefixLength, period}))
                    : record.digest.heads[static_cast<std::size_t>(head)].summary.*induction.value);
        }
    }
    return scores;
}

template <typename Scalar>
void addRepeatedRunScores(std::vector<HeadSummary>& summaries, const ModelRun<Scalar>& run,
                          int prefixLength, int period) {
    checkRepeatedRun(run, prefixLength, period);
    for (HeadSummary& s : summaries) {
        const HeadWeights weights(run.layers.at(static_cast<size_t>(s.layer)).weights.at(s.head),
                                  run.attentionMask, {prefixLength, period});
        for (const HeadScore& score : headScores())
            if (score.needsRepeatedRun) s.*score.value = score.measure(weights);
    }
}

template <typename Scalar>
Eigen::MatrixXd crossAttentionAlignment(const ModelRun<Scalar>& decoderRun, int layer, int head) {
    const Config& c = decoderRun.config;
    const int layers = static_cast<int>(decoderRun.layers.size());
    if (!c.hasCrossAttention() || layers == 0 || decoderRun.layers.front().cross.empty())
        throw ModelError(
            "alignment: the run has no cross-attention (not an encoder-decoder "
            "model's decoder)");
    if (layer < -1 || layer >= layers)
        throw ModelError("alignment: layer " + std::to_string(layer) +
                         " is outside the decoder's " + std::to_string(layers) + " layers");
    if (head < -1 || head >= c.heads || (head >= 0 && layer < 0))
        throw ModelError("alignment: head " + std::to_string(head) +
                         (layer < 0
                              ? " needs its layer"
                              : " is outside the layer's " + std::to_string(c.heads) + " heads"));
    const int firstLayer = layer < 0 ? 0 : layer, lastLayer = layer < 0 ? layers - 1 : layer;
    const int firstHead = head < 0 ? 0 : head, lastHead = head < 0 ? c.heads - 1 : head;
    const auto& shape = decoderRun.layers[static_cast<std::size_t>(firstLayer)].cross.weights[0];
    Eigen::MatrixXd sum = Eigen::MatrixXd::Zero(shape.rows(), shape.cols());
    for (int l = firstLayer; l <= lastLayer; ++l)
        for (int h = firstHead; h <= lastHead; ++h)
            sum += decoderRun.layers[static_cast<std::size_t>(l)]
                       .cross.weights[static_cast<std::size_t>(h)]
                       .template cast<double>();
    return sum / static_cast<double>((lastLayer - firstLayer + 1) * (lastHead - firstHead + 1));
}

template <typename Scalar>
std::vector<Eigen::MatrixXd> attentionRollout(const ModelRun<Scalar>& run) {
    const Eigen::Index T = static_cast<Eigen::Index>(run.tokens.size());
    std::vector<Eigen::MatrixXd> rollouts;
    rollouts.reserve(run.layers.size());
    Eigen::MatrixXd rollout = Eigen::MatrixXd::Identity(T, T);
    bool lowerTriangular = true;  // so far: every Â, and so the product
    for (const LayerRecord<Scalar>& record : run.layers) {
        // The pass summed the heads into the digest (in head order, as here) when it kept one.
        Eigen::MatrixXd mixed;
        if (!record.digest.empty()) {
            mixed = record.digest.weightSum;
        } else {
            // Summed in the weights' row-major order (across it, each add took 24× as long).
            ops::RowMajorMatrix<double> sum = ops::RowMajorMatrix<double>::Zero(T, T);
            for (const Matrix<Scalar>& w : record.weights)
                sum += w.template cast<double>();
            mixed = sum;
        }
        mixed /= static_cast<double>(run.config.heads);
        mixed += Eigen::MatrixXd::Identity(T, T);
        // Every row of a softmax sums to 1, so each sums to 2 here; dividing by the actual sum
        // keeps rounding from drifting over many layers.
        mixed.array().colwise() /= mixed.rowwise().sum().array();
        // A causal layer's Â is lower triangular, and Eigen's triangular product skips the zero
        // half (GPT-2 small at T = 1024, 12 products: 2.2 s against 2.7 s full, on a loaded
        // 2-core machine). Checked, not assumed: a what-if may change a layer's mask.
        for (Eigen::Index j = 1; j < T && lowerTriangular; ++j)
            lowerTriangular = mixed.col(j).head(j).isZero(0.0);
        if (lowerTriangular) {
            rollout = mixed.triangularView<Eigen::Lower>() * rollout;
        } else {
            rollout = mixed * rollout;
        }
        rollouts.push_back(rollout);
    }
    return rollouts;
}

namespace {
// The `count` largest of softmax(logits), most probable first; equal logits: lower id first.
std::vector<Prediction> mostProbable(const Eigen::VectorXd& logits, int count) {
    const Eigen::Index V = logits.size();
    const double largest = logits.maxCoeff();
    const Eigen::VectorXd shifted = (logits.array() - largest).exp();
    const double total = shifted.sum();
    const Eigen::Index kept = std::clamp<Eigen::Index>(count, 0, V);
    std::vector<Eigen::Index> order(static_cast<size_t>(V));
    std::iota(order.begin(), order.end(), Eigen::Index{0});
    std::partial_sort(order.begin(), order.begin() + kept, order.end(),
                      [&](Eigen::Index a, Eigen::Index b) {
                          return logits(a) != logits(b) ? logits(a) > logits(b) : a < b;
                      });
    std::vector<Prediction> predictions;
    predictions.reserve(static_cast<size_t>(kept));
    for (Eigen::Index r = 0; r < kept; ++r)
        predictions.push_back({static_cast<long long>(order[r]), shifted(order[r]) / total});
    return predictions;
}

template <typename Scalar>
void checkPredictionPosition(const ModelRun<Scalar>& run, int position) {
    const long long T = static_cast<long long>(run.tokens.size());
    if (!run.config.isDecoder() && run.maskedLmLogits.rows() != T) {
        throw ModelError(std::string("predictions: this ") + familyName(run.config.family) +
                         " folder holds no masked-LM head");
    }
    if (position < 0 || position >= T) {
        throw ModelError("predictions: position " + std::to_string(position) +
                         " is outside the run's " + std::to_string(T) + " tokens");
    }
}
}  // namespace

template <typename Scalar>
std::vector<Prediction> topPredictions(const ModelRun<Scalar>& run, int position, int count) {
    checkPredictionPosition(run, position);
    if (!run.config.isDecoder())
        return mostProbable(run.maskedLmLogits.row(position).transpose().template cast<double>(),
                            count);
    const long long kept = position - run.logitsFrom;
    if (kept < 0 || kept >= run.logits.rows()) {
        throw ModelError("next-token predictions: the run kept the logits of position " +
                         std::to_string(run.logitsFrom) + " only, not " + std::to_string(position) +
                         " (give the model to compute that row)");
    }
    return mostProbable(run.logits.row(kept).transpose().template cast<double>(), count);
}

template <typename Scalar>
std::vector<Prediction> topPredictions(const Model& model, const ModelRun<Scalar>& run,
                                       int position, int count) {
    checkPredictionPosition(run, position);
    return mostProbable(logitsAt(model, run, position), count);
}

template <typename Scalar>
QkProjection projectQueriesAndKeys(const ModelRun<Scalar>& run, int layer, int head,
                                   QkProjectionMode mode) {
    checkHead(run, layer, head, "query-key map");
    const Eigen::MatrixXd queries = run.q(layer, head).template cast<double>();
    const Eigen::MatrixXd keys = run.k(layer, head).template cast<double>();
    const Eigen::Index T = queries.rows();
    QkProjection projection;
    if (mode == QkProjectionMode::Norms) {
        projection.queries.resize(T, 2);
        projection.keys.resize(T, 2);
        for (Eigen::Index i = 0; i < T; ++i) {
            projection.queries.row(i) << static_cast<double>(i), queries.row(i).norm();
            projection.keys.row(i) << static_cast<double>(i), keys.row(i).norm();
        }
        return projection;
    }
    std::vector<bool> tokens(static_cast<size_t>(T));
    for (Eigen::Index i = 0; i < T; ++i)
        tokens[static_cast<size_t>(i)] = isToken(run.attentionMask, static_cast<int>(i));
    if (mode == QkProjectionMode::Separate) {
        const PrincipalPlane queryPlane = principalPlane(queries, tokens);
        const PrincipalPlane keyPlane = principalPlane(keys, tokens);
        projection.queries = projectOnto(queries, queryPlane);
        projection.keys = projectOnto(keys, keyPlane);
        projection.explainedQuery = queryPlane.explained;
        projection.explainedKey = keyPlane.explained;
        return projection;
    }
    Eigen::MatrixXd both(2 * T, queries.cols());
    both << queries, keys;
    std::vector<bool> bothTokens = tokens;
    bothTokens.insert(bothTokens.end(), tokens.begin(), tokens.end());
    const PrincipalPlane plane = principalPlane(both, bothTokens);
    projection.queries = projectOnto(queries, plane);
    projection.keys = projectOnto(keys, plane);
    projection.explainedQuery = projection.explainedKey = plane.explained;
    return projection;
}

#define AE_MODEL_ANALYSIS(Scalar)                                                                  \
    template std::vector<HeadSummary> summarizeHeads<Scalar>(const ModelRun<Scalar>&, int);        \
    template std::vector<double> inductionScores<Scalar>(const ModelRun<Scalar>&, int, int);       \
    template void addRepeatedRunScores<Scalar>(std::vector<HeadSummary>&, const ModelRun<Scalar>&, \
                                               int, int);                                          \
    template Eigen::MatrixXd crossAttentionAlignment<Scalar>(const ModelRun<Scalar>&, int, int);   \
    template std::vector<Eigen::MatrixXd> attentionRollout<Scalar>(const ModelRun<Scalar>&);       \
    template std::vector<Prediction> topPredictions<Scalar>(const ModelRun<Scalar>&, int, int);    \
    template std::vector<Prediction> topPredictions<Scalar>(const Model&, const ModelRun<Scalar>&, \
                                                            int, int);                             \
    template QkProjection projectQueriesAndKeys<Scalar>(const ModelRun<Scalar>&, int, int,         \
                                                        QkProjectionMode);
AE_MODEL_ANALYSIS(float)
AE_MODEL_ANALYSIS(double)
#undef AE_MODEL_ANALYSIS

}  // namespace ae::model
