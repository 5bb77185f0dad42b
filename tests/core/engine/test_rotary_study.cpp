// The numbers of Explain › Why rotary positions? (core/rotary_study.h) and ops::rotatedDot: the
// rotated score against the engine's own scores of rotary layers, shift invariance for rotary
// positions and its failure for sinusoidal ones added to the tokens, and the llama3 scaling
// touching exactly the long wavelengths.

#include <QtTest>
#include <cmath>

#include "core/attention_engine.h"
#include "core/ops.h"
#include "core/rotary_study.h"
#include "io/scene/scene_file.h"
#include "support/result_check.h"

using ae::MatrixD;
using ae::RopeParameters;
using ae::RopeScaling;
using ae::RotaryStudy;
using ae::Scene;
using ae::TokenPositions;

namespace {

// A layer of a golden model, written by `scene`: scene-v2/ holds the ones checked against the
// reference's own one-layer files, family-layers/ those of the newer families.
Scene layer(const char* name) {
    for (const char* folder : {"scene-v2", "family-layers"}) {
        const QString path = aetest::dataPath(QStringLiteral("%1/%2.scene.json").arg(folder, name));
        if (QFile::exists(path)) return ae::io::loadSceneFile(path);
    }
    return ae::io::loadSceneFile(
        aetest::dataPath(QStringLiteral("scene-v2/%1.scene.json").arg(name)));
}

// One head of width `width`, identity projections: q and k are the token vectors themselves.
Scene identityHead(int width) {
    Scene scene;
    scene.tokens = {"a", "b", "c"};
    scene.embeddings = MatrixD(3, width);
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < width; ++c)
            scene.embeddings(r, c) = std::sin(1.7 * r + 0.31 * c + 0.2);
    scene.projections.mode = ae::ProjectionMode::Identity;
    return scene;
}

double largestGap(const std::vector<double>& a, const std::vector<double>& b) {
    double gap = 0;
    for (size_t n = 0; n < a.size(); ++n)
        gap = std::max(gap, std::abs(a[n] - b[n]));
    return gap;
}

}  // namespace

class TestRotaryStudy : public QObject {
    Q_OBJECT
private slots:
    void rotatedDotTurnsEachPairByHand();
    void positionsKeepTheDistance();
    void scoresAreTheEnginesScores_data();
    void scoresAreTheEnginesScores();
    void sinusoidalScoresAreTheEnginesOwnPositions();
    void rotaryIsShiftInvariantSinusoidalIsNot_data();
    void rotaryIsShiftInvariantSinusoidalIsNot();
    void llama3ScalesOnlyTheLongWavelengths();
    void pairsAddUpToTheScore();
    void partialRotaryTurnsTheLeadingColumnsOnly();
    void sceneWithoutRotaryUsesTheDefaults();
};

void TestRotaryStudy::rotatedDotTurnsEachPairByHand() {
    // d = 4: pairs (0, 2) and (1, 3), θ = (1, 0.01) at base 10000.
    ae::ops::RowVector<double> q(4), k(4);
    q << 0.3, -1.2, 0.8, 0.5;
    k << -0.7, 0.4, 1.1, 0.9;
    RopeParameters rope;
    const std::vector<double> theta = ae::ops::ropeInverseFrequencies(4, rope);
    QCOMPARE(theta.size(), size_t(2));
    const int m = 5, n = 2;
    double expected = 0;
    for (int i = 0; i < 2; ++i) {
        const double a = m * theta[i], b = n * theta[i];
        const double qx = q(i) * std::cos(a) - q(i + 2) * std::sin(a);
        const double qy = q(i + 2) * std::cos(a) + q(i) * std::sin(a);
        const double kx = k(i) * std::cos(b) - k(i + 2) * std::sin(b);
        const double ky = k(i + 2) * std::cos(b) + k(i) * std::sin(b);
        expected += qx * kx + qy * ky;
    }
    QVERIFY(std::abs(ae::ops::rotatedDot(q, k, m, n, theta) - expected) < 1e-14);
    // At equal positions the rotation cancels: the plain dot product.
    QVERIFY(std::abs(ae::ops::rotatedDot(q, k, 7, 7, theta) - q.dot(k)) < 1e-14);
}

