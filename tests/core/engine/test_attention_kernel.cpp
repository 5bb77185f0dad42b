// The attention kernel (core/attention_kernel.h) against a reference written out here with plain
// loops, one cell at a time: every mask part alone and together, finite and −∞ fills, a row that
// sees no key, grouped kv heads, a bias, a soft-cap, restarting from kept logits, rows kept from
// before, the parts that hide a cell, and the q/k norm and rotary positions (per head and over the
// full width, full and partial rotation, each layer's own frequencies).
#include <QtTest>
#include <cmath>
#include <limits>
#include <vector>

#include "core/attention_kernel.h"
#include "core/init_draw.h"

namespace {

using ae::BoolMatrix;
using ae::Mask;
using ae::MatrixD;
namespace attention = ae::attention;

constexpr double kInfinity = std::numeric_limits<double>::infinity();

MatrixD drawn(ae::SplitMix64& rng, Eigen::Index rows, Eigen::Index cols, double spread = 2.0) {
    MatrixD m(rows, cols);
    for (Eigen::Index r = 0; r < rows; ++r)
        for (Eigen::Index c = 0; c < cols; ++c)
            m(r, c) = spread * (rng.uniform01() - 0.5);
    return m;
}

bool visibleByHand(const Mask& mask, int i, int j) {
    if (mask.causal && j > i) return false;
    if (mask.window && std::abs(i - j) > *mask.window) return false;
    if (!mask.padding.empty() && mask.padding[static_cast<std::size_t>(j)]) return false;
    if (mask.allowed && !(*mask.allowed)(i, j)) return false;
    return true;
}

// One layer's heads, cell by cell.
struct Reference {
    std::vector<MatrixD> scores, logits, weights;  // per head, Tq x Tk
    MatrixD context;                               // Tq x heads·hd
};

struct Problem {
    MatrixD q, k, v;  // Tq x heads·hd, Tk x kvHeads·hd
    int heads = 4, kvHeads = 2;
    Eigen::Index hd = 3;
    attention::ScoreScale scale = attention::ScoreScale::dividedBy(1.7);
    Mask mask;
    double fill = -kInfinity;
    std::vector<MatrixD> bias;  // empty: none
    double softCap = 0.0;
};

Reference byHand(const Problem& p) {
    const Eigen::Index Tq = p.q.rows(), Tk = p.k.rows(), hd = p.hd;
    Reference r;
    r.context = MatrixD::Zero(Tq, p.heads * hd);
    for (int h = 0; h < p.heads; ++h) {
        const int g = h / (p.heads / p.kvHeads);
        MatrixD s(Tq, Tk), z(Tq, Tk), a = MatrixD::Zero(Tq, Tk);
        for (Eigen::Index i = 0; i < Tq; ++i) {
            for (Eigen::Index j = 0; j < Tk; ++j) {
                double dot = 0.0;
                for (Eigen::Index c = 0; c < hd; ++c)
                    dot += p.q(i, h * hd + c) * p.k(j, g * hd + c);
                s(i, j) = dot;
                double logit = p.scale.divide ? dot / p.scale.value : dot * p.scale.value;
                if (!p.bias.empty()) logit += p.bias[static_cast<std::size_t>(h)](i, j);
                if (p.softCap > 0) logit = p.softCap * std::tanh(logit / p.softCap);
                z(i, j) = logit;
            }
            // Hidden cells: left out with −∞, replaced by the fill otherwise.
            std::vector<double> masked(static_cast<std::size_t>(Tk));
            std::vector<bool> counts(static_cast<std::size_t>(Tk));
            double top = -kInfinity;
            for (Eigen::Index j = 0; j < Tk; ++j) {
                const bool seen = visibleByHand(p.mask, static_cast<int>(i), static_cast<int>(j));
                const auto u = static_cast<std::size_t>(j);
                counts[u] = seen || !std::isinf(p.fill);
                masked[u] = seen ? z(i, j) : p.fill;
                if (counts[u]) top = std::max(top, masked[u]);
            }
            double sum = 0.0;
            for (Eigen::Index j = 0; j < Tk; ++j)
                if (counts[static_cast<std::size_t>(j)])
                    sum += std::exp(masked[static_cast<std::size_t>(j)] - top);
            for (Eigen::Index j = 0; j < Tk; ++j)
                if (counts[static_cast<std::size_t>(j)])
                    a(i, j) = std::exp(masked[static_cast<std::size_t>(j)] - top) / sum;
            for (Eigen::Index c = 0; c < hd; ++c) {
                double total = 0.0;
                for (Eigen::Index j = 0; j < Tk; ++j)
                    total += a(i, j) * p.v(j, g * hd + c);
                r.context(i, h * hd + c) = total;
            }
        }
        r.scores.push_back(s);
        r.logits.push_back(z);
        r.weights.push_back(a);
    }
    return r;
}

Problem drawnProblem(std::uint64_t seed, Eigen::Index Tq = 6, Eigen::Index Tk = 6) {
    ae::SplitMix64 rng(seed);
    Problem p;
    p.q = drawn(rng, Tq, p.heads * p.hd);
    p.k = drawn(rng, Tk, p.kvHeads * p.hd);
    p.v = drawn(rng, Tk, p.kvHeads * p.hd);
    return p;
}

struct Result {
    std::vector<MatrixD> scores, logits, weights;
    MatrixD context;
    attention::AttendResult status;
};

Result viaKernel(
    const Problem& p,
    attention::SoftmaxMask<double>::Rows rows = attention::SoftmaxMask<double>::Rows::Whole,
    int threads = 1) {
    const attention::SoftmaxMask<double> mask(p.mask, p.fill, static_cast<int>(p.q.rows()),
                                              static_cast<int>(p.k.rows()), rows);
    attention::HeadOptions<double> options;
    options.scale = p.scale;
    options.mask = &mask;
    options.bias = p.bias.empty() ? nullptr : &p.bias;
    options.softCap = p.softCap;
    options.checkFinite = true;
    options.threads = threads;
    Result r;
    r.status =
        attention::attendHeads<double>({p.q, p.k, p.v, p.heads, p.kvHeads, p.hd},
                                       {&r.scores, &r.logits, &r.weights, &r.context}, options);
    return r;
}

void compare(const MatrixD& got, const MatrixD& expected, const char* what, double tolerance) {
    QCOMPARE(got.rows(), expected.rows());
    QCOMPARE(got.cols(), expected.cols());
    const double difference = (got - expected).cwiseAbs().maxCoeff();
    if (!(difference <= tolerance))
        QFAIL(qPrintable(QString("%1: off by %2").arg(what).arg(difference)));
}

void compareAll(const Result& got, const Reference& expected, bool logitsKept = true) {
    for (std::size_t h = 0; h < expected.weights.size(); ++h) {
        compare(got.scores[h], expected.scores[h], "scores", 1e-13);
        if (logitsKept) compare(got.logits[h], expected.logits[h], "logits", 1e-13);
        compare(got.weights[h], expected.weights[h], "weights", 1e-13);
    }
    compare(got.context, expected.context, "context", 1e-13);
}

}  // namespace

