// Scene format version 2: one layer of a real model is a scene. The fixtures in tests/data/scene-v2
// are layers of the golden models (Llama with grouped kv heads, Llama 3 rope scaling with attention
// bias, Qwen3 with q/k norm and head_dim·heads != d_model, GPT-2, BERT with padding), written by
// tests/tools/make_scene_v2_fixtures.py from the whole-model reference (PyTorch float64) together
// with that reference's per-head q, k, v, scores and weights. The one-layer engine must reproduce
// them, and each version 2 step is needed to.
#include <QJsonArray>
#include <QTest>

#include "core/attention_engine.h"
#include "support/result_check.h"
#include "support/scene_v2_fixtures.h"

using ae::AttentionEngine;
using ae::MatrixD;
using ae::Scene;
using aetest::Comparison;
using aetest::fixture;
using aetest::fixtureNames;
using aetest::fixturePath;

namespace {

// The engine in double against the reference in float64: both compute the same formulas on the
// same numbers; what differs is the order of summation in the products (Eigen's kernels against
// torch's), scaling by a division where the reference multiplies by hd^-0.5, and the last bit of
// libm's sin/cos/exp. Measured worst: below 1e-14 (printed by the test).
constexpr double kReferenceTolerance = 1e-9;
// float against float64: as test_golden (about 1000 float ulps through the chain).
constexpr double kFloatTolerance = 1e-4;

// Every matrix of NAME.expected.json (heads[h].q, k, v, scores, weights; concat; output) against
// the engine's.
template <typename Scalar>
Comparison compareWithReference(const AttentionEngine<Scalar>& engine, const QString& name) {
    const QJsonObject expected = aetest::readJson(fixturePath(name + ".expected.json")).object();
    const aetest::Result got = aetest::resultFromEngine(engine);
    Comparison c;
    const QJsonArray heads = expected["heads"].toArray();
    if (heads.size() != engine.heads()) c.problems << QStringLiteral("head count differs");
    for (qsizetype h = 0; h < heads.size(); ++h) {
        for (const char* stage : {"q", "k", "v", "scores", "weights"}) {
            const QString key = QStringLiteral("heads[%1].%2").arg(h).arg(QLatin1String(stage));
            const MatrixD* g = got.find(key);
            if (!g) {
                c.problems << key + " missing";
                continue;
            }
            c.matrix(key, *g, aetest::jsonMatrix(heads[h].toObject()[stage], key));
        }
    }
    for (const char* whole : {"concat", "output"})
        c.matrix(whole, *got.find(whole), aetest::jsonMatrix(expected[whole], whole));
    return c;
}

}  // namespace

class TestSceneV2Reference : public QObject {
    Q_OBJECT

private slots:
    void fixturesCoverEveryFeature() {
        const QStringList names = fixtureNames();
        QCOMPARE(names.size(), 8);
        const Scene gqa = fixture("llama-gqa-layer1");
        QCOMPARE(gqa.heads, 4);
        QCOMPARE(gqa.kvHeads, std::optional<int>(2));
        QCOMPARE(gqa.projections.key.cols(), 16);  // kv_heads·head_dim
        QVERIFY(gqa.norm.enabled && gqa.norm.kind == ae::NormKind::Rms);
        QVERIFY(gqa.rotary && gqa.rotary->scaling == ae::RopeScaling::None);
        const Scene scaled = fixture("llama-rope-scaled-layer0");
        QVERIFY(scaled.rotary && scaled.rotary->scaling == ae::RopeScaling::Llama3);
        QCOMPARE(scaled.kvHeads, std::optional<int>(1));
        QVERIFY(!scaled.projections.queryBias.isZero(0));  // attention_bias
        const Scene qwen = fixture("qwen3-layer0");
        QVERIFY(qwen.qkNorm.enabled);
        QCOMPARE(qwen.dHead(), 16);
        QCOMPARE(qwen.dProj(), 64);  // heads·head_dim != d_model
        QCOMPARE(qwen.dModel(), 32);
        QCOMPARE(qwen.dOut(), 32);
        const Scene gpt2 = fixture("gpt2-layer1");
        QVERIFY(gpt2.norm.enabled && gpt2.norm.kind == ae::NormKind::Layer);
        QVERIFY(!gpt2.usesVersion2());  // a version 2 file with nothing of version 2
        const Scene bert = fixture("bert-layer1-padded");
        QVERIFY(!bert.norm.enabled);
        QCOMPARE(bert.mask.padding.size(), size_t(7));
    }

    void modelLayerMatchesReference_data() {
        QTest::addColumn<QString>("name");
        for (const QString& name : fixtureNames())
            QTest::newRow(qPrintable(name)) << name;
    }
    void modelLayerMatchesReference() {
        QFETCH(QString, name);
        const Scene scene = fixture(name);
        AttentionEngine<double> engine(scene);
        engine.compute();
        const Comparison c = compareWithReference(engine, name);
        qInfo("%s double: %s", qPrintable(name), qPrintable(c.report(kReferenceTolerance)));
        QVERIFY2(c.within(kReferenceTolerance), qPrintable(c.report(kReferenceTolerance)));

        AttentionEngine<float> single(scene);
        single.compute();
        const Comparison f = compareWithReference(single, name);
        qInfo("%s float: %s", qPrintable(name), qPrintable(f.report(kFloatTolerance)));
        QVERIFY2(f.within(kFloatTolerance), qPrintable(f.report(kFloatTolerance)));
    }

    // Each version 2 step matters: without it the layer no longer matches the reference, so the
    // comparison above is not passing by accident.
    void everyStepIsNeeded() {
        const auto worst = [](Scene scene, const QString& name) {
            AttentionEngine<double> engine(scene);
            engine.compute();
            return compareWithReference(engine, name);
        };
        Scene qwen = fixture("qwen3-layer0");
        qwen.qkNorm.enabled = false;
        QVERIFY(!worst(qwen, "qwen3-layer0").within(1e-3));
        qwen = fixture("qwen3-layer0");
        qwen.rotary.reset();
        QVERIFY(!worst(qwen, "qwen3-layer0").within(1e-3));
        Scene scaled = fixture("llama-rope-scaled-layer1");
        scaled.rotary->scaling = ae::RopeScaling::None;
        QVERIFY(!worst(scaled, "llama-rope-scaled-layer1").within(1e-3));
        Scene gqa = fixture("llama-gqa-layer0");
        gqa.norm.kind = ae::NormKind::Layer;
        QVERIFY(!worst(gqa, "llama-gqa-layer0").within(1e-3));
    }
};

QTEST_GUILESS_MAIN(TestSceneV2Reference)
#include "test_scene_v2_reference.moc"
