// Explain › Why rotary positions? in the window: the action, the view on a version 1 scene (no
// rotary: the defaults) and on a model layer with llama3-scaled rotary positions, its numbers
// against the engine, and that each slider changes what is drawn (and only what it should).

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QtTest>
#include <cmath>
#include <memory>

#include "core/attention_engine.h"
#include "core/ops.h"
#include "document/attention_document.h"
#include "io/scene/scene_file.h"
#include "plot/heatmap_grid.h"
#include "plot/rotary_charts.h"
#include "support/classroom_window.h"
#include "support/result_check.h"
#include "ui/classroom/classroom.h"
#include "ui/classroom/rotary_view.h"
#include "ui/window/main_window.h"

using namespace ae;
using namespace ae::ui;

namespace {

Scene layer(const char* name) {
    return io::loadSceneFile(aetest::dataPath(QStringLiteral("scene-v2/%1.scene.json").arg(name)));
}

double largestGap(const QVector<QPointF>& a, const QVector<QPointF>& b) {
    if (a.size() != b.size()) return INFINITY;
    double gap = 0;
    for (int k = 0; k < a.size(); ++k)
        gap = std::max(gap, std::abs(a[k].y() - b[k].y()));
    return gap;
}

bool samePoint(QPointF a, QPointF b) {
    return std::abs(a.x() - b.x()) < 1e-12 && std::abs(a.y() - b.y()) < 1e-12;
}

}  // namespace

class TestRotaryView : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { test::startClassroomTests(); }
    void init();
    void cleanup();
    void actionInTheExplainMenuOpensOnAVersion1Scene();
    void opensOnARotaryLayerWithTheEnginesScores();
    void slidersChangeWhatIsDrawn();
    void scalingChangesOnlyTheLongWavelengths();
    void followsTheWindowAndItsEdits();
    void headsTooNarrowToTurnSaySo();

private:
    void settle() { test::settleClassroom(); }
    RotaryView* openView() {
        window_->findChild<QAction*>(QStringLiteral("rotaryAction"))->trigger();
        settle();
        return window_->classroom()->rotaryView();
    }
    void openLayer(const char* name) {
        window_->document()->resetScene(layer(name));
        window_->document()->waitForResults();
        settle();
    }
    std::unique_ptr<MainWindow> window_;
};

void TestRotaryView::init() {
    window_ = test::classroomWindow();
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
    QApplication::setActiveWindow(window_.get());
    settle();
}

void TestRotaryView::cleanup() {
    window_.reset();
    test::forgetPresentationScale();
}

void TestRotaryView::actionInTheExplainMenuOpensOnAVersion1Scene() {
    auto* action = window_->findChild<QAction*>(QStringLiteral("rotaryAction"));
    QVERIFY(action);
    QCOMPARE(action->shortcut(), QKeySequence(Qt::Key_F10));
    bool inExplain = false;
    for (QAction* top : window_->menuBar()->actions()) {
        if (top->menu() && top->menu()->title() == QStringLiteral("E&xplain"))
            inExplain = top->menu()->actions().contains(action);
    }
    QVERIFY(inExplain);

    // The default scene: version 1, sinusoidal positions, no rotary, d_head = 2 (one pair).
    const Scene& scene = window_->document()->scene();
    QVERIFY(!scene.rotary && !scene.usesVersion2());
    RotaryView* view = openView();
    QVERIFY(view->isVisible());
    QVERIFY2(view->problem().isEmpty(), qPrintable(view->problem()));
    const RotaryStudy* study = view->study();
    QVERIFY(study);
    QVERIFY(!study->sceneHasRotary());
    QCOMPARE(study->parameters().theta, 10000.0);
    QCOMPARE(study->pairCount(), scene.dHead() / 2);
    auto* note = view->findChild<QLabel*>(QStringLiteral("rotarySourceNote"));
    QVERIFY(note->text().contains(QStringLiteral("no rotary positions")));
    QVERIFY(note->text().contains(QStringLiteral("10000")));
    QVERIFY(note->text().contains(QStringLiteral("absolute positions are left out")));
    // Drawn: the pair's arrows are the study's rotated pair, the curves its scores.
    const RotatedPair pair = study->rotatedPairs(view->positions()).front();
    QVERIFY(samePoint(view->drawnQueryTip(0), {pair.queryX, pair.queryY}));
    QVERIFY(samePoint(view->drawnKeyTip(0), {pair.keyX, pair.keyY}));
    QVERIFY(view->rotaryGap() < 1e-12);
    QVERIFY(view->sinusoidalGap() > 1e-3);

    // The odd head of four-words (d_head 3): one pair and a column that is not turned.
    window_->openPreset(QStringLiteral("four-words"));
    settle();
    QVERIFY(view->study());
    QCOMPARE(view->study()->headDim(), 3);
    QCOMPARE(view->study()->pairCount(), 1);
    QVERIFY(note->text().contains(QStringLiteral("odd")));
    // Cross-attention: the keys are the source sentence's.
    window_->openPreset(QStringLiteral("cross-sentences"));
    settle();
    QVERIFY(view->study());
    QCOMPARE(view->keyChoice()->count(),
             static_cast<int>(window_->document()->scene().sourceTokens.size()));
    QVERIFY(view->rotaryGap() < 1e-12);
}

