// The model view's numbers (core/model/model_analysis.h) against computations written out here with
// plain loops: head summaries on a 3 x 3 case done on paper and on golden model runs (padding
// included), the induction score on a hand-built induction head and on a real model, rollout
// against explicit matrix products, next-token predictions against a softmax, and the query–key
// projection against the properties that define principal components.
#include <Eigen/QR>
#include <QtTest>
#include <cmath>
#include <random>

#include "core/model/model_analysis.h"
#include "io/model/model_folder.h"
#include "support/model_checks.h"

using namespace ae;
using namespace ae::testing;

namespace {

constexpr double kExact = 1e-12;  // sums of a few O(1) doubles in another order

const std::vector<long long> kIdsA = {7, 41, 3, 59, 22, 15, 36};  // the golden models' case A

// A one-layer run whose heads' weights are given (T x T each); nothing else is filled in.
model::ModelRun<double> handRun(const std::vector<long long>& tokens,
                                const std::vector<model::Matrix<double>>& heads) {
    model::ModelRun<double> run;
    run.config.layers = 1;
    run.config.heads = static_cast<int>(heads.size());
    run.config.kvHeads = run.config.heads;
    run.tokens = tokens;
    run.layers.resize(1);
    run.layers[0].weights = heads;
    return run;
}

bool isToken(const std::vector<int>& mask, int i) {
    return mask.empty() || mask[i] == 1;
}

// The four scores of one head, spelled out: means over the token rows.
struct Expected {
    double entropy = 0, first = 0, previous = 0, self = 0;
};
template <typename Scalar>
Expected byHand(const model::ModelRun<Scalar>& run, int layer, int head) {
    const auto& w = run.layers[layer].weights[head];
    const int T = static_cast<int>(run.tokens.size());
    Expected e;
    int rows = 0, previousRows = 0;
    for (int i = 0; i < T; ++i) {
        if (!isToken(run.attentionMask, i)) continue;
        double h = 0;
        for (int j = 0; j < T; ++j) {
            const double p = w(i, j);
            if (p != 0) h += -p * std::log(p);
        }
        e.entropy += h;
        e.first += w(i, 0);
        e.self += w(i, i);
        ++rows;
        if (i > 0) {
            e.previous += w(i, i - 1);
            ++previousRows;
        }
    }
    e.entropy /= rows;
    e.first /= rows;
    e.self /= rows;
    e.previous /= previousRows;
    return e;
}

template <typename Scalar>
void checkSummaries(const model::ModelRun<Scalar>& run) {
    const std::vector<model::HeadSummary> s = model::summarizeHeads(run);
    QCOMPARE(int(s.size()), run.config.layers * run.config.heads);
    for (int layer = 0; layer < run.config.layers; ++layer) {
        for (int head = 0; head < run.config.heads; ++head) {
            const model::HeadSummary& got = s[layer * run.config.heads + head];
            QCOMPARE(got.layer, layer);
            QCOMPARE(got.head, head);
            const Expected e = byHand(run, layer, head);
            QVERIFY2(std::fabs(got.entropy - e.entropy) < kExact,
                     qPrintable(QString::number(layer)));
            QVERIFY(std::fabs(got.firstToken - e.first) < kExact);
            QVERIFY(std::fabs(got.previousToken - e.previous) < kExact);
            QVERIFY(std::fabs(got.self - e.self) < kExact);
            QVERIFY(std::isnan(got.induction));
            // Scores of a probability row: a weight lies in [0, 1], the entropy in [0, ln T].
            QVERIFY(got.entropy >= 0 && got.entropy <= std::log(double(run.tokens.size())) + 1e-9);
            for (double v : {got.firstToken, got.previousToken, got.self})
                QVERIFY(v >= 0 && v <= 1);
        }
    }
    // From a later layer on: exactly the tail of the whole list (a what-if keeps the rest).
    for (int first = 0; first <= run.config.layers; ++first) {
        const std::vector<model::HeadSummary> tail = model::summarizeHeads(run, first);
        QCOMPARE(int(tail.size()), (run.config.layers - first) * run.config.heads);
        for (std::size_t i = 0; i < tail.size(); ++i) {
            const model::HeadSummary& whole = s[first * run.config.heads + i];
            QCOMPARE(tail[i].layer, whole.layer);
            QCOMPARE(tail[i].head, whole.head);
            QCOMPARE(tail[i].entropy, whole.entropy);
            QCOMPARE(tail[i].previousToken, whole.previousToken);
        }
    }
}

// The offset diagonal by hand: rows P+N .. P+2N−1, keys P+1 .. P+N.
template <typename Scalar>
double inductionByHand(const model::ModelRun<Scalar>& run, int layer, int head, int P, int N) {
    double sum = 0;
    for (int row = P + N; row < P + 2 * N; ++row)
        sum += run.layers[layer].weights[head](row, row - (N - 1));
    return sum / N;
}

// rollout_l = Â_l ⋯ Â_0 with Â = rownorm(mean_h W_h + I), products as triple loops.
template <typename Scalar>
std::vector<std::vector<std::vector<double>>> rolloutByHand(const model::ModelRun<Scalar>& run) {
    const int T = static_cast<int>(run.tokens.size());
    using Square = std::vector<std::vector<double>>;
    Square r(T, std::vector<double>(T, 0.0));
    for (int i = 0; i < T; ++i)
        r[i][i] = 1;
    std::vector<Square> all;
    for (const auto& layer : run.layers) {
        Square a(T, std::vector<double>(T, 0.0));
        for (int i = 0; i < T; ++i) {
            for (int j = 0; j < T; ++j) {
                for (const auto& w : layer.weights)
                    a[i][j] += w(i, j);
                a[i][j] /= double(layer.weights.size());
            }
            a[i][i] += 1;
            double rowSum = 0;
            for (int j = 0; j < T; ++j)
                rowSum += a[i][j];
            for (int j = 0; j < T; ++j)
                a[i][j] /= rowSum;
        }
        Square next(T, std::vector<double>(T, 0.0));
        for (int i = 0; i < T; ++i)
            for (int j = 0; j < T; ++j)
                for (int k = 0; k < T; ++k)
                    next[i][j] += a[i][k] * r[k][j];
        r = next;
        all.push_back(r);
    }
    return all;
}

template <typename Run>
void checkRollout(const Run& run) {
    const auto got = model::attentionRollout(run);
    const auto expected = rolloutByHand(run);
    QCOMPARE(got.size(), expected.size());
    const int T = static_cast<int>(run.tokens.size());
    for (size_t l = 0; l < got.size(); ++l) {
        QCOMPARE(int(got[l].rows()), T);
        QCOMPARE(int(got[l].cols()), T);
        for (int i = 0; i < T; ++i) {
            QVERIFY(std::fabs(got[l].row(i).sum() - 1.0) < kExact);
            for (int j = 0; j < T; ++j)
                QVERIFY(std::fabs(got[l](i, j) - expected[l][i][j]) < kExact);
        }
    }
}

// A centred copy of the rows of `points` (n x d) on `mean`.
Eigen::MatrixXd centred(const Eigen::MatrixXd& points, const Eigen::RowVectorXd& mean) {
    return points.rowwise() - mean;
}
Eigen::RowVectorXd meanRow(const Eigen::MatrixXd& points) {
    Eigen::RowVectorXd mean = Eigen::RowVectorXd::Zero(points.cols());
    for (Eigen::Index i = 0; i < points.rows(); ++i)
        mean += points.row(i);
    return mean / double(points.rows());
}
// Σ over rows of the squared entries, / n: the total variance of centred points.
double variance(const Eigen::MatrixXd& c) {
    double v = 0;
    for (Eigen::Index i = 0; i < c.rows(); ++i)
        for (Eigen::Index j = 0; j < c.cols(); ++j)
            v += c(i, j) * c(i, j);
    return v / double(c.rows());
}

// The axes (d x 2) that map `centredPoints` (n x d, full column rank) to `projected` (n x 2), by
// least squares; checked orthonormal, exactly fitting, and as the principal components are: the
// first keeps more variance than any other direction, the plane more than any other plane.
Eigen::MatrixXd checkPrincipal(const Eigen::MatrixXd& centredPoints,
                               const Eigen::MatrixX2d& projected, double explained) {
    const Eigen::MatrixXd axes =
        centredPoints.colPivHouseholderQr().solve(Eigen::MatrixXd(projected));
    const double scale = 1 + centredPoints.cwiseAbs().maxCoeff();
    [&] {
        QVERIFY2((centredPoints * axes - projected).cwiseAbs().maxCoeff() < 1e-9 * scale,
                 "the projection is not linear in the centred points");
        QVERIFY2(
            (axes.transpose() * axes - Eigen::Matrix2d::Identity()).cwiseAbs().maxCoeff() < 1e-9,
            "the axes are not orthonormal");
        const double total = variance(centredPoints);
        const double first = variance(projected.col(0)), second = variance(projected.col(1));
        QVERIFY(first >= second);
        QVERIFY(std::fabs((first + second) / total - explained) < 1e-9);
        // The components are uncorrelated.
        QVERIFY(std::fabs(projected.col(0).dot(projected.col(1))) <
                1e-9 * scale * scale * projected.rows());
        std::mt19937 random(5);
        std::normal_distribution<double> normal;
        for (int trial = 0; trial < 200; ++trial) {
            Eigen::MatrixXd pair(axes.rows(), 2);
            for (Eigen::Index i = 0; i < pair.size(); ++i)
                pair.data()[i] = normal(random);
            const Eigen::MatrixXd q = Eigen::HouseholderQR<Eigen::MatrixXd>(pair).householderQ() *
                                      Eigen::MatrixXd::Identity(axes.rows(), 2);
            const Eigen::MatrixXd other = centredPoints * q;
            QVERIFY(variance(other.col(0)) <= first + 1e-9);
            QVERIFY(variance(other) <= first + second + 1e-9);
        }
        // The sign rule: each axis's largest-magnitude loading is positive.
        for (int c = 0; c < 2; ++c) {
            Eigen::Index largest = 0;
            axes.col(c).cwiseAbs().maxCoeff(&largest);
            QVERIFY(axes(largest, c) > 0);
        }
    }();
    return axes;
}

// The top ten at a few positions against a softmax by hand, in long double.
template <typename Scalar>
void checkPredictions(const model::ModelRun<Scalar>& run) {
    const int V = static_cast<int>(run.logits.cols());
    for (int position : {0, 3, 6}) {
        const auto top = model::topPredictions(run, position);
        QCOMPARE(int(top.size()), 10);
        std::vector<long double> p(V);
        long double total = 0;
        for (int v = 0; v < V; ++v) {
            p[v] = std::exp(static_cast<long double>(run.logits(position, v)));
            total += p[v];
        }
        for (int v = 0; v < V; ++v)
            p[v] /= total;
        for (size_t r = 0; r < top.size(); ++r) {
            QVERIFY(std::fabs(top[r].probability - double(p[top[r].token])) < 1e-12);
            if (r > 0) QVERIFY(top[r].probability <= top[r - 1].probability);
        }
        // Nothing left out beats the last one kept.
        std::vector<bool> kept(V, false);
        for (const auto& prediction : top)
            kept[prediction.token] = true;
        for (int v = 0; v < V; ++v)
            if (!kept[v]) QVERIFY(p[v] <= p[top.back().token]);
    }
}

}  // namespace

