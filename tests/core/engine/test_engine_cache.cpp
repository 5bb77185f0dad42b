// The engine's cache: a change redoes only the stages after it (counted), and the result is the
// same as a fresh engine's for that scene, including after an overflow.
#include <QTest>
#include <tuple>
#include <utility>

#include "core/attention_engine.h"
#include "core/init_draw.h"
#include "io/scene/scene_file.h"
#include "support/property_scenes.h"
#include "support/result_check.h"

using ae::AttentionEngine;
using ae::MatrixD;
using ae::Scene;
using aetest::bitIdentical;
using aetest::builtScene;
using aetest::compareEngines;
using aetest::golden;
using aetest::Inputs;
using aetest::kExact;
using aetest::Numbers;

class TestEngineCache : public QObject {
    Q_OBJECT

private slots:
    // ------------------------------------------------------------ the cache
    void parameterChangesKeepProjections_data() {
        QTest::addColumn<Scene>("scene");
        QTest::newRow("tutorial-variant") << golden("tutorial-variant");
        QTest::newRow("cross") << golden("cross");
        QTest::newRow("shared-qk") << golden("shared-qk");
        QTest::newRow("built identity, norm")
            << builtScene(ae::ProjectionMode::Identity, false, Inputs::Norm);
    }
    void parameterChangesKeepProjections() {
        QFETCH(Scene, scene);
        AttentionEngine<double> engine(scene);
        engine.compute();
        using M = AttentionEngine<double>::Matrix;
        const M q = engine.query(), k = engine.key(), v = engine.value(), x = engine.x();
        const ae::EngineCounters before = engine.counters();
        Scene edited = scene;
        const auto checkUnchanged = [&](const char* what) {
            QVERIFY2(bitIdentical(engine.query(), q), what);
            QVERIFY2(bitIdentical(engine.key(), k), what);
            QVERIFY2(bitIdentical(engine.value(), v), what);
            QVERIFY2(bitIdentical(engine.x(), x), what);
            QVERIFY2(engine.counters().fullProjections == before.fullProjections, what);
            QVERIFY2(engine.counters().fullPreparations == before.fullPreparations, what);
            QCOMPARE(engine.counters().rowUpdates, before.rowUpdates);
            AttentionEngine<double> fresh(edited);
            fresh.compute();
            const aetest::Comparison c = compareEngines(engine, fresh);
            QVERIFY2(c.within(kExact), qPrintable(QString(what) + ": " + c.report(kExact)));
        };

        edited.scale = {ae::ScaleKind::Divisor, 2.5};
        engine.setScale(edited.scale);
        long scorePasses = engine.counters().scorePasses;
        engine.compute();
        QCOMPARE(engine.divisor(), 2.5);
        QCOMPARE(engine.counters().scorePasses, scorePasses);
        checkUnchanged("setScale");

        edited.mask = {};
        edited.mask.window = 1;
        engine.setMask(edited.mask);
        const long scalePasses = engine.counters().scalePasses;
        engine.compute();
        QCOMPARE(engine.counters().scalePasses, scalePasses);
        QVERIFY(!engine.allowed().all());
        checkUnchanged("setMask");

        edited.maskFill = -7.5;
        engine.setMaskFill(edited.maskFill);
        const long softmaxPasses = engine.counters().softmaxPasses;
        engine.compute();
        QCOMPARE(engine.counters().softmaxPasses, softmaxPasses + 1);
        checkUnchanged("setMaskFill");

        // Every divisor of the projection width: only a re-slice of the same Q, K and V.
        const int dp = scene.dProj();
        for (int heads = 1; heads <= dp; ++heads) {
            if (dp % heads != 0 || heads == engine.heads()) continue;
            edited.heads = heads;
            engine.setHeads(heads);
            scorePasses = engine.counters().scorePasses;
            engine.compute();
            QCOMPARE(engine.counters().scorePasses, scorePasses + 1);
            QCOMPARE(engine.heads(), heads);
            for (int h = 0; h < heads; ++h) {
                QVERIFY(bitIdentical(M(engine.headQuery(h)),
                                     M(q.middleCols(h * dp / heads, dp / heads))));
            }
            checkUnchanged("setHeads");
        }
        // A head count that does not divide is refused and changes nothing.
        const int bad = dp + 1;
        QVERIFY_THROWS_EXCEPTION(ae::SceneError, engine.setHeads(bad));
        QCOMPARE(engine.heads(), edited.heads);
        engine.compute();
        checkUnchanged("refused setHeads");
    }

