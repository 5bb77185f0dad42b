// Scene format version 2: one layer of a real model is a scene. The fixtures in tests/data/scene-v2
// are layers of the golden models (Llama with grouped kv heads, Llama 3 rope scaling with attention
// bias, Qwen3 with q/k norm and head_dim·heads != d_model, GPT-2, BERT with padding), written by
// tests/tools/make_scene_v2_fixtures.py from the whole-model reference (PyTorch float64) together
// with that reference's per-head q, k, v, scores and weights. The one-layer engine must reproduce
// them. Also: writing and reading back, version 1 left as it was, refusals of bad version 2
// fields, the engine's incremental paths through the new stages, and the trainer's refusals.
#include <QDir>
#include <QTest>
#include <functional>

#include "core/attention_engine.h"
#include "core/scene_edit.h"
#include "core/training/attention_training.h"
#include "io/scene/scene_file.h"
#include "support/property_scenes.h"
#include "support/result_check.h"

using ae::AttentionEngine;
using ae::MatrixD;
using ae::Scene;
using ae::VectorD;
using aetest::Comparison;

Q_DECLARE_METATYPE(ae::Scene)

namespace {

// The engine in double against the reference in float64: both compute the same formulas on the
// same numbers; what differs is the order of summation in the products (Eigen's kernels against
// torch's), scaling by a division where the reference multiplies by hd^-0.5, and the last bit of
// libm's sin/cos/exp. Measured worst: below 1e-14 (printed by the test).
constexpr double kReferenceTolerance = 1e-9;
// float against float64: as test_golden (about 1000 float ulps through the chain).
constexpr double kFloatTolerance = 1e-4;

QString fixturePath(const QString& name) {
    return aetest::dataPath(QStringLiteral("scene-v2/") + name);
}

QStringList fixtureNames() {
    const QDir dir(aetest::dataPath("scene-v2"));
    QStringList names;
    for (const QString& file : dir.entryList({QStringLiteral("*.scene.json")}, QDir::Files))
        names << file.chopped(static_cast<qsizetype>(sizeof(".scene.json") - 1));
    return names;
}

Scene fixture(const QString& name) {
    return ae::io::loadSceneFile(fixturePath(name + ".scene.json"));
}

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

QString refusal(const QByteArray& json) {
    try {
        ae::io::parseScene(json);
        return QStringLiteral("(accepted)");
    } catch (const ae::SceneError& error) {
        return QString::fromStdString(error.what());
    }
}

// A small version 2 layer: 3 tokens, d_model 4, 4 heads of 2 over 2 kv heads, RMSNorm, q/k norm,
// rotary with llama3 scaling. `change` edits its JSON before it is written out.
QByteArray smallScene(const std::function<void(QJsonObject&)>& change = {}) {
    QJsonObject o = QJsonDocument::fromJson(R"({
        "format": "attention-explorer/scene", "version": 2, "tokens": ["a", "b", "c"],
        "embeddings": [[0.5, -1, 0.25, 2], [1.5, 0.25, -0.5, 1], [-0.5, 2, 1, 0]],
        "norm": {"kind": "rmsnorm", "weight": [1, 0.5, 2, 1], "eps": 1e-6},
        "projections": {"mode": "separate",
            "query": [[1, 0, 0.5, -1, 0, 1, 0.25, 0], [0, 1, -0.5, 2, 1, 0, 0, 0.5],
                      [0.5, 0, 1, 0, 0, 0.25, 1, 0], [0, 0.5, 0, 1, 0.5, 0, 0, 1]],
            "key": [[0.5, 0, 1, 0], [0, 0.5, 0, 1], [1, 0, 0, 0.5], [0, 1, 0.5, 0]],
            "value": [[1, 2, 0, -1], [0, 1, 1, 0], [2, 0, 0, 1], [0, 0, 1, 1]]},
        "heads": 4, "kv_heads": 2, "head_dim": 2,
        "qk_norm": {"query_weight": [1, 2], "key_weight": [0.5, 1], "eps": 1e-6},
        "rotary": {"theta": 10000, "scaling": "llama3", "factor": 8, "low_freq_factor": 1,
                   "high_freq_factor": 4, "original_max_position_embeddings": 8},
        "mask": {"causal": true}})")
                        .object();
    if (change) change(o);
    return QJsonDocument(o).toJson(QJsonDocument::Compact);
}

