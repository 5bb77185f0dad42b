// Golden results: every tests/data/NAME.scene.json with a NAME.expected.json (made by the PyTorch
// reference in float64) is loaded, computed by both engines and compared stage by stage.
#include <QTest>

#include "core/attention_engine.h"
#include "io/scene/scene_file.h"
#include "support/result_check.h"

using aetest::Comparison;

namespace {

// The double engine does what the reference does in the same precision; what is left is the
// order of summation inside dot products (Eigen's kernels against torch's) and libm's last bit
// in exp/sin/cos/log, a few ulps on values of order one. 1e-12 relative leaves room for that
// and for products over the 768-wide BERT-shaped layer, nothing more. Measured: at most 2.5e-14
// (init-bert-base), 1e-16 on the small scenes.
constexpr double kDoubleTolerance = 1e-12;

// float has a 24-bit mantissa (unit roundoff 6e-8). Each stage adds a few roundings, a dot product
// over d_model = 768 adds up to ~sqrt(768) of them in practice, and the softmax turns an absolute
// error e in a scaled score into a relative error e in its weight, so scores of order 10 cost
// another digit. 1e-4 relative is ~1000 ulps: loose enough for that chain, tight enough to catch
// a wrong formula, a wrong mask or a wrong head slice, which all give differences of order 1e-2
// or more. Measured on the golden set: at most 9e-6 (init-bert-base, a score in head 4).
constexpr double kFloatTolerance = 1e-4;

template <typename Scalar>
Comparison computeAndCompare(const QString& name) {
    const ae::Scene scene = ae::io::loadSceneFile(aetest::dataPath(name + ".scene.json"));
    ae::AttentionEngine<Scalar> engine(scene);
    engine.compute();
    return aetest::compareResults(aetest::resultFromEngine(engine), aetest::expectedResult(name));
}

}  // namespace

class TestGolden : public QObject {
    Q_OBJECT

private slots:
    void goldenSetIsComplete() {
        // A renamed or lost data file must not silently shrink the test.
        const QStringList names = aetest::goldenNames();
        QVERIFY2(names.size() >= 18, qPrintable(names.join(' ')));
        for (const char* required : {"journey", "four-words", "cross", "blind-row", "huge-scores",
                                     "init-bert-base", "identity", "shared-qk"}) {
            QVERIFY2(names.contains(QLatin1String(required)), required);
        }
    }

    void doubleEngine_data() { addScenes(); }
    void doubleEngine() {
        QFETCH(QString, name);
        const Comparison c = computeAndCompare<double>(name);
        qInfo("%s: %s", qPrintable(name), qPrintable(c.report(kDoubleTolerance)));
        QVERIFY2(c.within(kDoubleTolerance), qPrintable(c.report(kDoubleTolerance)));
    }

    void floatEngine_data() { addScenes(); }
    void floatEngine() {
        QFETCH(QString, name);
        const Comparison c = computeAndCompare<float>(name);
        qInfo("%s: %s", qPrintable(name), qPrintable(c.report(kFloatTolerance)));
        QVERIFY2(c.within(kFloatTolerance), qPrintable(c.report(kFloatTolerance)));
    }

    // The comparison itself must be able to fail: a one-ulp-scale change passes, a change of one
    // weight by 1e-9 fails at that weight, and a missing matrix fails.
    void comparisonDetectsDifferences() {
        aetest::Result expected = aetest::expectedResult("journey");
        aetest::Result got = expected;
        QVERIFY(aetest::compareResults(got, expected).within(0.0));
        for (auto& [n, m] : got.matrices) {
            if (n == "heads[0].weights") m(2, 1) += 1e-9;
        }
        const Comparison c = aetest::compareResults(got, expected);
        QVERIFY(!c.within(kDoubleTolerance));
        QCOMPARE(c.where, QStringLiteral("heads[0].weights[2][1]"));
        QVERIFY(c.worst > 5e-10 && c.worst < 1e-9);
        got.matrices.pop_back();
        QVERIFY(!aetest::compareResults(got, expected).problems.isEmpty());
    }

private:
    static void addScenes() {
        QTest::addColumn<QString>("name");
        for (const QString& name : aetest::goldenNames())
            QTest::newRow(qPrintable(name)) << name;
    }
};

QTEST_GUILESS_MAIN(TestGolden)
#include "test_golden.moc"
