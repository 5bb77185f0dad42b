// Size limits through the commands (docs/errors.md, "Size limits"): the smallest layer works
// through `export`, `render` and `train`; a layer too large for this machine is refused by
// `export`, `render`, `train`, `bench` and `import` before its memory is allocated, with the
// estimate of the memory it needs (exit status 2). The large cases are sized from this machine's
// memory, so they are refused on any machine, and every run is given an address-space limit far
// below the estimate: had it allocated the layer, it would fail with an internal error instead of
// the refusal.
#include <sys/resource.h>

#include <QFile>
#include <QImage>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

#include "core/attention_engine.h"
#include "core/training/attention_training.h"
#include "io/scene/scene_file.h"
#include "support/limit_scenes.h"
#include "support/run_binary.h"
#include "support/safetensors_writer.h"

using namespace ae;
using namespace ae::testing;
using ae::test::expectedRefusal;
using ae::test::hugeSceneJson;
using ae::test::tinyScene;

namespace {

// The command-line runs may map at most this much: far below any refused estimate, far above
// what the refusal itself needs.
constexpr rlim_t kChildAddressSpace = rlim_t(6) << 30;

// AddressSanitizer reserves terabytes of address space for its shadow memory at start, so under
// scripts/sanitize.sh (which builds this test and the binary with it) the limit would stop every
// run before main(). There the refusals are still checked by message and exit status; the
// Release suite proves they come before any allocation.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kLimitChildAddressSpace = false;
#else
constexpr bool kLimitChildAddressSpace = true;
#endif

using Run = ae::test::BinaryRun;

Run runBinary(const QStringList& arguments) {
    ae::test::BinaryRunOptions options;
    if (kLimitChildAddressSpace) {
        options.childModifier = [] {
            const rlimit limit{kChildAddressSpace, kChildAddressSpace};
            setrlimit(RLIMIT_AS, &limit);
        };
    }
    return ae::test::runBinary(arguments, options);
}

QString describe(const Run& r) {
    return QStringLiteral("exit %1, stderr <%2>").arg(r.exitCode).arg(QString::fromUtf8(r.err));
}

}  // namespace