// Every field of two scenes, version 2's included; `why` names the first difference.
bool sameScene(const Scene& a, const Scene& b, QString& why) {
    const auto differ = [&why](const char* name) {
        why = QString::fromLatin1(name);
        return false;
    };
    const auto same = [](const auto& x, const auto& y) {
        return x.rows() == y.rows() && x.cols() == y.cols() && (x.size() == 0 || x == y);
    };
    const ae::Projections &p = a.projections, &q = b.projections;
    if (a.tokens != b.tokens || a.title != b.title || a.hasSource != b.hasSource)
        return differ("tokens");
    if (!same(a.embeddings, b.embeddings)) return differ("embeddings");
    if (a.norm.enabled != b.norm.enabled || a.norm.kind != b.norm.kind ||
        a.norm.eps != b.norm.eps || !same(a.norm.weight, b.norm.weight) ||
        !same(a.norm.bias, b.norm.bias))
        return differ("norm");
    if (p.mode != q.mode || !same(p.query, q.query) || !same(p.key, q.key) ||
        !same(p.value, q.value) || !same(p.output, q.output) || !same(p.queryBias, q.queryBias) ||
        !same(p.keyBias, q.keyBias) || !same(p.valueBias, q.valueBias) ||
        !same(p.outputBias, q.outputBias))
        return differ("projections");
    if (a.heads != b.heads || a.kvHeads != b.kvHeads) return differ("heads");
    if (a.qkNorm.enabled != b.qkNorm.enabled || a.qkNorm.eps != b.qkNorm.eps ||
        !same(a.qkNorm.queryWeight, b.qkNorm.queryWeight) ||
        !same(a.qkNorm.keyWeight, b.qkNorm.keyWeight))
        return differ("qk_norm");
    if (!(a.rotary == b.rotary)) return differ("rotary");
    if (!(a.ablation == b.ablation)) return differ("ablation");
    if (a.scale.kind != b.scale.kind || a.scale.divisor != b.scale.divisor) return differ("scale");
    if (a.mask.causal != b.mask.causal || a.mask.padding != b.mask.padding) return differ("mask");
    return true;
}

}  // namespace

class TestSceneV2 : public QObject {
    Q_OBJECT

private slots:
    // ------------------------------------------------------------ real model layers
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

    // ------------------------------------------------------------ files
    void roundTripsExactly_data() {
        QTest::addColumn<QByteArray>("json");
        for (const QString& name : fixtureNames())
            QTest::newRow(qPrintable(name)) << aetest::readFile(fixturePath(name + ".scene.json"));
        QTest::newRow("small") << smallScene();
        QTest::newRow("linear") << smallScene([](QJsonObject& o) {
            o["rotary"] = QJsonObject{{"theta", 500.0}, {"scaling", "linear"}, {"factor", 2.0}};
        });
        QTest::newRow("ablation by mean") << smallScene([](QJsonObject& o) {
            o["ablation"] = QJsonObject{{"heads", QJsonArray{3, 0}}, {"mode", "mean"}};
        });
        QTest::newRow("ablation by zeros") << smallScene([](QJsonObject& o) {
            o["ablation"] = QJsonObject{{"heads", QJsonArray{1}}};
        });
        QTest::newRow("rmsnorm only") << smallScene([](QJsonObject& o) {
            o.remove("rotary");
            o.remove("qk_norm");
            o.remove("kv_heads");
            QJsonObject p = o["projections"].toObject();
            p["key"] = p["query"];
            p["value"] = p["query"];
            o["projections"] = p;
        });
    }
    void roundTripsExactly() {
        QFETCH(QByteArray, json);
        const Scene scene = ae::io::parseScene(json);
        const QByteArray written = ae::io::sceneToJson(scene);
        const Scene back = ae::io::parseScene(written);
        QString why;
        QVERIFY2(sameScene(back, scene, why), qPrintable("differs in " + why));
        QCOMPARE(ae::io::sceneToJson(back), written);
        const QJsonObject o = QJsonDocument::fromJson(written).object();
        QCOMPARE(o["version"].toInt(), scene.usesVersion2() ? 2 : 1);
        if (scene.usesVersion2()) QCOMPARE(o["head_dim"].toInt(), scene.dHead());
    }