void TestRotaryView::opensOnARotaryLayerWithTheEnginesScores() {
    openLayer("llama-rope-scaled-layer0");
    const Scene& scene = window_->document()->scene();
    window_->grid()->setSelectedRow(5);
    window_->findChild<QSpinBox*>(QStringLiteral("headSpin"))->setValue(2);
    settle();
    RotaryView* view = openView();
    QVERIFY2(view->problem().isEmpty(), qPrintable(view->problem()));
    const RotaryStudy* study = view->study();
    QVERIFY(study && study->sceneHasRotary());
    QCOMPARE(view->parameters(), *scene.rotary);
    QCOMPARE(view->head(), 2);
    QCOMPARE(view->queryToken(), 5);
    QCOMPARE(view->keyToken(), 0);
    // The sliders start at the tokens' own positions: the view's q·k is the engine's raw score.
    QCOMPARE(view->positions(), (TokenPositions{5, 0}));
    AttentionEngine<double> engine(scene);
    engine.compute();
    for (int key : {0, 3, 5, 6}) {
        view->keyChoice()->setCurrentIndex(key);
        emit view->keyChoice()->activated(key);
        QCOMPARE(view->keyToken(), key);
        QCOMPARE(view->positions(), (TokenPositions{5, key}));
        const double score = view->study()->rotaryScore(view->positions());
        QVERIFY(std::abs(score - engine.scores(2)(5, key)) < 1e-12);
        // ... and the curve drawn from the slider's start passes through it at distance 5 − key.
        const QVector<QPointF> curve = view->rotaryCurveChart()->drawnCurve(0);
        const QPointF at = curve[5 - key + RotaryView::kDistanceRange];
        QCOMPARE(at.x(), double(5 - key));
        if (key <= 5) QVERIFY(std::abs(at.y() - engine.scores(2)(5, key)) < 1e-12);
        QVERIFY(view->readout().contains(QString::number(engine.scores(2)(5, key), 'g', 3)));
    }
    // The document's own (float) scores agree too: the view reads the same layer.
    QVERIFY(std::abs(view->study()->rotaryScore({5, 6}) -
                     window_->document()->engine().scores(2)(5, 6)) < 1e-5);
}

