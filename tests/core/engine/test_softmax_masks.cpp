// Every softmax row of every scene sums to one (or to zero where no key is visible and the fill
// is -inf), and a masked weight is exactly zero, in double and in float.
#include <QTest>
#include <cmath>
#include <vector>

#include "core/attention_engine.h"
#include "core/init_draw.h"
#include "io/scene/scene_file.h"
#include "support/property_scenes.h"
#include "support/result_check.h"

using ae::AttentionEngine;
using ae::MatrixD;
using ae::Scene;
using aetest::builtScene;
using aetest::golden;
using aetest::Inputs;
using aetest::kExact;
using aetest::Numbers;

class TestSoftmaxMasks : public QObject {
    Q_OBJECT

private slots:
    // ------------------------------------------------------------ softmax rows and masks
    void rowsSumToOne_data() { maskedScenes(false); }
    void rowsSumToOne() {
        QFETCH(QString, name);
        QFETCH(bool, useFloat);
        if (useFloat) {
            checkRowSums<float>(golden(name), 1e-5);
        } else {
            checkRowSums<double>(golden(name), 1e-13);
        }
    }

    void maskedWeightsAreExactlyZero_data() { maskedScenes(true); }
    void maskedWeightsAreExactlyZero() {
        QFETCH(QString, name);
        QFETCH(bool, useFloat);
        Scene scene = golden(name);
        QVERIFY(std::isinf(scene.maskFill));
        if (useFloat) {
            checkMaskedZero<float>(scene);
        } else {
            checkMaskedZero<double>(scene);
        }
    }

    // Masked keys with the largest scores: exp(-inf) must give 0, not exp's underflow floor.
    void maskedZeroWithLargeHiddenScores() {
        Scene s = builtScene(ae::ProjectionMode::Identity, false, Inputs::Plain);
        s.mask = {};
        s.mask.padding = {true, false, true, false, true};
        s.embeddings.col(0) << 9, 0.1, 8, 0.2, 7;
        checkMaskedZero<float>(s);
        checkMaskedZero<double>(s);
        // Rows long enough for Eigen's packet (vectorised) exp, which for float returns ~1e-39
        // rather than 0 for -inf: 64 keys, every third one hidden, and a causal mask.
        Scene wide;
        const int n = 64;
        wide.tokens.assign(n, "t");
        wide.embeddings = MatrixD(n, 2);
        for (int i = 0; i < n; ++i)
            wide.embeddings.row(i) << (i % 3 == 0 ? 4.0 : 0.5), 0.01 * i;
        wide.projections.mode = ae::ProjectionMode::Identity;
        wide.mask.causal = true;
        for (int i = 0; i < n; ++i)
            wide.mask.padding.push_back(i % 3 == 0 && i > 0);
        checkMaskedZero<float>(wide);
        checkMaskedZero<double>(wide);
        checkRowSums<float>(wide, 1e-5);
        checkRowSums<double>(wide, 1e-13);
        // The check can fail: with a finite fill the masked weights are small but not zero.
        s.maskFill = -30;
        AttentionEngine<float> engine(s);
        engine.compute();
        QVERIFY(engine.weights(0)(1, 0) > 0.0f);
    }

    void fullyMaskedRow_data() {
        QTest::addColumn<bool>("useFloat");
        QTest::newRow("double") << false;
        QTest::newRow("float") << true;
    }
    void fullyMaskedRow() {
        QFETCH(bool, useFloat);
        if (useFloat) {
            checkFullyMasked<float>(1e-7);
        } else {
            checkFullyMasked<double>(1e-15);
        }
    }

private:
    static void maskedScenes(bool infiniteFillOnly) {
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("useFloat");
        for (const char* name :
             {"blind-row", "blind-row-finite", "cross", "window", "journey-causal", "bert-style",
              "tutorial-variant", "init-cross", "gpt2-style", "journey"}) {
            if (infiniteFillOnly && !std::isinf(golden(name).maskFill)) continue;
            QTest::addRow("%s, double", name) << QString(name) << false;
            QTest::addRow("%s, float", name) << QString(name) << true;
        }
    }

    template <typename Scalar>
    static void checkRowSums(const Scene& scene, double tolerance) {
        AttentionEngine<Scalar> engine(scene);
        engine.compute();
        int rowsChecked = 0;
        for (int h = 0; h < engine.heads(); ++h) {
            for (int i = 0; i < scene.queryCount(); ++i) {
                const bool anyVisible = engine.allowed().row(i).any();
                const double sum = engine.weights(h).row(i).template cast<double>().sum();
                const double want = anyVisible || !std::isinf(scene.maskFill) ? 1.0 : 0.0;
                QVERIFY2(std::fabs(sum - want) <= tolerance,
                         qPrintable(QStringLiteral("head %1 row %2 sums to %3, expected %4")
                                        .arg(h)
                                        .arg(i)
                                        .arg(sum, 0, 'g', 17)
                                        .arg(want)));
                QVERIFY((engine.weights(h).row(i).array() >= 0).all());
                ++rowsChecked;
            }
        }
        QVERIFY(rowsChecked > 0);
    }

    template <typename Scalar>
    static void checkMaskedZero(const Scene& scene) {
        AttentionEngine<Scalar> engine(scene);
        engine.compute();
        int masked = 0;
        for (int h = 0; h < engine.heads(); ++h) {
            for (int i = 0; i < scene.queryCount(); ++i) {
                for (int j = 0; j < scene.keyCount(); ++j) {
                    if (engine.allowed()(i, j)) continue;
                    ++masked;
                    QVERIFY2(engine.weights(h)(i, j) == Scalar(0),
                             qPrintable(QStringLiteral("head %1 weight [%2][%3] = %4, masked")
                                            .arg(h)
                                            .arg(i)
                                            .arg(j)
                                            .arg(static_cast<double>(engine.weights(h)(i, j)), 0,
                                                 'g', 17)));
                }
            }
        }
        if (scene.mask.causal || scene.mask.window || scene.mask.allowed ||
            !scene.mask.padding.empty()) {
            QVERIFY(masked > 0);
        }
    }

    template <typename Scalar>
    static void checkFullyMasked(double tolerance) {
        AttentionEngine<Scalar> blind(golden("blind-row"));
        blind.compute();
        QCOMPARE(blind.fullyMaskedRows(), std::vector<int>{1});
        for (int h = 0; h < blind.heads(); ++h) {
            QVERIFY((blind.weights(h).row(1).array() == Scalar(0)).all());
            QVERIFY((blind.context(h).row(1).array() == Scalar(0)).all());
        }
        const Scene finiteScene = golden("blind-row-finite");
        QVERIFY(!std::isinf(finiteScene.maskFill));
        AttentionEngine<Scalar> finite(finiteScene);
        finite.compute();
        QCOMPARE(finite.fullyMaskedRows(), std::vector<int>{1});
        const double uniform = 1.0 / finiteScene.keyCount();
        for (int h = 0; h < finite.heads(); ++h) {
            for (int j = 0; j < finiteScene.keyCount(); ++j) {
                QVERIFY(std::fabs(finite.weights(h)(1, j) - uniform) <= tolerance);
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestSoftmaxMasks)
#include "test_softmax_masks.moc"