class TestModelAnalysis : public QObject {
    Q_OBJECT

private slots:
    // Worked on paper: rows [1 0 0], [¼ ¾ 0], [½ ¼ ¼].
    void summaryOfThreeByThreeOnPaper() {
        model::Matrix<double> w(3, 3);
        w << 1, 0, 0, 0.25, 0.75, 0, 0.5, 0.25, 0.25;
        const auto s = model::summarizeHeads(handRun({1, 2, 3}, {w}));
        QCOMPARE(int(s.size()), 1);
        // Row entropies: 0; ¼ln4 + ¾ln(4/3); ½ln2 + ½ln4.
        const double entropy = (0.25 * std::log(4.0) + 0.75 * std::log(4.0 / 3.0) +
                                0.5 * std::log(2.0) + 0.5 * std::log(4.0)) /
                               3;
        QVERIFY(std::fabs(s[0].entropy - entropy) < kExact);
        QVERIFY(std::fabs(s[0].entropy - 0.5340186385) < 1e-9);
        QVERIFY(std::fabs(s[0].firstToken - (1 + 0.25 + 0.5) / 3) < kExact);
        QVERIFY(std::fabs(s[0].previousToken - 0.25) < kExact);  // (¼ + ¼) / 2
        QVERIFY(std::fabs(s[0].self - 2.0 / 3.0) < kExact);      // (1 + ¾ + ¼) / 3
        QVERIFY(std::isnan(s[0].induction));

        // Â = (W + I) / 2 for one layer of one head.
        const auto rollout = model::attentionRollout(handRun({1, 2, 3}, {w}));
        QCOMPARE(int(rollout.size()), 1);
        Eigen::Matrix3d expected;
        expected << 1, 0, 0, 0.125, 0.875, 0, 0.25, 0.125, 0.625;
        QVERIFY((rollout[0] - expected).cwiseAbs().maxCoeff() < kExact);
    }