class TestSizeLimits : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        if (physicalMemoryBytes() <= 0)
            QSKIP("this machine's memory is unknown: nothing to refuse");
    }

    void tinyLayerThroughTheCommandLine() {
        const QString scene = dir_.filePath("tiny.scene.json");
        QVERIFY(writeBytes(scene, io::sceneToJson(tinyScene())));
        for (const char* format : {"json", "npy", "csv"}) {
            const QString out = dir_.filePath(QStringLiteral("tiny-%1").arg(format) +
                                              (qstrcmp(format, "json") == 0 ? ".json" : ""));
            const Run r = runBinary({"export", scene, "--format", format, "-o", out});
            QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
            QVERIFY(QFileInfo::exists(out));
        }
        QFile result(dir_.filePath("tiny-json.json"));
        QVERIFY(result.open(QIODevice::ReadOnly));
        const QJsonObject stages = QJsonDocument::fromJson(result.readAll()).object();
        QVERIFY(!stages.isEmpty());

        const QString png = dir_.filePath("tiny.png");
        const Run render = runBinary({"render", scene, "--stage", "weights", "-o", png});
        QVERIFY2(render.exitCode == 0, qPrintable(describe(render)));
        const QImage image(png);
        QVERIFY(!image.isNull() && image.width() >= 16 && image.height() >= 16);
        if (qEnvironmentVariableIsSet("AE_LIMITS_PNG_DIR"))
            image.save(qEnvironmentVariable("AE_LIMITS_PNG_DIR") + "/tiny-render.png");

        const QString trained = dir_.filePath("tiny.trained.json");
        const Run train =
            runBinary({"train", scene, "--task", "previous-token", "--steps", "3", "-o", trained});
        QVERIFY2(train.exitCode == 0, qPrintable(describe(train)));
        QVERIFY(io::loadSceneFile(trained).embeddings.allFinite());
    }

    // ------------------------------------------------------------ refusals on the command line
    void hugeSceneRefusedByTheCommandLine() {
        int tokens = 0;
        const QString file = dir_.filePath("huge.scene.json");
        // 8: the trainer holds one set of score-sized matrices where the engine holds three, so
        // this layer needs more than twice the memory even to train.
        QVERIFY(writeBytes(file, hugeSceneJson(8.0, &tokens)));
        const Scene scene = io::loadSceneFile(file);  // the file itself is small: N x 64 drawn
        QCOMPARE(scene.queryCount(), tokens);
        QVERIFY(engineBytes(scene, sizeof(double)) > physicalMemoryBytes());

        const Run exportRun = runBinary({"export", file, "-o", dir_.filePath("huge.json")});
        QCOMPARE(exportRun.exitCode, 2);
        QCOMPARE(QString::fromUtf8(exportRun.err).trimmed(),
                 file + ": " +
                     expectedRefusal(engineBytes(scene, sizeof(double)) * 4,
                                     "the layer in double and the result file"));
        QVERIFY(!QFileInfo::exists(dir_.filePath("huge.json")));  // no partial file

        const Run render = runBinary({"render", file, "-o", dir_.filePath("huge.png")});
        QCOMPARE(render.exitCode, 2);
        QVERIFY2(
            QString::fromUtf8(render.err).startsWith(file + ": scene: too large: needs about "),
            qPrintable(describe(render)));
        QVERIFY2(render.err.contains("the window's engines and scenes, and the "
                                     "image), this machine has"),
                 qPrintable(describe(render)));

        const Run train = runBinary(
            {"train", file, "--task", "previous-token", "-o", dir_.filePath("huge.trained.json")});
        QVERIFY(trainerBytes(scene) > 2 * physicalMemoryBytes());
        QCOMPARE(train.exitCode, 2);
        QCOMPARE(QString::fromUtf8(train.err).trimmed(),
                 file + ": " + expectedRefusal(trainerBytes(scene), "training in double"));

        const Run bench = runBinary({"bench", "--sizes", QString::number(tokens), "--d", "64",
                                     "--heads", "64", "--reps", "1"});
        QCOMPARE(bench.exitCode, 2);
        QVERIFY2(QString::fromUtf8(bench.err).contains(expectedRefusal(
                     selfAttentionEngineBytes(tokens, 64, 64, 64, 64, sizeof(float)),
                     "the layer in float")),
                 qPrintable(describe(bench)));
    }

    // `import` with more rows than this machine could compute: refused before the scene's text.
    void importWithManyRowsRefused() {
        const int d = 64;
        const double memory = physicalMemoryBytes();
        const int rows = static_cast<int>(std::ceil(std::sqrt(2.0 * memory / (3.0 * d * 8))));
        const QString model = dir_.filePath("wide.safetensors");
        const MatrixD w = MatrixD::Identity(d, d) * 0.5;
        QVERIFY(writeSafetensors(model, {tensor("wte", MatrixD::Ones(2, d)), tensor("q", w),
                                         tensor("k", w), tensor("v", w)}));
        QStringList ids;
        for (int i = 0; i < rows; ++i)
            ids << QString::number(i % 2);
        const QString out = dir_.filePath("wide.scene.json");
        const Run r = runBinary({"import", model, "--layout", "linear", "--query", "q", "--key",
                                 "k", "--value", "v", "--embeddings", "wte", "--rows",
                                 ids.join(','), "--heads", QString::number(d), "-o", out});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(QString::fromUtf8(r.err).startsWith("import: " + model +
                                                     ": scene: too large: needs about "),
                 qPrintable(describe(r).left(400)));
        QVERIFY2(r.err.contains("(the layer in double), this machine has"),
                 qPrintable(describe(r).left(400)));
        QVERIFY(!QFileInfo::exists(out));
    }

private:
    QTemporaryDir dir_;
};

QTEST_MAIN(TestSizeLimits)
#include "test_size_limits.moc"
