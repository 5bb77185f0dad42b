// The forward pass's shared operations (core/ops.h), each against a computation written out by
// hand here: layer norm, the masked softmax row, positions. And the table of stages
// (core/stages.h) against the engine's matrices.

#include <QtTest>
#include <cmath>
#include <limits>

#include "core/attention_engine.h"
#include "core/ops.h"
#include "core/stages.h"
#include "io/scene/scene_file.h"

namespace {

using ae::MatrixD;
using ae::VectorD;

template <typename Scalar>
using Row = ae::ops::RowVector<Scalar>;

// The softmax of `scores` over the cells where `visible` is true, by the textbook formula.
std::vector<double> handSoftmax(const std::vector<double>& scores,
                                const std::vector<bool>& visible) {
    double top = -std::numeric_limits<double>::infinity();
    for (size_t j = 0; j < scores.size(); ++j)
        if (visible[j]) top = std::max(top, scores[j]);
    double sum = 0.0;
    for (size_t j = 0; j < scores.size(); ++j)
        if (visible[j]) sum += std::exp(scores[j] - top);
    std::vector<double> weights(scores.size(), 0.0);
    for (size_t j = 0; j < scores.size(); ++j)
        if (visible[j]) weights[j] = std::exp(scores[j] - top) / sum;
    return weights;
}

// The mask row of `visible` as ops::maskedSoftmaxRow takes it, with storage that outlives it.
template <typename Scalar>
struct MaskRowStorage {
    Row<Scalar> visibleAsOne, hiddenAsMinusInfinity;
    explicit MaskRowStorage(const std::vector<bool>& visible)
        : visibleAsOne(static_cast<Eigen::Index>(visible.size())),
          hiddenAsMinusInfinity(static_cast<Eigen::Index>(visible.size())) {
        for (size_t j = 0; j < visible.size(); ++j) {
            const auto c = static_cast<Eigen::Index>(j);
            visibleAsOne(c) = visible[j] ? Scalar(1) : Scalar(0);
            hiddenAsMinusInfinity(c) =
                visible[j] ? Scalar(0) : -std::numeric_limits<Scalar>::infinity();
        }
    }
    ae::ops::SoftmaxMaskRow<Scalar> row(bool everyKeyVisible, bool seesAKey) const {
        return {everyKeyVisible, seesAKey, visibleAsOne, hiddenAsMinusInfinity};
    }
};

template <typename Scalar>
Row<Scalar> rowOf(const std::vector<double>& values) {
    Row<Scalar> row(static_cast<Eigen::Index>(values.size()));
    for (size_t j = 0; j < values.size(); ++j)
        row(static_cast<Eigen::Index>(j)) = static_cast<Scalar>(values[j]);
    return row;
}

}  // namespace

class TestOps : public QObject {
    Q_OBJECT

private slots:
    void rowMomentsAreTheMeanAndBiasedVariance() {
        Row<double> row(4);
        row << 1.0, 2.0, 3.0, 6.0;
        const ae::ops::RowMoments m = ae::ops::rowMoments(row);
        QCOMPARE(m.mean, 3.0);
        // ((−2)² + (−1)² + 0² + 3²) / 4 = 14 / 4, divided by n as torch.nn.LayerNorm does
        QCOMPARE(m.variance, 3.5);
    }