void TestRotaryStudy::positionsKeepTheDistance() {
    for (int start : {0, 3, 100}) {
        for (int d = -9; d <= 9; ++d) {
            const TokenPositions p = ae::positionsAt(d, start);
            QCOMPARE(p.query - p.key, d);
            QCOMPARE(std::min(p.query, p.key), start);
        }
    }
    const auto over = ae::positionsOverDistances(-2, 3, 4);
    QCOMPARE(over.size(), size_t(6));
    QCOMPARE(over.front(), (TokenPositions{4, 6}));
    QCOMPARE(over.back(), (TokenPositions{7, 4}));
}

void TestRotaryStudy::scoresAreTheEnginesScores_data() {
    QTest::addColumn<QString>("name");
    QTest::newRow("llama3 scaled, layer 0") << "llama-rope-scaled-layer0";
    QTest::newRow("llama3 scaled, layer 1") << "llama-rope-scaled-layer1";
    QTest::newRow("grouped kv heads") << "llama-gqa-layer1";
    QTest::newRow("qwen3 q/k norm") << "qwen3-layer0";
    QTest::newRow("phi3 partial rotary, longrope") << "phi3-layer0";
    QTest::newRow("pythia partial rotary") << "pythia-layer1";
    QTest::newRow("gemma2 window, soft-cap") << "gemma2-layer0";
}

void TestRotaryStudy::scoresAreTheEnginesScores() {
    QFETCH(QString, name);
    const Scene scene = layer(qPrintable(name));
    QVERIFY(scene.rotary.has_value());
    ae::AttentionEngine<double> engine(scene);
    engine.compute();
    int compared = 0;
    for (int h = 0; h < scene.heads; ++h) {
        for (int i = 0; i < scene.queryCount(); ++i) {
            for (int j = 0; j < scene.keyCount(); ++j) {
                const RotaryStudy study(scene, h, i, j);
                QVERIFY(study.sceneHasRotary());
                QCOMPARE(study.parameters(), *scene.rotary);
                // Row i sits at position i, key j at j: the engine's raw (pre-mask) score, and
                // its scaled score up to the divisor.
                const double score = study.rotaryScore({i, j});
                const double reference = engine.scores(h)(i, j);
                QVERIFY2(std::abs(score - reference) <= 1e-12 * std::max(1.0, std::abs(reference)),
                         qPrintable(QStringLiteral("head %1 (%2, %3): %4 vs %5")
                                        .arg(h)
                                        .arg(i)
                                        .arg(j)
                                        .arg(score, 0, 'g', 17)
                                        .arg(reference, 0, 'g', 17)));
                QVERIFY(std::abs(score / engine.divisor() - engine.scaled(h)(i, j)) < 1e-12);
                ++compared;
            }
        }
    }
    QVERIFY(compared >= 2 * 7 * 7);
    // Not a coincidence of unrotated vectors: without the rotation the scores differ.
    const RotaryStudy study(scene, 0, scene.queryCount() - 1, 0);
    QVERIFY(std::abs(study.rotaryScore({0, 0}) - engine.scores(0)(scene.queryCount() - 1, 0)) >
            1e-6);
}

