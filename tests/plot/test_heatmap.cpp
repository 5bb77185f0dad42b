// The heatmap controller and the cell explanations, without a window: the plot's data and its
// pixels, checked against the float engine's numbers.

#include <QApplication>
#include <QStandardPaths>
#include <QtTest>
#include <charconv>
#include <cmath>

#include "core/ops.h"
#include "io/scene/scene_file.h"
#include "plot/cell_explanation.h"
#include "plot/color_maps.h"
#include "plot/heatmap_controller.h"

using namespace ae;
using namespace ae::plot;

namespace {

// A layer of a golden model of the newer families (tests/data/family-layers).
Scene familyLayer(const char* name) {
    return io::loadSceneFile(
        QStringLiteral(AE_TEST_DATA_DIR "/family-layers/%1.scene.json").arg(QLatin1String(name)));
}

EngineF computed(const Scene& scene) {
    EngineF engine(scene);
    engine.compute();
    return engine;
}

// A map as the window makes one: the controller is a child of its plot, and the plot (with the
// controller) is deleted here. A controller on the stack would leave its plot behind.
struct OwnedMap {
    HeatmapController* controller = new HeatmapController;
    OwnedMap() = default;
    OwnedMap(const OwnedMap&) = delete;
    OwnedMap& operator=(const OwnedMap&) = delete;
    ~OwnedMap() { delete controller->widget(); }
    HeatmapController& operator*() { return *controller; }
};

// Lays the plot out at its own size and renders it, so the cells' pixels match the image.
QImage render(HeatmapController& c, int width = 420, int height = 360) {
    c.widget()->resize(width, height);
    c.replotNow();
    c.replotNow();  // tick labels settle in the second pass
    return c.renderImage(width, height);
}

bool near(QRgb a, QRgb b, int tolerance = 2) {
    return std::abs(qRed(a) - qRed(b)) <= tolerance &&
           std::abs(qGreen(a) - qGreen(b)) <= tolerance &&
           std::abs(qBlue(a) - qBlue(b)) <= tolerance;
}

QRect cellPixels(const HeatmapController& c, int row, int column) {
    return c.drawnCellRect(row, column).toAlignedRect();
}

// Pixel edges agree to well under a pixel.
bool samePixel(double a, double b) {
    return std::abs(a - b) < 1e-6;
}

}  // namespace

class TestHeatmap : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void cellsHoldTheEngineValues();
    void queryZeroAtTopAndCellsOnIntegers();
    void oneWideMapIsDrawn();
    void renderedCellHasTheGradientColour();
    void maskedCellsAreHatched();
    void hoverFindsTheRoundedCell();
    void selectedRowIsOutlined();
    void weightTooltipShowsTheArithmetic();
    void maskedWeightTooltipNamesTheMask();
    void finiteFillTooltipUsesTheFill();
    void slidingWindowIsItsOwnPartOfTheMask();
    void softCapTooltipsShowTheCap();
    void positionBiasTooltipsShowTheSum();
    void rotaryTooltipSaysWhichDimensionsTurn();
    void largeMapIsPooledToItsPixels();
    void tokenLabelsTurnUprightBeforeTheyThin();
    void hiddenMapIsDrawnWhenPaintedOrShown();
};

void TestHeatmap::initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QApplication::setFont(QFont(QStringLiteral("DejaVu Sans"), 9));
}

void TestHeatmap::cellsHoldTheEngineValues() {
    const EngineF engine = computed(io::loadPreset(QStringLiteral("default")));
    OwnedMap owned_c;
    HeatmapController& c = *owned_c;
    c.setMatrix(engine.weights(2));
    QCOMPARE(c.shownColumns(), 6);
    QCOMPARE(c.shownRows(), 6);
    for (int q = 0; q < 6; ++q) {
        for (int k = 0; k < 6; ++k)
            QCOMPARE(c.shownCellValue(q, k), static_cast<double>(engine.weights(2)(q, k)));
    }
    // Q of one head: L x d_head, dimensions across.
    c.setMatrix(engine.headQuery(1));
    QCOMPARE(c.shownColumns(), engine.dHead());
    QCOMPARE(c.shownCellValue(4, 1), static_cast<double>(engine.headQuery(1)(4, 1)));
}

