// Scene format version 2 in the one-layer engine: grouped kv heads, q/k norm, rotary positions
// and RMSNorm through the engine's incremental paths (an edited row, a new stage, a new head
// count), its memory estimate, the structural edits the window offers, and the trainer's
// refusals of what it cannot train.
#include <QJsonArray>
#include <QTest>

#include "core/attention_engine.h"
#include "core/scene_edit.h"
#include "core/training/attention_training.h"
#include "io/scene/scene_file.h"
#include "support/property_scenes.h"
#include "support/scene_v2_fixtures.h"

using ae::AttentionEngine;
using ae::MatrixD;
using ae::Scene;
using aetest::Comparison;
using aetest::fixture;
using aetest::sameScene;
using aetest::smallScene;

Q_DECLARE_METATYPE(ae::Scene)

class TestSceneV2Engine : public QObject {
    Q_OBJECT

private slots:
    void groupedHeadsReadTheirKvHead() {
        const Scene scene = ae::io::parseScene(smallScene());
        AttentionEngine<double> engine(scene);
        engine.compute();
        QCOMPARE(engine.key().cols(), 4);    // 2 kv heads of 2
        QCOMPARE(engine.value().cols(), 4);  // 2 kv heads of 2
        for (int h = 0; h < 4; ++h) {
            QVERIFY(aetest::bitIdentical(MatrixD(engine.headKey(h)),
                                         MatrixD(engine.key().middleCols((h / 2) * 2, 2))));
            QVERIFY(aetest::bitIdentical(MatrixD(engine.headValue(h)),
                                         MatrixD(engine.value().middleCols((h / 2) * 2, 2))));
        }
        // Ungrouped (K and V written out per head) the layer computes the same numbers.
        Scene ungrouped = scene;
        ae::ungroupKeyValueHeads(ungrouped);
        QVERIFY(!ungrouped.kvHeads);
        QCOMPARE(ungrouped.projections.key.cols(), 8);
        AttentionEngine<double> wide(ungrouped);
        wide.compute();
        const Comparison c = aetest::compareEngines(wide, engine);
        QVERIFY2(c.within(0.0), qPrintable(c.report(0.0)));
    }

    void heldBytesMatchTheEstimate_data() {
        QTest::addColumn<Scene>("scene");
        QTest::newRow("small") << ae::io::parseScene(smallScene());
        QTest::newRow("qwen3") << fixture("qwen3-layer1");
        QTest::newRow("gqa") << fixture("llama-gqa-layer0");
        QTest::newRow("qk norm, shared_qk") << ae::io::parseScene(smallScene([](QJsonObject& o) {
            o.remove("kv_heads");
            QJsonObject p = o["projections"].toObject();
            p["mode"] = "shared_qk";
            p.remove("key");
            p["value"] = p["query"];
            o["projections"] = p;
        }));
    }
    void heldBytesMatchTheEstimate() {
        QFETCH(Scene, scene);
        AttentionEngine<float> single(scene);
        single.compute();
        QCOMPARE(single.heldBytes(), ae::engineBytes(scene, sizeof(float)));
        AttentionEngine<double> twice(scene);
        twice.compute();
        QCOMPARE(twice.heldBytes(), ae::engineBytes(scene, sizeof(double)));
    }

    // The q/k norm of a Q whose squares overflow float (|q| ~ 1e19) still gives its direction in
    // the float engine, as in double.
    void keyNormOfHugeValuesInFloat() {
        Scene scene = ae::io::parseScene(smallScene([](QJsonObject& o) { o.remove("norm"); }));
        scene.embeddings *= 1e19;
        AttentionEngine<double> twice(scene);
        twice.compute();
        AttentionEngine<float> single(scene);
        single.compute();
        QVERIFY(single.query().cwiseAbs().maxCoeff() > 0.1f);
        for (int h = 0; h < 4; ++h) {
            const MatrixD got = single.weights(h).cast<double>();
            QVERIFY2(((got - twice.weights(h)).cwiseAbs().maxCoeff() < 1e-4),
                     qPrintable(QString::number(h)));
            const MatrixD q = MatrixD(single.headQuery(h).cast<double>());
            QVERIFY(((q - MatrixD(twice.headQuery(h))).cwiseAbs().maxCoeff() < 1e-4));
        }
    }

    // A q/k norm with shared_qk keys: K is normalised with its own weight, so it is not Q.
    void keyNormGivesKeysOfTheirOwn() {
        const Scene scene = ae::io::parseScene(smallScene([](QJsonObject& o) {
            o.remove("kv_heads");
            QJsonObject p = o["projections"].toObject();
            p["mode"] = "shared_qk";
            p.remove("key");
            p["value"] = p["query"];
            o["projections"] = p;
        }));
        AttentionEngine<double> engine(scene);
        engine.compute();
        Scene separate = scene;
        separate.projections.mode = ae::ProjectionMode::Separate;
        separate.projections.key = separate.projections.query;
        AttentionEngine<double> expected(separate);
        expected.compute();
        QVERIFY(!aetest::bitIdentical(engine.key(), engine.query()));
        const Comparison c = aetest::compareEngines(engine, expected);
        QVERIFY2(c.within(0.0), qPrintable(c.report(0.0)));
    }