    // Clark et al.'s to-[SEP]: rows [1 0 0], [¼ ¾ 0], [½ ¼ ¼] with separators at 1 and 2:
    // (0 + ¾ + ½) / 3; with the last token padding, rows 0 and 1 only, keys 1 and 2 still read.
    void toSeparatorOnPaper() {
        model::Matrix<double> w(3, 3);
        w << 1, 0, 0, 0.25, 0.75, 0, 0.5, 0.25, 0.25;
        model::ModelRun<double> run = handRun({1, 2, 3}, {w});
        QVERIFY(std::isnan(model::summarizeHeads(run)[0].toSeparator));  // none given
        run.options.separators = {1, 2};
        QVERIFY(std::fabs(model::summarizeHeads(run)[0].toSeparator - 1.25 / 3) < kExact);
        run.attentionMask = {1, 1, 0};
        QVERIFY(std::fabs(model::summarizeHeads(run)[0].toSeparator - 0.75 / 2) < kExact);
        // The pass's digests measure it as summarizeHeads does.
        const io::ModelFolder folder(goldenModelDir("bert-tiny"));
        model::RunOptions options;
        options.separators = {0, 6};
        const auto withMaps = model::runModel<double>(folder.model(), kIdsA, options);
        options.keepDigest = true;
        options.keptMaps = model::RunOptions::KeptMaps::Chosen;
        const auto digested = model::runModel<double>(folder.model(), kIdsA, options);
        const auto a = model::summarizeHeads(withMaps), b = model::summarizeHeads(digested);
        for (std::size_t h = 0; h < a.size(); ++h) {
            const auto& weights = withMaps.layers[a[h].layer].weights[a[h].head];
            const double loop = (weights.col(0).sum() + weights.col(6).sum()) / 7;
            QVERIFY(std::fabs(a[h].toSeparator - loop) < kExact);
            QVERIFY(std::fabs(b[h].toSeparator - loop) < kExact);
        }
        options.separators = {7};
        QVERIFY_THROWS_EXCEPTION(model::ModelError,
                                 model::runModel<double>(folder.model(), kIdsA, options));
    }

