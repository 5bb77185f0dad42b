// The strict loader against the reference: every invalid scene of tests/data/errors/cases.json
// must be refused with exactly the reference's message, a few valid edge cases must load, and a
// scene written by sceneToJson must read back unchanged.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include "core/attention_engine.h"
#include "core/init_draw.h"
#include "io/scene/scene_file.h"
#include "support/result_check.h"

namespace {

QByteArray compact(const QJsonValue& value) {
    return value.isArray() ? QJsonDocument(value.toArray()).toJson(QJsonDocument::Compact)
                           : QJsonDocument(value.toObject()).toJson(QJsonDocument::Compact);
}

// The message parse (or, for overflow, the computation after it) gives, or "(accepted)".
// The reference prints an error as f"{path}: {problem}"; SceneError::what() is the same except
// that an empty path (the top level itself) is left out rather than printed as ": problem", so
// here the message is rebuilt in the reference's form from path() and problem().
QString referenceStyleMessage(const QByteArray& json) {
    try {
        const ae::Scene scene = ae::io::parseScene(json);
        ae::AttentionEngine<double> engine(scene);
        engine.compute();
        return QStringLiteral("(accepted)");
    } catch (const ae::SceneError& error) {
        const QString what = QString::fromStdString(error.what());
        if (error.path().empty()) return QStringLiteral(": ") + what;
        return what;
    }
}

// The reference reads version 1 only; this loader reads version 2 too (docs/scene-format.md), so
// a version 1 scene marked version 2 loads and the version message names both.
QString expectedMessage(const QString& name, const QString& referenceMessage) {
    if (name == QLatin1String("version-2")) return QStringLiteral("(accepted)");
    QString message = referenceMessage;
    return message.replace(QStringLiteral("(this reads version 1)"),
                           QStringLiteral("(this reads versions 1 and 2)"));
}

QJsonObject base() {
    return QJsonDocument::fromJson(R"({"format": "attention-explorer/scene", "version": 1,
        "tokens": ["a", "b", "c"], "embeddings": [[0.5, -1.0], [1.5, 0.25], [-0.5, 2.0]],
        "projections": {"mode": "separate", "query": [[1, 0], [0, 1]], "key": [[0.5, 0], [0, 0.5]],
                        "value": [[1, 2], [0, 1]]}})")
        .object();
}

bool sameScene(const ae::Scene& a, const ae::Scene& b, QString& why) {
    const auto same = [&](const auto& x, const auto& y, const char* name) {
        if (x.rows() == y.rows() && x.cols() == y.cols() && (x.size() == 0 || x == y)) return true;
        why = QString::fromLatin1(name);
        return false;
    };
    const ae::Projections &p = a.projections, &q = b.projections;
    if (a.tokens != b.tokens || a.sourceTokens != b.sourceTokens || a.hasSource != b.hasSource ||
        a.title != b.title) {
        why = "tokens, source or title";
        return false;
    }
    if (a.heads != b.heads || p.mode != q.mode || p.hasOutput != q.hasOutput ||
        a.positional.kind != b.positional.kind || a.positional.base != b.positional.base ||
        a.norm.enabled != b.norm.enabled || a.norm.eps != b.norm.eps ||
        a.scale.kind != b.scale.kind || a.scale.divisor != b.scale.divisor ||
        !(a.maskFill == b.maskFill) || a.mask.causal != b.mask.causal ||
        a.mask.window != b.mask.window || a.mask.padding != b.mask.padding ||
        a.mask.allowed.has_value() != b.mask.allowed.has_value() ||
        (a.mask.allowed && (*a.mask.allowed != *b.mask.allowed).any()) ||
        a.init.has_value() != b.init.has_value()) {
        why = "a parameter";
        return false;
    }
    return same(a.embeddings, b.embeddings, "embeddings") &&
           same(a.sourceEmbeddings, b.sourceEmbeddings, "source embeddings") &&
           same(a.positional.table, b.positional.table, "positional.table") &&
           same(a.norm.weight, b.norm.weight, "norm.weight") &&
           same(a.norm.bias, b.norm.bias, "norm.bias") && same(p.query, q.query, "query") &&
           same(p.key, q.key, "key") && same(p.value, q.value, "value") &&
           same(p.output, q.output, "output") && same(p.queryBias, q.queryBias, "bias.query") &&
           same(p.keyBias, q.keyBias, "bias.key") && same(p.valueBias, q.valueBias, "bias.value") &&
           same(p.outputBias, q.outputBias, "bias.output");
}

}  // namespace

