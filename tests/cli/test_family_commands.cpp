// The commands on every newer decoder family, through the real binary: `run --format npy` holds
// the library's own numbers, every `render --view` draws, and a layer written by `scene` exports
// with the stages its layer has (Gemma 2's capped scores) and the run's own weights; and
// `bench --model --shape` refuses a shape it does not have.

#include <QDir>
#include <QImage>
#include <QJsonArray>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

#include "core/model/model.h"
#include "io/formats/matrix_files.h"
#include "io/model/model_folder.h"
#include "support/model_checks.h"
#include "support/run_binary.h"

using namespace ae;
using ae::test::runBinary;

namespace {

const QString kIds = QStringLiteral("7,41,3,59,22,15,36");
const std::vector<long long> kIdList = {7, 41, 3, 59, 22, 15, 36};

void familyRows() {
    QTest::addColumn<QString>("model");
    for (const char* name : {"qwen2-tiny", "mistral-tiny-window", "gemma-tiny", "gemma2-tiny",
                             "gemma3-tiny", "gemma3-wrapped-tiny", "phi3-tiny", "phi3-tiny-window",
                             "pythia-tiny", "pythia-tiny-sequential", "olmo2-tiny", "smollm3-tiny"})
        QTest::newRow(name) << QString::fromLatin1(name);
}

double largestGap(const MatrixD& a, const MatrixD& b) {
    if (a.rows() != b.rows() || a.cols() != b.cols()) return INFINITY;
    return (a - b).cwiseAbs().maxCoeff();
}

}  // namespace

class TestFamilyCommands : public QObject {
    Q_OBJECT
private slots:
    void runWritesTheLibrarysNumbersAsNpy_data() { familyRows(); }
    void runWritesTheLibrarysNumbersAsNpy() {
        QFETCH(QString, model);
        const QString dir = testing::goldenModelDir(model);
        QTemporaryDir temp;
        const QString out = temp.filePath("npy");
        const auto r = runBinary({"run", dir, "--ids", kIds, "--format", "npy", "-o", out});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const io::ModelFolder folder(dir);
        const model::Config& c = folder.model().config;
        const model::ModelRun<float> run = model::runModel<float>(folder.model(), kIdList);
        const QDir files(out);
        // tokens, each layer's input and its heads' q, k, v, scores and weights, the logits.
        QCOMPARE(files.entryList({"*.npy"}, QDir::Files).size(),
                 1 + c.layers * (1 + c.heads * 5) + 1);
        for (int l = 0; l < c.layers; ++l) {
            for (int h = 0; h < c.heads; ++h) {
                const MatrixD weights = io::readMatrixFile(
                    files.filePath(QStringLiteral("layer%1_head%2_weights.npy").arg(l).arg(h)));
                const MatrixD expected = run.layers[size_t(l)].weights[size_t(h)].cast<double>();
                QVERIFY2(largestGap(weights, expected) <= 1e-6,
                         qPrintable(QStringLiteral("layer %1 head %2").arg(l).arg(h)));
            }
        }
        const MatrixD logits = io::readMatrixFile(files.filePath("logits.npy"));
        QCOMPARE(logits.rows(), Eigen::Index(7));
        QCOMPARE(logits.cols(), Eigen::Index(c.vocab));
        QVERIFY(largestGap(logits, run.logits.cast<double>()) <=
                1e-5 * std::max(1.0, double(run.logits.cwiseAbs().maxCoeff())));
    }

    void everyViewRenders_data() { familyRows(); }
    void everyViewRenders() {
        QFETCH(QString, model);
        QTemporaryDir temp;
        for (const char* view : {"model", "head", "rollout", "qk"}) {
            const QString out = temp.filePath(QStringLiteral("%1.png").arg(QLatin1String(view)));
            const auto r = runBinary({"render", testing::goldenModelDir(model), "--ids", kIds,
                                      "--view", view, "--layer", "1", "--head", "1", "-o", out});
            QVERIFY2(r.exitCode == 0, r.err.constData());
            const QImage image(out);
            QVERIFY2(image.width() > 200 && image.height() > 200, view);
            // Not blank: a drawn view has many colours.
            QSet<QRgb> colours;
            for (int y = 0; y < image.height(); y += 7)
                for (int x = 0; x < image.width(); x += 7)
                    colours.insert(image.pixel(x, y));
            QVERIFY2(colours.size() > 20, view);
        }
    }