    void layerNormGivesMeanZeroVarianceOneThenGammaAndBeta() {
        MatrixD x(2, 4);
        x << 1.0, 2.0, 3.0, 6.0,  //
            -5.0, 0.5, 10.0, 2.5;
        const MatrixD original = x;
        const double eps = 1e-5;

        // γ = 1, β = 0: every row has mean 0 and variance var / (var + eps), i.e. 1 up to eps.
        MatrixD plain = x;
        ae::ops::layerNormRows(plain, VectorD::Ones(4), VectorD::Zero(4), eps);
        for (int r = 0; r < 2; ++r) {
            const double mean = plain.row(r).mean();
            const double variance = (plain.row(r).array() - mean).square().mean();
            QVERIFY(std::abs(mean) < 1e-15);
            QVERIFY(std::abs(variance - 1.0) < 1e-5);
        }

        // With γ and β, against the formula cell by cell, and x̂ and 1/σ for the backward pass.
        VectorD gamma(4), beta(4);
        gamma << 2.0, -1.0, 0.5, 3.0;
        beta << 0.25, 1.0, -2.0, 0.0;
        MatrixD normalised;
        VectorD inverseDeviation;
        ae::ops::layerNormRows(x, gamma, beta, eps, &normalised, &inverseDeviation);
        for (int r = 0; r < 2; ++r) {
            double sum = 0.0;
            for (int c = 0; c < 4; ++c)
                sum += original(r, c);
            const double mean = sum / 4.0;
            double squares = 0.0;
            for (int c = 0; c < 4; ++c)
                squares += (original(r, c) - mean) * (original(r, c) - mean);
            const double sigma = std::sqrt(squares / 4.0 + eps);
            QVERIFY(std::abs(inverseDeviation(r) - 1.0 / sigma) < 1e-15);
            for (int c = 0; c < 4; ++c) {
                const double hat = (original(r, c) - mean) / sigma;
                QVERIFY(std::abs(normalised(r, c) - hat) < 1e-14);
                QVERIFY(std::abs(x(r, c) - (hat * gamma(c) + beta(c))) < 1e-14);
            }
        }
    }

    void rmsNormDividesByTheRootMeanSquareThenGamma() {
        MatrixD x(2, 4);
        x << 1.0, 2.0, 3.0, 6.0,  //
            -1.0, 0.0, 0.0, 1.0;
        VectorD gamma(4);
        gamma << 2.0, -1.0, 0.5, 3.0;
        const double eps = 1e-6;
        MatrixD y = x;
        ae::ops::rmsNormRows(y, gamma, eps);
        // Row 0: mean square (1 + 4 + 9 + 36) / 4 = 12.5; row 1: 2 / 4 = 0.5. No mean subtracted.
        const double rms[2] = {std::sqrt(12.5 + eps), std::sqrt(0.5 + eps)};
        for (int r = 0; r < 2; ++r)
            for (int c = 0; c < 4; ++c) {
                const double expected = x(r, c) / rms[r] * gamma(c);
                QVERIFY(std::abs(y(r, c) - expected) <= 4e-16 * std::abs(expected));  // 2 ulp
            }
    }

    void rotateHalfRotatesPairsByPositionTimesFrequency() {
        // d = 4, base 10000: θ_0 = 1, θ_1 = 10000^(−1/2) = 0.01; pairs (x_0, x_2) and (x_1, x_3).
        MatrixD x(3, 4);
        x << 1.0, 2.0, 3.0, 4.0,  //
            1.0, 2.0, 3.0, 4.0,   //
            1.0, 2.0, 3.0, 4.0;
        MatrixD rotated = x;
        ae::ops::rotateHalf<double>(rotated, 0, 10000.0);
        QCOMPARE(rotated.row(0), x.row(0));  // position 0: no rotation
        for (int r = 1; r < 3; ++r) {
            const double a0 = r * 1.0, a1 = r * 0.01;
            QVERIFY(std::abs(rotated(r, 0) - (1.0 * std::cos(a0) - 3.0 * std::sin(a0))) < 1e-15);
            QVERIFY(std::abs(rotated(r, 2) - (3.0 * std::cos(a0) + 1.0 * std::sin(a0))) < 1e-15);
            QVERIFY(std::abs(rotated(r, 1) - (2.0 * std::cos(a1) - 4.0 * std::sin(a1))) < 1e-15);
            QVERIFY(std::abs(rotated(r, 3) - (4.0 * std::cos(a1) + 2.0 * std::sin(a1))) < 1e-15);
        }
        // What rotary positions are for: q·k depends only on how far apart the two tokens are.
        ae::ops::RowVector<double> q(4), k(4);
        q << 0.3, -1.2, 2.0, 0.7;
        k << -0.5, 0.4, 1.1, -2.2;
        const auto at = [](const ae::ops::RowVector<double>& v, int position) {
            MatrixD m = v;
            ae::ops::rotateHalf<double>(m, position, 10000.0);
            return m;
        };
        const double near = at(q, 5).row(0).dot(at(k, 3).row(0));
        const double far = at(q, 12).row(0).dot(at(k, 10).row(0));
        QVERIFY(std::abs(near - far) < 1e-12);
        QVERIFY(std::abs(near - q.dot(k)) > 1e-3);
        // A head's columns of a wider matrix, in place, the other columns untouched.
        MatrixD wide = MatrixD::Zero(3, 8);
        wide.middleCols(4, 4) = x;
        ae::ops::rotateHalf<double>(wide.middleCols(4, 4), 0, 10000.0);
        QCOMPARE(MatrixD(wide.middleCols(4, 4)), rotated);
        QVERIFY(wide.leftCols(4).isZero(0));
    }