class TestSceneErrors : public QObject {
    Q_OBJECT

private slots:
    void corpusIsComplete() {
        const QJsonArray cases = aetest::readJson(aetest::dataPath("errors/cases.json")).array();
        QVERIFY2(cases.size() >= 234, qPrintable(QString::number(cases.size())));
    }

    void referenceMessage_data() {
        QTest::addColumn<QByteArray>("scene");
        QTest::addColumn<QString>("error");
        const QJsonArray cases = aetest::readJson(aetest::dataPath("errors/cases.json")).array();
        for (const QJsonValue& c : cases) {
            const QJsonObject o = c.toObject();
            QTest::newRow(qPrintable(o["name"].toString()))
                << compact(o["scene"])
                << expectedMessage(o["name"].toString(), o["error"].toString());
        }
    }
    void referenceMessage() {
        QFETCH(QByteArray, scene);
        QFETCH(QString, error);
        QCOMPARE(referenceStyleMessage(scene), error);
    }

    // Overflow is found by the computation, never by the loader: the scene itself is valid.
    void overflowComesFromCompute() {
        const QJsonArray cases = aetest::readJson(aetest::dataPath("errors/cases.json")).array();
        int overflows = 0;
        for (const QJsonValue& c : cases) {
            if (!c["error"].toString().startsWith("scores: overflow")) continue;
            ++overflows;
            ae::Scene scene;
            try {
                scene = ae::io::parseScene(compact(c["scene"]));
            } catch (const ae::SceneError& e) {
                QFAIL(qPrintable(c["name"].toString() + ": refused by the loader: " + e.what()));
            }
            ae::AttentionEngine<double> engine(scene);
            QVERIFY_THROWS_EXCEPTION(ae::SceneError, engine.compute());
        }
        QVERIFY(overflows >= 8);
    }

    // The file-level form: the top level that is not an object has an empty path.
    void topLevelNotAnObject() {
        try {
            ae::io::parseScene("[1, 2]");
            QFAIL("accepted");
        } catch (const ae::SceneError& e) {
            QCOMPARE(QString::fromStdString(e.path()), QString());
            QCOMPARE(QString::fromStdString(e.problem()), QStringLiteral("expected an object"));
        }
        QVERIFY_THROWS_EXCEPTION(ae::SceneError, ae::io::parseScene("{\"format\": "));
    }

    // Several unknown fields: the reference names the first in document order. QJsonObject
    // sorts its keys, so the loader must look at the raw text to agree.
    void firstUnknownFieldInDocumentOrder_data() {
        QTest::addColumn<QByteArray>("scene");
        QTest::addColumn<QString>("error");
        const QByteArray rest =
            R"("tokens": ["a"], "embeddings": [[1]], "projections": {"mode": "identity"})";
        QTest::newRow("zeta before alpha")
            << QByteArray(
                   R"({"zeta": 1, "alpha": 2, "format": "attention-explorer/scene", "version": 1, )" +
                   rest + "}")
            << "zeta: unknown field";
        QTest::newRow("alpha before zeta")
            << QByteArray(
                   R"({"alpha": 1, "zeta": 2, "format": "attention-explorer/scene", "version": 1, )" +
                   rest + "}")
            << "alpha: unknown field";
        QTest::newRow("nested, z before b")
            << QByteArray(
                   R"({"format": "attention-explorer/scene", "version": 1, "tokens": ["a"], "embeddings": [[1]], "projections": {"mode": "identity", "z": 1, "b": 2}})")
            << "projections.z: unknown field";
        QTest::newRow("escaped key")
            << QByteArray(
                   "{\"z\\u0061\": 1, \"b\\\"\": 2, \"format\": \"attention-explorer/scene\", "
                   "\"version\": 1, " +
                   rest + "}")
            << "za: unknown field";
        QTest::newRow("view is free-form")
            << QByteArray(
                   R"({"format": "attention-explorer/scene", "version": 1, "view": {"zz": {"q": 1}}, "tokens": ["a"], "embeddings": [[1]], "projections": {"mode": "identity", "z": 1, "b": 2}})")
            << "projections.z: unknown field";
    }
    void firstUnknownFieldInDocumentOrder() {
        QFETCH(QByteArray, scene);
        QFETCH(QString, error);
        QCOMPARE(referenceStyleMessage(scene), error);
    }

