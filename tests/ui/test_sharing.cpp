// Saving and sharing in process: rendered images, scene files with their view, atomic saves,
// imports, matrix and batch exports, and every refusal path. The same through the real binary is
// in tests/cli (test_render_command, test_export_command).

#include <sys/resource.h>

#include <QApplication>
#include <QBuffer>
#include <QDir>
#include <QDropEvent>
#include <QImageReader>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMimeData>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>
#include <csignal>
#include <memory>

#include "document/attention_document.h"
#include "io/formats/result_export.h"
#include "io/scene/scene_file.h"
#include "plot/color_maps.h"
#include "plot/heatmap_controller.h"
#include "plot/heatmap_grid.h"
#include "plot/image_export.h"
#include "support/file_bytes.h"
#include "support/render_reference.h"
#include "ui/files/batch_export.h"
#include "ui/files/export_dialog.h"
#include "ui/files/file_actions.h"
#include "ui/window/document_maps.h"
#include "ui/window/main_window.h"

using namespace ae;
using namespace ae::ui;
using namespace ae::document;
using namespace ae::plot;

namespace {

using ae::test::readAll;
using ae::test::writeAll;

}  // namespace

class TestSharing : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void init();
    void cleanup();
    void renderInProcessHasSizeAndCellColours();
    void saveThenOpenGivesTheSameSceneAndView();
    void titleShowsFileAndModifiedMark();
    void failedSaveKeepsTheOldFile();
    void badSceneLeavesTheCurrentSceneUntouched();
    void unreadableSceneFileIsRefused();
    void droppedJsonOpens();
    void recentFilesRemembered();
    void importWeightShapeMismatchRefused();
    void importEmbeddingsWithTokensIsOneUndoStep();
    void importUnreadableMatrixRefused();
    void latexOfTheCurrentMap();
    void everyHeadOneFileEach();
    void sweepWritesNumberedPngsAndAGif();
    void exportDialogShowsTheWritersError();

private:
    MainWindow* window() const { return window_.get(); }
    std::unique_ptr<MainWindow> window_;
    QTemporaryDir dir_;
};

void TestSharing::initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QApplication::setFont(QFont(QStringLiteral("DejaVu Sans"), 9));
    QVERIFY(dir_.isValid());
}

void TestSharing::init() {
    QSettings().clear();
    window_ = std::make_unique<MainWindow>();
    window_->resize(1200, 800);
    window_->openPreset(QStringLiteral("default"));
}

void TestSharing::cleanup() {
    // Nothing to ask about on close.
    window_->document()->markSaved();
    window_.reset();
}

void TestSharing::renderInProcessHasSizeAndCellColours() {
    RenderRequest request;
    request.head = 2;
    request.image.size = QSize(500, 400);
    const QByteArray png =
        renderScene(io::loadPreset(QStringLiteral("default")), request, ImageFormat::Png);
    const QImage image = QImage::fromData(png, "PNG");
    QCOMPARE(image.size(), QSize(500, 400));
    test::RenderReference reference;
    reference.checkCells(image, 1.0);

    request.image.scale = 2.0;
    const QImage doubled = QImage::fromData(
        renderScene(io::loadPreset(QStringLiteral("default")), request, ImageFormat::Png), "PNG");
    QCOMPARE(doubled.size(), QSize(1000, 800));
    reference.checkCells(doubled, 2.0);
}

void TestSharing::saveThenOpenGivesTheSameSceneAndView() {
    AttentionDocument* document = window()->document();
    document->setHeads(2);
    window()->show();
    QVERIFY(QTest::qWaitForWindowExposed(window()));
    QJsonObject view;
    view["mode"] = "all_stages";
    view["stage"] = "scores";
    view["head"] = 1;
    view["query"] = 3;
    view["colour_map"] = "magma";
    view["shared_range"] = true;
    view["values"] = false;
    view["value_weighted"] = true;
    view["panels"] =
        QJsonObject{{"controls", true}, {"tokens", false}, {"weights", true}, {"toolbar", false}};
    window()->applyViewState(view);
    QCOMPARE(window()->viewState(), view);
    const QString file = dir_.filePath(QStringLiteral("lesson.json"));
    QString error;
    QVERIFY2(window()->fileActions()->saveTo(file, &error), qPrintable(error));
    QVERIFY(!document->isModified());
    const QByteArray saved = readAll(file);

    MainWindow other;
    other.show();
    QVERIFY(QTest::qWaitForWindowExposed(&other));
    QVERIFY(other.openSceneFile(file, &error));
    QCOMPARE(io::sceneToJson(other.document()->scene()), saved);
    QCOMPARE(io::sceneToJson(other.fileActions()->sceneForSaving()), saved);
    QCOMPARE(other.viewState(), view);
    QCOMPARE(other.grid()->view().weightsMap, ColorMap::Magma);
    QCOMPARE(other.grid()->selectedRow(), 3);
    QVERIFY(other.grid()->view().valueWeighted);
    QCOMPARE(other.document()->scene().heads, 2);
}