void TestHeatmap::queryZeroAtTopAndCellsOnIntegers() {
    const EngineF engine = computed(io::loadPreset(QStringLiteral("default")));
    OwnedMap owned_c;
    HeatmapController& c = *owned_c;
    c.setMatrix(engine.weights(0));
    c.setLabels({"a", "b", "c", "d", "e", "f"}, {"a", "b", "c", "d", "e", "f"}, true);
    render(c);
    QVERIFY(c.rowsReadDown());
    QCOMPARE(c.cellsBlended(), false);
    // Each cell is painted centred where hit testing puts it, and the six fill the axis rect.
    const QRectF area = c.cellArea();
    for (int k = 0; k < 6; ++k) {
        const QRectF cell = c.drawnCellRect(k, k);
        QVERIFY(samePixel(cell.center().x(), c.cellCenter(k, k).x()));
        QVERIFY(samePixel(cell.center().y(), c.cellCenter(k, k).y()));
    }
    const QRectF cells = c.drawnCellRect(0, 0).united(c.drawnCellRect(5, 5));
    QVERIFY(samePixel(cells.left(), area.left()));
    QVERIFY(samePixel(cells.width(), area.width()));
    QVERIFY(samePixel(cells.height(), area.height()));
    // Row 0 above row 5 on screen.
    QVERIFY(c.cellCenter(0, 0).y() < c.cellCenter(5, 0).y());
}

void TestHeatmap::oneWideMapIsDrawn() {
    Scene scene = io::loadPreset(QStringLiteral("default"));
    scene.heads = 8;  // d_head = 1: Q of a head is one column wide
    const EngineF engine = computed(scene);
    OwnedMap owned_c;
    HeatmapController& c = *owned_c;
    c.setGradient(ColorMap::RdBu);
    c.setMatrix(engine.headQuery(3));
    c.setDataRange(-3, 3);
    c.setLabels({"a", "b", "c", "d", "e", "f"}, {"0"}, false);
    const QImage image = render(c);
    // The one column spans the whole width.
    QVERIFY(samePixel(c.drawnCellRect(2, 0).left(), QRectF(c.cellArea()).left()));
    QVERIFY(samePixel(c.drawnCellRect(2, 0).right(), QRectF(c.cellArea()).right()));
    for (int row = 0; row < 6; ++row) {
        const QPoint centre = c.cellCenter(row, 0).toPoint();
        const QRgb expected =
            gradientColor(ColorMap::RdBu, engine.headQuery(3)(row, 0), -3, 3).rgb();
        QVERIFY2(near(image.pixel(centre), expected),
                 qPrintable(QStringLiteral("row %1: %2 instead of %3")
                                .arg(row)
                                .arg(QColor(image.pixel(centre)).name(), QColor(expected).name())));
    }
}

void TestHeatmap::renderedCellHasTheGradientColour() {
    const EngineF engine = computed(io::loadPreset(QStringLiteral("default")));
    OwnedMap owned_c;
    HeatmapController& c = *owned_c;
    c.setGradient(ColorMap::Viridis);
    c.setMatrix(engine.weights(3));
    c.setDataRange(0, 1);
    c.setLabels({"a", "b", "c", "d", "e", "f"}, {"a", "b", "c", "d", "e", "f"}, true);
    const QImage image = render(c);
    // The brightest cell of head 3 and a dark one: both colours must be where cellCenter says.
    for (const auto& [q, k] : {std::pair{1, 1}, std::pair{1, 0}, std::pair{4, 5}}) {
        const QPoint centre = c.cellCenter(q, k).toPoint();
        const QRgb expected = gradientColor(ColorMap::Viridis, engine.weights(3)(q, k), 0, 1).rgb();
        QVERIFY2(near(image.pixel(centre), expected),
                 qPrintable(QStringLiteral("cell (%1, %2): %3 instead of %4")
                                .arg(q)
                                .arg(k)
                                .arg(QColor(image.pixel(centre)).name(), QColor(expected).name())));
    }
    QVERIFY(!near(image.pixel(c.cellCenter(1, 1).toPoint()),
                  image.pixel(c.cellCenter(1, 0).toPoint()), 20));
}

