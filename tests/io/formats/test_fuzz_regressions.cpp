// Inputs that once crashed a reader or made it misbehave, found by fuzzing (fuzz/, see
// docs/fuzzing.md) or while writing the fuzz targets. Each must now be refused cleanly, with the
// message the reference gives, or read as the format defines. Crashing files live in
// tests/data/fuzz/ as the fuzzer wrote them.
#include <QFile>
#include <QtTest>

#include "io/formats/matrix_files.h"
#include "io/formats/safetensors.h"
#include "io/scene/scene_file.h"

using namespace ae;

namespace {
QByteArray fuzzInput(const QString& name) {
    QFile file(QStringLiteral(AE_TEST_DATA_DIR "/fuzz/") + name);
    if (!file.open(QIODevice::ReadOnly)) qFatal("missing fuzz input %s", qPrintable(name));
    return file.readAll();
}

// A one-line scene with `init` (and no projections): {..."tokens": TOKENS, "init": INIT, EXTRA}.
QByteArray initScene(const char* tokens, const char* init, const char* extra = "") {
    return QByteArray(R"({"format": "attention-explorer/scene", "version": 1, "tokens": )") +
           tokens + R"(, "init": )" + init + extra + "}";
}

QString refusal(const QByteArray& json) {
    try {
        io::parseScene(json);
    } catch (const SceneError& error) {
        return QString::fromUtf8(error.what());
    }
    return QStringLiteral("(accepted)");
}
}  // namespace

class FuzzRegressionsTest : public QObject {
    Q_OBJECT
private slots:
    // init.d_model went through static_cast<int> before its size check: 2684354579 wrapped to a
    // negative width and Eigen aborted on the allocation (found by fuzz_scene), and 2^32 + 2
    // wrapped to 2 and was silently accepted.
    void refusesDModelBeyondInt_data() {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("message");
        QTest::newRow("fuzzer crash")
            << fuzzInput("scene-d-model-wraps-negative.json")
            << "init.d_model: too large: 6x2684354579 would need 120.0 GiB";
        QTest::newRow("wraps to 2")
            << initScene(R"(["a"])", R"({"seed": 1, "d_model": 4294967298})")
            << "init.d_model: too large: 1x4294967298 would need 32.0 GiB";
        QTest::newRow("d_proj wraps")
            << initScene(R"(["a", "b"])", R"({"seed": 1, "d_model": 2, "d_proj": 4294967297})")
            << "init.d_proj: too large: 2x4294967297 would need 64.0 GiB";
        // rows x cols no longer overflows long long either (it was multiplied before the check).
        QTest::newRow("product overflows")
            << initScene(R"(["a", "b", "c"])", R"({"seed": 1, "d_model": 4611686018427387904})")
            << "init.d_model: too large: 3x4611686018427387904 would need 103079215104.0 GiB";
    }
    void refusesDModelBeyondInt() {
        QFETCH(QByteArray, json);
        QFETCH(QString, message);
        QCOMPARE(refusal(json), message);
    }

    // Integers beyond long long were converted with static_cast<long long>: undefined behaviour
    // (UBSan: "1e+300 is outside the range of representable values").
    void refusesHugeHeadCount() {
        QCOMPARE(
            refusal(initScene(R"(["a"])", R"({"seed": 1, "d_model": 2})", R"(, "heads": 1e19)")),
            QStringLiteral("heads: 10000000000000000000 does not divide the projection width 2"));
        QCOMPARE(refusal(initScene(R"(["a"])", R"({"seed": 1, "d_model": 2})", R"(, "heads": 3)")),
                 QStringLiteral("heads: 3 does not divide the projection width 2"));
    }
    void clampsHugeWindow() {
        const Scene s = io::parseScene(initScene(R"(["a", "b"])", R"({"seed": 1, "d_model": 2})",
                                                 R"(, "mask": {"window": 1e300})"));
        QVERIFY(s.mask.window && *s.mask.window == (1 << 30));
    }
    // docs/scene-format.md: the seed is taken modulo 2^64. 1e20 mod 2^64 = 7766279631452241920.
    void takesHugeSeedModulo64Bits() {
        const Scene huge =
            io::parseScene(initScene(R"(["a", "b"])", R"({"seed": 1e20, "d_model": 3})"));
        const Scene reduced = io::parseScene(
            initScene(R"(["a", "b"])", R"({"seed": 7766279631452241920, "d_model": 3})"));
        QCOMPARE(huge.init->seed, std::uint64_t{7766279631452241920ULL});
        QVERIFY(huge.embeddings == reduced.embeddings);
        QVERIFY(huge.projections.query == reduced.projections.query);
        QCOMPARE(refusal(initScene(R"(["a"])", R"({"seed": -1e300, "d_model": 2})")),
                 QStringLiteral("init.seed: must be at least 0"));
    }