    // Integers beyond int and beyond 64 bits: checked as the values they are, never wrapped.
    // The messages are the reference's for the same scenes.
    void largeIntegers_data() {
        QTest::addColumn<QByteArray>("init");
        QTest::addColumn<QByteArray>("extra");
        QTest::addColumn<QString>("error");
        QTest::newRow("d_model 2^32+1")
            << QByteArray(R"({"seed": 1, "d_model": 4294967297})") << QByteArray()
            << "init.d_model: too large: 2x4294967297 would need 64.0 GiB";
        QTest::newRow("d_model 3e9")
            << QByteArray(R"({"seed": 1, "d_model": 3000000000})") << QByteArray()
            << "init.d_model: too large: 2x3000000000 would need 44.7 GiB";
        QTest::newRow("d_model 1e19")
            << QByteArray(R"({"seed": 1, "d_model": 1e19})") << QByteArray()
            << "init.d_model: too large: 2x10000000000000000000 would need "
               "149011611938.5 GiB";
        QTest::newRow("d_model at the limit")
            << QByteArray(R"({"seed": 1, "d_model": 268435456})") << QByteArray()
            << "init.d_model: too large: 2x268435456 would need 4.0 GiB";
        QTest::newRow("d_proj 2^32+2")
            << QByteArray(R"({"seed": 1, "d_model": 2, "d_proj": 4294967298})") << QByteArray()
            << "init.d_proj: too large: 2x4294967298 would need 64.0 GiB";
        QTest::newRow("d_proj 2^63-1")
            << QByteArray(R"({"seed": 1, "d_model": 2, "d_proj": 9223372036854775807})")
            << QByteArray()
            << "init.d_proj: too large: 2x9223372036854775807 would need 137438953472.0 GiB";
        QTest::newRow("heads 2^32+1")
            << QByteArray(R"({"seed": 1, "d_model": 2})") << QByteArray(R"(, "heads": 4294967297)")
            << "heads: 4294967297 does not divide the projection width 2";
        QTest::newRow("heads 1e19")
            << QByteArray(R"({"seed": 1, "d_model": 2})") << QByteArray(R"(, "heads": 1e19)")
            << "heads: 10000000000000000000 does not divide the projection width 2";
        QTest::newRow("seed 2^63") << QByteArray(R"({"seed": 9223372036854775808, "d_model": 2})")
                                   << QByteArray() << "(accepted)";
        QTest::newRow("seed 1e20")
            << QByteArray(R"({"seed": 1e20, "d_model": 2})") << QByteArray() << "(accepted)";
        QTest::newRow("integers over 64 bits")
            << QByteArray(
                   R"({"seed": 1, "d_model": 2, "distribution": "integers", "low": -9223372036854775808, "high": 9223372036854775807})")
            << QByteArray() << "(accepted)";
        QTest::newRow("window 1e30") << QByteArray(R"({"seed": 1, "d_model": 2})")
                                     << QByteArray(R"(, "mask": {"window": 1e30})") << "(accepted)";
    }
    void largeIntegers() {
        QFETCH(QByteArray, init);
        QFETCH(QByteArray, extra);
        QFETCH(QString, error);
        const QByteArray scene =
            R"({"format": "attention-explorer/scene", "version": 1, "tokens": ["a", "b"], "init": )" +
            init + extra + "}";
        QCOMPARE(referenceStyleMessage(scene), error);
    }

    // Seeds are taken modulo 2^64, as the reference does: 1e20 draws as 1e20 mod 2^64.
    void seedModulo64() {
        const ae::Scene s = ae::io::parseScene(
            R"({"format": "attention-explorer/scene", "version": 1, "tokens": ["a", "b"], "init": {"seed": 1e20, "d_model": 3}})");
        QCOMPARE(s.init->seed, std::uint64_t{7766279631452241920ULL});  // 10^20 mod 2^64
        ae::SplitMix64 rng(7766279631452241920ULL);
        const ae::MatrixD want = ae::drawMatrix(rng, *s.init, 2, 3);
        QVERIFY(s.embeddings == want);
    }