void TestHeatmap::maskedCellsAreHatched() {
    Scene scene = io::loadPreset(QStringLiteral("default"));
    scene.mask.causal = true;
    const EngineF engine = computed(scene);
    OwnedMap owned_c;
    HeatmapController& c = *owned_c;
    c.setGradient(ColorMap::Viridis);
    c.setMatrix(engine.weights(0));
    c.setDataRange(0, 1);
    c.setAllowed(engine.allowed());
    c.setLabels({"a", "b", "c", "d", "e", "f"}, {"a", "b", "c", "d", "e", "f"}, true);
    QVERIFY(c.isMarkedMasked(0, 3));
    QVERIFY(!c.isMarkedMasked(3, 0));
    const QImage image = render(c);
    const auto countOff = [&](int row, int column) {
        const QRect r = cellPixels(c, row, column).adjusted(3, 3, -3, -3);
        const QRgb base = image.pixel(r.center());
        int off = 0;
        for (int y = r.top(); y <= r.bottom(); ++y) {
            for (int x = r.left(); x <= r.right(); ++x)
                off += !near(image.pixel(x, y), base, 12);
        }
        return double(off) / (r.width() * r.height());
    };
    QVERIFY2(countOff(3, 0) == 0.0, "a visible cell is one flat colour");
    QVERIFY2(countOff(0, 3) > 0.05, "a masked cell is hatched");
    // The hatch is drawn over the cell's real value, 0 under -inf: viridis' first colour shows.
    const QRect masked = cellPixels(c, 0, 3);
    const QRgb zero = gradientColor(ColorMap::Viridis, 0.0, 0, 1).rgb();
    bool zeroSeen = false;
    for (int x = masked.left() + 2; x < masked.right() - 2 && !zeroSeen; ++x) {
        zeroSeen = near(image.pixel(x, masked.center().y()), zero);
    }
    QVERIFY(zeroSeen);
}

void TestHeatmap::hoverFindsTheRoundedCell() {
    const EngineF engine = computed(io::loadPreset(QStringLiteral("default")));
    OwnedMap owned_c;
    HeatmapController& c = *owned_c;
    c.setMatrix(engine.weights(0));
    c.setLabels({"a", "b", "c", "d", "e", "f"}, {"a", "b", "c", "d", "e", "f"}, true);
    render(c);
    const QRect cell = cellPixels(c, 2, 4);
    // Just inside the cell's left edge: truncation of pixelToCoord would give column 3.
    QCOMPARE(c.cellAt(QPointF(cell.left() + 2, cell.center().y())),
             std::optional<QPoint>(QPoint(4, 2)));
    QCOMPARE(c.cellAt(QPointF(cell.right() - 2, cell.top() + 2)),
             std::optional<QPoint>(QPoint(4, 2)));
    QCOMPARE(c.cellAt(QPointF(2, 2)), std::nullopt);

    QSignalSpy clicks(&c, &HeatmapController::cellClicked);
    QTest::mouseClick(c.widget(), Qt::LeftButton, {}, c.cellCenter(5, 1).toPoint());
    QCOMPARE(clicks.count(), 1);
    QCOMPARE(clicks.first().at(0).toInt(), 5);
    QCOMPARE(clicks.first().at(1).toInt(), 1);
}