    // An edited embedding value goes through the norm, Q, K, V, q/k norm and rotation of its row
    // only, and the result is a fresh engine's.
    void editedRowsThroughNormAndRotation_data() {
        QTest::addColumn<Scene>("scene");
        QTest::newRow("small") << ae::io::parseScene(smallScene());
        QTest::newRow("qwen3") << fixture("qwen3-layer1");
        QTest::newRow("rope scaled") << fixture("llama-rope-scaled-layer0");
        Scene cross = ae::io::parseScene(smallScene());
        ae::setSourceEnabled(cross, true);
        QTest::newRow("cross") << cross;
    }
    void editedRowsThroughNormAndRotation() {
        QFETCH(Scene, scene);
        AttentionEngine<double> engine(scene);
        engine.compute();
        const ae::EngineCounters before = engine.counters();
        Scene edited = scene;
        engine.setEmbeddingValue(ae::Stream::Query, 2, 1, 0.75);
        edited.embeddings(2, 1) = 0.75;
        if (scene.hasSource) {
            engine.setEmbeddingValue(ae::Stream::Source, 1, 3, -1.25);
            edited.sourceEmbeddings(1, 3) = -1.25;
        }
        engine.compute();
        QCOMPARE(engine.counters().rowUpdates, before.rowUpdates + 1);
        QCOMPARE(engine.counters().fullProjections, before.fullProjections);
        QCOMPARE(engine.counters().scorePasses, before.scorePasses);
        AttentionEngine<double> fresh(edited);
        fresh.compute();
        const Comparison c = aetest::compareEngines(engine, fresh);
        QVERIFY2(c.within(aetest::kExact), qPrintable(c.report(aetest::kExact)));
        AttentionEngine<double> original(scene);
        original.compute();
        QVERIFY(!aetest::compareEngines(engine, original).within(1e-6));
    }

    // A new q/k norm, rotation or pre-norm recomputes the projections onwards; a new head count on
    // a rotary layer does too (the rotation pairs columns within a head).
    void newStagesRecomputeWhatDependsOnThem() {
        Scene scene = ae::io::parseScene(smallScene());
        AttentionEngine<double> engine(scene);
        engine.compute();
        const auto check = [&](const char* what) {
            engine.compute();
            AttentionEngine<double> fresh(scene);
            fresh.compute();
            const Comparison c = aetest::compareEngines(engine, fresh);
            QVERIFY2(c.within(0.0), qPrintable(QString(what) + ": " + c.report(0.0)));
        };
        long projections = engine.counters().fullProjections;
        scene.qkNorm.queryWeight(1) = -3.0;
        engine.setQkNorm(scene.qkNorm);
        check("q/k norm");
        QCOMPARE(engine.counters().fullProjections, ++projections);

        scene.rotary->theta = 100.0;
        engine.setRotary(scene.rotary);
        check("rotary");
        QCOMPARE(engine.counters().fullProjections, ++projections);
        scene.rotary.reset();
        engine.setRotary(scene.rotary);
        check("no rotary");

        const long preparations = engine.counters().fullPreparations;
        scene.norm.weight(0) = 3.0;
        engine.setNorm(scene.norm);
        check("rmsnorm");
        QCOMPARE(engine.counters().fullPreparations, preparations + 1);

        // Heads of a layer with rotary positions but no grouping or q/k norm.
        Scene rotary = ae::io::parseScene(smallScene([](QJsonObject& o) {
            o.remove("kv_heads");
            o.remove("qk_norm");
            o["head_dim"] = 4;
            o["heads"] = 2;
            QJsonObject p = o["projections"].toObject();
            p["key"] = p["query"];
            p["value"] = p["query"];
            o["projections"] = p;
        }));
        AttentionEngine<double> twoHeads(rotary);
        twoHeads.compute();
        const long before = twoHeads.counters().fullProjections;
        twoHeads.setHeads(4);
        twoHeads.compute();
        QCOMPARE(twoHeads.counters().fullProjections, before + 1);
        rotary.heads = 4;
        AttentionEngine<double> fresh(rotary);
        fresh.compute();
        const Comparison c = aetest::compareEngines(twoHeads, fresh);
        QVERIFY2(c.within(0.0), qPrintable(c.report(0.0)));
        // 8 heads would leave d_head 1, which cannot rotate.
        QVERIFY_THROWS_EXCEPTION(ae::SceneError, twoHeads.setHeads(8));
    }