    // Numbers JSON text can hold but a double cannot (NaN, Infinity, 1e400, 1e-400), which the
    // reference's reader takes as floats. Messages from the reference for these very texts.
    void nonFiniteNumbers_data() {
        QTest::addColumn<QByteArray>("scene");
        QTest::addColumn<QString>("error");
        struct Case {
            const char* name;
            const char* scene;
            const char* error;
        };
        static const Case cases[] = {
            {"embedding NaN",
             R"({"format": "attention-explorer/scene", "version": 1, "tokens": ["a"], "embeddings": [[NaN, 1]], "projections": {"mode": "identity"}})",
             "embeddings[0][0]: expected a finite number"},
            {"embedding 1e400",
             R"({"format": "attention-explorer/scene", "version": 1, "tokens": ["a"], "embeddings": [[1, 1e400]], "projections": {"mode": "identity"}})",
             "embeddings[0][1]: expected a finite number"},
            {"embedding -Infinity",
             R"({"format": "attention-explorer/scene", "version": 1, "tokens": ["a"], "embeddings": [[1, -Infinity]], "projections": {"mode": "identity"}})",
             "embeddings[0][1]: expected a finite number"},
            {"embedding 1e-400 is 0",
             R"({"format": "attention-explorer/scene", "version": 1, "tokens": ["a"], "embeddings": [[1e-400, -2.5E-330]], "projections": {"mode": "identity"}})",
             "(accepted)"},
            {"underflow 0.000001e-320",
             R"({"format": "attention-explorer/scene", "version": 1, "tokens": ["a"], "embeddings": [[0.000001e-320, 1]], "projections": {"mode": "identity"}})",
             "(accepted)"},
            {"overflow 123.4e306",
             R"({"format": "attention-explorer/scene", "version": 1, "tokens": ["a"], "embeddings": [[123.4e306, 1]], "projections": {"mode": "identity"}})",
             "scores: overflow (values too large to represent)"},
            {"mask_fill -Infinity",
             R"({"format": "attention-explorer/scene", "version": 1, "tokens": ["a"], "embeddings": [[1, 1]], "projections": {"mode": "identity"}, "mask_fill": -Infinity})",
             "mask_fill: expected a finite number"},
            {"mask_fill -1e400",
             R"({"format": "attention-explorer/scene", "version": 1, "tokens": ["a"], "embeddings": [[1, 1]], "projections": {"mode": "identity"}, "mask_fill": -1e400})",
             "mask_fill: expected a finite number"},
            {"heads NaN",
             R"({"format": "attention-explorer/scene", "version": 1, "tokens": ["a"], "embeddings": [[1, 1]], "projections": {"mode": "identity"}, "heads": NaN})",
             "heads: expected an integer"},
            {"version Infinity",
             R"({"format": "attention-explorer/scene", "version": Infinity, "tokens": ["a"]})",
             "version: unsupported version (this reads versions 1 and 2)"},
            {"title NaN",
             R"({"format": "attention-explorer/scene", "version": 1, "title": NaN, "tokens": ["a"]})",
             "title: expected a string"},
            {"view NaN",
             R"({"format": "attention-explorer/scene", "version": 1, "view": NaN, "tokens": ["a"]})",
             "view: expected an object"},
            {"view holding NaN",
             R"({"format": "attention-explorer/scene", "version": 1, "view": {"zoom": NaN}, "tokens": ["a"], "embeddings": [[1, 1]], "projections": {"mode": "identity"}})",
             "(accepted)"},
            {"token NaN",
             R"({"format": "attention-explorer/scene", "version": 1, "tokens": ["a", NaN]})",
             "tokens: expected a non-empty list of strings"},
            {"source Infinity",
             R"({"format": "attention-explorer/scene", "version": 1, "tokens": ["a"], "embeddings": [[1, 1]], "projections": {"mode": "identity"}, "source": Infinity})",
             "source: expected an object"},
            {"mask NaN",
             R"({"format": "attention-explorer/scene", "version": 1, "tokens": ["a"], "embeddings": [[1, 1]], "projections": {"mode": "identity"}, "mask": NaN})",
             "mask: expected an object"},
            {"allowed NaN",
             R"({"format": "attention-explorer/scene", "version": 1, "tokens": ["a"], "embeddings": [[1, 1]], "projections": {"mode": "identity"}, "mask": {"allowed": [[NaN]]}})",
             "mask.allowed[0][0]: expected 0 or 1"},
            {"padding NaN",
             R"({"format": "attention-explorer/scene", "version": 1, "tokens": ["a"], "embeddings": [[1, 1]], "projections": {"mode": "identity"}, "mask": {"padding": [NaN]}})",
             "mask.padding[0]: expected true or false"},
            {"seed 1e400",
             R"({"format": "attention-explorer/scene", "version": 1, "tokens": ["a"], "init": {"seed": 1e400, "d_model": 2}})",
             "init.seed: expected an integer"},
            {"divisor NaN",
             R"({"format": "attention-explorer/scene", "version": 1, "tokens": ["a"], "embeddings": [[1, 1]], "projections": {"mode": "identity"}, "scale": {"kind": "divisor", "divisor": NaN}})",
             "scale.divisor: expected a finite number"},
            {"string NaN stays a string",
             R"({"format": "attention-explorer/scene", "version": 1, "title": "NaN 1e400 -Infinity", "tokens": ["NaN"], "embeddings": [[1, 1]], "projections": {"mode": "identity"}})",
             "(accepted)"},
            {"top-level NaN", R"(NaN)", ": expected an object"},
        };
        for (const Case& c : cases)
            QTest::newRow(c.name) << QByteArray(c.scene) << QString(c.error);
    }
    void nonFiniteNumbers() {
        QFETCH(QByteArray, scene);
        QFETCH(QString, error);
        QCOMPARE(referenceStyleMessage(scene), error);
    }

