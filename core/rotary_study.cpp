#include "core/rotary_study.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "core/attention_engine.h"
#include "core/ops.h"

namespace ae {
namespace {

const double kTwoPi = 6.28318530717958647692;
const double kSinusoidalBase = 10000.0;

std::vector<double> wavelengthsOf(const std::vector<double>& inverseFrequencies) {
    std::vector<double> out;
    out.reserve(inverseFrequencies.size());
    for (double theta : inverseFrequencies)
        out.push_back(kTwoPi / theta);
    return out;
}

ops::RowVector<double> asRow(const std::vector<double>& v) {
    return Eigen::Map<const ops::RowVector<double>>(v.data(), static_cast<Eigen::Index>(v.size()));
}

}  // namespace

TokenPositions positionsAt(int distance, int start) {
    return {start + std::max(distance, 0), start + std::max(-distance, 0)};
}

std::vector<TokenPositions> positionsOverDistances(int from, int to, int start) {
    std::vector<TokenPositions> out;
    for (int d = from; d <= to; ++d)
        out.push_back(positionsAt(d, start));
    return out;
}

RotaryStudy::RotaryStudy(const Scene& scene, int head, int queryRow, int keyRow)
    : scene_(scene), head_(head) {
    sceneHasRotary_ = scene.rotary.has_value();
    parameters_ = scene.rotary.value_or(RopeParameters{});
    // What the study varies itself (positions, rotation) and what only hides scores (mask,
    // ablation) are left out; the token vectors, norm, projections and q/k norm stay. Without
    // them each row of Q and K comes from its own token alone, so the study keeps only the two
    // tokens, as a cross-attention layer of one query (the query's token) and one key.
    scene_.rotary.reset();
    scene_.positional = Positional{};
    scene_.mask = Mask{};
    scene_.ablation = Scene::Ablation{};
    scene_.init.reset();
    scene_.embeddings = scene.embeddings.row(queryRow);
    scene_.sourceEmbeddings =
        (scene.hasSource ? scene.sourceEmbeddings : scene.embeddings).row(keyRow);
    scene_.hasSource = true;
    scene_.tokens = {scene.tokens[static_cast<size_t>(queryRow)]};
    scene_.sourceTokens = {scene.keyTokens()[static_cast<size_t>(keyRow)]};
    AttentionEngine<double> engine(scene_);
    engine.compute();
    // Copied: a row of the Ref that headQuery returns would outlive the Ref it points into.
    const Eigen::RowVectorXd q = engine.headQuery(head).row(0);
    const Eigen::RowVectorXd k = engine.headKey(head).row(0);
    for (Eigen::Index c = 0; c < q.size(); ++c)
        query_.push_back(q(c));
    for (Eigen::Index c = 0; c < k.size(); ++c)
        key_.push_back(k(c));
    setParameters(parameters_);
}

void RotaryStudy::setParameters(const RopeParameters& parameters) {
    parameters_ = parameters;
    inverseFrequencies_ = ops::ropeInverseFrequencies(headDim(), parameters_);
}

std::vector<double> RotaryStudy::unscaledInverseFrequencies() const {
    RopeParameters plain;
    plain.theta = parameters_.theta;
    plain.rotaryDim = parameters_.rotaryDim;
    return ops::ropeInverseFrequencies(headDim(), plain);
}

std::vector<double> RotaryStudy::wavelengths() const {
    return wavelengthsOf(inverseFrequencies_);
}

std::vector<double> RotaryStudy::unscaledWavelengths() const {
    return wavelengthsOf(unscaledInverseFrequencies());
}

ops::RowMajorMatrix<double> RotaryStudy::rotated(const std::vector<double>& row,
                                                 int position) const {
    ops::RowMajorMatrix<double> turned = asRow(row);
    // The engine's own rotation: the leading turnedDims() columns, cos and sin times the
    // attention factor; the rest pass through.
    const ops::RotaryAngles angles =
        ops::rotaryAngles(position, 1, inverseFrequencies_, parameters_.attentionFactor);
    ops::rotateHalf<double>(turned.leftCols(turnedDims()), angles);
    return turned;
}

std::vector<RotatedPair> RotaryStudy::rotatedPairs(TokenPositions positions) const {
    const ops::RowMajorMatrix<double> q = rotated(query_, positions.query),
                                      k = rotated(key_, positions.key);
    const int half = pairCount();
    std::vector<RotatedPair> pairs(static_cast<size_t>(half));
    for (int i = 0; i < half; ++i)
        pairs[static_cast<size_t>(i)] = {q(0, i), q(0, i + half), k(0, i), k(0, i + half)};
    return pairs;
}

double RotaryStudy::unturnedShare() const {
    double share = 0.0;
    for (int c = 2 * pairCount(); c < headDim(); ++c)
        share += query_[static_cast<size_t>(c)] * key_[static_cast<size_t>(c)];
    return share;
}

double RotaryStudy::rotaryScore(TokenPositions positions) const {
    return rotated(query_, positions.query).row(0).dot(rotated(key_, positions.key).row(0));
}

std::vector<double> RotaryStudy::rotaryScores(const std::vector<TokenPositions>& positions) const {
    std::vector<double> out;
    out.reserve(positions.size());
    for (const TokenPositions& p : positions)
        out.push_back(rotaryScore(p));
    return out;
}

std::vector<double> RotaryStudy::sinusoidalScores(
    const std::vector<TokenPositions>& positions) const {
    if (positions.empty()) return {};
    // A cross-attention layer with one query row per distinct query position and one source row
    // per distinct key position, so the engine projects only what the scores need (Q of the
    // queries, K and V of the keys). Each row is its token's vector plus the sinusoidal row of
    // its position (ops::addSinusoidalPositions, as the engine adds its own before the norm).
    std::map<int, Eigen::Index> queryRows, keyRows;
    for (const TokenPositions& p : positions) {
        queryRows.emplace(p.query, 0);
        keyRows.emplace(p.key, 0);
    }
    const auto dModel = static_cast<Eigen::Index>(scene_.dModel());
    const auto placeAll = [dModel](std::map<int, Eigen::Index>& at, const MatrixD& tokens,
                                   int tokenRow) {
        MatrixD placed(static_cast<Eigen::Index>(at.size()), dModel);
        Eigen::Index row = 0;
        for (auto& [position, index] : at) {
            index = row;
            auto one = placed.middleRows(row, 1);
            one = tokens.row(tokenRow);
            ops::addSinusoidalPositions(one, position, kSinusoidalBase);
            ++row;
        }
        return placed;
    };
    Scene placed = scene_;
    placed.embeddings = placeAll(queryRows, scene_.embeddings, 0);
    placed.sourceEmbeddings = placeAll(keyRows, scene_.sourceEmbeddings, 0);
    placed.tokens.assign(queryRows.size(), std::string());
    placed.sourceTokens.assign(keyRows.size(), std::string());
    AttentionEngine<double> engine(placed);
    engine.compute();
    const auto& scores = engine.scores(head_);
    std::vector<double> out;
    out.reserve(positions.size());
    for (const TokenPositions& p : positions)
        out.push_back(scores(queryRows.at(p.query), keyRows.at(p.key)));
    return out;
}

}  // namespace ae