class TestAttentionKernel : public QObject {
    Q_OBJECT

private slots:
    void eachMaskPartAsWrittenOut_data() {
        QTest::addColumn<bool>("causal");
        QTest::addColumn<int>("window");  // < 0: none
        QTest::addColumn<bool>("padding");
        QTest::addColumn<bool>("custom");
        QTest::addColumn<double>("fill");
        QTest::newRow("none") << false << -1 << false << false << -kInfinity;
        QTest::newRow("causal") << true << -1 << false << false << -kInfinity;
        QTest::newRow("window") << false << 1 << false << false << -kInfinity;
        QTest::newRow("padding") << false << -1 << true << false << -kInfinity;
        QTest::newRow("custom, a row sees no key") << false << -1 << false << true << -kInfinity;
        QTest::newRow("every part") << true << 2 << true << true << -kInfinity;
        QTest::newRow("causal, finite fill") << true << -1 << false << false << -3.0;
        QTest::newRow("every part, finite fill") << true << 2 << true << true << 0.5;
    }
    void eachMaskPartAsWrittenOut() {
        QFETCH(bool, causal);
        QFETCH(int, window);
        QFETCH(bool, padding);
        QFETCH(bool, custom);
        QFETCH(double, fill);
        Problem p = drawnProblem(11);
        p.mask.causal = causal;
        if (window >= 0) p.mask.window = window;
        if (padding) p.mask.padding = {false, false, true, false, true, false};
        if (custom) {
            BoolMatrix allowed = BoolMatrix::Constant(6, 6, true);
            allowed(1, 0) = allowed(4, 3) = allowed(5, 5) = false;
            allowed.row(3).setConstant(false);  // query 3 sees nothing
            p.mask.allowed = allowed;
        }
        p.fill = fill;
        const Reference expected = byHand(p);
        const Result got = viaKernel(p);
        QVERIFY(!got.status.logitsOverflow && !got.status.contextOverflow);
        compareAll(got, expected);
        // Hidden by −∞: exactly 0, and a row that sees no key all zeros (no 0/0).
        if (std::isinf(fill)) {
            for (int h = 0; h < p.heads; ++h)
                for (int i = 0; i < 6; ++i)
                    for (int j = 0; j < 6; ++j)
                        if (!visibleByHand(p.mask, i, j)) QCOMPARE(got.weights[h](i, j), 0.0);
        }
    }

