// Saving and sharing: rendered images (in process and through the real binary), PDF and SVG
// files, scene files with their view, atomic saves, imports, matrix and batch exports, and every
// refusal path.

#include <sys/resource.h>

#include <QApplication>
#include <QBuffer>
#include <QDir>
#include <QDropEvent>
#include <QImageReader>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMimeData>
#include <QProcess>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QXmlStreamReader>
#include <QtTest>
#include <csignal>
#include <memory>

#include "document/attention_document.h"
#include "io/result_export.h"
#include "io/scene_file.h"
#include "plot/color_maps.h"
#include "plot/heatmap_controller.h"
#include "plot/heatmap_grid.h"
#include "plot/image_export.h"
#include "qcustomplot.h"
#include "ui/files/batch_export.h"
#include "ui/files/export_dialog.h"
#include "ui/files/file_actions.h"
#include "ui/window/document_maps.h"
#include "ui/window/main_window.h"

using namespace ae;
using namespace ae::ui;

namespace {

bool near(QRgb a, QRgb b, int tolerance = 3) {
    return std::abs(qRed(a) - qRed(b)) <= tolerance &&
           std::abs(qGreen(a) - qGreen(b)) <= tolerance &&
           std::abs(qBlue(a) - qBlue(b)) <= tolerance;
}

struct Run {
    int status = -1;
    QString out, err;
};

Run runBinary(const QStringList& arguments) {
    QProcess process;
    process.start(QStringLiteral(AE_BINARY), arguments);
    process.waitForFinished(60000);
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
            QString::fromLocal8Bit(process.readAllStandardOutput()),
            QString::fromLocal8Bit(process.readAllStandardError())};
}

QByteArray readAll(const QString& fileName) {
    QFile file(fileName);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

void writeAll(const QString& fileName, const QByteArray& bytes) {
    QFile file(fileName);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(bytes);
}

// Head 2's weights of the default scene, drawn alone at 500 x 400 as `render --head 2` draws them:
// a reference grid laid out at the same size tells where each cell's pixels are.
struct Reference {
    AttentionDocument document;
    std::unique_ptr<HeatmapGrid> grid;
    HeatmapController* tile = nullptr;
    Reference() {
        document.resetScene(io::loadPreset(QStringLiteral("default")));
        grid = std::make_unique<HeatmapGrid>();
        new DocumentMaps(&document, grid.get());  // the grid's child
        GridView view;
        view.mode = ViewMode::AllStages;
        view.head = 2;
        view.showValues = false;
        grid->setView(view);
        tile = grid->tile(Stage::Weights, 2);
        ImageOptions options;
        options.size = QSize(500, 400);
        renderImage({tile}, options);  // lays the tile out at the image's size
    }
    // Checks the centre of every cell against the colour viridis gives the engine's value.
    void checkCells(const QImage& image, double scale) const {
        QCPColorGradient gradient = colorGradient(ColorMap::Viridis);
        const QCPAxis* x = tile->colorMap()->keyAxis();
        const QCPAxis* y = tile->colorMap()->valueAxis();
        int checked = 0;
        for (int q = 0; q < 6; ++q) {
            for (int k = 0; k < 6; ++k) {
                const QPoint at(qRound(x->coordToPixel(k) * scale),
                                qRound(y->coordToPixel(q) * scale));
                const double value = document.engine().weights(2)(q, k);
                const QRgb expected = gradient.color(value, QCPRange(0, 1));
                QVERIFY2(
                    near(image.pixel(at), expected),
                    qPrintable(QStringLiteral("cell (%1,%2) = %3 at (%4,%5): %6, expected %7")
                                   .arg(q)
                                   .arg(k)
                                   .arg(value)
                                   .arg(at.x())
                                   .arg(at.y())
                                   .arg(QColor(image.pixel(at)).name(), QColor(expected).name())));
                ++checked;
            }
        }
        QCOMPARE(checked, 36);
    }
};

}  // namespace

class TestSharing : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void init();
    void cleanup();
    void renderInProcessHasSizeAndCellColours();
    void renderBinaryHasSizeAndCellColours();
    void renderGridOfHeadsAndStages();
    void renderBadArgumentsExitTwoWithOneLine_data();
    void renderBadArgumentsExitTwoWithOneLine();
    void pdfOpens();
    void svgIsWellFormedAndHoldsThePlot();
    void saveThenOpenGivesTheSameSceneAndView();
    void titleShowsFileAndModifiedMark();
    void failedSaveKeepsTheOldFile();
    void interruptedSaveKeepsTheOldFile();
    void badSceneLeavesTheCurrentSceneUntouched();
    void unreadableSceneFileIsRefused();
    void droppedJsonOpens();
    void recentFilesRemembered();
    void importWeightShapeMismatchRefused();
    void importEmbeddingsWithTokensIsOneUndoStep();
    void importUnreadableMatrixRefused();
    void exportMatricesMatchTheExportCommand();
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
    Reference reference;
    reference.checkCells(image, 1.0);

    request.image.scale = 2.0;
    const QImage doubled = QImage::fromData(
        renderScene(io::loadPreset(QStringLiteral("default")), request, ImageFormat::Png), "PNG");
    QCOMPARE(doubled.size(), QSize(1000, 800));
    reference.checkCells(doubled, 2.0);
}