void TestSharing::titleShowsFileAndModifiedMark() {
    const QString file = dir_.filePath(QStringLiteral("title.json"));
    QVERIFY(window()->fileActions()->saveTo(file));
    QVERIFY(window()->windowTitle().startsWith(QStringLiteral("title.json[*]")));
    QVERIFY(!window()->isWindowModified());
    window()->document()->setHeads(1);
    QVERIFY(window()->isWindowModified());
    window()->document()->undoStack()->undo();
    QVERIFY(!window()->isWindowModified());
}

void TestSharing::failedSaveKeepsTheOldFile() {
    const QString file = dir_.filePath(QStringLiteral("kept.json"));
    writeAll(file, "old contents");
    window()->document()->setHeads(2);
    // Root ignores permissions, so the failure comes from a file size limit: the write into the
    // temporary file fails part-way, as on a full disk.
    std::signal(SIGXFSZ, SIG_IGN);
    rlimit old{};
    getrlimit(RLIMIT_FSIZE, &old);
    rlimit small = old;
    small.rlim_cur = 64;
    QCOMPARE(setrlimit(RLIMIT_FSIZE, &small), 0);
    QString error;
    const bool saved = window()->fileActions()->saveTo(file, &error);
    setrlimit(RLIMIT_FSIZE, &old);
    QVERIFY(!saved);
    QVERIFY2(error.startsWith(file + QStringLiteral(": cannot write: ")), qPrintable(error));
    QCOMPARE(readAll(file), QByteArray("old contents"));
    QVERIFY(window()->document()->isModified());  // still unsaved
    QVERIFY(window()->document()->fileName() != file);
    // Nothing else left in the folder but the old file.
    QCOMPARE(QDir(dir_.path()).entryList({"kept.json*"}, QDir::Files), QStringList{"kept.json"});
}

void TestSharing::badSceneLeavesTheCurrentSceneUntouched() {
    window()->openPreset(QStringLiteral("journey"));
    window()->document()->setHeads(1);
    const QByteArray before = io::sceneToJson(window()->document()->scene());
    const int undoSteps = window()->document()->undoStack()->count();
    window()->document()->markSaved();  // no save prompt in a test
    const QString bad = dir_.filePath(QStringLiteral("wide.json"));
    writeAll(bad, R"({"format": "attention-explorer/scene", "version": 1, "tokens": ["a", "b"],
                      "init": {"seed": 1, "d_model": 8}, "heads": 3})");
    QVERIFY(!window()->fileActions()->open(bad));
    QCOMPARE(io::sceneToJson(window()->document()->scene()), before);
    QCOMPARE(window()->document()->undoStack()->count(), undoSteps);
    QCOMPARE(window()->document()->fileName(), QString());
    const QString expected =
        bad + QStringLiteral(": heads: 3 does not divide the projection width 8");
    // The command line says the same (tests/cli/test_export_command).
    QCOMPARE(window()->statusBar()->currentMessage(), expected);
}

void TestSharing::unreadableSceneFileIsRefused() {
    const QByteArray before = io::sceneToJson(window()->document()->scene());
    const QString missing = dir_.filePath(QStringLiteral("missing.json"));
    QVERIFY(!window()->fileActions()->open(missing));
    QVERIFY(window()->statusBar()->currentMessage().startsWith(missing + ": "));
    QVERIFY(window()->statusBar()->currentMessage().contains("cannot open"));
    const QString notJson = dir_.filePath(QStringLiteral("notes.json"));
    writeAll(notJson, "this is not JSON");
    QVERIFY(!window()->fileActions()->open(notJson));
    QCOMPARE(io::sceneToJson(window()->document()->scene()), before);
}

void TestSharing::droppedJsonOpens() {
    const QString file = dir_.filePath(QStringLiteral("dropped.json"));
    writeAll(file, io::presetJson(QStringLiteral("four-words")));
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(file)});
    QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(window(), &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(window(), &drop);
    QCOMPARE(window()->document()->fileName(), file);
    QCOMPARE(window()->document()->scene().tokens.size(), size_t(4));

    QMimeData text;
    text.setUrls({QUrl::fromLocalFile(dir_.filePath(QStringLiteral("picture.png")))});
    QDragEnterEvent refused(QPoint(10, 10), Qt::CopyAction, &text, Qt::LeftButton, Qt::NoModifier);
    refused.ignore();
    QApplication::sendEvent(window(), &refused);
    QVERIFY(!refused.isAccepted());
}

