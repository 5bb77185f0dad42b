// `attention-explorer rotary` and `--kv-heads` end to end: the rotary view's numbers for scripts
// (core/rotary_study.h) and the kv heads slider's pooling (core/key_value_heads.h) from the
// command line, each checked against the library, and bad input refused with exit status 2 and
// one line.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

#include "core/attention_engine.h"
#include "core/key_value_heads.h"
#include "core/rotary_study.h"
#include "io/scene/scene_file.h"
#include "support/run_binary.h"

using namespace ae;
using namespace ae::test;

namespace {

const QString kRotaryScene =
    QStringLiteral(AE_TEST_DATA_DIR "/scene-v2/llama-rope-scaled-layer0.scene.json");

std::vector<QJsonObject> jsonLines(const QByteArray& out) {
    std::vector<QJsonObject> objects;
    for (const QByteArray& line : out.split('\n')) {
        if (!line.isEmpty()) objects.push_back(QJsonDocument::fromJson(line).object());
    }
    return objects;
}

}  // namespace

class TestRotaryCommand : public QObject {
    Q_OBJECT
private slots:
    // The lines hold the study's numbers: its parameters, every pair's wavelength, and for each
    // start and distance the rotary and sinusoidal scores; the rotary ones are the same for both
    // starts (relative positions), the sinusoidal ones are not.
    void linesHoldTheStudysNumbers() {
        const BinaryRun run = runBinary({"rotary", kRotaryScene, "--head", "1", "--query", "3",
                                         "--key", "1", "--distances", "-4:4", "--starts", "0,50"});
        QCOMPARE(run.exitCode, 0);
        const std::vector<QJsonObject> lines = jsonLines(run.out);
        const Scene scene = io::loadSceneFile(kRotaryScene);
        const RotaryStudy study(scene, 1, 3, 1);
        const int pairs = study.pairCount();
        QCOMPARE(static_cast<int>(lines.size()), 1 + pairs + 2 * 9);
        QCOMPARE(lines[0]["scene_has_rotary"].toBool(), true);
        QCOMPARE(lines[0]["parameters"].toObject()["scaling"].toString(), QStringLiteral("llama3"));
        const std::vector<double> wavelengths = study.wavelengths();
        for (int i = 0; i < pairs; ++i)
            QCOMPARE(lines[1 + i]["wavelength"].toDouble(), wavelengths[i]);
        double sinusoidalGap = 0;
        for (int n = 0; n < 9; ++n) {
            const QJsonObject near = lines[1 + pairs + n], far = lines[1 + pairs + 9 + n];
            const TokenPositions at{near["query_position"].toInt(), near["key_position"].toInt()};
            QCOMPARE(near["distance"].toInt(), n - 4);
            QCOMPARE(near["rotary"].toDouble(), study.rotaryScore(at));
            QCOMPARE(near["sinusoidal"].toDouble(), study.sinusoidalScores({at})[0]);
            QVERIFY(std::fabs(near["rotary"].toDouble() - far["rotary"].toDouble()) < 1e-12);
            sinusoidalGap = std::max(sinusoidalGap, std::fabs(near["sinusoidal"].toDouble() -
                                                              far["sinusoidal"].toDouble()));
        }
        QVERIFY2(sinusoidalGap > 1e-3, qPrintable(QString::number(sinusoidalGap)));
    }

    // --theta and --scaling change the wavelengths as the study computes them.
    void parametersFromTheCommandLine() {
        const BinaryRun run = runBinary({"rotary", kRotaryScene, "--theta", "100", "--scaling",
                                         "none", "--distances", "0:0", "--starts", "0"});
        QCOMPARE(run.exitCode, 0);
        const std::vector<QJsonObject> lines = jsonLines(run.out);
        RotaryStudy study(io::loadSceneFile(kRotaryScene), 0, 0, 0);
        RopeParameters p = study.parameters();
        p.theta = 100;
        p.scaling = RopeScaling::None;
        study.setParameters(p);
        QCOMPARE(lines[0]["parameters"].toObject()["theta"].toDouble(), 100.0);
        QCOMPARE(lines[1 + study.pairCount() - 1]["wavelength"].toDouble(),
                 study.wavelengths().back());
    }