void TestSharing::renderBinaryHasSizeAndCellColours() {
    const QString out = dir_.filePath(QStringLiteral("head2.png"));
    const Run run = runBinary({"render", "--preset", "default", "--head", "2", "--width", "500",
                               "--height", "400", "-o", out});
    QCOMPARE(run.err, QString());
    QCOMPARE(run.status, 0);
    const QImage image(out);
    QCOMPARE(image.size(), QSize(500, 400));
    Reference().checkCells(image, 1.0);
}

void TestSharing::renderGridOfHeadsAndStages() {
    // Every head and the mean: five maps, each with its title (the image is wider than tall).
    const QString out = dir_.filePath(QStringLiteral("grid.png"));
    QCOMPARE(runBinary({"render", "--preset", "default", "-o", out}).status, 0);
    const QImage grid(out);
    QCOMPARE(grid.size(), naturalImageSize(5));
    const QString jpg = dir_.filePath(QStringLiteral("output.jpg"));
    QCOMPARE(runBinary({"render", "--preset", "default", "--stage", "output", "--head", "7",
                        "--colormap", "magma", "--values", "-o", jpg})
                 .status,
             0);  // --head is ignored for output
    QCOMPARE(QImage(jpg).size(), naturalImageSize(1));
}

void TestSharing::renderBadArgumentsExitTwoWithOneLine_data() {
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("problem");
    const QString out = dir_.filePath(QStringLiteral("never.png"));
    const QString bad = dir_.filePath(QStringLiteral("bad.json"));
    writeAll(bad, R"({"format": "attention-explorer/scene", "version": 1, "tokens": []})");
    QTest::newRow("no output") << QStringList{"--preset", "default"} << "-o OUT";
    QTest::newRow("bad suffix") << QStringList{"--preset", "default", "-o", "x.bmp"} << "-o:";
    QTest::newRow("bad stage") << QStringList{"--preset", "default", "--stage", "attn", "-o", out}
                               << "--stage";
    QTest::newRow("head not a number")
        << QStringList{"--preset", "default", "--head", "two", "-o", out} << "--head";
    QTest::newRow("head out of range")
        << QStringList{"--preset", "default", "--head", "4", "-o", out} << "expected 0 to 3";
    QTest::newRow("bad colormap") << QStringList{"--preset", "default", "--colormap",
                                                 "jet",      "-o",      out}
                                  << "--colormap";
    QTest::newRow("width zero") << QStringList{"--preset", "default", "--width", "0", "-o", out}
                                << "--width";
    QTest::newRow("scale zero") << QStringList{"--preset", "default", "--scale", "0", "-o", out}
                                << "--scale";
    QTest::newRow("too many pixels")
        << QStringList{"--preset", "default", "--width", "20000", "--height", "20000", "-o", out}
        << "million pixels";
    QTest::newRow("no scene") << QStringList{"-o", out} << "give one SCENE.json";
    QTest::newRow("scene and preset")
        << QStringList{bad, "--preset", "default", "-o", out} << "give one SCENE.json";
    QTest::newRow("unknown preset") << QStringList{"--preset", "nope", "-o", out} << "nope";
    QTest::newRow("bad scene") << QStringList{bad, "-o", out} << "tokens: expected";
    QTest::newRow("missing scene")
        << QStringList{dir_.filePath("missing.json"), "-o", out} << "cannot open";
    QTest::newRow("no output projection")
        << QStringList{"--preset", "journey", "--stage", "output", "-o", out} << "no output";
    QTest::newRow("unknown option")
        << QStringList{"--preset", "default", "--dpi", "3", "-o", out} << "dpi";
    QTest::newRow("unwritable output")
        << QStringList{"--preset", "default", "-o", dir_.filePath("no/such/dir/x.png")}
        << "cannot write";
}

void TestSharing::renderBadArgumentsExitTwoWithOneLine() {
    QFETCH(QStringList, arguments);
    QFETCH(QString, problem);
    const Run run = runBinary(QStringList{"render"} + arguments);
    QCOMPARE(run.status, 2);
    QVERIFY2(run.err.endsWith('\n') && run.err.count('\n') == 1, qPrintable(run.err));
    QVERIFY2(run.err.contains(problem), qPrintable(run.err));
    QVERIFY(!QFile::exists(dir_.filePath(QStringLiteral("never.png"))));
}