    // Every golden version 1 scene is still written as version 1, byte for byte as its own
    // write gave before version 2 existed (no version 2 key, nothing moved).
    void versionOneStaysVersionOne() {
        const QStringList names = aetest::goldenNames();
        QVERIFY(names.size() >= 18);
        for (const QString& name : names) {
            const Scene scene = aetest::golden(name);
            QVERIFY2(!scene.usesVersion2(), qPrintable(name));
            const QJsonObject o = QJsonDocument::fromJson(ae::io::sceneToJson(scene)).object();
            QCOMPARE(o["version"].toInt(), 1);
            for (const char* key : {"head_dim", "kv_heads", "qk_norm", "rotary", "ablation"})
                QVERIFY2(!o.contains(key), qPrintable(name + ": " + key));
        }
        // Version 2's fields stay unknown in a version 1 file, as the version 1 reference says.
        const QByteArray v1 = smallScene([](QJsonObject& o) { o["version"] = 1; });
        QCOMPARE(refusal(v1), QStringLiteral("head_dim: unknown field"));
        QCOMPARE(refusal(smallScene([](QJsonObject& o) {
                     o["version"] = 1;
                     for (const char* key : {"head_dim", "kv_heads", "qk_norm", "rotary"})
                         o.remove(key);
                 })),
                 QStringLiteral("norm.kind: expected layernorm"));
        QCOMPARE(refusal(smallScene([](QJsonObject& o) { o["version"] = 3; })),
                 QStringLiteral("head_dim: unknown field"));
        QCOMPARE(refusal(smallScene([](QJsonObject& o) {
                     o["version"] = 3;
                     for (const char* key : {"head_dim", "kv_heads", "qk_norm", "rotary"})
                         o.remove(key);
                 })),
                 QStringLiteral("version: unsupported version (this reads versions 1 and 2)"));
    }

    // A switched-off head alone makes a version 1 scene version 2; in a version 1 file the
    // field is unknown.
    void ablationAloneIsVersion2() {
        Scene scene = aetest::golden(aetest::goldenNames().front());
        QVERIFY(!scene.usesVersion2());
        scene.ablation.heads = {scene.heads - 1};
        QVERIFY(scene.usesVersion2());
        const QByteArray written = ae::io::sceneToJson(scene);
        const QJsonObject o = QJsonDocument::fromJson(written).object();
        QCOMPARE(o["version"].toInt(), 2);
        QCOMPARE(o["ablation"].toObject()["heads"].toArray(), QJsonArray{scene.heads - 1});
        QCOMPARE(o["ablation"].toObject()["mode"].toString(), QStringLiteral("zero"));
        QVERIFY(ae::io::parseScene(written).ablation == scene.ablation);
        scene.ablation.heads.clear();
        QVERIFY(!scene.usesVersion2());
        QCOMPARE(refusal(smallScene([](QJsonObject& o) {
                     o["version"] = 1;
                     for (const char* key : {"head_dim", "kv_heads", "qk_norm", "rotary"})
                         o.remove(key);
                     o["norm"] = QJsonObject{{"kind", "layernorm"}};
                     o["ablation"] = QJsonObject{{"heads", QJsonArray{0}}};
                 })),
                 QStringLiteral("ablation: unknown field"));
    }