void TestHeatmap::selectedRowIsOutlined() {
    const EngineF engine = computed(io::loadPreset(QStringLiteral("default")));
    OwnedMap owned_c;
    HeatmapController& c = *owned_c;
    c.setGradient(ColorMap::Viridis);
    c.setMatrix(engine.weights(0));
    c.setDataRange(0, 1);
    c.setLabels({"a", "b", "c", "d", "e", "f"}, {"a", "b", "c", "d", "e", "f"}, true);
    const auto yellowNearTop = [&](const QImage& image, int row) {
        const QRect r = cellPixels(c, row, 2);
        for (int y = r.top(); y < r.top() + 5; ++y) {
            if (near(image.pixel(r.center().x(), y), qRgb(255, 200, 0), 30)) return true;
        }
        return false;
    };
    QVERIFY(!yellowNearTop(render(c), 2));
    c.setSelectedRow(2);
    const QImage image = render(c);
    QVERIFY(yellowNearTop(image, 2));
    QVERIFY(!yellowNearTop(image, 4));
}

void TestHeatmap::weightTooltipShowsTheArithmetic() {
    const EngineF engine = computed(io::loadPreset(QStringLiteral("default")));
    const int h = 1, q = 2, k = 4;
    // The softmax by hand, from the engine's float numbers.
    double rowMax = -INFINITY, sum = 0.0;
    for (int j = 0; j < 6; ++j)
        rowMax = std::max(rowMax, double(engine.scaled(h)(q, j)));
    for (int j = 0; j < 6; ++j)
        sum += std::exp(double(engine.scaled(h)(q, j)) - rowMax);
    const double scaled = engine.scaled(h)(q, k);
    const auto g5 = [](double v) { return QString::number(v, 'g', 5); };
    char buffer[32];
    const float weight = engine.weights(h)(q, k);
    const auto end = std::to_chars(buffer, buffer + 32, weight).ptr;
    const QString text = explainCell(engine, Stage::Weights, h, q, k);
    const QStringList lines = text.split('\n');
    QCOMPARE(lines.size(), 4);
    QCOMPARE(lines[0], QStringLiteral("head 1 · softmax weights, query 2 “sat” → key 4 “the”"));
    QCOMPARE(lines[1], QStringLiteral("value ") + QString::fromLatin1(buffer, end - buffer));
    QCOMPARE(lines[2], QStringLiteral("q_2·k_4 = %1, ÷ %2 = %3")
                           .arg(g5(engine.scores(h)(q, k)), g5(std::sqrt(2.0)), g5(scaled)));
    QCOMPARE(
        lines[3],
        QStringLiteral("exp(%1 − %2) / %3 = %4").arg(g5(scaled), g5(rowMax), g5(sum), g5(weight)));
}

void TestHeatmap::maskedWeightTooltipNamesTheMask() {
    Scene scene = io::loadPreset(QStringLiteral("default"));
    scene.mask.causal = true;
    scene.mask.window = 1;
    const EngineF engine = computed(scene);
    const QString text = explainCell(engine, Stage::Weights, 0, 1, 4);
    QVERIFY2(text.contains(QStringLiteral("value 0\n")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("causal (key 4 comes after query 1)")), qPrintable(text));
    // With the causal part the window is a sliding window: it names only keys too far back.
    QVERIFY2(!text.contains(QStringLiteral("window")), qPrintable(text));
    QCOMPARE(maskReasons(scene.mask, 4, 1),
             QStringList{QStringLiteral("outside the sliding window (W = 2)")});
    Scene band = scene;
    band.mask.causal = false;
    QCOMPARE(maskReasons(band.mask, 1, 4), QStringList{QStringLiteral("window (|1 − 4| = 3 > 1)")});
    QVERIFY2(text.contains(QStringLiteral("exactly 0")), qPrintable(text));
    QVERIFY(!explainCell(engine, Stage::Weights, 0, 4, 3).contains(QStringLiteral("masked")));
    QVERIFY(maskReasons(scene.mask, 4, 1).size() == 1);  // window only
    QVERIFY(hiddenByFixedMask(scene.mask, 0, 2));
}