    void prefixRowsAgreeWithTheReference() {
        for (bool causal : {false, true}) {
            Problem p = drawnProblem(12);
            p.mask.causal = causal;
            p.scale = attention::ScoreScale::times(0.6);
            const attention::SoftmaxMask<double> mask(
                p.mask, p.fill, 6, 6, attention::SoftmaxMask<double>::Rows::VisiblePrefix);
            QVERIFY(mask.prefixRows());
            QCOMPARE(mask.visibleAsOne().size(), Eigen::Index(0));  // no Tq x Tk numbers built
            const Result got = viaKernel(p, attention::SoftmaxMask<double>::Rows::VisiblePrefix, 2);
            compareAll(got, byHand(p));
            for (int i = 0; i < 6; ++i)
                for (int j = i + 1; causal && j < 6; ++j)
                    QCOMPARE(got.weights[0](i, j), 0.0);
        }
    }

    void prefixRowsOnlyForAMaskThatHidesAPrefix() {
        using Rows = attention::SoftmaxMask<double>::Rows;
        Mask causal;
        causal.causal = true;
        QVERIFY(attention::SoftmaxMask<double>(causal, -kInfinity, 4, 4, Rows::VisiblePrefix)
                    .prefixRows());
        // A finite fill gives hidden keys weight; padding and windows hide more than a tail.
        QVERIFY(
            !attention::SoftmaxMask<double>(causal, -5.0, 4, 4, Rows::VisiblePrefix).prefixRows());
        Mask padded = causal;
        padded.padding = {false, true, false, false};
        QVERIFY(!attention::SoftmaxMask<double>(padded, -kInfinity, 4, 4, Rows::VisiblePrefix)
                     .prefixRows());
        Mask windowed = causal;
        windowed.window = 1;
        QVERIFY(!attention::SoftmaxMask<double>(windowed, -kInfinity, 4, 4, Rows::VisiblePrefix)
                     .prefixRows());
        QVERIFY(!attention::SoftmaxMask<double>(causal, -kInfinity, 4, 4).prefixRows());
    }

