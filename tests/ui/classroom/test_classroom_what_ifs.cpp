// The what-if comparisons of the Explain menu: shared Q = K gives symmetric scores (on a causal
// scene too), the √d_k study's variances and the plot drawing exactly them, the scaling slider's
// numbered ticks, and the permutation property without and with positional encodings. Every
// number is checked against the document's float engine (or the scaling study), cell by cell.

#include <QLabel>
#include <QSlider>
#include <QStyle>
#include <QStyleOptionSlider>
#include <QtTest>
#include <cmath>

#include "document/attention_document.h"
#include "plot/heatmap_controller.h"
#include "support/classroom_fixture.h"
#include "support/map_equals.h"
#include "ui/classroom/classroom.h"
#include "ui/classroom/comparison_views.h"
#include "ui/window/main_window.h"

using namespace ae;
using namespace ae::ui;
using namespace ae::plot;
using test::cell;

class TestClassroomWhatIfs : public QObject, private test::ClassroomFixture {
    Q_OBJECT
private slots:
    void initTestCase() { test::startClassroomTests(); }
    void init() { openWindow(); }
    void cleanup() { closeWindow(); }
    void scalingPlotGrowsLikeDk();
    void permutationPropertyHoldsOnlyWithoutEncodings();
    void threeMatricesShareMeansSymmetric();
    void threeMatricesSymmetricDespiteCausalMask();
    void scalingSliderTicksCarryNumbers();
};

void TestClassroomWhatIfs::scalingPlotGrowsLikeDk() {
    ScalingPlot* plot = classroom()->scalingPlot();
    const std::vector<ScalingPoint>& points = plot->points();
    QCOMPARE(points.size(), size_t(11));
    QCOMPARE(points.front().dk, 1);
    QCOMPARE(points.back().dk, 1024);
    // Tolerance: 15 %. Each variance is a mean over 16 x 16 x 32 = 8192 scores; its relative
    // standard error is below 5 % for every d_k, so 15 % is three of them.
    constexpr double kTolerance = 0.15;
    for (const ScalingPoint& p : points) {
        QVERIFY2(
            std::abs(p.rawVariance / p.dk - 1.0) < kTolerance,
            qPrintable(QStringLiteral("d_k %1: raw variance %2").arg(p.dk).arg(p.rawVariance)));
        QVERIFY2(std::abs(p.scaledVariance - 1.0) < kTolerance,
                 qPrintable(
                     QStringLiteral("d_k %1: scaled variance %2").arg(p.dk).arg(p.scaledVariance)));
    }
    // Unscaled, the softmax saturates; scaled, it does not get sharper with width.
    QVERIFY(points.back().rawMaxWeight > 0.9);
    QVERIFY(points.back().scaledMaxWeight < 0.5);
    QVERIFY(points.back().rawEntropy < 0.3);
    // The plot draws exactly the study's numbers (graph 0: raw variance, 1: scaled variance).
    const QVector<QPointF> raw = plot->drawnCurve(0), scaled = plot->drawnCurve(1);
    QCOMPARE(size_t(raw.size()), points.size());
    QCOMPARE(size_t(scaled.size()), points.size());
    for (size_t k = 0; k < points.size(); ++k) {
        QCOMPARE(raw[int(k)].x(), double(points[k].dk));
        QCOMPARE(raw[int(k)].y(), points[k].rawVariance);
        QCOMPARE(scaled[int(k)].y(), points[k].scaledVariance);
    }
}

void TestClassroomWhatIfs::permutationPropertyHoldsOnlyWithoutEncodings() {
    for (const char* preset : {"default", "journey", "gpt2-style", "cross-sentences"}) {
        open(preset);
        PositionsComparison* view = classroom()->positionsComparison();
        view->setEncodings(false);
        QVERIFY2(view->maxDeviation() < 1e-5, preset);
        // The right map (original, moved) equals the middle one (reordered sentence).
        for (int p = 0; p < view->permutedMap()->rows(); ++p) {
            for (int q = 0; q < view->permutedMap()->columns(); ++q) {
                QVERIFY(std::abs(cell(view->permutedMap(), p, q) -
                                 cell(view->reorderedMap(), p, q)) < 1e-5);
            }
        }
        view->setEncodings(true);
        QVERIFY2(view->maxDeviation() > 1e-3, preset);
        // The permutation really moves tokens.
        bool moved = false;
        for (size_t p = 0; p < view->permutation().size(); ++p)
            moved = moved || view->permutation()[p] != static_cast<int>(p);
        QVERIFY(moved);
    }
}