    void ropeScalingFollowsTheConfigsRopeType() {
        // head_dim 8, theta 500000: θ_i = 500000^(−2i/8) for i = 0..3 (computed in Python's math).
        ae::ops::RopeParameters rope;
        rope.theta = 500000.0;
        const std::vector<double> plain = ae::ops::ropeInverseFrequencies(8, rope);
        const double expectedPlain[4] = {1.0, 0.03760603093086393, 0.001414213562373095,
                                         5.318295896944989e-05};
        for (int i = 0; i < 4; ++i)
            QVERIFY(std::abs(plain[i] - expectedPlain[i]) <= 1e-15 * expectedPlain[i]);
        rope.scaling = ae::ops::RopeScaling::Linear;
        rope.factor = 4.0;
        const std::vector<double> linear = ae::ops::ropeInverseFrequencies(8, rope);
        for (int i = 0; i < 4; ++i)
            QCOMPARE(linear[i], plain[i] / 4.0);
        // Llama 3 with factor 8, low 1, high 4, original 16: wavelengths 2π/θ are 6.3 (between
        // 16/4 and 16/1: interpolated), 167, 4443 and 118143 (above 16: divided by 8).
        rope.scaling = ae::ops::RopeScaling::Llama3;
        rope.factor = 8.0;
        rope.lowFrequencyFactor = 1.0;
        rope.highFrequencyFactor = 4.0;
        rope.originalMaxPositions = 16.0;
        const std::vector<double> llama3 = ae::ops::ropeInverseFrequencies(8, rope);
        const double expectedLlama3[4] = {0.5760564010955116, 0.004700753866357992,
                                          0.00017677669529663688, 6.647869871181236e-06};
        for (int i = 0; i < 4; ++i)
            QVERIFY(std::abs(llama3[i] - expectedLlama3[i]) <= 1e-14 * expectedLlama3[i]);
        // Original 32: 6.3 is now below 32/4 = 8, a short wavelength, kept as it is.
        rope.originalMaxPositions = 32.0;
        QCOMPARE(ae::ops::ropeInverseFrequencies(8, rope)[0], 1.0);
    }