    // A Phi-3 layer: partial rotary (4 of 8 columns turn, 2 pairs) with longrope. Its scaling
    // is named, and its scores are the engine's at the rows' own positions.
    void partialRotaryWithLongRope() {
        const QString phi3 =
            QStringLiteral(AE_TEST_DATA_DIR "/family-layers/phi3-layer0.scene.json");
        const BinaryRun run = runBinary({"rotary", phi3, "--head", "1", "--query", "5", "--key",
                                         "2", "--distances", "3:3", "--starts", "2"});
        QCOMPARE(run.exitCode, 0);
        const std::vector<QJsonObject> lines = jsonLines(run.out);
        QCOMPARE(static_cast<int>(lines.size()), 1 + 2 + 1);
        QCOMPARE(lines[0]["parameters"].toObject()["scaling"].toString(),
                 QStringLiteral("longrope"));
        QCOMPARE(lines[0]["head_dim"].toInt(), 8);
        QCOMPARE(lines[0]["turned_dims"].toInt(), 4);
        const Scene scene = io::loadSceneFile(phi3);
        AttentionEngine<double> engine(scene);
        engine.compute();
        const double score = lines[3]["rotary"].toDouble(), expected = engine.scores(1)(5, 2);
        QVERIFY2(std::fabs(score - expected) < 1e-12 * std::max(1.0, std::fabs(expected)),
                 qPrintable(QStringLiteral("%1 vs %2").arg(score).arg(expected)));
        // longrope with the scene's own factors is accepted; a scene without them refuses it.
        QCOMPARE(
            runBinary({"rotary", phi3, "--scaling", "longrope", "--distances", "0:0"}).exitCode, 0);
        const BinaryRun refused =
            runBinary({"rotary", kRotaryScene, "--scaling", "longrope", "--distances", "0:0"});
        QCOMPARE(refused.exitCode, 2);
        QVERIFY2(refused.err.startsWith("rotary: --scaling longrope needs the scene's own per-pair "
                                        "factors"),
                 refused.err.constData());
    }

    void badInputIsRefused_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("message");
        QTest::newRow("head") << QStringList{"rotary", "--preset", "default", "--head", "9"}
                              << "rotary: --head 9: the scene has heads 0 to 3";
        QTest::newRow("distances")
            << QStringList{"rotary", "--preset", "default", "--distances", "5:1"}
            << "rotary: --distances: expected FROM:TO";
        QTest::newRow("scaling")
            << QStringList{"rotary", "--preset", "default", "--scaling", "x"}
            << "rotary: --scaling: expected none, linear, llama3 or longrope, got x";
        QTest::newRow("kv heads")
            << QStringList{"export", "--preset", "default", "--kv-heads", "3", "-o", "x.json"}
            << "preset default: --kv-heads 3: expected a divisor of the 4 heads (1, 2, 4)";
    }

    void badInputIsRefused() {
        QFETCH(QStringList, arguments);
        QFETCH(QString, message);
        const BinaryRun run = runBinary(arguments);
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(QString::fromUtf8(run.err).startsWith(message), run.err.constData());
        QCOMPARE(run.err.count('\n'), 1);
    }

    // --kv-heads: the exported layer is the slider's (setKeyValueHeads on the scene's own K and V).
    void kvHeadsPoolsAsTheSliderDoes() {
        QTemporaryDir dir;
        const QString out = dir.filePath("kv1.json");
        const BinaryRun run =
            runBinary({"export", "--preset", "default", "--kv-heads", "1", "-o", out});
        QCOMPARE(run.exitCode, 0);
        Scene pooled = io::loadPreset("default");
        setKeyValueHeads(pooled, keyValueSource(pooled), pooled.heads, 1);
        AttentionEngine<double> engine(pooled);
        engine.compute();
        QFile file(out);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QJsonArray heads =
            QJsonDocument::fromJson(file.readAll()).object()["heads"].toArray();
        QCOMPARE(heads.size(), pooled.heads);
        // Every head's K is the one pooled K, and its weights are the engine's on the pooled scene.
        for (int h = 0; h < pooled.heads; ++h) {
            const QJsonArray k = heads[h].toObject()["k"].toArray();
            const QJsonArray k0 = heads[0].toObject()["k"].toArray();
            QCOMPARE(k, k0);
            const QJsonArray weights = heads[h].toObject()["weights"].toArray();
            const auto& expected = engine.weights(h);
            for (int i = 0; i < expected.rows(); ++i) {
                for (int j = 0; j < expected.cols(); ++j)
                    QCOMPARE(weights[i].toArray()[j].toDouble(), expected(i, j));
            }
        }
        // Without the option the heads keep their own keys.
        const BinaryRun plain = runBinary({"export", "--preset", "default", "-o", out});
        QCOMPARE(plain.exitCode, 0);
        QFile again(out);
        QVERIFY(again.open(QIODevice::ReadOnly));
        const QJsonArray own = QJsonDocument::fromJson(again.readAll()).object()["heads"].toArray();
        QVERIFY(own[1].toObject()["k"].toArray() != own[0].toObject()["k"].toArray());
    }
};

QTEST_GUILESS_MAIN(TestRotaryCommand)
#include "test_rotary_command.moc"