    void biasAndSoftCap() {
        Problem p = drawnProblem(13, 5, 7);  // cross-attention shapes: Tq 5, Tk 7
        p.q *= 4.0;                          // logits large enough for the cap to bend them
        ae::SplitMix64 rng(99);
        for (int h = 0; h < p.heads; ++h)
            p.bias.push_back(drawn(rng, 5, 7, 6.0));
        p.softCap = 2.5;
        p.mask.window = 3;
        const Reference expected = byHand(p);
        const Result got = viaKernel(p, attention::SoftmaxMask<double>::Rows::Whole, 3);
        compareAll(got, expected);
        // The cap holds every logit inside (−cap, cap), and the bias is not just ignored.
        for (const MatrixD& z : got.logits)
            QVERIFY(z.cwiseAbs().maxCoeff() < p.softCap);
        Problem unbiased = p;
        unbiased.bias.clear();
        QVERIFY((viaKernel(unbiased).weights[0] - got.weights[0]).cwiseAbs().maxCoeff() > 1e-3);
    }

    void restartsFromKeptLogits() {
        Problem p = drawnProblem(14);
        p.mask.causal = true;
        Result r = viaKernel(p);
        // A changed logit, then the softmax and the context again from the kept logits.
        r.logits[1](4, 2) += 1.5;
        const MatrixD scoresBefore = r.scores[1];
        const attention::SoftmaxMask<double> mask(p.mask, p.fill, 6, 6);
        attention::HeadOptions<double> options;
        options.scale = p.scale;
        options.mask = &mask;
        options.from = attention::AttendFrom::Weights;
        attention::attendHeads<double>({p.q, p.k, p.v, p.heads, p.kvHeads, p.hd},
                                       {&r.scores, &r.logits, &r.weights, &r.context}, options);
        QCOMPARE(r.scores[1], scoresBefore);
        double top = -kInfinity, sum = 0.0;
        for (int j = 0; j <= 4; ++j)
            top = std::max(top, r.logits[1](4, j));
        for (int j = 0; j <= 4; ++j)
            sum += std::exp(r.logits[1](4, j) - top);
        QVERIFY(std::abs(r.weights[1](4, 2) - std::exp(r.logits[1](4, 2) - top) / sum) < 1e-15);
        const MatrixD context = r.weights[1] * p.v.middleCols(0, p.hd);  // head 1 reads kv head 0
        compare(r.context.middleCols(p.hd, p.hd), context, "context", 1e-14);
    }

    void rowsBeforeFirstRowStayTheCallers() {
        Problem p = drawnProblem(15);
        p.mask.causal = true;
        p.scale = attention::ScoreScale::times(0.5);
        const Reference expected = byHand(p);
        const attention::SoftmaxMask<double> mask(
            p.mask, p.fill, 6, 6, attention::SoftmaxMask<double>::Rows::VisiblePrefix);
        std::vector<MatrixD> scores(4, MatrixD::Constant(6, 6, 7.0)),
            weights(4, MatrixD::Constant(6, 6, 7.0));
        MatrixD context;
        attention::HeadOptions<double> options;
        options.scale = p.scale;
        options.mask = &mask;
        options.firstRow = 2;
        attention::attendHeads<double>({p.q, p.k, p.v, p.heads, p.kvHeads, p.hd},
                                       {&scores, nullptr, &weights, &context}, options);
        QCOMPARE(context.rows(), Eigen::Index(4));
        compare(context, expected.context.bottomRows(4), "context", 1e-13);
        for (int h = 0; h < p.heads; ++h) {
            QCOMPARE(MatrixD(weights[h].topRows(2)), MatrixD(MatrixD::Constant(2, 6, 7.0)));
            QCOMPARE(MatrixD(scores[h].topRows(2)), MatrixD(MatrixD::Constant(2, 6, 7.0)));
            compare(weights[h].bottomRows(4), expected.weights[h].bottomRows(4), "weights", 1e-13);
        }
    }