void TestSharing::recentFilesRemembered() {
    const QString a = dir_.filePath(QStringLiteral("a.json"));
    const QString b = dir_.filePath(QStringLiteral("b.json"));
    QVERIFY(window()->fileActions()->saveTo(a));
    QVERIFY(window()->fileActions()->saveTo(b));
    QVERIFY(window()->openSceneFile(a));
    QCOMPARE(window()->fileActions()->recentFiles(),
             (QStringList{QFileInfo(a).absoluteFilePath(), QFileInfo(b).absoluteFilePath()}));
}

void TestSharing::importWeightShapeMismatchRefused() {
    AttentionDocument* document = window()->document();
    const QByteArray before = io::sceneToJson(document->scene());
    const int steps = document->undoStack()->count();
    const QString csv = dir_.filePath(QStringLiteral("wq.csv"));
    writeAll(csv, "1,2,3\n4,5,6\n");
    QString error;
    QVERIFY(!window()->fileActions()->importWeight(WeightMatrix::Query, csv, &error));
    QCOMPARE(error, QStringLiteral("W_Q: expected 8x8, got 2x3"));
    QVERIFY(!window()->fileActions()->importEmbeddings(csv, {}, &error));
    QCOMPARE(error, QStringLiteral("embeddings: expected 6x8, got 2x3"));
    QCOMPARE(io::sceneToJson(document->scene()), before);
    QCOMPARE(document->undoStack()->count(), steps);

    // A fitting W_O (8 rows, 3 columns) is taken, as one undo step.
    MatrixD wo = MatrixD::Constant(8, 3, 0.5);
    const QString npy = dir_.filePath(QStringLiteral("wo.npy"));
    writeAll(npy, io::npyBytes(wo));
    QVERIFY2(window()->fileActions()->importWeight(WeightMatrix::Output, npy, &error),
             qPrintable(error));
    QCOMPARE(document->scene().dOut(), 3);
    QCOMPARE(document->scene().projections.output, wo);
    document->undoStack()->undo();
    QCOMPARE(io::sceneToJson(document->scene()), before);
}

void TestSharing::importEmbeddingsWithTokensIsOneUndoStep() {
    AttentionDocument* document = window()->document();
    const QByteArray before = io::sceneToJson(document->scene());
    const QString tokens = dir_.filePath(QStringLiteral("tokens.txt"));
    writeAll(tokens, "one\n two \n\nthree\n");
    MatrixD embeddings(3, 8);
    for (int i = 0; i < 24; ++i)
        embeddings(i / 8, i % 8) = 0.25 * (i % 5) - 0.5;
    const QString csv = dir_.filePath(QStringLiteral("x.csv"));
    writeAll(csv, io::csvBytes(embeddings));
    QString error;
    QVERIFY2(window()->fileActions()->importEmbeddings(csv, tokens, &error), qPrintable(error));
    QCOMPARE(document->scene().tokens, (std::vector<std::string>{"one", "two", "three"}));
    QCOMPARE(document->scene().embeddings, embeddings);
    QVERIFY(!document->scene().init);  // saved explicitly
    QCOMPARE(document->engine().weights(0).rows(), 3);
    document->undoStack()->undo();
    QCOMPARE(io::sceneToJson(document->scene()), before);

    // Four tokens but three rows: refused with both shapes.
    writeAll(tokens, "a\nb\nc\nd\n");
    QVERIFY(!window()->fileActions()->importEmbeddings(csv, tokens, &error));
    QCOMPARE(error, QStringLiteral("embeddings: expected 4x8, got 3x8"));
}

void TestSharing::importUnreadableMatrixRefused() {
    QString error;
    const QString missing = dir_.filePath(QStringLiteral("nothing.npy"));
    QVERIFY(!window()->fileActions()->importWeight(WeightMatrix::Value, missing, &error));
    QVERIFY2(error.startsWith(missing), qPrintable(error));
    const QString garbage = dir_.filePath(QStringLiteral("garbage.npy"));
    writeAll(garbage, "not an npy file");
    QVERIFY(!window()->fileActions()->importWeight(WeightMatrix::Value, garbage, &error));
    QVERIFY2(error.startsWith(garbage), qPrintable(error));
}