    // Underflow reads as zero; text that is not JSON stays an error, reported as Qt first saw it.
    void numbersBeyondDouble() {
        const ae::Scene s = ae::io::parseScene(
            R"({"format": "attention-explorer/scene", "version": 1, "tokens": ["a"], "embeddings": [[1e-400, -2.5E-330, 4.9e-324]], "projections": {"mode": "identity"}})");
        QCOMPARE(s.embeddings(0, 0), 0.0);
        QCOMPARE(s.embeddings(0, 1), 0.0);
        QCOMPARE(s.embeddings(0, 2), 4.9e-324);
        QCOMPARE(referenceStyleMessage(R"({"format": NaN, "version": 1e400, "x": [Nan]})"),
                 QStringLiteral(": invalid JSON at byte 11: illegal number"));
    }

    // Valid edge cases the reference accepts.
    void validEdgeCases_data() {
        QTest::addColumn<QByteArray>("scene");
        const auto with = [](const char* key, const QJsonValue& value) {
            QJsonObject o = base();
            o[QLatin1String(key)] = value;
            return QJsonDocument(o).toJson(QJsonDocument::Compact);
        };
        QTest::newRow("version 1.0") << with("version", 1.0);
        QTest::newRow("heads 2.0") << with("heads", 2.0);
        QTest::newRow("source null") << with("source", QJsonValue::Null);
        QTest::newRow("positional null") << with("positional", QJsonValue::Null);
        QTest::newRow("norm null") << with("norm", QJsonValue::Null);
        QTest::newRow("allowed 1.0 and 0.0") << with(
            "mask",
            QJsonObject{{"allowed", QJsonArray{QJsonArray{1.0, 0.0, 0.0}, QJsonArray{1.0, 1.0, 0.0},
                                               QJsonArray{1.0, 1.0, 1.0}}}});
        QTest::newRow("window 3.0") << with("mask", QJsonObject{{"window", 3.0}});
        QTest::newRow("mask_fill number") << with("mask_fill", -1e9);
        QTest::newRow("integer seed 3.0") << QByteArray(
            R"({"format": "attention-explorer/scene", "version": 1.0, "tokens": ["a", "b"],
                 "init": {"seed": 3.0, "d_model": 2.0, "distribution": "integers", "low": 0.0, "high": 3.0}})");
    }
    void validEdgeCases() {
        QFETCH(QByteArray, scene);
        QCOMPARE(referenceStyleMessage(scene), QStringLiteral("(accepted)"));
    }

    void nullMeansAbsent() {
        QJsonObject o = base();
        const ae::Scene plain = ae::io::parseScene(QJsonDocument(o).toJson());
        o["source"] = QJsonValue::Null;
        o["positional"] = QJsonValue::Null;
        o["norm"] = QJsonValue::Null;
        const ae::Scene nulls = ae::io::parseScene(QJsonDocument(o).toJson());
        QString why;
        QVERIFY2(sameScene(nulls, plain, why), qPrintable(why));
        QVERIFY(!nulls.hasSource);
        QVERIFY(!nulls.norm.enabled);
        QCOMPARE(nulls.positional.kind, ae::PositionalKind::None);
    }

    void integersAreKept() {
        QJsonObject o = base();
        o["heads"] = 2.0;
        o["mask"] = QJsonObject{{"window", 1.0}};
        const ae::Scene s = ae::io::parseScene(QJsonDocument(o).toJson());
        QCOMPARE(s.heads, 2);
        QCOMPARE(s.mask.window.value_or(-1), 1);
    }

    // sceneToJson then parseScene gives back the same scene, every matrix bit for bit.
    void roundTrip_data() {
        QTest::addColumn<QString>("name");
        for (const QString& name : aetest::goldenNames())
            QTest::newRow(qPrintable(name)) << name;
    }
    void roundTrip() {
        QFETCH(QString, name);
        const ae::Scene scene = ae::io::loadSceneFile(aetest::dataPath(name + ".scene.json"));
        const QByteArray written = ae::io::sceneToJson(scene);
        ae::Scene back;
        try {
            back = ae::io::parseScene(written);
        } catch (const ae::SceneError& e) {
            QFAIL(qPrintable(QStringLiteral("written scene refused: ") + e.what()));
        }
        QString why;
        QVERIFY2(sameScene(back, scene, why), qPrintable(name + ": differs in " + why));
        // And a second round gives the same text.
        QCOMPARE(ae::io::sceneToJson(back), written);
    }

    // Scenes mixing drawn and explicit matrices, which the golden set does not cover.
    void roundTripMixed_data() {
        QTest::addColumn<QByteArray>("scene");
        QTest::newRow("drawn embeddings, explicit source") << QByteArray(
            R"({"format": "attention-explorer/scene", "version": 1, "tokens": ["a", "b"],
                "source": {"tokens": ["x", "y", "z"], "embeddings": [[1, 2], [3, 4], [5, 6]]},
                "init": {"seed": 5, "d_model": 2, "output": true, "bias": true}, "heads": 2})");
        QTest::newRow("explicit embeddings and source, drawn projections") << QByteArray(
            R"({"format": "attention-explorer/scene", "version": 1, "tokens": ["a", "b"],
                "embeddings": [[1, 0], [0, 1]],
                "source": {"tokens": ["x"], "embeddings": [[0.5, 0.5]]},
                "init": {"seed": 6, "distribution": "uniform", "low": -2, "high": 2, "d_proj": 4, "mode": "shared_qk"}})");
        QTest::newRow("drawn source") << QByteArray(
            R"({"format": "attention-explorer/scene", "version": 1, "tokens": ["a", "b"],
                "source": {"tokens": ["x", "y", "z"]},
                "init": {"seed": 7, "d_model": 4, "distribution": "integers", "low": -3, "high": 5},
                "positional": {"kind": "learned", "table": [[1, 2, 3, 4], [5, 6, 7, 8], [0, 0, 0, 1]]},
                "norm": {"kind": "layernorm", "eps": 0.001}, "mask": {"padding": [false, true, false]},
                "mask_fill": -100, "scale": {"kind": "divisor", "divisor": 3}, "view": {"zoom": 2}})");
    }
    void roundTripMixed() {
        QFETCH(QByteArray, scene);
        const ae::Scene original = ae::io::parseScene(scene);
        ae::Scene back;
        try {
            back = ae::io::parseScene(ae::io::sceneToJson(original));
        } catch (const ae::SceneError& e) {
            QFAIL(qPrintable(QStringLiteral("written scene refused: ") + e.what()));
        }
        QString why;
        QVERIFY2(sameScene(back, original, why), qPrintable("differs in " + why));
        QCOMPARE(back.viewJson, original.viewJson);
    }

    void roundTripComparisonCanFail() {
        const ae::Scene a = ae::io::loadSceneFile(aetest::dataPath("journey.scene.json"));
        ae::Scene b = a;
        b.projections.value(1, 1) = std::nextafter(b.projections.value(1, 1), 10.0);
        QString why;
        QVERIFY(!sameScene(b, a, why));
        QCOMPARE(why, QStringLiteral("value"));
    }
};

QTEST_GUILESS_MAIN(TestSceneErrors)
#include "test_scene_errors.moc"