    void activationsMatchTheirFormulas() {
        // x, exact gelu, tanh gelu, silu (Python's math.erf, math.tanh, math.exp).
        const double table[5][4] = {
            {-3.0, -0.00404969409489031, -0.0036373920817729943, -0.14227761953270035},
            {-0.5, -0.15426876936299344, -0.15428599017485606, -0.1887703343990727},
            {0.0, 0.0, 0.0, 0.0},
            {0.7, 0.5306254434438489, 0.5305701347051167, 0.46773144051771626},
            {2.5, 2.4844758366855597, 2.484915733910001, 2.3103545499468914}};
        Eigen::ArrayXd x(5);
        for (int i = 0; i < 5; ++i)
            x(i) = table[i][0];
        Eigen::ArrayXd exact = x, tanhApproximation = x, swish = x;
        ae::ops::geluExact(exact);
        ae::ops::geluTanh(tanhApproximation);
        ae::ops::silu(swish);
        for (int i = 0; i < 5; ++i) {
            QVERIFY(std::abs(exact(i) - table[i][1]) <= 1e-15);
            QVERIFY(std::abs(tanhApproximation(i) - table[i][2]) <= 1e-15);
            QVERIFY(std::abs(swish(i) - table[i][3]) <= 1e-15);
        }
        // In float too (the window's engine).
        Eigen::ArrayXf xf = x.cast<float>();
        ae::ops::geluTanh(xf);
        QVERIFY(std::abs(xf(4) - 2.484915733910001f) <= 1e-6f);
    }

    void softmaxWithEveryKeyVisibleIsTheTextbookFormula() {
        const std::vector<double> scores = {1.0, -2.0, 0.5, 3.0};
        const std::vector<bool> visible(4, true);
        const std::vector<double> expected = handSoftmax(scores, visible);
        const MaskRowStorage<double> mask(visible);
        Row<double> weights(4);
        ae::ops::maskedSoftmaxRow<double>(rowOf<double>(scores), weights, mask.row(true, true),
                                          -std::numeric_limits<double>::infinity());
        for (int j = 0; j < 4; ++j)
            QVERIFY(std::abs(weights(j) - expected[static_cast<size_t>(j)]) < 1e-15);
        QVERIFY(std::abs(weights.sum() - 1.0) < 1e-15);
    }

    void softmaxHidesMaskedKeysExactly() {
        // Key 3 is hidden and holds by far the largest score: in float exp(1e30 − 1) would be
        // infinite if the kernel did not cap the hidden cells.
        const std::vector<double> scores = {1.0, -2.0, 0.5, 1e30};
        const std::vector<bool> visible = {true, true, true, false};
        const std::vector<double> expected = handSoftmax(scores, visible);
        const MaskRowStorage<float> maskF(visible);
        Row<float> weightsF(4);
        ae::ops::maskedSoftmaxRow<float>(rowOf<float>(scores), weightsF, maskF.row(false, true),
                                         -std::numeric_limits<double>::infinity());
        const MaskRowStorage<double> maskD(visible);
        Row<double> weightsD(4);
        ae::ops::maskedSoftmaxRow<double>(rowOf<double>(scores), weightsD, maskD.row(false, true),
                                          -std::numeric_limits<double>::infinity());
        QCOMPARE(weightsF(3), 0.0f);
        QCOMPARE(weightsD(3), 0.0);
        for (int j = 0; j < 3; ++j) {
            QVERIFY(std::abs(weightsF(j) - expected[static_cast<size_t>(j)]) < 1e-6);
            QVERIFY(std::abs(weightsD(j) - expected[static_cast<size_t>(j)]) < 1e-15);
        }
    }

    void softmaxOfAFullyMaskedRowIsExactlyZeroAndNeverNaN() {
        const std::vector<double> scores = {1.0, -2.0, 0.5};
        const std::vector<bool> visible(3, false);
        const MaskRowStorage<float> maskF(visible);
        Row<float> weightsF = Row<float>::Constant(3, 7.0f);
        ae::ops::maskedSoftmaxRow<float>(rowOf<float>(scores), weightsF, maskF.row(false, false),
                                         -std::numeric_limits<double>::infinity());
        const MaskRowStorage<double> maskD(visible);
        Row<double> weightsD = Row<double>::Constant(3, 7.0);
        ae::ops::maskedSoftmaxRow<double>(rowOf<double>(scores), weightsD, maskD.row(false, false),
                                          -std::numeric_limits<double>::infinity());
        for (int j = 0; j < 3; ++j) {
            QCOMPARE(weightsF(j), 0.0f);
            QCOMPARE(weightsD(j), 0.0);
        }
        QVERIFY(weightsF.allFinite());
        QVERIFY(weightsD.allFinite());
    }

