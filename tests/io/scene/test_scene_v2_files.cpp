// Scene format version 2 as files: every version 2 layer (the model fixtures in
// tests/data/scene-v2 and small layers built here) is written and read back exactly, version 1
// scenes stay version 1 byte for byte, and bad version 2 fields are refused with the reference's
// words.
#include <QJsonArray>
#include <QTest>

#include "io/scene/scene_file.h"
#include "support/property_scenes.h"
#include "support/scene_v2_fixtures.h"

using ae::Scene;
using aetest::fixtureNames;
using aetest::fixturePath;
using aetest::sameScene;
using aetest::smallScene;

namespace {

QString refusal(const QByteArray& json) {
    try {
        ae::io::parseScene(json);
        return QStringLiteral("(accepted)");
    } catch (const ae::SceneError& error) {
        return QString::fromStdString(error.what());
    }
}

}  // namespace

class TestSceneV2Files : public QObject {
    Q_OBJECT

private slots:
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
        QTest::newRow("rotary scaling")
            << setIn("rotary", "scaling", "yarn")
            << "rotary.scaling: expected none, linear, llama3 or longrope";
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
};

QTEST_GUILESS_MAIN(TestSceneV2Files)
#include "test_scene_v2_files.moc"
