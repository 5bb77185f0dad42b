// Figures for a paper, drawn in process: one number format per map, colour bar labels with one
// count of decimals, masked cells that read apart from a 0 weight and keep their digits clear,
// colour ranges (auto, shared, fixed), titles and the entropy strip, paper sizes whose text stays
// legible, and the window's export leaving its selection out.

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QLineEdit>
#include <QRegularExpression>
#include <QSettings>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QXmlStreamReader>
#include <QtTest>
#include <limits>
#include <memory>

#include "document/attention_document.h"
#include "io/scene/scene_file.h"
#include "plot/heatmap_controller.h"
#include "plot/heatmap_grid.h"
#include "plot/image_export.h"
#include "ui/files/export_dialog.h"
#include "ui/window/document_maps.h"
#include "ui/window/main_window.h"

using namespace ae;
using namespace ae::ui;
using namespace ae::document;
using namespace ae::plot;

namespace {

// Digits after the point, -1 when the text has no point.
int decimalsOf(const QString& text) {
    const int point = text.indexOf(QLatin1Char('.'));
    return point < 0 ? -1 : static_cast<int>(text.size()) - point - 1;
}

QStringList cellTexts(const HeatmapController& c) {
    QStringList texts;
    for (int i = 0; i < c.rows(); ++i) {
        for (int j = 0; j < c.columns(); ++j)
            texts << c.valueText(i, j);
    }
    return texts;
}

QStringList svgTexts(const QByteArray& svg) {
    QXmlStreamReader xml(svg);
    QStringList texts;
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement() && xml.name() == QLatin1String("text"))
            texts << xml.readElementText(QXmlStreamReader::IncludeChildElements).trimmed();
    }
    return texts;
}

int grey(QRgb c) {
    return qGray(c);
}

// A 2 x 2 map of zeros, numbers shown, drawn with cell (0, 1) masked and again with nothing
// masked: the cell shows the same "0.00" on the same colour at the same place, so whatever
// differs is the mask's mark.
struct MaskedZeros {
    HeatmapController controller;
    QImage masked, unmasked;
    MaskedZeros() {
        controller.setLabels({"a", "b"}, {"a", "b"}, true);
        controller.setGradient(ColorMap::Gray);
        EngineF::Matrix zeros = EngineF::Matrix::Zero(2, 2);
        controller.setMatrix(zeros);
        controller.setDataRange(0.0, 1.0);
        controller.setShowValues(true);
        BoolMatrix allowed = BoolMatrix::Constant(2, 2, true);
        controller.setAllowed(allowed);
        controller.renderImage(420, 360);  // the first pass places the tick labels
        unmasked = controller.renderImage(420, 360);
        allowed(0, 1) = false;
        controller.setAllowed(allowed);
        masked = controller.renderImage(420, 360);
    }
};

}  // namespace

