// Size limits (docs/errors.md, "Size limits"): the smallest layer (L = 1, d = 1, one head,
// d_proj = 1) works through the engine and the window; a layer too large for this machine is
// refused in the window before its memory is allocated, with the estimate of the memory it needs.
// The large cases are sized from this machine's memory, so they are refused on any machine. The
// same through `export`, `render`, `train`, `bench` and `import`: tests/cli/test_size_limits.
#include <QApplication>
#include <QComboBox>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSlider>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

#include "core/attention_engine.h"
#include "core/init_draw.h"
#include "core/training/attention_training.h"
#include "document/attention_document.h"
#include "io/formats/result_export.h"
#include "io/scene/scene_file.h"
#include "plot/heatmap_controller.h"
#include "plot/heatmap_grid.h"
#include "support/grid_checks.h"
#include "support/limit_scenes.h"
#include "support/safetensors_writer.h"
#include "ui/editors/controls_panel.h"
#include "ui/editors/tokens_editor.h"
#include "ui/files/file_actions.h"
#include "ui/window/document_maps.h"
#include "ui/window/main_window.h"

using namespace ae;
using namespace ae::testing;

namespace {

using ae::test::expectedRefusal;
using ae::test::hugeSceneJson;
using ae::test::tinyScene;

// The smallest layers of every kind: each has L = 1 (or Lk = 1), d = 1, d_proj = 1, one head.
std::vector<std::pair<const char*, Scene>> tinyScenes() {
    std::vector<std::pair<const char*, Scene>> scenes;
    scenes.emplace_back("separate with output", tinyScene());
    Scene identity = tinyScene();
    identity.projections = Projections{};
    identity.projections.mode = ProjectionMode::Identity;
    scenes.emplace_back("identity", identity);
    Scene shared = tinyScene();
    shared.projections.mode = ProjectionMode::SharedQK;
    shared.projections.key.resize(0, 0);
    shared.projections.keyBias.resize(0);
    scenes.emplace_back("shared_qk", shared);
    Scene cross = tinyScene();
    cross.hasSource = true;
    cross.sourceTokens = {"b"};
    cross.sourceEmbeddings = MatrixD::Constant(1, 1, -0.25);
    scenes.emplace_back("cross, Lk = 1", cross);
    Scene normed = tinyScene();
    normed.norm.enabled = true;  // one number normalises to its bias: 0
    normed.norm.weight = VectorD::Ones(1);
    normed.norm.bias = VectorD::Zero(1);
    normed.positional.kind = PositionalKind::Sinusoidal;
    normed.mask.causal = true;
    scenes.emplace_back("norm, positions, causal", normed);
    Scene learned = tinyScene();
    learned.positional.kind = PositionalKind::Learned;
    learned.positional.table = MatrixD::Constant(1, 1, 0.75);
    scenes.emplace_back("learned positions", learned);
    return scenes;
}

template <typename Scalar>
void checkTinyEngine(const Scene& scene) {
    AttentionEngine<Scalar> engine(scene);
    engine.compute();
    QCOMPARE(engine.heads(), 1);
    QCOMPARE(engine.dHead(), 1);
    QCOMPARE(engine.scores(0).rows(), 1);
    QCOMPARE(engine.scores(0).cols(), 1);
    // One key: all the attention goes to it.
    QCOMPARE(static_cast<double>(engine.weights(0)(0, 0)), 1.0);
    QVERIFY(engine.x().allFinite() && engine.query().allFinite() && engine.key().allFinite());
    QVERIFY(engine.value().allFinite() && engine.concat().allFinite());
    QVERIFY(std::isfinite(engine.divisor()) && engine.divisor() > 0);
    if (engine.hasOutput()) {
        QCOMPARE(engine.output().rows(), 1);
        QVERIFY(engine.output().allFinite());
    }
    // The estimate is exact at the smallest size too.
    QCOMPARE(engine.heldBytes(), engineBytes(scene, sizeof(Scalar)));
}

}  // namespace

Q_DECLARE_METATYPE(ae::Scene)