void TestRotaryView::slidersChangeWhatIsDrawn() {
    openLayer("llama-rope-scaled-layer1");
    RotaryView* view = openView();
    QVERIFY(view->study());
    const auto tips = [view] {
        QVector<QPointF> out;
        for (int s = 0; s < std::min(RotaryView::kLargePairs, view->study()->pairCount()); ++s)
            out << view->drawnQueryTip(s) << view->drawnKeyTip(s);
        return out;
    };
    view->distanceSlider()->setValue(4);
    view->startSlider()->setValue(10);
    const QVector<QPointF> before = tips();
    const QVector<QPointF> rotaryBefore = view->rotaryCurveChart()->drawnCurve(0);
    const QVector<QPointF> sinusoidalBefore = view->sinusoidalCurveChart()->drawnCurve(0);
    const QString readoutBefore = view->readout();

    // Distance: the query turns, the key (at the start) stays.
    view->distanceSlider()->setValue(9);
    QCOMPARE(view->positions(), (TokenPositions{19, 10}));
    QVector<QPointF> now = tips();
    QVERIFY(!samePoint(now[0], before[0]));  // pair 0's q
    QVERIFY(samePoint(now[1], before[1]));   // pair 0's k
    view->distanceSlider()->setValue(4);

    // Move both: every arrow turns, q·k and the rotary curve stay, the sinusoidal curve moves.
    view->startSlider()->setValue(300);
    QCOMPARE(view->positions(), (TokenPositions{304, 300}));
    now = tips();
    QVERIFY(!samePoint(now[0], before[0]) && !samePoint(now[1], before[1]));
    QVERIFY(largestGap(view->rotaryCurveChart()->drawnCurve(0), rotaryBefore) < 1e-12);
    QVERIFY(largestGap(view->sinusoidalCurveChart()->drawnCurve(0), sinusoidalBefore) > 1e-3);
    const auto scoreIn = [](const QString& readout) {
        return readout.section(QLatin1Char('<'), 1, 1);
    };
    QCOMPARE(scoreIn(view->readout()), scoreIn(readoutBefore));
    // The second curve, kSecondStartGap later, lies on the first for rotary only.
    QVERIFY(largestGap(view->rotaryCurveChart()->drawnCurve(0),
                       view->rotaryCurveChart()->drawnCurve(1)) < 1e-12);
    QVERIFY(largestGap(view->sinusoidalCurveChart()->drawnCurve(0),
                       view->sinusoidalCurveChart()->drawnCurve(1)) > 1e-3);
    view->startSlider()->setValue(10);

    // Dragging the handle: the curves follow once the queued moves are in.
    view->startSlider()->setSliderDown(true);
    view->startSlider()->setValue(300);
    view->startSlider()->setValue(301);
    QTRY_VERIFY(largestGap(view->sinusoidalCurveChart()->drawnCurve(0), sinusoidalBefore) > 1e-3);
    view->startSlider()->setSliderDown(false);
    view->startSlider()->setValue(10);
    settle();
    QVERIFY(largestGap(view->sinusoidalCurveChart()->drawnCurve(0), sinusoidalBefore) < 1e-12);

    // θ: pair 0 turns by θ_0 = 1 whatever θ is; the slower pairs turn differently.
    const double theta = view->parameters().theta;
    view->thetaSlider()->setValue(view->thetaSlider()->value() - 40);
    QVERIFY(view->parameters().theta < theta / 10);
    QCOMPARE(view->study()->parameters().theta, view->parameters().theta);
    now = tips();
    QVERIFY(samePoint(now[0], before[0]));
    QVERIFY(!samePoint(now[2], before[2]));  // pair 1's q
    QVERIFY(largestGap(view->rotaryCurveChart()->drawnCurve(0), rotaryBefore) > 1e-6);
    // The sinusoidal case has no θ: unchanged.
    QVERIFY(largestGap(view->sinusoidalCurveChart()->drawnCurve(0), sinusoidalBefore) < 1e-12);

    // The scene's parameters back: what was drawn first is drawn again.
    view->findChild<QPushButton*>(QStringLiteral("rotaryResetButton"))->click();
    QCOMPARE(view->parameters(), *window_->document()->scene().rotary);
    now = tips();
    for (int k = 0; k < now.size(); ++k)
        QVERIFY(samePoint(now[k], before[k]));

    // The pair selector: the large plots show later pairs.
    if (view->study()->pairCount() > 1) {
        auto* first = view->findChild<QSpinBox*>(QStringLiteral("rotaryFirstPairSpin"));
        first->setValue(1);
        const RotatedPair pair = view->study()->rotatedPairs(view->positions())[1];
        QVERIFY(samePoint(view->drawnQueryTip(0), {pair.queryX, pair.queryY}));
    }
}