    // Every layer's scene exports the run's weights, and exactly the stages its layer has.
    void layerSceneExportsTheRunsWeights_data() { familyRows(); }
    void layerSceneExportsTheRunsWeights() {
        QFETCH(QString, model);
        const QString dir = testing::goldenModelDir(model);
        const io::ModelFolder folder(dir);
        const model::Config& c = folder.model().config;
        const model::ModelRun<double> run = model::runModel<double>(folder.model(), kIdList);
        QTemporaryDir temp;
        for (int l = 0; l < c.layers; ++l) {
            const QString scene = temp.filePath(QStringLiteral("layer%1.scene.json").arg(l));
            const auto s = runBinary(
                {"scene", dir, "--ids", kIds, "--layer", QString::number(l), "-o", scene});
            QVERIFY2(s.exitCode == 0, s.err.constData());
            const QString out = temp.filePath(QStringLiteral("layer%1").arg(l));
            const auto e = runBinary({"export", scene, "--format", "npy", "-o", out});
            QVERIFY2(e.exitCode == 0, e.err.constData());
            const QDir files(out);
            QCOMPARE(files.exists("head0_capped.npy"), c.attentionSoftCap > 0);
            for (int h = 0; h < c.heads; ++h) {
                const MatrixD weights =
                    io::readMatrixFile(files.filePath(QStringLiteral("head%1_weights.npy").arg(h)));
                QVERIFY2(largestGap(weights, run.layers[size_t(l)].weights[size_t(h)]) <= 1e-5,
                         qPrintable(QStringLiteral("layer %1 head %2").arg(l).arg(h)));
            }
        }
    }

    // run --layers writes those layers' maps only, exactly the full run's (recomputed from
    // their residual inputs), and everything else as before; JSON lists them in map_layers.
    void runLayersWritesOnlyThoseMaps() {
        const QString dir = testing::goldenModelDir(QStringLiteral("gemma2-tiny"));
        QTemporaryDir temp;
        const QString out = temp.filePath("npy");
        const auto r =
            runBinary({"run", dir, "--ids", kIds, "--format", "npy", "--layers", "1", "-o", out});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const io::ModelFolder folder(dir);
        const model::Config& c = folder.model().config;
        const model::ModelRun<float> run = model::runModel<float>(folder.model(), kIdList);
        const QDir files(out);
        QCOMPARE(files.entryList({"*.npy"}, QDir::Files).size(),
                 1 + c.layers * (1 + c.heads * 3) + c.heads * 2 + 1);
        QVERIFY(!files.exists("layer0_head0_weights.npy"));
        for (int h = 0; h < c.heads; ++h) {
            const QString p = QStringLiteral("layer1_head%1_").arg(h);
            QCOMPARE(largestGap(io::readMatrixFile(files.filePath(p + "weights.npy")),
                                run.layers[1].weights[size_t(h)].cast<double>()),
                     0.0);
            QCOMPARE(largestGap(io::readMatrixFile(files.filePath(p + "scores.npy")),
                                run.layers[1].scores[size_t(h)].cast<double>()),
                     0.0);
        }
        const QString json = temp.filePath("run.json");
        const auto j = runBinary({"run", dir, "--ids", kIds, "--layers", "1,0", "-o", json});
        QVERIFY2(j.exitCode == 0, j.err.constData());
        const QJsonObject result = testing::readJsonFile(json);
        QCOMPARE(result.value("map_layers").toArray(), (QJsonArray{0, 1}));

        const auto outside = runBinary({"run", dir, "--ids", kIds, "--layers", "7", "-o", json});
        QCOMPARE(outside.exitCode, 2);
        QCOMPARE(QString::fromUtf8(outside.err).trimmed(),
                 QStringLiteral("run: --layers: 7 is outside the model's layers 0..%1")
                     .arg(c.layers - 1));
        const auto twice = runBinary({"run", dir, "--ids", kIds, "--layers", "1,1", "-o", json});
        QCOMPARE(twice.exitCode, 2);
        QCOMPARE(QString::fromUtf8(twice.err).trimmed(),
                 QStringLiteral("run: --layers: 1 is listed twice"));
    }

    // bench --model --shape names a shape of its table, and only with --model (no model is
    // written: the refusals come first).
    void benchShapeIsChecked() {
        const auto unknown = runBinary({"bench", "--model", "--shape", "nope"});
        QCOMPARE(unknown.exitCode, 2);
        QCOMPARE(QString::fromUtf8(unknown.err).trimmed(),
                 QStringLiteral("bench --model: --shape: expected gpt2-small, qwen2.5-0.5b, "
                                "pythia-410m, llama3-1b, llama3-8b, t5-small, bart-base, opus-mt, "
                                "got nope"));
        const auto alone = runBinary({"bench", "--shape", "pythia-410m"});
        QCOMPARE(alone.exitCode, 2);
        QCOMPARE(QString::fromUtf8(alone.err).trimmed(),
                 QStringLiteral("bench: --shape is for --model"));
    }
};

QTEST_MAIN(TestFamilyCommands)
#include "test_family_commands.moc"