    void oneTokenHasNoPreviousTokenScore() {
        model::Matrix<double> w(1, 1);
        w << 1;
        const auto s = model::summarizeHeads(handRun({4}, {w}));
        QCOMPARE(s[0].entropy, 0.0);
        QCOMPARE(s[0].self, 1.0);
        QVERIFY(std::isnan(s[0].previousToken));
    }

    void summariesMatchLoopsOnGoldenModels_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("padded");
        for (const char* name : {"gpt2-tiny", "llama-tiny-gqa", "qwen3-tiny", "bert-tiny"})
            QTest::newRow(name) << name << false;
        QTest::newRow("bert-tiny padded") << "bert-tiny" << true;
    }
    void summariesMatchLoopsOnGoldenModels() {
        QFETCH(QString, name);
        QFETCH(bool, padded);
        const io::ModelFolder folder(goldenModelDir(name));
        model::RunOptions options;
        std::vector<long long> ids = kIdsA;
        if (padded) {  // case B
            ids = {7, 41, 3, 59, 22, 0, 0};
            options.attentionMask = {1, 1, 1, 1, 1, 0, 0};
        }
        checkSummaries(model::runModel<double>(folder.model(), ids, options));
        checkSummaries(model::runModel<float>(folder.model(), ids, options));
    }

    // Padded rows are left out: a padded run scores as the same tokens without the padding.
    void paddingIsLeftOut() {
        const io::ModelFolder folder(goldenModelDir("bert-tiny"));
        model::RunOptions options;
        options.attentionMask = {1, 1, 1, 1, 1, 0, 0};
        const auto padded =
            model::runModel<double>(folder.model(), {7, 41, 3, 59, 22, 0, 0}, options);
        const auto plain = model::runModel<double>(folder.model(), {7, 41, 3, 59, 22});
        const auto a = model::summarizeHeads(padded), b = model::summarizeHeads(plain);
        for (size_t h = 0; h < a.size(); ++h) {
            QVERIFY(std::fabs(a[h].entropy - b[h].entropy) < 1e-9);
            QVERIFY(std::fabs(a[h].firstToken - b[h].firstToken) < 1e-9);
            QVERIFY(std::fabs(a[h].previousToken - b[h].previousToken) < 1e-9);
            QVERIFY(std::fabs(a[h].self - b[h].self) < 1e-9);
        }
        // Rollout: no token reads a padded position, and tokens' rows are the plain run's.
        const auto ra = model::attentionRollout(padded), rb = model::attentionRollout(plain);
        for (size_t l = 0; l < ra.size(); ++l) {
            QVERIFY(ra[l].block(0, 5, 5, 2).cwiseAbs().maxCoeff() == 0);
            QVERIFY((ra[l].topLeftCorner(5, 5) - rb[l]).cwiseAbs().maxCoeff() < 1e-9);
        }
        // The query–key fit ignores padded positions: the tokens land where they do unpadded.
        for (auto mode : {model::QkProjectionMode::Separate, model::QkProjectionMode::Joint}) {
            const auto pa = model::projectQueriesAndKeys(padded, 1, 2, mode);
            const auto pb = model::projectQueriesAndKeys(plain, 1, 2, mode);
            QVERIFY((pa.queries.topRows(5) - pb.queries).cwiseAbs().maxCoeff() < 1e-9);
            QVERIFY((pa.keys.topRows(5) - pb.keys).cwiseAbs().maxCoeff() < 1e-9);
            QVERIFY(std::fabs(pa.explainedQuery - pb.explainedQuery) < 1e-9);
        }
    }

    // BOS a b c a b c: head 0 is a perfect induction head (second-copy row P+N+i on key P+i+1),
    // head 1 spreads evenly over what it sees, head 2 looks at the previous token.
    void inductionOnHandBuiltHeads() {
        const std::vector<long long> tokens = {9, 1, 2, 3, 1, 2, 3};
        const int T = 7, P = 1, N = 3;
        model::Matrix<double> induction = model::Matrix<double>::Zero(T, T);
        model::Matrix<double> uniform = model::Matrix<double>::Zero(T, T);
        model::Matrix<double> previous = model::Matrix<double>::Zero(T, T);
        for (int i = 0; i < T; ++i) {
            induction(i, i >= P + N ? i - N + 1 : 0) = 1;
            for (int j = 0; j <= i; ++j)
                uniform(i, j) = 1.0 / (i + 1);
            previous(i, std::max(0, i - 1)) = 1;
        }
        const auto run = handRun(tokens, {induction, uniform, previous});
        const auto scores = model::inductionScores(run, P, N);
        QCOMPARE(int(scores.size()), 3);
        QCOMPARE(scores[0], 1.0);
        QVERIFY(std::fabs(scores[1] - (1.0 / 5 + 1.0 / 6 + 1.0 / 7) / 3) < kExact);
        QCOMPARE(scores[2], 0.0);
        for (int h = 0; h < 3; ++h)
            QVERIFY(std::fabs(scores[h] - inductionByHand(run, 0, h, P, N)) < kExact);
        // The previous-token head is what its name says.
        QVERIFY(std::fabs(model::summarizeHeads(run)[2].previousToken - 1.0) < kExact);

        // Not a repeated text: refused, not measured.
        QVERIFY_THROWS_EXCEPTION(model::ModelError, model::inductionScores(run, 0, 3));
        QVERIFY_THROWS_EXCEPTION(model::ModelError, model::inductionScores(run, 2, 3));
        auto broken = run;
        broken.tokens[5] = 7;
        QVERIFY_THROWS_EXCEPTION(model::ModelError, model::inductionScores(broken, P, N));
    }

    void inductionOnRandomIdsOfRealModels_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("prefix");
        QTest::newRow("gpt2-tiny, BOS prefix") << "gpt2-tiny" << 1;
        QTest::newRow("llama-tiny-gqa, BOS prefix") << "llama-tiny-gqa" << 1;
        QTest::newRow("gpt2-tiny, no prefix") << "gpt2-tiny" << 0;
    }
    void inductionOnRandomIdsOfRealModels() {
        QFETCH(QString, name);
        QFETCH(int, prefix);
        const io::ModelFolder folder(goldenModelDir(name));
        const int N = 12;
        std::mt19937 random(11);
        std::vector<long long> ids;
        if (prefix) ids.push_back(folder.model().config.vocab - 1);
        for (int i = 0; i < N; ++i)
            ids.push_back(static_cast<long long>(random() % folder.model().config.vocab));
        for (int i = 0; i < N; ++i)
            ids.push_back(ids[prefix + i]);
        const auto run = model::runModel<double>(folder.model(), ids);
        const auto scores = model::inductionScores(run, prefix, N);
        QCOMPARE(int(scores.size()), run.config.layers * run.config.heads);
        for (int l = 0; l < run.config.layers; ++l) {
            for (int h = 0; h < run.config.heads; ++h) {
                const double s = scores[l * run.config.heads + h];
                QVERIFY(s >= 0 && s <= 1);
                QVERIFY(std::fabs(s - inductionByHand(run, l, h, prefix, N)) < kExact);
            }
        }
    }

    void rolloutMatchesExplicitProducts_data() {
        QTest::addColumn<QString>("name");
        for (const char* name : {"gpt2-tiny", "llama-tiny-gqa", "bert-tiny"})
            QTest::newRow(name) << name;
    }
    void rolloutMatchesExplicitProducts() {
        QFETCH(QString, name);
        const io::ModelFolder folder(goldenModelDir(name));
        checkRollout(model::runModel<double>(folder.model(), kIdsA));
        checkRollout(model::runModel<float>(folder.model(), kIdsA));
        if (name == "bert-tiny") {
            model::RunOptions options;
            options.attentionMask = {1, 1, 1, 1, 1, 0, 0};
            checkRollout(
                model::runModel<double>(folder.model(), {7, 41, 3, 59, 22, 0, 0}, options));
        }
    }

    // A what-if may lift a layer's causal mask: rollout must not assume triangular layers.
    void rolloutWhenALaterLayerSeesEverything() {
        const int T = 5;
        model::Matrix<double> causal = model::Matrix<double>::Zero(T, T);
        model::Matrix<double> full(T, T);
        for (int i = 0; i < T; ++i) {
            for (int j = 0; j <= i; ++j)
                causal(i, j) = (j + 1.0) / ((i + 1) * (i + 2) / 2.0);
            for (int j = 0; j < T; ++j)
                full(i, j) = (i == j ? 3.0 : 1.0) / (T + 2);
        }
        model::ModelRun<double> run = handRun({1, 2, 3, 4, 5}, {causal, causal});
        run.config.layers = 3;
        run.layers.push_back(run.layers[0]);
        run.layers.push_back(run.layers[0]);
        run.layers[1].weights[1] = full;  // one head of the middle layer
        checkRollout(run);
        QVERIFY(model::attentionRollout(run)[2](0, T - 1) > 0);
    }

    void predictionsAreTheSoftmaxsLargest() {
        const io::ModelFolder folder(goldenModelDir("gpt2-tiny"));
        checkPredictions(model::runModel<double>(folder.model(), kIdsA));
        checkPredictions(model::runModel<float>(folder.model(), kIdsA));
        const auto run = model::runModel<double>(folder.model(), kIdsA);
        QCOMPARE(int(model::topPredictions(run, 0, 1000).size()), 64);  // the whole vocabulary
        QVERIFY_THROWS_EXCEPTION(model::ModelError, model::topPredictions(run, 7));
        QVERIFY_THROWS_EXCEPTION(model::ModelError, model::topPredictions(run, -1));
        const io::ModelFolder bert(goldenModelDir("bert-tiny"));
        QVERIFY_THROWS_EXCEPTION(
            model::ModelError,
            model::topPredictions(model::runModel<double>(bert.model(), kIdsA), 0));
    }

    // The window's runs keep only the last row of the logits; any other row comes from the kept
    // final hidden state, and equals the full run's.
    void lastRowOfTheLogitsAndAnyOther_data() {
        QTest::addColumn<QString>("name");
        for (const char* name : {"gpt2-tiny", "llama-tiny-gqa", "qwen3-tiny"})
            QTest::newRow(name) << QString(name);
    }
    void lastRowOfTheLogitsAndAnyOther() {
        QFETCH(QString, name);
        const io::ModelFolder folder(goldenModelDir(name));
        const auto every = model::runModel<double>(folder.model(), kIdsA);
        model::RunOptions lastOnly;
        lastOnly.logitsForEveryPosition = false;
        const auto last = model::runModel<double>(folder.model(), kIdsA, lastOnly);
        const int T = static_cast<int>(kIdsA.size());
        QCOMPARE(int(last.logits.rows()), 1);
        QCOMPARE(last.logitsFrom, T - 1LL);
        QCOMPARE(int(last.finalHidden.rows()), T);
        for (int p = 0; p < T; ++p) {
            const Eigen::VectorXd want = every.logits.row(p).transpose();
            const Eigen::VectorXd got = model::logitsAt(folder.model(), last, p);
            QVERIFY2((got - want).cwiseAbs().maxCoeff() <= 1e-12 * (1 + want.cwiseAbs().maxCoeff()),
                     qPrintable(QString("position %1").arg(p)));
            const auto a = model::topPredictions(every, p, 5);
            const auto b = model::topPredictions(folder.model(), last, p, 5);
            for (int r = 0; r < 5; ++r) {
                QCOMPARE(b[r].token, a[r].token);
                QVERIFY(std::fabs(b[r].probability - a[r].probability) < 1e-12);
            }
        }
        // Without the model, only the kept row is there.
        QCOMPARE(model::topPredictions(last, T - 1, 1)[0].token,
                 model::topPredictions(every, T - 1, 1)[0].token);
        QVERIFY_THROWS_EXCEPTION(model::ModelError, model::topPredictions(last, 0));
        QVERIFY_THROWS_EXCEPTION(model::ModelError, model::logitsAt(folder.model(), last, T));
    }

    // A huge logit must not overflow the softmax.
    void predictionsSurviveHugeLogits() {
        model::ModelRun<double> run = handRun({1, 2}, {});
        run.logits.resize(2, 3);
        run.logits << 1000, 999, -1000, 0, 0, 0;
        const auto top = model::topPredictions(run, 0, 3);
        QCOMPARE(top[0].token, 0LL);
        QVERIFY(std::fabs(top[0].probability - 1 / (1 + std::exp(-1.0))) < kExact);
        QCOMPARE(top[2].probability, 0.0);
        const auto tie = model::topPredictions(run, 1, 3);  // equal logits: lower id first
        QCOMPARE(tie[0].token, 0LL);
        QCOMPARE(tie[2].token, 2LL);
    }

    void queryKeyProjectionIsPrincipalComponents_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("layer");
        QTest::addColumn<int>("head");
        QTest::newRow("gpt2-tiny 0.1") << "gpt2-tiny" << 0 << 1;
        QTest::newRow("gpt2-tiny 1.3") << "gpt2-tiny" << 1 << 3;
        QTest::newRow("llama-tiny-gqa 1.3 (kv head 1)") << "llama-tiny-gqa" << 1 << 3;
        QTest::newRow("qwen3-tiny 0.2") << "qwen3-tiny" << 0 << 2;
    }
    void queryKeyProjectionIsPrincipalComponents() {
        QFETCH(QString, name);
        QFETCH(int, layer);
        QFETCH(int, head);
        const io::ModelFolder folder(goldenModelDir(name));
        // More tokens than the head has dimensions, so the axes are determined.
        std::vector<long long> ids;
        for (int i = 0; i < 24; ++i)
            ids.push_back((i * 37 + 5) % folder.model().config.vocab);
        const auto run = model::runModel<double>(folder.model(), ids);
        const Eigen::MatrixXd q = run.q(layer, head), k = run.k(layer, head);
        const int T = static_cast<int>(ids.size());

        const auto separate =
            model::projectQueriesAndKeys(run, layer, head, model::QkProjectionMode::Separate);
        QCOMPARE(int(separate.queries.rows()), T);
        const Eigen::MatrixXd queryAxes =
            checkPrincipal(centred(q, meanRow(q)), separate.queries, separate.explainedQuery);
        const Eigen::MatrixXd keyAxes =
            checkPrincipal(centred(k, meanRow(k)), separate.keys, separate.explainedKey);
        QVERIFY(separate.explainedQuery > 0 && separate.explainedQuery < 1);
        // Two spaces: the queries' plane is not the keys'.
        QVERIFY((queryAxes - keyAxes).cwiseAbs().maxCoeff() > 1e-3);

        // Joint: one basis and one centre for both sets.
        const auto joint =
            model::projectQueriesAndKeys(run, layer, head, model::QkProjectionMode::Joint);
        Eigen::MatrixXd both(2 * T, q.cols());
        both << q, k;
        Eigen::MatrixX2d projected(2 * T, 2);
        projected << joint.queries, joint.keys;
        checkPrincipal(centred(both, meanRow(both)), projected, joint.explainedQuery);
        QCOMPARE(joint.explainedKey, joint.explainedQuery);

        const auto norms =
            model::projectQueriesAndKeys(run, layer, head, model::QkProjectionMode::Norms);
        for (int i = 0; i < T; ++i) {
            QCOMPARE(norms.queries(i, 0), double(i));
            QVERIFY(std::fabs(norms.queries(i, 1) - q.row(i).norm()) < kExact);
            QVERIFY(std::fabs(norms.keys(i, 1) - k.row(i).norm()) < kExact);
        }
        QCOMPARE(norms.explainedQuery, 0.0);

        // The same run draws the same figure; a float run draws nearly it (no flipped axis).
        const auto again =
            model::projectQueriesAndKeys(run, layer, head, model::QkProjectionMode::Separate);
        QVERIFY(again.queries == separate.queries && again.keys == separate.keys);
        const auto inFloat =
            model::projectQueriesAndKeys(model::runModel<float>(folder.model(), ids), layer, head,
                                         model::QkProjectionMode::Separate);
        const double size = separate.queries.cwiseAbs().maxCoeff();
        QVERIFY((inFloat.queries - separate.queries).cwiseAbs().maxCoeff() < 1e-3 * size);

        QVERIFY_THROWS_EXCEPTION(model::ModelError, model::projectQueriesAndKeys(
                                                        run, 2, 0, model::QkProjectionMode::Joint));
        QVERIFY_THROWS_EXCEPTION(model::ModelError, model::projectQueriesAndKeys(
                                                        run, 0, 4, model::QkProjectionMode::Joint));
    }

    // The BOS `heads --induction-random` puts first: the config's, or the family's default.
    void bosTokenIsReadFromConfig() {
        QCOMPARE(io::ModelFolder(goldenModelDir("gpt2-tiny")).model().config.bosToken, 63LL);
        QCOMPARE(io::ModelFolder(goldenModelDir("llama-tiny-gqa")).model().config.bosToken, 1LL);
        QCOMPARE(io::ModelFolder(goldenModelDir("bert-tiny")).model().config.bosToken, -1LL);
        const auto bos = [](const QByteArray& json) {
            return io::parseModelConfig(json, "config.json").bosToken;
        };
        QCOMPARE(bos(R"({"model_type": "gpt2", "vocab_size": 60000})"), 50256LL);
        QCOMPARE(bos(R"({"model_type": "gpt2", "vocab_size": 64})"), -1LL);  // default outside
        QCOMPARE(bos(R"({"model_type": "gpt2", "vocab_size": 64, "bos_token_id": 0})"), 0LL);
        QCOMPARE(bos(R"({"model_type": "gpt2", "vocab_size": 64, "bos_token_id": 64})"), -1LL);
        QCOMPARE(bos(R"({"model_type": "gpt2", "vocab_size": 64, "bos_token_id": 2.0})"), -1LL);
        QCOMPARE(bos(R"({"model_type": "gpt2", "vocab_size": 64, "bos_token_id": null})"), -1LL);
        QCOMPARE(bos(R"({"model_type": "llama"})"), 1LL);
        QCOMPARE(bos(R"({"model_type": "qwen3"})"), -1LL);
        QCOMPARE(bos(R"({"model_type": "qwen3", "bos_token_id": 151643})"), 151643LL);
    }

    // Points that do not vary: nothing to lose, no NaN.
    void constantPointsProjectToTheOrigin() {
        const io::ModelFolder folder(goldenModelDir("gpt2-tiny"));
        const auto run = model::runModel<double>(folder.model(), {5});
        const auto p = model::projectQueriesAndKeys(run, 0, 0, model::QkProjectionMode::Separate);
        QCOMPARE(p.queries.rows(), Eigen::Index(1));
        QVERIFY(p.queries.cwiseAbs().maxCoeff() == 0);
        QCOMPARE(p.explainedQuery, 1.0);
    }
};

QTEST_GUILESS_MAIN(TestModelAnalysis)
#include "test_model_analysis.moc"