void TestRotaryStudy::sinusoidalScoresAreTheEnginesOwnPositions() {
    // A layer with sinusoidal positions of its own and no rotation: the study's sinusoidal score
    // at the rows' own positions is the engine's score.
    Scene scene = layer("gpt2-layer1");
    scene.positional = ae::Positional{};
    scene.positional.kind = ae::PositionalKind::Sinusoidal;
    scene.rotary.reset();
    ae::AttentionEngine<double> engine(scene);
    engine.compute();
    for (int h = 0; h < scene.heads; ++h) {
        for (int i = 0; i < scene.queryCount(); ++i) {
            std::vector<TokenPositions> own;
            for (int j = 0; j < scene.keyCount(); ++j)
                own.push_back({i, j});
            for (int j = 0; j < scene.keyCount(); ++j) {
                const RotaryStudy study(scene, h, i, j);
                const double score = study.sinusoidalScores({{i, j}}).front();
                QVERIFY(std::abs(score - engine.scores(h)(i, j)) < 1e-10);
            }
            // Many placements in one pass give the same numbers as one at a time.
            const RotaryStudy study(scene, h, i, 0);
            const std::vector<double> batch = study.sinusoidalScores(own);
            QVERIFY(std::abs(batch[0] - engine.scores(h)(i, 0)) < 1e-10);
        }
    }
}

void TestRotaryStudy::rotaryIsShiftInvariantSinusoidalIsNot_data() {
    QTest::addColumn<QString>("name");
    QTest::newRow("llama3 scaled") << "llama-rope-scaled-layer0";
    QTest::newRow("qwen3") << "qwen3-layer1";
    QTest::newRow("gpt2, no rotary of its own") << "gpt2-layer1";
}

void TestRotaryStudy::rotaryIsShiftInvariantSinusoidalIsNot() {
    QFETCH(QString, name);
    const Scene scene = layer(qPrintable(name));
    const RotaryStudy study(scene, 0, 2, 1);
    const auto near = ae::positionsOverDistances(-64, 64, 0);
    const auto far = ae::positionsOverDistances(-64, 64, 50);
    const auto further = ae::positionsOverDistances(-64, 64, 137);
    const std::vector<double> rotary = study.rotaryScores(near);
    QVERIFY(largestGap(rotary, study.rotaryScores(far)) < 1e-12);
    QVERIFY(largestGap(rotary, study.rotaryScores(further)) < 1e-12);
    // The curve is not flat: the distance does change the score.
    QVERIFY(*std::max_element(rotary.begin(), rotary.end()) -
                *std::min_element(rotary.begin(), rotary.end()) >
            1e-3);
    // Added sinusoidal positions: the same distances from another start give other scores.
    const std::vector<double> sinusoidal = study.sinusoidalScores(near);
    const double gap = largestGap(sinusoidal, study.sinusoidalScores(far));
    QVERIFY2(gap > 1e-2, qPrintable(QString::number(gap)));
}

void TestRotaryStudy::llama3ScalesOnlyTheLongWavelengths() {
    RotaryStudy study(identityHead(64), 0, 1, 0);
    QVERIFY(!study.sceneHasRotary());
    RopeParameters rope;
    rope.theta = 500000.0;
    rope.scaling = RopeScaling::Llama3;
    rope.factor = 8.0;
    rope.lowFrequencyFactor = 1.0;
    rope.highFrequencyFactor = 4.0;
    rope.originalMaxPositions = 8192.0;
    study.setParameters(rope);
    QCOMPARE(study.inverseFrequencies(), ae::ops::ropeInverseFrequencies(64, rope));
    const std::vector<double> scaled = study.wavelengths(), original = study.unscaledWavelengths();
    QCOMPARE(scaled.size(), size_t(32));
    const double shortest = rope.originalMaxPositions / rope.highFrequencyFactor;  // 2048
    const double longest = rope.originalMaxPositions / rope.lowFrequencyFactor;    // 8192
    int kept = 0, divided = 0, between = 0;
    for (size_t i = 0; i < scaled.size(); ++i) {
        if (original[i] < shortest) {
            QCOMPARE(scaled[i], original[i]);  // high frequencies exactly as they were
            ++kept;
        } else if (original[i] > longest) {
            QVERIFY(std::abs(scaled[i] / original[i] - rope.factor) < 1e-12);
            ++divided;
        } else {
            QVERIFY(scaled[i] > original[i] && scaled[i] < original[i] * rope.factor);
            ++between;
        }
        if (i > 0) QVERIFY(scaled[i] > scaled[i - 1]);  // still ordered
    }
    QVERIFY(kept > 0 && divided > 0 && between > 0);
    // No scaling: the same θ gives the original wavelengths.
    rope.scaling = RopeScaling::None;
    study.setParameters(rope);
    QCOMPARE(study.wavelengths(), original);
}