    void headsAgreeOnAnyNumberOfThreads() {
        Problem p = drawnProblem(16);
        p.mask.padding = {false, true, false, false, false, false};
        const Result one = viaKernel(p, attention::SoftmaxMask<double>::Rows::Whole, 1);
        const Result two = viaKernel(p, attention::SoftmaxMask<double>::Rows::Whole, 2);
        QCOMPARE(two.context, one.context);
        for (int h = 0; h < p.heads; ++h)
            QCOMPARE(two.weights[h], one.weights[h]);
    }

    void overflowIsReported() {
        Problem p = drawnProblem(17);
        p.q(2, 0) = 1e300;
        p.k *= 1e300;
        QVERIFY(viaKernel(p).status.logitsOverflow);
        Problem finite = drawnProblem(17);
        finite.v(1, 0) = kInfinity;
        const Result r = viaKernel(finite);
        QVERIFY(!r.status.logitsOverflow);
        QVERIFY(r.status.contextOverflow);
    }

    void floatFollowsDouble() {
        Problem p = drawnProblem(18);
        p.mask.causal = true;
        p.mask.window = 2;
        const Reference expected = byHand(p);
        const attention::SoftmaxMask<float> mask(p.mask, p.fill, 6, 6);
        const ae::ops::RowMajorMatrix<float> q = p.q.cast<float>(), k = p.k.cast<float>(),
                                             v = p.v.cast<float>();
        std::vector<ae::ops::RowMajorMatrix<float>> weights;
        ae::ops::RowMajorMatrix<float> context;
        attention::HeadOptions<float> options;
        options.scale = p.scale;
        options.mask = &mask;
        attention::attendHeads<float>({q, k, v, p.heads, p.kvHeads, p.hd},
                                      {nullptr, nullptr, &weights, &context}, options);
        compare(context.cast<double>(), expected.context, "context", 1e-5);
        compare(weights[3].cast<double>(), expected.weights[3], "weights", 1e-5);
    }

    void hidingPartsNameEveryPart() {
        Mask mask;
        mask.causal = true;
        mask.window = 1;
        mask.padding = {false, false, true, false};
        BoolMatrix allowed = BoolMatrix::Constant(4, 4, true);
        allowed(3, 3) = allowed(0, 3) = false;
        mask.allowed = allowed;
        using attention::hidingParts;
        QVERIFY(!hidingParts(mask, 1, 0).any());
        QVERIFY(hidingParts(mask, 1, 2).causal);
        QVERIFY(!hidingParts(mask, 1, 2).window);
        QVERIFY(hidingParts(mask, 3, 0).window && !hidingParts(mask, 3, 0).causal);
        QVERIFY(hidingParts(mask, 2, 2).padding && !hidingParts(mask, 2, 2).causal);
        QVERIFY(hidingParts(mask, 3, 3).custom && !hidingParts(mask, 3, 3).padding);
        const attention::HidingParts all = hidingParts(mask, 0, 3);  // after, far, custom
        QVERIFY(all.causal && all.window && all.custom && !all.padding);
        // The softmax's visible cells are those no part hides.
        const attention::SoftmaxMask<double> softmaxMask(mask, -kInfinity, 4, 4);
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j)
                QCOMPARE(softmaxMask.visible()(i, j), !hidingParts(mask, i, j).any());
    }

    // ---- q/k norm and rotary positions ----

    void normAndRotationPerHead() {
        ae::SplitMix64 rng(21);
        const Eigen::Index T = 5, hd = 4;
        const MatrixD q0 = drawn(rng, T, 3 * hd), k0 = drawn(rng, T, hd);
        const Eigen::VectorXd queryWeight = drawn(rng, hd, 1), keyWeight = drawn(rng, hd, 1);
        const int firstPosition = 3;
        const std::vector<double> frequencies = {1.0, 0.01};  // hd/2 θ_i
        const ae::ops::RotaryAngles angles = ae::ops::rotaryAngles(firstPosition, T, frequencies);
        MatrixD q = q0, k = k0;
        attention::HeadTransform<double> t;
        t.headDim = hd;
        t.norm = attention::QkNormSpan::PerHead;
        t.queryNormWeight = queryWeight.data();
        t.keyNormWeight = keyWeight.data();
        t.normEps = 1e-6;
        t.angles = &angles;
        attention::transformHeads<double>(q, k, t, 2);
        checkHead(q, q0, 3, hd, queryWeight, hd, firstPosition, frequencies, hd);
        checkHead(k, k0, 1, hd, keyWeight, hd, firstPosition, frequencies, hd);
    }

    void normOverTheFullWidthAndPartialRotation() {
        ae::SplitMix64 rng(22);
        const Eigen::Index T = 4, hd = 6;
        const MatrixD q0 = drawn(rng, T, 2 * hd), k0 = drawn(rng, T, hd);
        const Eigen::VectorXd queryWeight = drawn(rng, 2 * hd, 1), keyWeight = drawn(rng, hd, 1);
        // Each layer its own θ: two of them, turning the first 4 of 6 columns of each head.
        for (double theta : {10000.0, 500.0}) {
            ae::RopeParameters rope;
            rope.theta = theta;
            const std::vector<double> frequencies = ae::ops::ropeInverseFrequencies(4, rope);
            const ae::ops::RotaryAngles angles = ae::ops::rotaryAngles(0, T, frequencies);
            MatrixD q = q0, k = k0;
            attention::HeadTransform<double> t;
            t.headDim = hd;
            t.norm = attention::QkNormSpan::FullWidth;
            t.queryNormWeight = queryWeight.data();
            t.keyNormWeight = keyWeight.data();
            t.normEps = 1e-5;
            t.angles = &angles;
            attention::transformHeads<double>(q, k, t);
            checkHead(q, q0, 2, hd, queryWeight, 2 * hd, 0, frequencies, 4, 1e-5);
            checkHead(k, k0, 1, hd, keyWeight, hd, 0, frequencies, 4, 1e-5);
        }
    }