void TestHeatmap::finiteFillTooltipUsesTheFill() {
    Scene scene = io::loadPreset(QStringLiteral("default"));
    scene.mask.causal = true;
    scene.maskFill = 0.0;
    const EngineF engine = computed(scene);
    const float weight = engine.weights(2)(0, 5);
    QVERIFY(weight > 0.0f);  // a fill of 0 gives the masked key real weight
    const QString text = explainCell(engine, Stage::Weights, 2, 0, 5);
    QVERIFY2(text.contains(QStringLiteral("replaced by the fill 0: exp(0 − ")), qPrintable(text));
    QVERIFY2(text.endsWith(QStringLiteral(" = ") + QString::number(weight, 'g', 5)),
             qPrintable(text));
}

// A 600 x 600 map in a plot a few hundred pixels wide shows one cell per pixel: each shown cell
// is the max (or mean) of its pool, hit testing still finds matrix cells, and masked cells are
// still marked.
void TestHeatmap::largeMapIsPooledToItsPixels() {
    EngineF::Matrix m(600, 600);
    for (int i = 0; i < 600; ++i)
        for (int j = 0; j < 600; ++j)
            m(i, j) = static_cast<float>((i * 7 + j * 13) % 101) / 100.0f;
    QStringList labels;
    for (int i = 0; i < 600; ++i)
        labels << QString::number(i);
    OwnedMap owned_c;
    HeatmapController& c = *owned_c;
    c.setMatrix(m);
    c.setLabels(labels, labels, true);
    c.setDataRange(0.0, 1.0);
    render(c, 420, 360);
    const int ry = c.rowsPerCell(), rx = c.columnsPerCell();
    QVERIFY2(ry > 1 && rx > 1, qPrintable(QStringLiteral("%1 x %2").arg(ry).arg(rx)));
    QCOMPARE(c.shownColumns(), (600 + rx - 1) / rx);
    QCOMPARE(c.shownRows(), (600 + ry - 1) / ry);
    QCOMPARE(c.shownCellValue(2, 3), double(m.block(2 * ry, 3 * rx, ry, rx).maxCoeff()));
    // Every matrix cell of that pool shows the pool's value.
    QCOMPARE(c.cellValue(2 * ry + ry - 1, 3 * rx), c.shownCellValue(2, 3));
    c.setPooling(Pooling::Mean);
    QCOMPARE(float(c.shownCellValue(2, 3)), m.block(2 * ry, 3 * rx, ry, rx).mean());
    // The axes still count matrix cells.
    QCOMPARE(c.rows(), 600);
    const QPointF centre = c.cellCenter(300, 123);
    QCOMPARE(c.cellAt(centre), std::optional<QPoint>(QPoint(123, 300)));
    // A causal mask over the pooled map veils the upper triangle.
    BoolMatrix allowed(600, 600);
    for (int i = 0; i < 600; ++i)
        for (int j = 0; j < 600; ++j)
            allowed(i, j) = j <= i;
    const QImage plain = render(c);
    c.setAllowed(allowed);
    const QImage veiled = render(c);
    const QPoint upper = c.cellCenter(50, 550).toPoint(), lower = c.cellCenter(550, 50).toPoint();
    QVERIFY(plain.pixel(upper) != veiled.pixel(upper));
    QCOMPARE(plain.pixel(lower), veiled.pixel(lower));

    // Maps share one veil per mask: a second map with the opposite mask, painted in between,
    // must not lend the first its veil, nor take the first's.
    OwnedMap owned_other;
    HeatmapController& other = *owned_other;
    other.setPooling(Pooling::Mean);
    other.setMatrix(m);
    other.setLabels(labels, labels, true);
    other.setDataRange(0.0, 1.0);
    const BoolMatrix opposite = allowed.unaryExpr([](bool a) { return !a; });
    other.setAllowed(opposite);
    const QImage otherVeiled = render(other);
    QCOMPARE(otherVeiled.pixel(upper), plain.pixel(upper));
    QVERIFY(otherVeiled.pixel(lower) != plain.pixel(lower));
    const QImage again = render(c);
    QCOMPARE(again.pixel(upper), veiled.pixel(upper));
    QCOMPARE(again.pixel(lower), plain.pixel(lower));
    // A new mask on the same map moves its veil.
    c.setAllowed(opposite);
    const QImage moved = render(c);
    QCOMPARE(moved.pixel(upper), plain.pixel(upper));
    QCOMPARE(moved.pixel(lower), otherVeiled.pixel(lower));
}