class TestFigureExport : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QApplication::setFont(QFont(QStringLiteral("DejaVu Sans"), 9));
        QVERIFY(dir_.isValid());
    }
    void init() { QSettings().clear(); }  // the export dialog remembers its last format

    void oneNumberFormatPerMap() {
        HeatmapController c;
        EngineF::Matrix m(2, 3);
        m << 0.0f, 0.5f, 12.34f, -0.001f, 3.0f, -7.26f;
        c.setMatrix(m);
        // Largest |value| 12.34: one decimal for every cell, never "0" beside "0.5".
        QCOMPARE(cellTexts(c), (QStringList{"0.0", "0.5", "12.3", "0.0", "3.0", "-7.3"}));
        EngineF::Matrix weights(2, 2);
        weights << 0.0f, 1.0f, 0.25f, 0.004f;
        c.setMatrix(weights);
        QCOMPARE(cellTexts(c), (QStringList{"0.00", "1.00", "0.25", "0.00"}));
        c.setDecimals(3);
        QCOMPARE(cellTexts(c), (QStringList{"0.000", "1.000", "0.250", "0.004"}));
        c.setDecimals(0);
        QCOMPARE(cellTexts(c), (QStringList{"0", "1", "0", "0"}));
        c.setDecimals(-1);
        EngineF::Matrix large(1, 2);
        large << 250000.0f, 3.0f;
        c.setMatrix(large);
        QCOMPARE(cellTexts(c), (QStringList{"2.5e+05", "3.0e+00"}));
    }

    // Every map of the window's grid, masked zeros included: one count of decimals per map.
    void windowMapsUseOneFormatEach() {
        AttentionDocument document;
        document.resetScene(io::loadPreset(QStringLiteral("journey-causal")));
        HeatmapGrid grid;
        DocumentMaps gridFollowsDocument(&document, &grid);
        GridView view;
        view.mode = ViewMode::AllStages;
        grid.setView(view);
        QVERIFY(grid.tiles().size() >= 6);
        for (const HeatmapTile& t : grid.tiles()) {
            const QStringList texts = cellTexts(*t.controller);
            QSet<int> decimals;
            for (const QString& text : texts)
                decimals << decimalsOf(text);
            QVERIFY2(decimals.size() == 1,
                     qPrintable(t.controller->title() + ": " + texts.join(QLatin1Char(' '))));
            if (t.stage == Stage::Weights) QCOMPARE(*decimals.begin(), 2);
        }
    }

    // Maps side by side share one count of decimals: head 3's scores reach 16 (one decimal), so
    // every head's numbers get one decimal in the figure.
    void figureUsesOneFormatForAllMaps() {
        AttentionDocument document;
        document.resetScene(io::loadPreset(QStringLiteral("default")));
        HeatmapGrid grid;
        DocumentMaps gridFollowsDocument(&document, &grid);
        GridView view;
        view.stage = Stage::Scores;
        grid.setView(view);
        const std::vector<HeatmapController*> tiles = gridTiles(grid);
        QSet<int> perMap;
        for (HeatmapController* c : tiles)
            perMap << decimalsOf(c->valueText(0, 0));
        QVERIFY2(perMap.size() > 1, "the window decides per map");
        ImageOptions options;
        fitToPaper(options, static_cast<int>(tiles.size()), PaperWidth::Page);
        renderImage(tiles, options);
        QSet<int> inFigure;
        for (HeatmapController* c : tiles) {
            for (const QString& text : cellTexts(*c))
                inFigure << decimalsOf(text);
        }
        QCOMPARE(inFigure, QSet<int>{1});
    }

    void colourBarLabelsShareDecimals() {
        HeatmapController c;
        c.setLabels({"a", "b"}, {"a", "b"}, true);
        EngineF::Matrix m = EngineF::Matrix::Constant(2, 2, 0.5f);
        c.setMatrix(m);
        c.setDataRange(0.0, 1.0);
        c.renderImage(400, 300);
        const QStringList labels = c.colorBarLabels();
        QVERIFY(labels.size() >= 3);
        QVERIFY2(labels.contains(QStringLiteral("0.0")) && labels.contains(QStringLiteral("1.0")),
                 qPrintable(labels.join(' ')));
        for (const QString& label : labels)
            QCOMPARE(decimalsOf(label), 1);
        c.setDataRange(-0.75, 0.75);
        c.renderImage(400, 300);
        for (const QString& label : c.colorBarLabels())
            QCOMPARE(decimalsOf(label), decimalsOf(c.colorBarLabels()[0]));
    }

    // Masked and unmasked cells both show "0.00" on the same grey: the mask's hatching tells them
    // apart in greyscale, and it leaves the digits' box clear.
    void maskedCellDiffersFromZeroWeight() {
        MaskedZeros zeros;
        QVERIFY(zeros.controller.isMarkedMasked(0, 1));
        QCOMPARE(zeros.controller.valueText(0, 1), QStringLiteral("0.00"));
        // The cell's pixels, 3 in from its edges.
        const QPointF centre = zeros.controller.cellCenter(0, 1);
        const QPointF next = zeros.controller.cellCenter(1, 2);
        const QSizeF cell(next.x() - centre.x(), next.y() - centre.y());
        QVERIFY2(cell.width() > 40 && cell.height() > 40, "cells too small for numbers");
        const QRect box =
            QRectF(centre.x() - cell.width() / 2 + 3, centre.y() - cell.height() / 2 + 3,
                   cell.width() - 6, cell.height() - 6)
                .toRect();
        // The digits' box: a band across the cell's centre, half a line tall and as wide as the
        // number at the base size (the drawn number is at least that large).
        const QFontMetricsF metrics(zeros.controller.widget()->font());
        const QRect digits(centre.toPoint() - QPoint(qRound(metrics.horizontalAdvance("0.00") / 2),
                                                     qRound(metrics.ascent() / 4)),
                           centre.toPoint() + QPoint(qRound(metrics.horizontalAdvance("0.00") / 2),
                                                     qRound(metrics.ascent() / 4)));
        int differing = 0, crossing = 0, inDigits = 0;
        for (int y = box.top(); y <= box.bottom(); ++y) {
            for (int x = box.left(); x <= box.right(); ++x) {
                const int a = grey(zeros.unmasked.pixel(x, y)), b = grey(zeros.masked.pixel(x, y));
                if (std::abs(a - b) > 60) ++differing;
                if (digits.contains(x, y)) {
                    ++inDigits;
                    if (a != b) ++crossing;
                }
            }
        }
        // In greyscale the hatching covers a good share of the cell outside its digits…
        QVERIFY2(differing > box.width() * box.height() / 20,
                 qPrintable(QString::number(differing)));
        // …and never a pixel of the digits' box.
        QVERIFY(inDigits > 100);
        QCOMPARE(crossing, 0);
    }

    void figureLegendNamesMaskedCells() {
        for (const QString& preset :
             {QStringLiteral("journey-causal"), QStringLiteral("journey")}) {
            RenderRequest request;
            request.showValues = true;
            const QStringList texts =
                svgTexts(renderScene(io::loadPreset(preset), request, ImageFormat::Svg));
            const bool legend = texts.join('|').contains(QStringLiteral("masked"));
            QVERIFY2(legend == (preset == QStringLiteral("journey-causal")), qPrintable(preset));
        }
    }

    void colourRangeAutoSharedFixed() {
        AttentionDocument document;
        document.resetScene(io::loadPreset(QStringLiteral("default")));
        HeatmapGrid grid;
        DocumentMaps gridFollowsDocument(&document, &grid);
        GridView view;
        view.stage = Stage::Scores;
        grid.setView(view);
        const std::vector<HeatmapController*> tiles = gridTiles(grid);
        QCOMPARE(tiles.size(), size_t(4));
        ImageOptions options;
        options.size = QSize(800, 600);
        renderImage(tiles, options);
        double largest = 0.0;
        QSet<double> own;
        for (HeatmapController* c : tiles) {
            const ValueRange r = c->colorRange();
            QCOMPARE(r.lower, -r.upper);  // auto: symmetric about 0, each its own
            QVERIFY(std::abs(r.upper - c->matrix().cwiseAbs().maxCoeff()) < 1e-6);
            own << r.upper;
            largest = std::max(largest, r.upper);
        }
        QVERIFY(own.size() > 1);

        options.style.range.kind = ColorRange::Kind::Shared;
        renderImage(tiles, options);
        for (HeatmapController* c : tiles) {
            QCOMPARE(c->colorRange().lower, -largest);
            QCOMPARE(c->colorRange().upper, largest);
        }
        options.style.range = {ColorRange::Kind::Fixed, -2.0, 3.0};
        renderImage(tiles, options);
        for (HeatmapController* c : tiles) {
            QCOMPARE(c->colorRange().lower, -2.0);
            QCOMPARE(c->colorRange().upper, 3.0);
        }
    }

    void parseColorRangeAcceptsOnlyTheThreeForms() {
        QCOMPARE(int(parseColorRange("auto")->kind), int(ColorRange::Kind::Auto));
        QCOMPARE(int(parseColorRange("shared")->kind), int(ColorRange::Kind::Shared));
        const std::optional<ColorRange> fixed = parseColorRange("-0.5:2");
        QVERIFY(fixed && fixed->kind == ColorRange::Kind::Fixed);
        QCOMPARE(fixed->low, -0.5);
        QCOMPARE(fixed->high, 2.0);
        for (const char* bad : {"x", "1:0", "1:1", "0:", ":1", "0:1:2", "nan:1", "0:inf", ""})
            QVERIFY2(!parseColorRange(QString::fromLatin1(bad)), bad);
    }

    void titlesNoneGivenAndOwn() {
        const Scene scene = io::loadPreset(QStringLiteral("default"));
        RenderRequest request;
        const QString own = svgTexts(renderScene(scene, request, ImageFormat::Svg)).join('|');
        QVERIFY(own.contains(QStringLiteral("head 0 · softmax weights")));
        request.image.style.title = QString();
        const QString none = svgTexts(renderScene(scene, request, ImageFormat::Svg)).join('|');
        QVERIFY2(!none.contains(QStringLiteral("softmax weights")) &&
                     !none.contains(QStringLiteral("mean over")),
                 qPrintable(none));
        request.image.style.title = QStringLiteral("Layer 0 attention");
        const QStringList given = svgTexts(renderScene(scene, request, ImageFormat::Svg));
        QCOMPARE(given.count(QStringLiteral("Layer 0 attention")), 1);  // above the maps
        QVERIFY(given.contains(QStringLiteral("head 0 · softmax weights")));
        request.head = 1;  // one map: the title is its own
        const QStringList alone = svgTexts(renderScene(scene, request, ImageFormat::Svg));
        QCOMPARE(alone.count(QStringLiteral("Layer 0 attention")), 1);
        QVERIFY(!alone.join('|').contains(QStringLiteral("softmax weights")));
    }

    // Without the title row the map itself grows: the title's room goes to the cells.
    void noTitleGivesTheMapItsRoom() {
        AttentionDocument document;
        document.resetScene(io::loadPreset(QStringLiteral("default")));
        HeatmapGrid grid;
        DocumentMaps gridFollowsDocument(&document, &grid);
        GridView view;
        view.mode = ViewMode::AllStages;
        grid.setView(view);
        HeatmapController* c = grid.tile(Stage::Weights, 0);
        ImageOptions options;
        options.size = QSize(460, 400);
        renderImage({c}, options);
        const int withTitle = c->cellArea().height();
        options.style.title = QString();
        renderImage({c}, options);
        QVERIFY(!c->isTitleShown());
        QVERIFY2(c->cellArea().height() > withTitle, qPrintable(QString::number(withTitle)));
    }

    void entropyStripAndColourBarLabel() {
        AttentionDocument document;
        document.resetScene(io::loadPreset(QStringLiteral("default")));
        HeatmapGrid grid;
        DocumentMaps gridFollowsDocument(&document, &grid);
        GridView view;
        grid.setView(view);
        QVERIFY(grid.tile(Stage::Weights, 0)->entropyStripDrawn());
        view.showEntropy = false;
        grid.setView(view);
        QVERIFY(grid.view().showEntropy == false);
        for (const HeatmapTile& t : grid.tiles())
            QVERIFY(!t.controller->entropyStripDrawn());

        RenderRequest request;
        request.head = 0;
        request.showEntropy = false;
        request.image.style.colorBarLabel = QStringLiteral("attention weight");
        const QStringList texts = svgTexts(
            renderScene(io::loadPreset(QStringLiteral("default")), request, ImageFormat::Svg));
        QVERIFY(!texts.contains(QStringLiteral("H bits")));
        QVERIFY(texts.contains(QStringLiteral("attention weight")));
    }

    // Paper widths: the PDF page is the width asked for and the 9 pt text is never shrunk below
    // 7 pt, whatever the number of maps; the figure stays within a page's height.
    void paperLayoutKeepsTextLegible_data() {
        QTest::addColumn<int>("tiles");
        QTest::addColumn<int>("paper");
        for (int tiles : {1, 2, 5, 13, 49}) {
            for (int paper : {0, 1}) {
                QTest::addRow("%d maps, %s", tiles, paper == 0 ? "column" : "page")
                    << tiles << paper;
            }
        }
    }
    void paperLayoutKeepsTextLegible() {
        QFETCH(int, tiles);
        QFETCH(int, paper);
        const PaperWidth width = paper == 0 ? PaperWidth::Column : PaperWidth::Page;
        ImageOptions options;
        fitToPaper(options, tiles, width);
        QCOMPARE(options.printWidthInches, paper == 0 ? 3.5 : 7.0);
        QVERIFY(options.columns >= 1 && options.columns <= tiles);
        const double pointsPerPixel = options.printWidthInches * 72.0 / options.size.width();
        const double printedFont = 12.0 * pointsPerPixel;  // 9 pt is 12 px at 96 px an inch
        QVERIFY2(printedFont >= 7.0 - 1e-9 && printedFont <= 9.0 + 1e-9,
                 qPrintable(QString::number(printedFont)));
        const double heightInches = options.size.height() * pointsPerPixel / 72.0;
        if (tiles <= 13) QVERIFY2(heightInches <= 8.5, qPrintable(QString::number(heightInches)));
    }

    // One map in a column: the cells are a little narrow for numbers at the labels' size, so the
    // numbers shrink (never below 0.85x) rather than vanish.
    void numbersFitAMapInAColumn() {
        RenderRequest request;
        request.head = 0;
        request.showValues = true;
        fitToPaper(request.image, 1, PaperWidth::Column);
        const QStringList texts = svgTexts(renderScene(
            io::loadPreset(QStringLiteral("journey-causal")), request, ImageFormat::Svg));
        static const QRegularExpression twoDecimals(QStringLiteral(R"(^\d\.\d\d$)"));
        QCOMPARE(texts.filter(twoDecimals).size(), 36 + 6);  // the cells and the entropy strip
    }

    // A PNG for a column: the pixels of the same layout drawn for the screen (text keeps the room
    // the layout measured), and dots per inch that print it 3.5 in wide.
    void pngPrintsAtThePrintWidth() {
        const Scene scene = io::loadPreset(QStringLiteral("journey-causal"));
        RenderRequest request;
        request.head = 0;
        request.showValues = true;
        fitToPaper(request.image, 1, PaperWidth::Column);
        request.image.scale = 2.0;
        const QImage paper = QImage::fromData(renderScene(scene, request, ImageFormat::Png), "PNG");
        QCOMPARE(paper.width(), request.image.size.width() * 2);
        QVERIFY(std::abs(paper.width() / (paper.dotsPerMeterX() * 0.0254) - 3.5) < 0.01);
        request.image.printWidthInches = 0.0;
        const QImage screen =
            QImage::fromData(renderScene(scene, request, ImageFormat::Png), "PNG");
        QCOMPARE(screen.convertToFormat(QImage::Format_ARGB32),
                 paper.convertToFormat(QImage::Format_ARGB32).copy());
    }

    void pdfPageIsThePrintWidth() {
        const Scene scene = io::loadPreset(QStringLiteral("default"));
        for (PaperWidth width : {PaperWidth::Column, PaperWidth::Page}) {
            RenderRequest request;
            fitToPaper(request.image, 5, width);
            const QByteArray pdf = renderScene(scene, request, ImageFormat::Pdf);
            const QRegularExpressionMatch box =
                QRegularExpression(QStringLiteral(R"(/MediaBox \[0 0 ([\d.]+) ([\d.]+)\])"))
                    .match(QString::fromLatin1(pdf));
            QVERIFY2(box.hasMatch(), pdf.left(400).constData());
            QCOMPARE(qRound(box.captured(1).toDouble()), width == PaperWidth::Column ? 252 : 504);
            const double expectedHeight = request.image.size.height() *
                                          (request.image.printWidthInches * 72.0) /
                                          request.image.size.width();
            QVERIFY(std::abs(box.captured(2).toDouble() - expectedHeight) < 1.0);
        }
    }

    // The dialog's figure settings reach the file; choosing PDF starts at a column's width.
    void exportDialogFigureSettings() {
        MainWindow window;
        window.resize(1200, 800);
        window.openPreset(QStringLiteral("default"));
        ExportDialog dialog(window.document(), window.grid(), ExportDialog::Mode::Image, &window);
        auto* format = dialog.findChild<QComboBox*>(QStringLiteral("formatCombo"));
        auto* paper = dialog.findChild<QComboBox*>(QStringLiteral("paperCombo"));
        QVERIFY(format && paper);
        format->setCurrentIndex(format->findData(QStringLiteral("svg")));
        dialog.findChild<QComboBox*>(QStringLiteral("titleCombo"))->setCurrentIndex(2);
        dialog.findChild<QLineEdit*>(QStringLiteral("titleEdit"))->setText("Figure 3");
        dialog.findChild<QCheckBox*>(QStringLiteral("entropyCheck"))->setChecked(false);
        dialog.findChild<QLineEdit*>(QStringLiteral("colorBarLabelEdit"))->setText("weight");
        dialog.findChild<QSpinBox*>(QStringLiteral("decimalsSpin"))->setValue(3);
        const QString svg = dir_.filePath(QStringLiteral("dialog.svg"));
        dialog.setTarget(svg);
        QString error;
        QVERIFY2(dialog.exportNow(&error), qPrintable(error));
        QFile file(svg);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QStringList texts = svgTexts(file.readAll());
        QCOMPARE(texts.count(QStringLiteral("Figure 3")), 1);
        QVERIFY(!texts.contains(QStringLiteral("H bits")));
        QCOMPARE(texts.count(QStringLiteral("weight")), 5);                   // one per colour bar
        QVERIFY(texts.contains(QStringLiteral("head 0 · softmax weights")));  // under the title

        // One map, numbers shown: every cell with three decimals, the given title its own.
        dialog.findChild<QComboBox*>(QStringLiteral("mapsCombo"))->setCurrentIndex(1);
        QVERIFY2(dialog.exportNow(&error), qPrintable(error));
        file.close();
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QStringList one = svgTexts(file.readAll());
        static const QRegularExpression three(QStringLiteral(R"(^\d\.\d{3}$)"));
        QCOMPARE(one.filter(three).size(), 36);
        QCOMPARE(one.count(QStringLiteral("Figure 3")), 1);
        QVERIFY(!one.join('|').contains(QStringLiteral("softmax")));

        QCOMPARE(paper->currentData().toInt(), -1);  // PNG and SVG start in pixels
        format->setCurrentIndex(format->findData(QStringLiteral("pdf")));
        QCOMPARE(paper->currentData().toInt(), static_cast<int>(PaperWidth::Column));
        QVERIFY(dialog.target().endsWith(QStringLiteral(".pdf")));
        QVERIFY2(dialog.exportNow(&error), qPrintable(error));
        QFile pdf(dialog.target());
        QVERIFY(pdf.open(QIODevice::ReadOnly));
        QVERIFY(pdf.readAll().contains("/MediaBox [0 0 252"));
        window.document()->markSaved();
    }

    // The window's selection (a clicked query row) and its hover are not part of a figure.
    void windowExportLeavesOutTheSelection() {
        MainWindow window;
        window.resize(1200, 800);
        window.openPreset(QStringLiteral("default"));
        const QString plain = dir_.filePath(QStringLiteral("plain.png"));
        const QString selected = dir_.filePath(QStringLiteral("selected.png"));
        QString error;
        {
            ExportDialog dialog(window.document(), window.grid(), ExportDialog::Mode::Image,
                                &window);
            dialog.setTarget(plain);
            QVERIFY2(dialog.exportNow(&error), qPrintable(error));
        }
        window.grid()->setSelectedRow(2);
        QCOMPARE(window.grid()->selectedRow(), 2);
        // The window's own map shows the mark: the yellow outline of the selected row.
        HeatmapController* shown = window.grid()->tile(Stage::Weights, 0);
        const QImage screen = shown->renderImage(460, 400);
        const auto hasSelectionYellow = [](const QImage& image) {
            for (int y = 0; y < image.height(); ++y) {
                for (int x = 0; x < image.width(); ++x) {
                    const QRgb p = image.pixel(x, y);
                    if (qRed(p) > 240 && std::abs(qGreen(p) - 200) < 12 && qBlue(p) < 30)
                        return true;
                }
            }
            return false;
        };
        QVERIFY(hasSelectionYellow(screen));
        {
            ExportDialog dialog(window.document(), window.grid(), ExportDialog::Mode::Image,
                                &window);
            dialog.setTarget(selected);
            QVERIFY2(dialog.exportNow(&error), qPrintable(error));
        }
        const QImage a(plain), b(selected);
        QVERIFY(!a.isNull());
        QVERIFY(!hasSelectionYellow(b));
        QCOMPARE(a, b);
        QCOMPARE(window.grid()->selectedRow(), 2);  // the window keeps its selection
        window.document()->markSaved();
    }

private:
    QTemporaryDir dir_;
};

QTEST_MAIN(TestFigureExport)
#include "test_figure_export.moc"