    void refusesBadVersion2Fields_data() {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("error");
        const auto set = [](const char* key, const QJsonValue& value) {
            return smallScene([=](QJsonObject& o) { o[key] = value; });
        };
        const auto setIn = [](const char* object, const char* key, const QJsonValue& value) {
            return smallScene([=](QJsonObject& o) {
                QJsonObject inner = o[object].toObject();
                inner[key] = value;
                o[object] = inner;
            });
        };
        QTest::newRow("kv_heads does not divide heads")
            << set("kv_heads", 3) << "kv_heads: 3 does not divide heads 4";
        QTest::newRow("kv_heads above heads")
            << set("kv_heads", 8) << "kv_heads: 8 does not divide heads 4";
        QTest::newRow("kv_heads zero") << set("kv_heads", 0) << "kv_heads: must be at least 1";
        QTest::newRow("kv_heads fraction")
            << set("kv_heads", 1.5) << "kv_heads: expected an integer";
        QTest::newRow("key as wide as Q")
            << setIn("projections", "key",
                     QJsonArray{
                         QJsonArray{1, 0, 0, 0, 0, 0, 0, 0}, QJsonArray{0, 1, 0, 0, 0, 0, 0, 0},
                         QJsonArray{0, 0, 1, 0, 0, 0, 0, 0}, QJsonArray{0, 0, 0, 1, 0, 0, 0, 0}})
            << "projections.key: expected 4x4 (d_model x kv_heads·head_dim = 2·2), got 4x8";
        QTest::newRow("value bias of Q's width")
            << setIn("projections", "bias",
                     QJsonObject{{"value", QJsonArray{0, 0, 0, 0, 0, 0, 0, 0}}})
            << "projections.bias.value: expected 4 values, got 8";
        QTest::newRow("kv_heads with shared_qk") << smallScene([](QJsonObject& o) {
            QJsonObject p = o["projections"].toObject();
            p["mode"] = "shared_qk";
            p.remove("key");
            o["projections"] = p;
        }) << "kv_heads: needs projections.mode separate (K is Q itself otherwise)";
        QTest::newRow("kv_heads with identity") << smallScene([](QJsonObject& o) {
            o["projections"] = QJsonObject{{"mode", "identity"}};
        }) << "kv_heads: needs projections.mode separate (identity has K and V as wide as Q)";
        QTest::newRow("head_dim disagrees")
            << set("head_dim", 4)
            << "head_dim: 4 does not match the projection width 8 / 4 heads = 2";
        QTest::newRow("odd head_dim with rotary") << smallScene([](QJsonObject& o) {
            o["heads"] = 8;
            o["kv_heads"] = 4;
            o["head_dim"] = 1;
            o.remove("qk_norm");
        }) << "rotary: needs an even head_dim, got 1 (d_proj 8 / 8 heads)";
        QTest::newRow("qk_norm query weight too short")
            << setIn("qk_norm", "query_weight", QJsonArray{1})
            << "qk_norm.query_weight: expected 2 values (head_dim = d_proj / heads = 8 / 4), got 1";
        QTest::newRow("qk_norm key weight as d_model")
            << setIn("qk_norm", "key_weight", QJsonArray{1, 1, 1, 1})
            << "qk_norm.key_weight: expected 2 values (head_dim = d_proj / heads = 8 / 4), got 4";
        QTest::newRow("qk_norm eps")
            << setIn("qk_norm", "eps", 0) << "qk_norm.eps: must be positive";
        QTest::newRow("qk_norm unknown")
            << setIn("qk_norm", "bias", QJsonArray{0, 0}) << "qk_norm.bias: unknown field";
        QTest::newRow("rmsnorm weight length")
            << setIn("norm", "weight", QJsonArray{1, 1}) << "norm.weight: expected 4 values, got 2";
        QTest::newRow("rmsnorm bias") << setIn("norm", "bias", QJsonArray{0, 0, 0, 0})
                                      << "norm.bias: only with kind layernorm (RMSNorm has none)";
        QTest::newRow("norm kind")
            << setIn("norm", "kind", "batchnorm") << "norm.kind: expected layernorm or rmsnorm";
        QTest::newRow("low >= high freq factor")
            << setIn("rotary", "low_freq_factor", 4)
            << "rotary.high_freq_factor: must exceed low_freq_factor (got 4, low_freq_factor 4)";
        QTest::newRow("high freq factor below low")
            << setIn("rotary", "high_freq_factor", 0.5)
            << "rotary.high_freq_factor: must exceed low_freq_factor (got 0.5, low_freq_factor 1)";
        QTest::newRow("rotary theta")
            << setIn("rotary", "theta", -1) << "rotary.theta: must be positive";
        QTest::newRow("rotary scaling") << setIn("rotary", "scaling", "yarn")
                                        << "rotary.scaling: expected none, linear or llama3";
        QTest::newRow("factor without scaling")
            << set("rotary", QJsonObject{{"factor", 2}})
            << "rotary.factor: only with scaling linear or llama3";
        QTest::newRow("low_freq_factor with linear")
            << set("rotary",
                   QJsonObject{{"scaling", "linear"}, {"factor", 2}, {"low_freq_factor", 1}})
            << "rotary.low_freq_factor: only with scaling llama3";
        QTest::newRow("linear without factor") << set("rotary", QJsonObject{{"scaling", "linear"}})
                                               << "rotary.factor: required with scaling linear";
        QTest::newRow("llama3 without original")
            << set("rotary", QJsonObject{{"scaling", "llama3"},
                                         {"factor", 8},
                                         {"low_freq_factor", 1},
                                         {"high_freq_factor", 4}})
            << "rotary.original_max_position_embeddings: required with scaling llama3";
        QTest::newRow("rotary unknown")
            << setIn("rotary", "interleaved", true) << "rotary.interleaved: unknown field";
        QTest::newRow("ablation head out of range")
            << set("ablation", QJsonObject{{"heads", QJsonArray{0, 4}}})
            << "ablation.heads[1]: head 4 is out of range (the layer has 4 heads: 0 to 3)";
        QTest::newRow("ablation head negative")
            << set("ablation", QJsonObject{{"heads", QJsonArray{-1}}})
            << "ablation.heads[0]: must be at least 0";
        QTest::newRow("ablation head fraction")
            << set("ablation", QJsonObject{{"heads", QJsonArray{0.5}}})
            << "ablation.heads[0]: expected an integer";
        QTest::newRow("ablation head twice")
            << set("ablation", QJsonObject{{"heads", QJsonArray{1, 2, 1}}})
            << "ablation.heads[2]: head 1 is listed twice";
        QTest::newRow("ablation bad mode")
            << set("ablation", QJsonObject{{"heads", QJsonArray{1}}, {"mode", "resample"}})
            << "ablation.mode: expected zero or mean";
        QTest::newRow("ablation without heads")
            << set("ablation", QJsonObject{{"mode", "mean"}})
            << "ablation.heads: expected a list of head indices";
        QTest::newRow("ablation unknown")
            << set("ablation", QJsonObject{{"heads", QJsonArray{1}}, {"scale", 0}})
            << "ablation.scale: unknown field";
        QTest::newRow("ablation not an object")
            << set("ablation", QJsonArray{1}) << "ablation: expected an object";
        QTest::newRow("kv_heads with init") << smallScene([](QJsonObject& o) {
            o.remove("projections");
            o["init"] = QJsonObject{{"seed", 1}};
        }) << "kv_heads: needs explicit projections (init draws K as wide as Q)";
    }
    void refusesBadVersion2Fields() {
        QFETCH(QByteArray, json);
        QFETCH(QString, error);
        QCOMPARE(refusal(json), error);
    }

    // ------------------------------------------------------------ the engine
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

QTEST_GUILESS_MAIN(TestSceneV2)
#include "test_scene_v2.moc"