private:
    // `got` (rows x heads·hd) against `before` normalised by hand (RMS over normWidth columns:
    // hd per head, or the whole row) and its first `rotated` columns of each head turned by hand.
    static void checkHead(const MatrixD& got, const MatrixD& before, int heads, Eigen::Index hd,
                          const Eigen::VectorXd& weight, Eigen::Index normWidth, int firstPosition,
                          const std::vector<double>& frequencies, Eigen::Index rotated,
                          double eps = 1e-6) {
        for (Eigen::Index r = 0; r < got.rows(); ++r) {
            Eigen::RowVectorXd normed = before.row(r);
            for (Eigen::Index start = 0; start < normed.size(); start += normWidth) {
                double square = 0.0;
                for (Eigen::Index c = 0; c < normWidth; ++c)
                    square += normed(start + c) * normed(start + c);
                const double inverse = 1.0 / std::sqrt(square / normWidth + eps);
                for (Eigen::Index c = 0; c < normWidth; ++c)
                    normed(start + c) *= inverse * weight(c);
            }
            const double position = firstPosition + r;
            for (int h = 0; h < heads; ++h) {
                const Eigen::Index base = h * hd, half = rotated / 2;
                for (Eigen::Index i = 0; i < half; ++i) {
                    const double angle = position * frequencies[static_cast<std::size_t>(i)];
                    const double x = normed(base + i), y = normed(base + i + half);
                    QVERIFY(std::abs(got(r, base + i) -
                                     (x * std::cos(angle) - y * std::sin(angle))) < 1e-13);
                    QVERIFY(std::abs(got(r, base + i + half) -
                                     (y * std::cos(angle) + x * std::sin(angle))) < 1e-13);
                }
                for (Eigen::Index c = rotated; c < hd; ++c)
                    QVERIFY(std::abs(got(r, base + c) - normed(base + c)) < 1e-13);
            }
        }
    }
};

QTEST_APPLESS_MAIN(TestAttentionKernel)
#include "test_attention_kernel.moc"
