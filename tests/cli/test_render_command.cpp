// `render` through the real binary: the image's size and every cell's colour against the window's
// own layout of the same map, grids of heads and stages, PDF and SVG files, and the contract for
// bad arguments (exit status 2, one stderr line, no file).

#include <QApplication>
#include <QFile>
#include <QImage>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>

#include "io/scene/scene_file.h"
#include "plot/image_export.h"
#include "support/file_bytes.h"
#include "support/render_reference.h"
#include "support/run_binary.h"

using namespace ae;
using namespace ae::ui;
using namespace ae::plot;

namespace {

using Run = ae::test::BinaryRun;
using ae::test::runBinary;

using ae::test::readAll;
using ae::test::writeAll;

}  // namespace

class TestRenderCommand : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void renderBinaryHasSizeAndCellColours();
    void renderGridOfHeadsAndStages();
    void renderBadArgumentsExitTwoWithOneLine_data();
    void renderBadArgumentsExitTwoWithOneLine();
    void pdfOpens();
    void valueWeightedIsTheWindowsValueWeightedMap();
    void svgIsWellFormedAndHoldsThePlot();

private:
    QTemporaryDir dir_;
};

void TestRenderCommand::initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    // The reference layout must measure text as the binary does.
    QApplication::setFont(QFont(QStringLiteral("DejaVu Sans"), 9));
    QVERIFY(dir_.isValid());
    QVERIFY2(QFile::exists(QStringLiteral(AE_BINARY)), AE_BINARY);
}

void TestRenderCommand::renderBinaryHasSizeAndCellColours() {
    const QString out = dir_.filePath(QStringLiteral("head2.png"));
    const Run run = runBinary({"render", "--preset", "default", "--head", "2", "--width", "500",
                               "--height", "400", "-o", out});
    QCOMPARE(QString::fromUtf8(run.err), QString());
    QCOMPARE(run.exitCode, 0);
    const QImage image(out);
    QCOMPARE(image.size(), QSize(500, 400));
    test::RenderReference().checkCells(image, 1.0);
}

void TestRenderCommand::renderGridOfHeadsAndStages() {
    // Every head and the mean: five maps, each with its title (the image is wider than tall).
    const QString out = dir_.filePath(QStringLiteral("grid.png"));
    QCOMPARE(runBinary({"render", "--preset", "default", "-o", out}).exitCode, 0);
    const QImage grid(out);
    QCOMPARE(grid.size(), naturalImageSize(5));
    const QString jpg = dir_.filePath(QStringLiteral("output.jpg"));
    QCOMPARE(runBinary({"render", "--preset", "default", "--stage", "output", "--head", "7",
                        "--colormap", "magma", "--values", "-o", jpg})
                 .exitCode,
             0);  // --head is ignored for output
    QCOMPARE(QImage(jpg).size(), naturalImageSize(1));
}

void TestRenderCommand::renderBadArgumentsExitTwoWithOneLine_data() {
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("problem");
    const QString out = dir_.filePath(QStringLiteral("never.png"));
    const QString bad = dir_.filePath(QStringLiteral("bad.json"));
    writeAll(bad, R"({"format": "attention-explorer/scene", "version": 1, "tokens": []})");
    QTest::newRow("no output") << QStringList{"--preset", "default"} << "-o OUT";
    QTest::newRow("value-weighted scores")
        << QStringList{"--preset", "default", "--stage", "scores", "--value-weighted", "-o", out}
        << "--value-weighted: only the weights";
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

void TestRenderCommand::renderBadArgumentsExitTwoWithOneLine() {
    QFETCH(QStringList, arguments);
    QFETCH(QString, problem);
    const Run run = runBinary(QStringList{"render"} + arguments);
    const QString err = QString::fromUtf8(run.err);
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(err.endsWith('\n') && err.count('\n') == 1, qPrintable(err));
    QVERIFY2(err.contains(problem), qPrintable(err));
    QVERIFY(!QFile::exists(dir_.filePath(QStringLiteral("never.png"))));
}

void TestRenderCommand::pdfOpens() {
    const QString pdfinfo = QStandardPaths::findExecutable(QStringLiteral("pdfinfo"));
    if (pdfinfo.isEmpty()) QSKIP("pdfinfo (poppler-utils) is not installed");
    const QString out = dir_.filePath(QStringLiteral("maps.pdf"));
    QCOMPARE(runBinary({"render", "--preset", "journey", "--stage", "scores", "-o", out}).exitCode,
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

void TestRenderCommand::svgIsWellFormedAndHoldsThePlot() {
    const QString out = dir_.filePath(QStringLiteral("maps.svg"));
    QCOMPARE(runBinary({"render", "--preset", "default", "-o", out}).exitCode, 0);
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

// --value-weighted draws what the window's toggle draws (plot::RenderRequest::valueWeighted),
// which is not the weights.
void TestRenderCommand::valueWeightedIsTheWindowsValueWeightedMap() {
    const QString out = dir_.filePath(QStringLiteral("weighted.png"));
    const Run run = runBinary({"render", "--preset", "default", "--head", "2", "--width", "500",
                               "--height", "400", "--value-weighted", "-o", out});
    QCOMPARE(QString::fromUtf8(run.err), QString());
    QCOMPARE(run.exitCode, 0);
    RenderRequest request;
    request.head = 2;
    request.image.size = QSize(500, 400);
    request.valueWeighted = true;
    const Scene scene = io::loadPreset(QStringLiteral("default"));
    const QImage weighted = QImage::fromData(renderScene(scene, request, ImageFormat::Png), "PNG");
    request.valueWeighted = false;
    const QImage plain = QImage::fromData(renderScene(scene, request, ImageFormat::Png), "PNG");
    const QImage drawn(out);
    QCOMPARE(drawn.convertToFormat(QImage::Format_RGB32),
             weighted.convertToFormat(QImage::Format_RGB32));
    QVERIFY(drawn.convertToFormat(QImage::Format_RGB32) !=
            plain.convertToFormat(QImage::Format_RGB32));
}

QTEST_MAIN(TestRenderCommand)
#include "test_render_command.moc"