    void embeddingEdit_data() {
        QTest::addColumn<Scene>("scene");
        const std::pair<ae::ProjectionMode, const char*> modes[] = {
            {ae::ProjectionMode::Separate, "separate"},
            {ae::ProjectionMode::SharedQK, "shared_qk"},
            {ae::ProjectionMode::Identity, "identity"}};
        const std::pair<Inputs, const char*> inputs[] = {
            {Inputs::Plain, "plain"},
            {Inputs::Norm, "layer norm"},
            {Inputs::Sinusoidal, "sinusoidal"},
            {Inputs::Learned, "learned positions"},
            {Inputs::NormAndSinusoidal, "norm+sinusoidal"}};
        for (const auto& [mode, modeName] : modes) {
            for (bool cross : {false, true}) {
                for (const auto& [in, inName] : inputs) {
                    QTest::addRow("%s, %s, %s", modeName, cross ? "cross" : "self", inName)
                        << builtScene(mode, cross, in);
                }
            }
        }
        Scene gpt = golden("gpt2-style");
        QTest::newRow("gpt2-style") << gpt;
    }
    void embeddingEdit() {
        QFETCH(Scene, scene);
        AttentionEngine<double> engine(scene);
        engine.compute();
        const ae::EngineCounters before = engine.counters();
        Scene edited = scene;
        // Two values of one query row and one of another.
        const std::tuple<int, int, double> queryEdits[] = {
            {2, 3, 1.75}, {2, 0, -0.25}, {4, 1, 3.0}};
        for (const auto& [row, col, value] : queryEdits) {
            engine.setEmbeddingValue(ae::Stream::Query, row, col, value);
            edited.embeddings(row, col) = value;
        }
        if (scene.hasSource) {
            engine.setEmbeddingValue(ae::Stream::Source, 1, 0, -0.5);
            edited.sourceEmbeddings(1, 0) = -0.5;
        }
        engine.compute();
        QCOMPARE(engine.counters().rowUpdates, before.rowUpdates + 1);
        QCOMPARE(engine.counters().fullProjections, before.fullProjections);
        QCOMPARE(engine.counters().fullPreparations, before.fullPreparations);
        QCOMPARE(engine.counters().scorePasses, before.scorePasses);  // rows and columns only
        AttentionEngine<double> fresh(edited);
        fresh.compute();
        const aetest::Comparison c = compareEngines(engine, fresh);
        QVERIFY2(c.within(kExact), qPrintable(c.report(kExact)));
        // The edit did change something, so the comparison was not vacuous.
        AttentionEngine<double> original(scene);
        original.compute();
        QVERIFY(!compareEngines(engine, original).within(1e-6));
    }

    // An edit queued behind a change that redoes the scores anyway, and one before any compute.
    void embeddingEditWithOtherChanges() {
        const Scene scene =
            builtScene(ae::ProjectionMode::Separate, true, Inputs::NormAndSinusoidal);
        Scene edited = scene;
        edited.heads = 4;
        edited.embeddings(0, 0) = 2.0;
        edited.sourceEmbeddings(3, 5) = -2.0;
        AttentionEngine<double> engine(scene);
        engine.compute();
        engine.setHeads(4);
        engine.setEmbeddingValue(ae::Stream::Query, 0, 0, 2.0);
        engine.setEmbeddingValue(ae::Stream::Source, 3, 5, -2.0);
        engine.compute();
        AttentionEngine<double> fresh(edited);
        fresh.compute();
        aetest::Comparison c = compareEngines(engine, fresh);
        QVERIFY2(c.within(kExact), qPrintable(c.report(kExact)));

        AttentionEngine<double> early(scene);
        early.setHeads(4);
        early.setEmbeddingValue(ae::Stream::Query, 0, 0, 2.0);
        early.setEmbeddingValue(ae::Stream::Source, 3, 5, -2.0);
        early.compute();
        c = compareEngines(early, fresh);
        QVERIFY2(c.within(0.0), qPrintable(c.report(0.0)));
    }

    // An overflow leaves the stages before the scaling valid, and a later change recovers.
    void overflowThenRecover() {
        Scene s = builtScene(ae::ProjectionMode::Identity, false, Inputs::Plain);
        s.embeddings(1, 2) = 1e150;  // scores of 1e300: finite until divided by 1e-10
        s.embeddings(3, 2) = 1e150;
        s.scale = {ae::ScaleKind::Divisor, 1e-10};
        AttentionEngine<double> engine(s);
        try {
            engine.compute();
            QFAIL("no overflow");
        } catch (const ae::SceneError& e) {
            QCOMPARE(QString::fromStdString(e.what()),
                     QStringLiteral("scores: overflow (values too large to represent)"));
        }
        QCOMPARE(engine.query()(1, 2), 1e150);
        QCOMPARE(engine.scores(0)(1, 3), 1e300);
        // A divisor that keeps the scores in range.
        s.scale = {ae::ScaleKind::Divisor, 2.0};
        engine.setScale(s.scale);
        engine.compute();
        AttentionEngine<double> fresh(s);
        fresh.compute();
        aetest::Comparison c = compareEngines(engine, fresh);
        QVERIFY2(c.within(0.0), qPrintable(c.report(0.0)));
        // And an edit of the offending value after another overflow.
        s.scale = {ae::ScaleKind::Divisor, 1e-10};
        engine.setScale(s.scale);
        QVERIFY_THROWS_EXCEPTION(ae::SceneError, engine.compute());
        s.embeddings(1, 2) = 0.5;
        s.embeddings(3, 2) = -0.5;
        engine.setEmbeddingValue(ae::Stream::Query, 1, 2, 0.5);
        engine.setEmbeddingValue(ae::Stream::Query, 3, 2, -0.5);
        engine.compute();
        AttentionEngine<double> edited(s);
        edited.compute();
        c = compareEngines(engine, edited);
        QVERIFY2(c.within(kExact), qPrintable(c.report(kExact)));
    }
};

QTEST_GUILESS_MAIN(TestEngineCache)
#include "test_engine_cache.moc"