void TestRotaryView::scalingChangesOnlyTheLongWavelengths() {
    window_->openPreset(QStringLiteral("bert-base"));  // d_head 64: 32 pairs
    settle();
    RotaryView* view = openView();
    QVERIFY(view->study());
    QCOMPARE(view->study()->pairCount(), 32);
    const QVector<QPointF> original = view->frequencyChart()->drawnCurve(0);
    QCOMPARE(original.size(), 32);
    // No scaling: both graphs the same.
    QVERIFY(largestGap(original, view->frequencyChart()->drawnCurve(1)) == 0.0);
    view->scalingChoice()->setCurrentIndex(static_cast<int>(RopeScaling::Llama3));
    QCOMPARE(view->factorSpin()->value(), 8.0);  // a scaling switched on starts at Llama 3.1's
    view->originalPositionsSpin()->setValue(4096);
    const RopeParameters rope = view->parameters();
    QCOMPARE(rope.scaling, RopeScaling::Llama3);
    const QVector<QPointF> scaled = view->frequencyChart()->drawnCurve(1);
    const std::vector<double> expected = view->study()->wavelengths();
    const std::vector<double> theta = ops::ropeInverseFrequencies(64, rope);
    int kept = 0, slowed = 0;
    for (int i = 0; i < 32; ++i) {
        QCOMPARE(scaled[i].y(), expected[size_t(i)]);
        QVERIFY(std::abs(scaled[i].y() - 2 * M_PI / theta[size_t(i)]) < 1e-9 * scaled[i].y());
        QCOMPARE(view->frequencyChart()->drawnCurve(0)[i].y(), original[i].y());
        const double shortest = rope.originalMaxPositions / rope.highFrequencyFactor;
        const double longest = rope.originalMaxPositions / rope.lowFrequencyFactor;
        if (original[i].y() < shortest) {
            QCOMPARE(scaled[i].y(), original[i].y());
            ++kept;
        } else if (original[i].y() > longest) {
            QVERIFY(std::abs(scaled[i].y() / original[i].y() - 8.0) < 1e-12);
            ++slowed;
        }
    }
    QVERIFY(kept > 0 && slowed > 0);
    // The curves follow: slower pairs change q·k at long distances.
    QVERIFY(view->rotaryGap() < 1e-12);
}

void TestRotaryView::followsTheWindowAndItsEdits() {
    openLayer("qwen3-layer0");
    RotaryView* view = openView();
    QVERIFY(view->study());
    window_->findChild<QSpinBox*>(QStringLiteral("headSpin"))->setValue(1);
    QCOMPARE(view->head(), 1);
    window_->grid()->setSelectedRow(3);
    QCOMPARE(view->queryToken(), 3);
    const double before = view->study()->rotaryScore(view->positions());
    // An edit of the query's embedding reaches the view once the results are in.
    QString error;
    QVERIFY(window_->document()->setEmbeddingValue(Stream::Query, 3, 0, 0.9, &error));
    window_->document()->waitForResults();
    settle();
    QVERIFY(view->study());
    const double after = view->study()->rotaryScore(view->positions());
    QVERIFY(std::abs(after - before) > 1e-9);
    AttentionEngine<double> engine(window_->document()->scene());
    engine.compute();
    const TokenPositions p = view->positions();
    QCOMPARE(p, (TokenPositions{3, view->keyToken()}));
    QVERIFY(std::abs(after - engine.scores(1)(3, view->keyToken())) < 1e-12);
}

void TestRotaryView::headsTooNarrowToTurnSaySo() {
    // The default scene with 8 heads: d_head = 1, nothing to pair.
    QString error;
    QVERIFY2(window_->document()->setHeads(8, &error), qPrintable(error));
    window_->document()->waitForResults();
    settle();
    RotaryView* view = openView();
    QVERIFY(!view->study());
    QVERIFY(view->problem().contains(QStringLiteral("d_head = 1")));
    // Back to 4 heads: the view comes back.
    QVERIFY(window_->document()->setHeads(4, &error));
    window_->document()->waitForResults();
    settle();
    QVERIFY(view->study());
    QVERIFY(view->problem().isEmpty());
}

QTEST_MAIN(TestRotaryView)
#include "test_rotary_view.moc"