class TestLimits : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        if (physicalMemoryBytes() <= 0)
            QSKIP("this machine's memory is unknown: nothing to refuse");
    }

    // ------------------------------------------------------------ the smallest sizes
    void tinyLayersCompute_data() {
        QTest::addColumn<Scene>("scene");
        for (const auto& [name, scene] : tinyScenes())
            QTest::newRow(name) << scene;
    }
    void tinyLayersCompute() {
        QFETCH(Scene, scene);
        checkTinyEngine<float>(scene);
        checkTinyEngine<double>(scene);
    }

    // Every stage's 1 x 1 map draws: finite colour ranges of non-zero width, no NaN cells.
    void tinyLayerInTheWindow_data() { tinyLayersCompute_data(); }
    void tinyLayerInTheWindow() {
        QFETCH(Scene, scene);
        document::AttentionDocument document;
        plot::HeatmapGrid grid;
        ui::DocumentMaps gridFollowsDocument(&document, &grid);
        grid.resize(900, 700);
        document.resetScene(scene);
        grid.setViewMode(plot::ViewMode::AllStages);
        grid.show();
        QVERIFY(QTest::qWaitForWindowExposed(&grid));
        QCoreApplication::processEvents();
        QVERIFY(document.errorText().isEmpty());
        QVERIFY(!grid.tiles().empty());
        test::verifyMapsFinite(grid);
        if (QTest::currentTestFailed()) return;
        const QImage image = grid.grab().toImage();
        QVERIFY(!image.isNull());
        if (qEnvironmentVariableIsSet("AE_LIMITS_PNG_DIR")) {
            image.save(qEnvironmentVariable("AE_LIMITS_PNG_DIR") + "/tiny-" +
                       QString(QTest::currentDataTag()).replace(QRegularExpression("\\W+"), "-") +
                       ".png");
        }
    }

    // ------------------------------------------------------------ the estimate
    void engineBytesIsWhatTheEngineHolds_data() {
        QTest::addColumn<QString>("preset");
        for (const io::PresetInfo& p : io::presets())
            QTest::newRow(qPrintable(p.name)) << p.name;
    }
    void engineBytesIsWhatTheEngineHolds() {
        QFETCH(QString, preset);
        const Scene scene = io::loadPreset(preset);
        AttentionEngine<float> f(scene);
        f.compute();
        QCOMPARE(f.heldBytes(), engineBytes(scene, sizeof(float)));
        AttentionEngine<double> d(scene);
        d.compute();
        QCOMPARE(d.heldBytes(), engineBytes(scene, sizeof(double)));
        // The window adds the undo step's two copies of the scene.
        QCOMPARE(windowBytes(scene), 2 * engineBytes(scene, sizeof(float)) + 3 * sceneBytes(scene));
    }

    // The size-only estimate `bench` uses matches the scene it then builds.
    void selfAttentionEstimateMatchesTheScene() {
        for (const auto& [length, d, heads] : {std::tuple{5, 4, 2}, std::tuple{1, 1, 1}}) {
            InitSpec spec;
            spec.output = true;
            SplitMix64 rng(3);
            Scene scene;
            scene.tokens.assign(static_cast<size_t>(length), "t");
            scene.embeddings = drawMatrix(rng, spec, length, d);
            scene.projections = drawProjections(rng, spec, d);
            scene.heads = heads;
            for (int size : {4, 8}) {
                QCOMPARE(selfAttentionEngineBytes(length, d, d, heads, d, size),
                         engineBytes(scene, size));
            }
        }
    }

    // ------------------------------------------------------------ refusals in the window
    // A sentence of so many words that the window could not hold its layer: the editor's message
    // line says so with the estimate, and the scene and the undo history stay as they were. The
    // sentence field holds at most 32767 characters, so the layer is made wide in heads first
    // (64 heads of width 1): 3 x 64 score matrices of N x N floats.
    void longSentenceRefusedInTheEditor() {
        const int heads = 64;
        const int words = static_cast<int>(
            std::ceil(std::sqrt(2.0 * physicalMemoryBytes() / (3.0 * heads * sizeof(float)))));
        if (2 * words > 32767) QSKIP("this machine holds every sentence the field can take");
        Scene wide;
        wide.tokens = {"a", "b", "c"};
        wide.embeddings = MatrixD::Constant(3, heads, 0.5);
        wide.projections.mode = ProjectionMode::Identity;
        wide.heads = heads;
        document::AttentionDocument document;
        document.resetScene(wide);
        ui::TokensEditor editor(&document);
        const Scene before = document.scene();
        QStringList sentence;
        for (int i = 0; i < words; ++i)
            sentence << QStringLiteral("a");
        auto* field = editor.findChild<QLineEdit*>(QStringLiteral("querySentenceEdit"));
        auto* use = editor.findChild<QPushButton*>(QStringLiteral("querySentenceButton"));
        QVERIFY(field && use);
        field->setText(sentence.join(' '));
        QCOMPARE(field->text().size(), 2 * words - 1);
        use->click();
        const QString message = editor.message();
        QVERIFY2(message.startsWith(QStringLiteral("Set sentence “a a a")), qPrintable(message));
        QVERIFY2(message.size() < 400, "the refused sentence is shortened in the message");
        QVERIFY2(message.contains("” refused: scene: too large: needs about "),
                 qPrintable(message));
        QVERIFY(
            message.contains("(two float engines, shown and computing, and three copies of the "
                             "scene), this machine has " +
                             QString::fromStdString(gibibytesText(physicalMemoryBytes()))));
        QCOMPARE(document.scene().tokens, before.tokens);
        QCOMPARE(document.scene().embeddings, before.embeddings);
        QCOMPARE(document.undoStack()->count(), 0);
        QVERIFY(document.errorText().isEmpty());
        if (qEnvironmentVariableIsSet("AE_LIMITS_PNG_DIR")) {
            editor.resize(700, 600);
            editor.grab().save(qEnvironmentVariable("AE_LIMITS_PNG_DIR") + "/sentence-refused.png");
        }
    }

    // The largest head count of a wide layer: refused under the heads slider, which goes back.
    void hugeHeadCountRefusedInTheControls() {
        const int length = 1024, d = 4096;
        const double cells = double(length) * length;
        if (3.0 * d * cells * sizeof(float) <= physicalMemoryBytes())
            QSKIP("this machine could hold 4096 heads of 1024 x 1024 scores");
        Scene scene;
        scene.tokens.assign(length, "t");
        scene.embeddings = MatrixD::Zero(length, d);  // zeros: the scores are cheap to check
        scene.projections.mode = ProjectionMode::Identity;
        document::AttentionDocument document;
        document.resetScene(scene);
        ui::ControlsPanel controls(&document);
        auto* slider = controls.findChild<QSlider*>(QStringLiteral("headSlider"));
        QVERIFY(slider);
        QSignalSpy messages(&controls, &ui::ControlsPanel::messageRequested);
        slider->setValue(slider->maximum());  // 4096 heads
        QCOMPARE(document.scene().heads, 1);
        QCOMPARE(slider->value(), 0);
        QCOMPARE(document.undoStack()->count(), 0);
        const double wanted = windowBytes(scene) + 2.0 * 3.0 * (d - 1) * cells * sizeof(float);
        QCOMPARE(controls.headsMessage(),
                 QStringLiteral("4096 heads refused: ") +
                     expectedRefusal(
                         wanted,
                         "two float engines, shown and computing, and three copies of the scene"));
        QCOMPARE(messages.count(), 1);
        if (qEnvironmentVariableIsSet("AE_LIMITS_PNG_DIR")) {
            controls.resize(320, 600);
            controls.grab().save(qEnvironmentVariable("AE_LIMITS_PNG_DIR") + "/heads-refused.png");
        }
        // A head count that fits is still accepted, and clears the message.
        slider->setValue(1);
        QCOMPARE(document.scene().heads, 2);
        QVERIFY(controls.headsMessage().isEmpty());
    }

    // Embeddings imported from a file with too many rows (and their tokens): refused with the
    // estimate, and nothing changes.
    void importedEmbeddingsWithManyRowsRefused() {
        const int rows =
            static_cast<int>(std::ceil(std::sqrt(2.0 * physicalMemoryBytes() / (5.0 * 4))));
        ui::MainWindow window;
        window.document()->resetScene(io::loadPreset("four-words"));
        const Scene before = window.document()->scene();
        const QString npy = dir_.filePath("many-rows.npy");
        QVERIFY(writeBytes(npy, io::npyBytes(MatrixD::Constant(rows, before.dModel(), 0.5))));
        const QString tokens = dir_.filePath("many-rows.txt");
        QVERIFY(writeBytes(tokens, QByteArray("t\n").repeated(rows)));
        QString error;
        QVERIFY(!window.fileActions()->importEmbeddings(npy, tokens, &error));
        QVERIFY2(error.startsWith("scene: too large: needs about "), qPrintable(error));
        QCOMPARE(window.document()->scene().embeddings, before.embeddings);
        QCOMPARE(window.document()->scene().tokens, before.tokens);
        QCOMPARE(window.document()->undoStack()->count(), 0);
    }

    // Opening a scene the window could not hold: resetScene refuses, the old scene stays.
    void openingAHugeSceneRefused() {
        int tokens = 0;
        const QString file = dir_.filePath("huge-open.scene.json");
        QVERIFY(writeBytes(file, hugeSceneJson(2.0, &tokens)));
        ui::MainWindow window;
        window.document()->resetScene(io::loadPreset("four-words"));
        QString error;
        QVERIFY(!window.openSceneFile(file, &error));
        QVERIFY2(error.startsWith("scene: too large: needs about "), qPrintable(error));
        QCOMPARE(window.document()->scene().queryCount(), 4);
    }

private:
    QTemporaryDir dir_;
};

QTEST_MAIN(TestLimits)
#include "test_limits.moc"