    void softmaxWithAFiniteFillTreatsHiddenScoresAsTheFill() {
        // fill −1e4 (BERT's): the hidden key gets exp(−1e4 − max) / Σ, which is 0 in double,
        // and a fill of 0 gives the hidden key a real share.
        const std::vector<double> scores = {1.0, 2.0, 5.0};
        const std::vector<bool> visible = {true, true, false};
        const MaskRowStorage<double> mask(visible);
        for (const double fill : {-1e4, 0.0}) {
            const std::vector<double> expected = handSoftmax({1.0, 2.0, fill}, {true, true, true});
            Row<double> weights(3);
            ae::ops::maskedSoftmaxRow<double>(rowOf<double>(scores), weights, mask.row(false, true),
                                              fill);
            for (int j = 0; j < 3; ++j)
                QVERIFY(std::abs(weights(j) - expected[static_cast<size_t>(j)]) < 1e-15);
        }
        // A fill below float's range stays a (very negative) finite fill, not −∞: with nothing
        // visible it still spreads the weight evenly rather than returning zeros.
        const MaskRowStorage<float> none(std::vector<bool>(3, false));
        Row<float> weights(3);
        ae::ops::maskedSoftmaxRow<float>(rowOf<float>(scores), weights, none.row(false, false),
                                         -1e300);
        for (int j = 0; j < 3; ++j)
            QVERIFY(std::abs(weights(j) - 1.0f / 3.0f) < 1e-6f);
    }

    void sinusoidalPositionsMatchTheFormula() {
        // PE[pos, 2i] = sin(pos / base^(2i/d)), PE[pos, 2i+1] = cos(pos / base^(2i/d)),
        // here for positions 3..5 of a 6-wide model.
        const int d = 6, firstRow = 3, rows = 3;
        const double base = 10000.0;
        MatrixD pe(rows, d);
        ae::ops::sinusoidalPositions(pe, firstRow, base);
        for (int r = 0; r < rows; ++r) {
            const double pos = firstRow + r;
            for (int i = 0; i < d / 2; ++i) {
                const double angle = pos / std::pow(base, 2.0 * i / d);
                QVERIFY(std::abs(pe(r, 2 * i) - std::sin(angle)) < 1e-15);
                QVERIFY(std::abs(pe(r, 2 * i + 1) - std::cos(angle)) < 1e-15);
            }
        }
        // Position 0 is (0, 1, 0, 1, ...) whatever the base.
        MatrixD first(1, 4);
        ae::ops::sinusoidalPositions(first, 0, 17.0);
        QCOMPARE(first(0, 0), 0.0);
        QCOMPARE(first(0, 1), 1.0);
        QCOMPARE(first(0, 2), 0.0);
        QCOMPARE(first(0, 3), 1.0);
    }

    void positionsAreAddedByKind() {
        MatrixD embeddings(2, 4);
        embeddings << 1.0, 2.0, 3.0, 4.0,  //
            5.0, 6.0, 7.0, 8.0;
        MatrixD table(4, 4);
        for (int r = 0; r < 4; ++r)
            for (int c = 0; c < 4; ++c)
                table(r, c) = 10.0 * r + c;

        MatrixD none = embeddings;
        ae::ops::addPositions(none, ae::PositionalKind::None, 10000.0, table, 1);
        QCOMPARE(none, embeddings);

        // Rows 1 and 2 of the table for the tokens at positions 1 and 2.
        MatrixD learned = embeddings;
        ae::ops::addPositions(learned, ae::PositionalKind::Learned, 10000.0, table, 1);
        for (int r = 0; r < 2; ++r)
            for (int c = 0; c < 4; ++c)
                QCOMPARE(learned(r, c), embeddings(r, c) + 10.0 * (r + 1) + c);

        MatrixD sinusoidal = embeddings;
        ae::ops::addPositions(sinusoidal, ae::PositionalKind::Sinusoidal, 100.0, table, 2);
        for (int r = 0; r < 2; ++r)
            for (int i = 0; i < 2; ++i) {
                const double angle = (2.0 + r) / std::pow(100.0, 2.0 * i / 4);
                QVERIFY(std::abs(sinusoidal(r, 2 * i) - embeddings(r, 2 * i) - std::sin(angle)) <
                        1e-14);
                QVERIFY(std::abs(sinusoidal(r, 2 * i + 1) - embeddings(r, 2 * i + 1) -
                                 std::cos(angle)) < 1e-14);
            }
    }