void TestSharing::pdfOpens() {
    const QString pdfinfo = QStandardPaths::findExecutable(QStringLiteral("pdfinfo"));
    if (pdfinfo.isEmpty()) QSKIP("pdfinfo (poppler-utils) is not installed");
    const QString out = dir_.filePath(QStringLiteral("maps.pdf"));
    QCOMPARE(runBinary({"render", "--preset", "journey", "--stage", "scores", "-o", out}).status,
             0);
    QVERIFY(readAll(out).startsWith("%PDF"));
    QProcess info;
    info.start(pdfinfo, {out});
    QVERIFY(info.waitForFinished(30000));
    const QString text = QString::fromLocal8Bit(info.readAllStandardOutput());
    QCOMPARE(info.exitCode(), 0);
    QVERIFY2(text.contains(QRegularExpression(QStringLiteral("Pages:\\s+1"))), qPrintable(text));
    // Without a size a PDF fits a journal's column: 3.5 in = 252 pt wide, the layout's shape.
    ImageOptions column;
    fitToPaper(column, 1, PaperWidth::Column);
    const QRegularExpressionMatch page =
        QRegularExpression(QStringLiteral(R"(Page size:\s+([\d.]+) x ([\d.]+) pts)")).match(text);
    QVERIFY2(page.hasMatch(), qPrintable(text));
    QCOMPARE(qRound(page.captured(1).toDouble()), 252);
    QVERIFY(std::abs(page.captured(2).toDouble() -
                     252.0 * column.size.height() / column.size.width()) < 1.0);
    // The title is text, not pixels.
    const QString pdftotext = QStandardPaths::findExecutable(QStringLiteral("pdftotext"));
    if (pdftotext.isEmpty()) return;
    QProcess extract;
    extract.start(pdftotext, {out, QStringLiteral("-")});
    QVERIFY(extract.waitForFinished(30000));
    QVERIFY(QString::fromUtf8(extract.readAllStandardOutput()).contains("raw scores"));
}

void TestSharing::svgIsWellFormedAndHoldsThePlot() {
    const QString out = dir_.filePath(QStringLiteral("maps.svg"));
    QCOMPARE(runBinary({"render", "--preset", "default", "-o", out}).status, 0);
    QXmlStreamReader xml(readAll(out));
    QStringList texts;
    bool svgRoot = false;
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement() && xml.name() == QLatin1String("svg")) svgRoot = true;
        if (xml.isStartElement() && xml.name() == QLatin1String("text"))
            texts << xml.readElementText(QXmlStreamReader::IncludeChildElements);
    }
    QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
    QVERIFY(svgRoot);
    const QString all = texts.join('|');
    QVERIFY2(all.contains(QStringLiteral("head 3 · softmax weights")), qPrintable(all));
    QVERIFY(all.contains(QStringLiteral("mean over 4 heads")));
    QVERIFY(all.contains(QStringLiteral("mat")));  // a token label
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

void TestSharing::interruptedSaveKeepsTheOldFile() {
    // A process killed in the middle of writing (SIGXFSZ at 8 KiB of a ~1 MB result) leaves the
    // old file as it was: the writer only ever renames a complete file over it.
    const QString file = dir_.filePath(QStringLiteral("interrupted.json"));
    writeAll(file, "old contents");
    QProcess process;
    process.start(QStringLiteral("/bin/sh"),
                  {"-c", QStringLiteral("ulimit -f 8; exec '%1' export --preset bert-base -o '%2'")
                             .arg(QStringLiteral(AE_BINARY), file)});
    QVERIFY(process.waitForFinished(60000));
    QVERIFY(process.exitStatus() == QProcess::CrashExit || process.exitCode() != 0);
    QCOMPARE(readAll(file), QByteArray("old contents"));
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
    QCOMPARE(window()->statusBar()->currentMessage(), expected);
    // The command line says the same.
    const Run run = runBinary({"export", bad, "-o", dir_.filePath("r.json")});
    QCOMPARE(run.err.trimmed(), expected);
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

void TestSharing::exportMatricesMatchTheExportCommand() {
    const Scene scene = window()->document()->scene();
    const QString folder = dir_.filePath(QStringLiteral("weights-csv"));
    const QStringList files =
        FileActions::exportMatrices(scene, Stage::Weights, MatrixExportFormat::Csv, folder);
    QCOMPARE(files.size(), 4);
    const QString cli = dir_.filePath(QStringLiteral("cli-csv"));
    QCOMPARE(runBinary({"export", "--preset", "default", "--format", "csv", "-o", cli}).status, 0);
    for (int h = 0; h < 4; ++h) {
        const QString name = QStringLiteral("head%1_weights.csv").arg(h);
        QCOMPARE(files[h], QDir(folder).filePath(name));
        QCOMPARE(readAll(files[h]), readAll(QDir(cli).filePath(name)));
    }
    QCOMPARE(QDir(folder).entryList(QDir::Files).size(), 4);  // nothing but that stage

    const QString json = dir_.filePath(QStringLiteral("result.json"));
    FileActions::exportMatrices(scene, std::nullopt, MatrixExportFormat::ResultJson, json);
    const QString cliJson = dir_.filePath(QStringLiteral("cli-result.json"));
    QCOMPARE(runBinary({"export", "--preset", "default", "-o", cliJson}).status, 0);
    QCOMPARE(readAll(json), readAll(cliJson));

    const QString npy = dir_.filePath(QStringLiteral("all-npy"));
    const QStringList all =
        FileActions::exportMatrices(scene, std::nullopt, MatrixExportFormat::Npy, npy);
    QVERIFY(all.contains(QDir(npy).filePath(QStringLiteral("concat.npy"))));
    for (const QString& f : all)
        QVERIFY2(QFile::exists(f), qPrintable(f));
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