// A hidden map does not redraw on every change (a model's explorer tab behind its Model tab
// would cost ~50 ms an edit), yet a render of it (an export) or showing it draws the latest
// numbers, with no event loop in between for the render.
void TestHeatmap::hiddenMapIsDrawnWhenPaintedOrShown() {
    OwnedMap owned_c;
    HeatmapController& c = *owned_c;
    c.setGradient(ColorMap::Viridis);
    c.setDataRange(0, 1);
    c.setLabels({"a", "b", "c"}, {"a", "b", "c"}, true);
    const auto filled = [](float value) { return EngineF::Matrix::Constant(3, 3, value).eval(); };
    const EngineF::Matrix dark = filled(0.1f), bright = filled(0.9f);
    c.setMatrix(dark);
    const QImage before = render(c);
    const QPoint centre = c.cellCenter(1, 1).toPoint();
    QVERIFY(near(before.pixel(centre), gradientColor(ColorMap::Viridis, 0.1, 0, 1).rgb()));
    // Shown once, then hidden, as a tab behind another (showing sets the buffers' pixel ratio,
    // without which QCustomPlot redraws on its next paint anyway).
    c.widget()->show();
    QVERIFY(QTest::qWaitForWindowExposed(c.widget()));
    QCoreApplication::processEvents();
    c.widget()->hide();
    QVERIFY(near(c.widget()->grab().toImage().pixel(centre),
                 gradientColor(ColorMap::Viridis, 0.1, 0, 1).rgb()));
    c.setMatrix(bright);
    c.replot();
    const QImage rendered = c.widget()->grab().toImage();
    QVERIFY2(near(rendered.pixel(centre), gradientColor(ColorMap::Viridis, 0.9, 0, 1).rgb()),
             qPrintable(QColor(rendered.pixel(centre)).name()));
    // Changed again while hidden, then shown: the first paint shows the change.
    c.setMatrix(dark);
    c.replot();
    c.widget()->show();
    QVERIFY(QTest::qWaitForWindowExposed(c.widget()));
    QCoreApplication::processEvents();
    const QImage shown = c.widget()->grab().toImage();
    QVERIFY2(near(shown.pixel(centre), gradientColor(ColorMap::Viridis, 0.1, 0, 1).rgb()),
             qPrintable(QColor(shown.pixel(centre)).name()));
}