    // A seed of 2^63 or more (1844674407002028396398 mod 2^64 here) was saved as a negative
    // qint64, so the saved scene did not reopen ("init.seed: must be at least 0"; found by
    // fuzz_scene, which reopens every scene it saves).
    void savedHugeSeedReopens() {
        const Scene read = io::parseScene(fuzzInput("scene-seed-above-2-63.json"));
        QVERIFY(read.init->seed >= (1ULL << 63));
        const Scene reopened = io::parseScene(io::sceneToJson(read));
        QCOMPARE(reopened.init->seed, read.init->seed);
        QVERIFY(reopened.embeddings == read.embeddings);
        QVERIFY(reopened.projections.output == read.projections.output);
    }
    // A seed no JSON number holds exactly (only code can make one) is saved as its matrices.
    void unwritableSeedSavesMatrices() {
        Scene s = io::parseScene(initScene(R"(["a", "b"])", R"({"seed": 5, "d_model": 3})"));
        s.init->seed = (1ULL << 63) + 1;
        const QByteArray saved = io::sceneToJson(s);
        QVERIFY(!saved.contains("\"init\""));
        const Scene reopened = io::parseScene(saved);
        QVERIFY(reopened.embeddings == s.embeddings);
        QVERIFY(reopened.projections.value == s.projections.value);
    }

    // A number whose exponent is beyond long (49e3066…6) made strtol clamp it to LONG_MAX, and
    // LONG_MAX + 1 (the first digit's position) overflowed (UBSan, found by fuzz_scene): in a
    // release build it wrapped negative and the huge number was read as an underflow, 0.
    void exponentBeyondLongIsOverflowNotZero() {
        const QString crash = refusal(fuzzInput("scene-exponent-beyond-long.json"));
        QVERIFY2(crash != "(accepted)", qPrintable(crash));
        const auto scene = [](const char* number) {
            return QByteArray(R"({"format": "attention-explorer/scene", "version": 1,
                "tokens": ["a"], "embeddings": [[)") +
                   number + R"(, 1]], "projections": {"mode": "identity"}})";
        };
        const QString huge = refusal(scene("1e400"));
        QVERIFY(huge != "(accepted)");
        QCOMPARE(refusal(scene("49e99999999999999999999999")), huge);
        QCOMPARE(refusal(scene("-49e99999999999999999999999")), refusal(scene("-1e400")));
        // The other way, an exponent below LONG_MIN is an underflow: read as 0.
        const Scene tiny = io::parseScene(scene("49e-99999999999999999999999"));
        QCOMPARE(tiny.embeddings(0, 0), 0.0);
    }

    // The element count of a .safetensors shape was multiplied before it was compared with the
    // data's size: a first dimension that fits (1025 <= 1100 bytes of data) times 9e15 passes
    // 2^63, undefined behaviour (UBSan: "signed integer overflow"), and the wrapped count could
    // slip past the check. Found while writing fuzz_safetensors; the file is its seed.
    void safetensorsShapeProductRefused() {
        const QString file = QStringLiteral(
            AE_TEST_DATA_DIR "/fuzz/safetensors-shape-product-overflows.safetensors");
        try {
            io::SafetensorsFile f(file);
            QFAIL("accepted");
        } catch (const io::MatrixFileError& error) {
            QCOMPARE(QString::fromUtf8(error.what()),
                     file +
                         ": tensor a: shape [1025, 9000000000000000] needs more bytes than "
                         "the file's 1100 of data");
        }
    }
};

QTEST_GUILESS_MAIN(FuzzRegressionsTest)
#include "test_fuzz_regressions.moc"