    void headCountOfVersion2Layers() {
        const Scene scene = ae::io::parseScene(smallScene());
        QVERIFY(ae::headCountAllowed(scene, 4));
        try {
            ae::checkHeadCount(scene, 2);
            QFAIL("2 heads accepted on a grouped layer");
        } catch (const ae::SceneError& e) {
            QCOMPARE(QString::fromStdString(e.what()),
                     QStringLiteral("kv_heads: a grouped-query layer keeps its 4 heads: K and V "
                                    "hold 2 kv heads of 2 columns"));
        }
        Scene ungrouped = scene;
        ae::ungroupKeyValueHeads(ungrouped);
        try {
            ae::checkHeadCount(ungrouped, 2);
            QFAIL("2 heads accepted with a q/k norm");
        } catch (const ae::SceneError& e) {
            QCOMPARE(QString::fromStdString(e.what()),
                     QStringLiteral("qk_norm: its weights have head_dim = 2 values, so the layer "
                                    "keeps its 4 heads"));
        }
        AttentionEngine<float> engine(scene);
        QVERIFY_THROWS_EXCEPTION(ae::SceneError, engine.setHeads(2));
    }

    // The structural edits the window offers leave a valid version 2 scene.
    void structuralEditsKeepAValidScene() {
        const Scene scene = ae::io::parseScene(smallScene());
        const ae::InitSpec spec;
        const auto valid = [](const Scene& s, const char* what) {
            AttentionEngine<double> engine(s);
            engine.compute();
            QVERIFY2(engine.weights(0).allFinite(), what);
            // and it reads back as it was written
            const Scene back = ae::io::parseScene(ae::io::sceneToJson(s));
            QString why;
            QVERIFY2(sameScene(back, s, why), qPrintable(QString(what) + ": " + why));
        };
        Scene wider = scene;
        ae::setModelWidth(wider, 6, spec);
        QCOMPARE(wider.kvHeads, std::optional<int>(2));
        QCOMPARE(wider.projections.key.rows(), 6);
        QCOMPARE(wider.projections.key.cols(), 4);
        valid(wider, "d_model 6");

        Scene projected = scene;
        ae::setProjectionWidth(projected, 12, spec);
        QVERIFY(!projected.kvHeads);
        QCOMPARE(projected.dHead() % 2, 0);
        QCOMPARE(projected.qkNorm.queryWeight.size(), projected.dHead());
        valid(projected, "d_proj 12");

        Scene odd = scene;
        ae::setProjectionWidth(odd, 9, spec);
        QVERIFY(!odd.rotary);  // no head count gives an even d_head
        valid(odd, "d_proj 9");

        Scene identity = scene;
        ae::setProjectionMode(identity, ae::ProjectionMode::Identity, spec);
        QCOMPARE(identity.dHead() % 2, 0);
        valid(identity, "identity");

        Scene rerolled = scene;
        ae::rerollProjections(rerolled, spec, true);
        QVERIFY(!rerolled.kvHeads);
        valid(rerolled, "re-roll");

        Scene longer = scene;
        ae::insertToken(longer, ae::Stream::Query, 1, "new");
        valid(longer, "a new token");
    }

    void trainerRefusesVersion2Features() {
        const auto refused = [](const Scene& scene) -> QString {
            try {
                ae::Trainer trainer(scene, ae::TrainingTask::PreviousToken);
                return "(accepted)";
            } catch (const ae::SceneError& e) {
                return QString::fromStdString(e.path());
            }
        };
        Scene scene = ae::io::parseScene(smallScene([](QJsonObject& o) {
            QJsonObject p = o["projections"].toObject();
            p["output"] =
                QJsonArray{QJsonArray{1, 0, 0, 0}, QJsonArray{0, 1, 0, 0}, QJsonArray{0, 0, 1, 0},
                           QJsonArray{0, 0, 0, 1}, QJsonArray{1, 0, 0, 0}, QJsonArray{0, 1, 0, 0},
                           QJsonArray{0, 0, 1, 0}, QJsonArray{0, 0, 0, 1}};
            o["projections"] = p;
        }));
        QCOMPARE(refused(scene), QStringLiteral("norm.kind"));
        scene.norm.kind = ae::NormKind::Layer;
        QCOMPARE(refused(scene), QStringLiteral("kv_heads"));
        ae::ungroupKeyValueHeads(scene);
        QCOMPARE(refused(scene), QStringLiteral("qk_norm"));
        scene.qkNorm.enabled = false;
        QCOMPARE(refused(scene), QStringLiteral("rotary"));
        scene.rotary.reset();
        scene.ablation.heads = {1};
        QCOMPARE(refused(scene), QStringLiteral("ablation"));
        scene.ablation.heads.clear();
        QCOMPARE(refused(scene), QStringLiteral("(accepted)"));
    }
};

QTEST_GUILESS_MAIN(TestSceneV2Engine)
#include "test_scene_v2_engine.moc"