void TestHeatmap::slidingWindowIsItsOwnPartOfTheMask() {
    // Gemma 2's layer 0: causal with a sliding window of W = 3 (a scene's window 2).
    const Scene scene = familyLayer("gemma2-layer0");
    QVERIFY(scene.mask.causal);
    QCOMPARE(scene.mask.window, std::optional<int>(2));
    const EngineF engine = computed(scene);
    QCOMPARE(maskReasons(scene.mask, 5, 1),
             QStringList{QStringLiteral("outside the sliding window (W = 3)")});
    QCOMPARE(maskReasons(scene.mask, 1, 5),
             QStringList{QStringLiteral("causal (key 5 comes after query 1)")});
    QVERIFY(maskReasons(scene.mask, 5, 3).isEmpty());
    const QString text = explainCell(engine, Stage::Weights, 1, 5, 1);
    QVERIFY2(text.contains(QStringLiteral("masked by outside the sliding window (W = 3)")),
             qPrintable(text));
    // The window's cells: hidden by the window, not by the causal part.
    const BoolMatrix window = slidingWindowCells(scene.mask, 7, 7);
    for (int i = 0; i < 7; ++i) {
        for (int j = 0; j < 7; ++j)
            QCOMPARE(window(i, j), j <= i - 3);
    }
    QCOMPARE(slidingWindowCells(Mask{}, 7, 7).size(), Eigen::Index(0));
    // Hatched the other way: with the window's cells named, those cells' pixels change and the
    // causal ones' do not.
    const auto drawn = [&](const BoolMatrix& outside, QRect& windowCell, QRect& causalCell) {
        OwnedMap owned;
        HeatmapController& c = *owned;
        c.setGradient(ColorMap::Viridis);
        c.setMatrix(engine.weights(0));
        c.setDataRange(0, 1);
        c.setAllowed(engine.allowed(), outside);
        QStringList labels;
        for (const std::string& token : scene.tokens)
            labels << QString::fromStdString(token);
        c.setLabels(labels, labels, true);
        const QImage image = render(c);
        windowCell = cellPixels(c, 6, 0);
        causalCell = cellPixels(c, 0, 6);
        return image;
    };
    QRect windowCell, causalCell, windowCell2, causalCell2;
    const QImage plain = drawn(BoolMatrix(), windowCell, causalCell);
    const QImage split = drawn(window, windowCell2, causalCell2);
    QCOMPARE(windowCell, windowCell2);
    QVERIFY(plain.copy(causalCell) == split.copy(causalCell));  // causal: unchanged
    QVERIFY(plain.copy(windowCell) != split.copy(windowCell));  // window: the other hatch
}

// MPNet's bias joins the scaled score after the division; its own stage names what it is.
void TestHeatmap::positionBiasTooltipsShowTheSum() {
    const Scene scene = familyLayer("mpnet-layer1");
    QCOMPARE(scene.scoreTerms.afterScale.size(), std::size_t{4});
    const EngineF engine = computed(scene);
    QVERIFY(engine.hasStage(Stage::PositionBias));
    QVERIFY(!engine.hasStage(Stage::PositionTerms));
    const int h = 1, q = 5, k = 2;
    const auto g5 = [](double v) { return QString::number(v, 'g', 5); };
    const double raw = engine.scores(h)(q, k), bias = engine.positionBias(h)(q, k);
    const double scaled = engine.scaled(h)(q, k);
    QVERIFY(std::abs(scaled - (raw / engine.divisor() + bias)) < 1e-6);
    const QStringList lines = explainCell(engine, Stage::Scaled, h, q, k).split('\n');
    QCOMPARE(lines[2], QStringLiteral("%1 ÷ %2 + %3 = %4 (÷ %2: chosen divisor)")
                           .arg(g5(raw), g5(engine.divisor()), g5(bias), g5(scaled)));
    const QStringList biasLines = explainCell(engine, Stage::PositionBias, h, q, k).split('\n');
    QVERIFY2(biasLines[2].contains("relative position bias"), qPrintable(biasLines[2]));
    QCOMPARE(biasLines[3], QStringLiteral("distance key − query = -3"));
    const QStringList weightLines = explainCell(engine, Stage::Weights, h, q, k).split('\n');
    QVERIFY2(
        weightLines[2].contains(QStringLiteral("÷ %1 + %2").arg(g5(engine.divisor()), g5(bias))),
        qPrintable(weightLines[2]));
}