void TestClassroomWhatIfs::threeMatricesShareMeansSymmetric() {
    ProjectionComparison* view = classroom()->projectionComparison();
    const auto asymmetry = [&](int v) {
        const EngineF::Matrix& s = view->scores(v);
        return static_cast<double>((s - s.transpose()).cwiseAbs().maxCoeff());
    };
    QVERIFY(asymmetry(0) > 0.1);
    QVERIFY(asymmetry(1) < 1e-4);
    QVERIFY(asymmetry(2) < 1e-4);
    for (int v = 0; v < ProjectionComparison::kVariants; ++v)
        VERIFY_MAP(view->map(v), view->scores(v));  // the scores by default
    view->setShowsScores(false);
    for (int v = 0; v < ProjectionComparison::kVariants; ++v)
        VERIFY_MAP(view->map(v), view->weights(v));
    // The separate variant is the scene itself.
    QVERIFY(view->weights(0).isApprox(engine().weights(0)));
}

void TestClassroomWhatIfs::threeMatricesSymmetricDespiteCausalMask() {
    open("gpt2-style");
    QVERIFY(window_->document()->scene().mask.causal);
    ProjectionComparison* view = classroom()->projectionComparison();
    view->show();
    settle();
    QVERIFY(view->showsScores());
    // The shared variant's map is symmetric cell by cell, every cell shown (no masked NaN).
    HeatmapController* shared = view->map(1);
    const int n = shared->rows();
    QCOMPARE(shared->columns(), n);
    QVERIFY(n > 2);
    double largest = 0.0;
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
            QVERIFY(std::isfinite(cell(shared, i, j)));
            largest = std::max(largest, std::abs(cell(shared, i, j)));
        }
    }
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < i; ++j) {
            QVERIFY2(std::abs(cell(shared, i, j) - cell(shared, j, i)) <= 1e-5 * largest,
                     qPrintable(QStringLiteral("(%1, %2)").arg(i).arg(j)));
        }
    }
    // The separate variant is not symmetric, and the view says why the mask is left out.
    HeatmapController* separate = view->map(0);
    bool asymmetric = false;
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < i; ++j)
            asymmetric = asymmetric || std::abs(cell(separate, i, j) - cell(separate, j, i)) > 1e-3;
    }
    QVERIFY(asymmetric);
    auto* note = view->findChild<QLabel*>(QStringLiteral("threeMatricesMaskNote"));
    QVERIFY(note && note->isVisible());
    QVERIFY(note->text().contains(QStringLiteral("mask")));
    view->hide();
    // Without a mask there is nothing to explain.
    open("default");
    view->show();
    settle();
    QVERIFY(!note->isVisible());
    view->hide();
}

void TestClassroomWhatIfs::scalingSliderTicksCarryNumbers() {
    auto* slider = window_->findChild<QSlider*>(QStringLiteral("scaleSlider"));
    auto* row = window_->findChild<QWidget*>(QStringLiteral("scaleTickLabels"));
    QVERIFY(slider && row && row->isVisible());
    const QStringList expected{QStringLiteral("0.1"), QStringLiteral("1"), QStringLiteral("10"),
                               QStringLiteral("100")};
    QStyleOptionSlider option;
    option.initFrom(slider);
    option.orientation = slider->orientation();
    option.minimum = slider->minimum();
    option.maximum = slider->maximum();
    const QRect handle = slider->style()->subControlRect(QStyle::CC_Slider, &option,
                                                         QStyle::SC_SliderHandle, slider);
    const int span = slider->width() - handle.width();
    for (int d = 0; d < expected.size(); ++d) {
        auto* label = row->findChild<QLabel*>(QStringLiteral("scaleTick%1").arg(d));
        QVERIFY(label && label->isVisible());
        QCOMPARE(label->text(), expected[d]);
        // Each number stands under its tick (the middle ones centred, the ends flush).
        const int value = d * slider->tickInterval();
        const int tick =
            slider->mapTo(window_.get(), QPoint(0, 0)).x() + handle.width() / 2 +
            QStyle::sliderPositionFromValue(slider->minimum(), slider->maximum(), value, span);
        const QRect text = label->geometry().translated(row->mapTo(window_.get(), QPoint(0, 0)));
        const QFontMetrics metrics(label->font());
        const int textWidth = metrics.horizontalAdvance(label->text());
        const int textCentre = d == 0                     ? text.left() + textWidth / 2
                               : d == expected.size() - 1 ? text.right() - textWidth / 2
                                                          : text.center().x();
        QVERIFY2(std::abs(textCentre - tick) <= textWidth / 2 + handle.width() / 2 + 2,
                 qPrintable(QStringLiteral("%1: text at %2, tick at %3")
                                .arg(expected[d])
                                .arg(textCentre)
                                .arg(tick)));
    }
}

QTEST_MAIN(TestClassroomWhatIfs)
#include "test_classroom_what_ifs.moc"