    void stageTableShapesAreTheEnginesMatrices() {
        // Cross-attention (4 queries over 7 keys) with W_O: every axis of the table has its own
        // length, so a wrong row or column axis cannot pass.
        ae::AttentionEngine<double> engine(
            ae::io::loadSceneFile(QStringLiteral(AE_TEST_DATA_DIR "/cross.scene.json")));
        engine.compute();
        const ae::Scene& scene = engine.scene();
        QVERIFY(scene.queryCount() != scene.keyCount());
        QVERIFY(engine.hasStage(ae::Stage::Output));
        const auto length = [&](ae::StageAxis axis) -> Eigen::Index {
            switch (axis) {
                case ae::StageAxis::Queries:
                    return scene.queryCount();
                case ae::StageAxis::Keys:
                    return scene.keyCount();
                case ae::StageAxis::HeadWidth:
                    return engine.dHead();
                case ae::StageAxis::ProjectionWidth:
                    return scene.dProj();
                case ae::StageAxis::OutputWidth:
                    return scene.dOut();
            }
            return -1;
        };
        const auto axisName = [](ae::StageAxis axis) {
            const char* names[] = {"Lq", "Lk", "dHead", "dProj", "dOut"};
            return std::string(names[static_cast<int>(axis)]);
        };
        for (const ae::StageInfo& stage : ae::kStages) {
            QCOMPARE(std::string(stage.shape),
                     axisName(stage.rows) + " x " + axisName(stage.columns));
            for (int h = 0; h < (stage.perHead ? engine.heads() : 1); ++h) {
                const auto m = engine.stageMatrix(stage.stage, h);
                QCOMPARE(m.rows(), length(stage.rows));
                QCOMPARE(m.cols(), length(stage.columns));
            }
        }
        // Views into the engine's own matrices, per head where the stage is per head.
        QCOMPARE(engine.stageMatrix(ae::Stage::Weights, 1).data(), engine.weights(1).data());
        QCOMPARE(engine.stageMatrix(ae::Stage::Context, 1).data(), engine.context(1).data());
        QCOMPARE(engine.stageMatrix(ae::Stage::Key, 1).data(), engine.headKey(1).data());
        QCOMPARE(engine.stageMatrix(ae::Stage::Output, 1).data(), engine.output().data());
        QVERIFY(ae::isAttentionStage(ae::Stage::Scaled));
        QVERIFY(!ae::isAttentionStage(ae::Stage::Value));

        // A layer without W_O has no output stage.
        ae::AttentionEngine<double> plain(
            ae::io::loadSceneFile(QStringLiteral(AE_TEST_DATA_DIR "/four-words.scene.json")));
        QVERIFY(!plain.hasStage(ae::Stage::Output));
        QVERIFY(plain.hasStage(ae::Stage::Concat));
    }

    void stageKeysRoundTrip() {
        for (const ae::StageInfo& stage : ae::kStages)
            QCOMPARE(ae::stageWithKey(stage.key), std::optional<ae::Stage>(stage.stage));
        QVERIFY(!ae::stageWithKey("x"));
        QVERIFY(!ae::stageWithKey("Weights"));
        QCOMPARE(
            ae::stageKeyList(),
            std::string("q, k, v, scores, position_terms, position_bias, scaled, capped, weights, "
                        "context, concat or output"));
    }
};

QTEST_APPLESS_MAIN(TestOps)
#include "test_ops.moc"