void TestHeatmap::softCapTooltipsShowTheCap() {
    const Scene scene = familyLayer("gemma2-layer0");
    QCOMPARE(scene.softCap, std::optional<double>(2.0));
    const EngineF engine = computed(scene);
    QVERIFY(engine.hasStage(Stage::Capped));
    const int h = 2, q = 4, k = 3;
    const auto g5 = [](double v) { return QString::number(v, 'g', 5); };
    const double scaled = engine.scaled(h)(q, k), capped = engine.capped(h)(q, k);
    QVERIFY(std::abs(capped - 2.0 * std::tanh(scaled / 2.0)) < 1e-6);
    const QStringList lines = explainCell(engine, Stage::Capped, h, q, k).split('\n');
    QCOMPARE(lines[0], QStringLiteral("head 2 · capped scores, query 4 “%1” → key 3 “%2”")
                           .arg(QString::fromStdString(scene.tokens[4]),
                                QString::fromStdString(scene.tokens[3])));
    QCOMPARE(lines[3], QStringLiteral("2·tanh(%1 / 2) = %2").arg(g5(scaled), g5(capped)));
    // The weights' softmax reads the capped scores, and says so.
    double rowMax = -INFINITY, sum = 0.0;
    for (int j = 0; j < 7; ++j) {
        if (engine.allowed()(q, j)) rowMax = std::max(rowMax, double(engine.capped(h)(q, j)));
    }
    for (int j = 0; j < 7; ++j) {
        if (engine.allowed()(q, j)) sum += std::exp(double(engine.capped(h)(q, j)) - rowMax);
    }
    const float weight = engine.weights(h)(q, k);
    const QStringList weightLines = explainCell(engine, Stage::Weights, h, q, k).split('\n');
    QCOMPARE(weightLines[2],
             QStringLiteral("q_4·k_3 = %1, ÷ %2 = %3, capped 2·tanh(%3 / 2) = %4")
                 .arg(g5(engine.scores(h)(q, k)), g5(engine.divisor()), g5(scaled), g5(capped)));
    QCOMPARE(
        weightLines[3],
        QStringLiteral("exp(%1 − %2) / %3 = %4").arg(g5(capped), g5(rowMax), g5(sum), g5(weight)));
}

void TestHeatmap::rotaryTooltipSaysWhichDimensionsTurn() {
    // Phi-3's partial_rotary_factor 0.5 on heads of 8: columns 0–3 turn, as pairs (0, 2), (1, 3).
    const Scene scene = familyLayer("phi3-layer0");
    const EngineF engine = computed(scene);
    const QString still = explainCell(engine, Stage::Key, 1, 3, 6);
    QVERIFY2(still.endsWith(QStringLiteral(
                 "rotary: dimension 6 does not turn (partial rotary turns dimensions 0–3 of 8)")),
             qPrintable(still));
    const double theta = ops::ropeInverseFrequencies(8, *scene.rotary)[1];
    const QString turned = explainCell(engine, Stage::Query, 1, 3, 1);
    QVERIFY2(turned.endsWith(
                 QStringLiteral("rotary: turned with dimension 3 by position 3 × θ_1 "
                                "= 3 × %1 = %2 rad")
                     .arg(QString::number(theta, 'g', 5), QString::number(3 * theta, 'g', 5))),
             qPrintable(turned));
    QVERIFY(!explainCell(engine, Stage::Value, 1, 3, 1).contains(QStringLiteral("rotary")));
}

QTEST_MAIN(TestHeatmap)
#include "test_heatmap.moc"

// Across every width from roomy to cramped, token labels lying flat are all there: a map turns
// them upright before it drops any (at 1024x768 the default scene's cells once fell in the two
// pixels where "The cat sat on the mat" lay flat with every other word missing).
void TestHeatmap::tokenLabelsTurnUprightBeforeTheyThin() {
    const EngineF engine = computed(io::loadPreset(QStringLiteral("default")));
    const QStringList words = {"The", "cat", "sat", "on", "the", "mat"};
    int flat = 0, upright = 0;
    for (int width = 520; width >= 200; width -= 2) {
        OwnedMap owned_c;
        HeatmapController& c = *owned_c;
        c.setLabels(words, words, true);
        c.setMatrix(engine.weights(0));
        render(c, width, 360);
        const QStringList shown = c.shownColumnLabels();
        QVERIFY(!shown.isEmpty());
        if (!c.columnLabelsUpright()) {
            ++flat;
            QVERIFY2(shown.size() == words.size(),
                     qPrintable(QStringLiteral("%1 px: %2 of 6 labels lying flat")
                                    .arg(width)
                                    .arg(shown.size())));
        } else {
            ++upright;
        }
    }
    // The sweep crossed the point where the labels turn.
    QVERIFY(flat > 0);
    QVERIFY(upright > 0);
}