void TestSharing::latexOfTheCurrentMap() {
    const QString latex =
        FileActions::latexForStage(window()->document()->scene(), Stage::Weights, 1, 3);
    QVERIFY(latex.startsWith(QStringLiteral("\\begin{bmatrix}")));
    QCOMPARE(latex.count(QStringLiteral("\\\\")), 5);  // six rows
    AttentionEngine<double> engine(window()->document()->scene());
    engine.compute();
    QVERIFY(latex.contains(QString::number(engine.weights(1)(0, 0), 'f', 3)));
}

void TestSharing::everyHeadOneFileEach() {
    GridView view;
    view.stage = Stage::Scores;
    const QString folder = dir_.filePath(QStringLiteral("heads"));
    ImageOptions options;
    options.size = QSize(300, 260);
    const QStringList files = exportEveryHead(window()->document(), view, folder,
                                              QStringLiteral("default"), ImageFormat::Png, options);
    QCOMPARE(files.size(), 4);
    for (int h = 0; h < 4; ++h) {
        const QString name = QStringLiteral("default-scores-head%1.png").arg(h, 2, 10, QChar('0'));
        QCOMPARE(QFileInfo(files[h]).fileName(), name);
        QCOMPARE(QImage(files[h]).size(), QSize(300, 260));
    }
    // Different heads, different pictures.
    QVERIFY(QImage(files[0]) != QImage(files[1]));
}

void TestSharing::sweepWritesNumberedPngsAndAGif() {
    const Scene scene = window()->document()->scene();
    SweepRequest request;
    request.parameter = SweepParameter::Divisor;
    request.from = 0.5;
    request.to = 8;
    request.steps = 3;
    QCOMPARE(sweepValues(scene, request), (std::vector<double>{0.5, 2.0, 8.0}));
    SweepRequest heads{SweepParameter::Heads, 1, 8, 0, true};
    QCOMPARE(sweepValues(scene, heads), (std::vector<double>{1, 2, 4, 8}));
    const QString folder = dir_.filePath(QStringLiteral("sweep"));
    ImageOptions options;
    options.size = QSize(400, 300);
    const QStringList files =
        exportSweep(scene, GridView(), request, folder, QStringLiteral("lesson"), options);
    QCOMPARE(files.size(), 4);
    for (int i = 0; i < 3; ++i) {
        QCOMPARE(QFileInfo(files[i]).fileName(), QStringLiteral("lesson-divisor-00%1.png").arg(i));
        QCOMPARE(QImage(files[i]).size(), QSize(400, 300));
    }
    QVERIFY(QImage(files[0]) != QImage(files[2]));  // the divisor changes the weights
    QCOMPARE(QFileInfo(files[3]).fileName(), QStringLiteral("lesson-divisor.gif"));
    QVERIFY(readAll(files[3]).startsWith("GIF89a"));
    QImageReader gif(files[3]);
    if (gif.canRead()) {
        QCOMPARE(gif.imageCount(), 3);
        QCOMPARE(gif.size(), QSize(400, 300));
    }
    // The document the sweep started from is untouched.
    QCOMPARE(window()->document()->scene().scale.kind, ScaleKind::SqrtDk);

    SweepRequest empty{SweepParameter::Heads, 3, 3, 0, false};  // 3 does not divide d_proj 8
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             exportSweep(scene, GridView(), empty, folder, "x", options));
}

void TestSharing::exportDialogShowsTheWritersError() {
    ExportDialog dialog(window()->document(), window()->grid(), ExportDialog::Mode::Image,
                        window());
    const QString bad = dir_.filePath(QStringLiteral("no/such/folder/maps.png"));
    dialog.setTarget(bad);
    QString error;
    QVERIFY(!dialog.exportNow(&error));
    QVERIFY2(error.startsWith(bad + QStringLiteral(": cannot write: ")), qPrintable(error));
    QVERIFY(error.size() > bad.size() + 16);  // the writer's own reason follows

    const QString good = dir_.filePath(QStringLiteral("maps.svg"));
    dialog.setTarget(good);
    QVERIFY2(dialog.exportNow(&error), qPrintable(error));
    QVERIFY(readAll(good).contains("<svg"));
    // The folder and format are remembered for next time.
    ExportDialog again(window()->document(), window()->grid(), ExportDialog::Mode::Image, window());
    QVERIFY2(again.target().startsWith(dir_.path()) && again.target().endsWith(".svg"),
             qPrintable(again.target()));
}

QTEST_MAIN(TestSharing)
#include "test_sharing.moc"