void TestRotaryStudy::pairsAddUpToTheScore() {
    const Scene scene = layer("llama-rope-scaled-layer1");
    const RotaryStudy study(scene, 1, 5, 2);
    QCOMPARE(study.pairCount(), scene.dHead() / 2);
    for (const TokenPositions p : {TokenPositions{5, 2}, TokenPositions{40, 3}}) {
        const auto pairs = study.rotatedPairs(p);
        double sum = 0;
        for (const auto& pair : pairs)
            sum += pair.dot();
        QVERIFY(std::abs(sum - study.rotaryScore(p)) < 1e-12);
    }
    // Moving both tokens turns each pair's q and k together: each share stays.
    const auto before = study.rotatedPairs({5, 2}), after = study.rotatedPairs({105, 102});
    for (size_t i = 0; i < before.size(); ++i) {
        QVERIFY(std::abs(before[i].dot() - after[i].dot()) < 1e-12);
        QVERIFY(std::abs(before[i].queryX - after[i].queryX) > 1e-9 ||
                std::abs(before[i].queryY - after[i].queryY) > 1e-9);
    }
}

void TestRotaryStudy::partialRotaryTurnsTheLeadingColumnsOnly() {
    // Phi-3's partial_rotary_factor 0.5 on heads of 8: columns 0–3 turn as pairs (0, 2) and
    // (1, 3); 4–7 keep their values, so their share of q·k is the same at every position.
    const Scene scene = layer("phi3-layer0");
    QCOMPARE(scene.dHead(), 8);
    const RotaryStudy study(scene, 2, 6, 1);
    QCOMPARE(study.turnedDims(), 4);
    QCOMPARE(study.pairCount(), 2);
    QCOMPARE(study.wavelengths().size(), size_t(2));
    QCOMPARE(study.unscaledWavelengths().size(), size_t(2));
    double still = 0;
    for (int c = 4; c < 8; ++c)
        still += study.query()[size_t(c)] * study.key()[size_t(c)];
    QVERIFY(std::abs(still) > 1e-6);
    QCOMPARE(study.unturnedShare(), still);
    for (const TokenPositions p : {TokenPositions{6, 1}, TokenPositions{90, 3}}) {
        double sum = study.unturnedShare();
        for (const auto& pair : study.rotatedPairs(p))
            sum += pair.dot();
        QVERIFY(std::abs(sum - study.rotaryScore(p)) < 1e-12);
    }
    // longrope's attention factor scales the turned values: cos and sin × 1.58 at the origin.
    const auto origin = study.rotatedPairs({0, 0});
    const double factor = scene.rotary->attentionFactor;
    QVERIFY(factor > 1.5);
    QVERIFY(std::abs(origin[0].queryX - factor * study.query()[0]) < 1e-12);
    QVERIFY(std::abs(origin[1].keyY - factor * study.key()[3]) < 1e-12);
}

void TestRotaryStudy::sceneWithoutRotaryUsesTheDefaults() {
    const Scene scene = ae::io::loadPreset(QStringLiteral("journey"));
    QVERIFY(!scene.rotary);
    const RotaryStudy study(scene, 0, 1, 0);
    QVERIFY(!study.sceneHasRotary());
    QCOMPARE(study.parameters(), RopeParameters{});
    QCOMPARE(study.parameters().theta, 10000.0);
}

QTEST_MAIN(TestRotaryStudy)
#include "test_rotary_study.moc"
