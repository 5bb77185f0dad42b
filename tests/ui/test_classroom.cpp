// The classroom features: gallery, walkthrough, neuron view, pin and compare, and the what-if
// comparisons. Every number is checked against the document's float engine (or the scaling
// study), cell by cell. Presentation mode and the keys are in test_presentation.
// With AE_TOUR_DIR set, tour() also saves the screenshots of the README's tour there.

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QDockWidget>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSlider>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStyle>
#include <QStyleOptionSlider>
#include <QTabBar>
#include <QTableWidget>
#include <QtTest>
#include <map>
#include <memory>

#include "document/attention_document.h"
#include "io/scene/scene_file.h"
#include "plot/heatmap_controller.h"
#include "plot/heatmap_grid.h"
#include "support/classroom_window.h"
#include "ui/classroom/classroom.h"
#include "ui/classroom/comparison_views.h"
#include "ui/classroom/examples_gallery.h"
#include "ui/classroom/neuron_view.h"
#include "ui/classroom/walkthrough_panel.h"
#include "ui/window/main_window.h"
#include "ui/window/presentation_mode.h"

using namespace ae;
using namespace ae::ui;

namespace {

// The value the map colours in its cell (row, column).
double cell(HeatmapController* map, int row, int column) {
    return map->cellValue(row, column);
}

// Every cell of the map equals the float matrix exactly (the map holds double(float)).
template <typename M>
bool mapEquals(HeatmapController* map, const M& m, QString* why) {
    if (map->rows() != m.rows() || map->columns() != m.cols()) {
        *why = QStringLiteral("shape %1x%2, expected %3x%4")
                   .arg(map->rows())
                   .arg(map->columns())
                   .arg(m.rows())
                   .arg(m.cols());
        return false;
    }
    for (int i = 0; i < m.rows(); ++i) {
        for (int j = 0; j < m.cols(); ++j) {
            const double expected = static_cast<double>(static_cast<float>(m(i, j)));
            if (cell(map, i, j) != expected) {
                *why = QStringLiteral("cell (%1, %2) = %3, expected %4")
                           .arg(i)
                           .arg(j)
                           .arg(cell(map, i, j), 0, 'g', 9)
                           .arg(expected, 0, 'g', 9);
                return false;
            }
        }
    }
    return true;
}

#define VERIFY_MAP(map, matrix)                                        \
    do {                                                               \
        QString why_;                                                  \
        QVERIFY2(mapEquals((map), (matrix), &why_), qPrintable(why_)); \
    } while (false)

}  // namespace

class TestClassroom : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void init();
    void cleanup();
    void galleryOffersRequiredScenesAndOpensThem();
    void galleryOnlyOnFirstStart();
    void walkthroughStepsMapOntoEngineStages();
    void walkthroughSaysWhatDoesNotApply();
    void walkthroughExplainsAnRmsNorm();
    void neuronViewEqualsEngine();
    void differenceIsExactlyCurrentMinusPinned();
    void f5TogglesAndOnlyRepinRepins();
    void scalingPlotGrowsLikeDk();
    void permutationPropertyHoldsOnlyWithoutEncodings();
    void threeMatricesShareMeansSymmetric();
    void threeMatricesSymmetricDespiteCausalMask();
    void scalingSliderTicksCarryNumbers();
    void tour();

private:
    void settle() { test::settleClassroom(); }
    void open(const char* preset) {
        window_->openPreset(QString::fromLatin1(preset));
        settle();
    }
    void checkNeuronView();
    Classroom* classroom() const { return window_->classroom(); }
    const EngineF& engine() const { return window_->document()->engine(); }

    std::unique_ptr<MainWindow> window_;
};

void TestClassroom::initTestCase() {
    test::startClassroomTests();
}

void TestClassroom::init() {
    window_ = test::classroomWindow();
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
    QApplication::setActiveWindow(window_.get());
    settle();
}

void TestClassroom::cleanup() {
    window_.reset();
    test::forgetPresentationScale();
}

void TestClassroom::galleryOffersRequiredScenesAndOpensThem() {
    // The constructor never opens a dialog: tests and scripts would block on it.
    for (QWidget* w : QApplication::topLevelWidgets())
        QVERIFY2(!(qobject_cast<QDialog*>(w) && w->isVisible()), qPrintable(w->objectName()));

    const QStringList required = {"journey",    "four-words",      "tutorial-variant", "bert-base",
                                  "gpt2-style", "cross-sentences", "why-scale"};
    QStringList builtIn;
    for (const io::PresetInfo& p : io::presets())
        builtIn << p.name;
    QStringList offered;
    for (const GalleryExample& e : galleryExamples()) {
        offered << e.preset;
        QVERIFY2(!e.notice.isEmpty(), qPrintable(e.preset));
    }
    for (const QString& name : required) {
        QVERIFY2(offered.contains(name), qPrintable(name));
        QVERIFY2(builtIn.contains(name), qPrintable(name));
    }

    ExamplesGallery* gallery = classroom()->gallery();
    classroom()->showGallery();
    QVERIFY(gallery->isVisible());
    QVERIFY(!gallery->isModal());
    QCOMPARE(gallery->list()->count(), galleryExamples().size());
    for (int row = 0; row < gallery->list()->count(); ++row) {
        gallery->list()->setCurrentRow(row);
        gallery->openSelected();
        settle();
        const Scene expected = io::loadPreset(galleryExamples()[row].preset);
        const Scene& now = window_->document()->scene();
        QCOMPARE(now.title, expected.title);
        QCOMPARE(now.tokens, expected.tokens);
        QCOMPARE(now.hasSource, expected.hasSource);
        QVERIFY(now.embeddings.isApprox(expected.embeddings));
    }
    // The new scenes are what they claim to be.
    const Scene cross = io::loadPreset("cross-sentences");
    QVERIFY(cross.hasSource);
    QCOMPARE(cross.sourceTokens.size(), size_t(4));
    const Scene why = io::loadPreset("why-scale");
    QCOMPARE(why.dProj(), 256);
    QCOMPARE(why.heads, 1);
    QCOMPARE(why.scale.kind, ScaleKind::None);
    AttentionEngine<double> saturated(why);
    saturated.compute();
    for (Eigen::Index i = 0; i < saturated.weights(0).rows(); ++i)
        QVERIFY(saturated.weights(0).row(i).maxCoeff() > 0.95);
}

void TestClassroom::galleryOnlyOnFirstStart() {
    QSettings().remove(QStringLiteral("classroom/galleryShown"));
    classroom()->showGalleryOnFirstStart();
    QVERIFY(classroom()->gallery()->isVisible());
    classroom()->gallery()->hide();
    classroom()->showGalleryOnFirstStart();
    QVERIFY(!classroom()->gallery()->isVisible());
}

void TestClassroom::walkthroughStepsMapOntoEngineStages() {
    open("gpt2-style");  // positions, norm, causal, biases and W_O: every step applies
    window_->findChild<QSpinBox*>(QStringLiteral("headSpin"))->setValue(1);
    classroom()->walkthroughDock()->toggleViewAction()->trigger();
    settle();
    WalkthroughPanel* walk = classroom()->walkthrough();
    HeatmapGrid* grid = window_->grid();
    const Scene& scene = engine().scene();
    const int h = 1, dh = engine().dHead();
    int previous = -1;
    for (int s = 0; s < kWalkStepCount; ++s) {
        walk->setStep(s);
        settle();
        const WalkStep step = static_cast<WalkStep>(s);
        QVERIFY2(walk->currentStepApplies(), qPrintable(walkStepTitle(step)));
        QCOMPARE(grid->viewMode(), ViewMode::AllStages);
        QCOMPARE(grid->head(), h);
        QCOMPARE(grid->highlightedStages(), walkStepStages(step));
        // Pipeline order: a step never goes back to an earlier stage.
        if (const std::optional<Stage> stage = walkStepStage(step)) {
            QVERIFY(static_cast<int>(*stage) >= previous);
            previous = static_cast<int>(*stage);
        }
        for (const HeatmapTile& t : grid->tiles()) {
            QCOMPARE(t.controller->isHighlighted(), walkStepStages(step).contains(t.stage));
            if (walkStepStages(step).contains(t.stage))
                VERIFY_MAP(t.controller, stageMatrix(engine(), t.stage, h));
        }
        HeatmapController* map = walk->matrixMap();
        switch (step) {
            case WalkStep::Inputs: {
                Scene plain = scene;
                plain.norm.enabled = false;
                VERIFY_MAP(map, prepareInputs(plain, scene.embeddings));
                break;
            }
            case WalkStep::Norm:
                VERIFY_MAP(map, engine().x());
                break;
            case WalkStep::Query:
                VERIFY_MAP(map, scene.projections.query.middleCols(h * dh, dh));
                break;
            case WalkStep::Key:
                VERIFY_MAP(map, scene.projections.key.middleCols(h * dh, dh));
                break;
            case WalkStep::Value:
                VERIFY_MAP(map, scene.projections.value.middleCols(h * dh, dh));
                break;
            case WalkStep::OutputProjection:
                VERIFY_MAP(map, scene.projections.output);
                break;
            default:
                QVERIFY(!walk->matrixMapShown());
        }
    }
    // The live numbers: the divisor as the engine has it, and after a change.
    walk->setStep(static_cast<int>(WalkStep::Divide));
    QVERIFY(walk->formulaText().contains(QString::number(engine().divisor(), 'g', 4)));
    window_->document()->setScale({ScaleKind::Divisor, 3.5});
    settle();
    QVERIFY2(walk->explanationText().contains(QStringLiteral("The divisor is now 3.5")),
             qPrintable(walk->explanationText()));
    // Keys: PageDown is a presentation key; the Next button always works.
    walk->next();
    QCOMPARE(walk->currentStep(), WalkStep::Mask);
    classroom()->walkthroughDock()->toggleViewAction()->trigger();
    QVERIFY(grid->highlightedStages().isEmpty());
}

void TestClassroom::walkthroughSaysWhatDoesNotApply() {
    open("journey");  // no positions, no norm, no mask, no W_O? (it has one: d_out = 2)
    classroom()->walkthroughDock()->show();
    WalkthroughPanel* walk = classroom()->walkthrough();
    walk->setStep(static_cast<int>(WalkStep::Norm));
    QVERIFY(!walk->currentStepApplies());
    QVERIFY(walk->explanationText().contains(QStringLiteral("off")));
    walk->setStep(static_cast<int>(WalkStep::Mask));
    QVERIFY(!walk->currentStepApplies());
    QVERIFY(walk->explanationText().contains(QStringLiteral("Nothing is masked")));
    open("identity");
    walk->setStep(static_cast<int>(WalkStep::Query));
    QVERIFY(walk->explanationText().contains(QStringLiteral("identity")));
    QVERIFY(!walk->matrixMapShown());
    walk->setStep(static_cast<int>(WalkStep::OutputProjection));
    QCOMPARE(walk->currentStepApplies(), engine().hasOutput());
}

// A Llama or Qwen layer's norm is RMSNorm: the step says so, with its formula and the selected
// row's root mean square, not layer norm's mean and spread.
void TestClassroom::walkthroughExplainsAnRmsNorm() {
    open("gpt2-style");
    Scene scene = window_->document()->scene();
    scene.norm.kind = NormKind::Rms;
    scene.norm.bias.setZero();
    QVERIFY(window_->document()->replaceScene(scene, QStringLiteral("RMS norm")));
    settle();
    classroom()->walkthroughDock()->show();
    WalkthroughPanel* walk = classroom()->walkthrough();
    walk->setStep(static_cast<int>(WalkStep::Norm));
    settle();
    QVERIFY(walk->currentStepApplies());
    QCOMPARE(walkStepTitle(WalkStep::Norm, scene), QStringLiteral("RMS norm"));
    QVERIFY2(walk->formulaText().contains(QStringLiteral("mean(x²)")),
             qPrintable(walk->formulaText()));
    QVERIFY(!walk->formulaText().contains(QStringLiteral("β")));
    const int i = std::clamp(window_->grid()->selectedRow(), 0, scene.queryCount() - 1);
    const MatrixD before = inputsWithPositions(scene, scene.embeddings);
    const double rms = std::sqrt(before.row(i).squaredNorm() / static_cast<double>(before.cols()));
    const QString expected = QString::number(rms, 'g', 4);
    QVERIFY2(walk->explanationText().contains(expected),
             qPrintable(expected + QStringLiteral(" in ") + walk->explanationText()));
    QVERIFY(walk->explanationText().contains(QStringLiteral("root mean square")));
    QCOMPARE(walk->matrixMap()->title(), QStringLiteral("X after RMS norm"));
    // Layer norm again: its own words.
    QCOMPARE(walkStepTitle(WalkStep::Norm, window_->document()->scene()),
             QStringLiteral("RMS norm"));
    window_->document()->undoStack()->undo();
    settle();
    walk->setStep(static_cast<int>(WalkStep::Norm));
    settle();
    QVERIFY(walk->formulaText().contains(QStringLiteral("var")));
    QVERIFY(!walk->explanationText().contains(QStringLiteral("root mean square")));
}

void TestClassroom::checkNeuronView() {
    NeuronView* view = classroom()->neuronView();
    const int h = view->head(), i = view->query();
    const EngineF& e = engine();
    const EngineF::Matrix q = e.headQuery(h).row(i);
    const EngineF::ConstBlock k = e.headKey(h), v = e.headValue(h);
    const int lk = e.scene().keyCount(), dh = e.dHead();
    EngineF::Matrix products(lk, dh), weighted(lk, dh);
    for (int j = 0; j < lk; ++j) {
        for (int c = 0; c < dh; ++c) {
            products(j, c) = q(0, c) * k(j, c);
            weighted(j, c) = e.weights(h)(i, j) * v(j, c);
        }
    }
    VERIFY_MAP(view->queryMap(), q);
    VERIFY_MAP(view->keysMap(), k);
    VERIFY_MAP(view->productMap(), products);
    VERIFY_MAP(view->weightedMap(), weighted);
    const EngineF::Matrix context = e.context(h).row(i);
    VERIFY_MAP(view->contextMap(), context);
    QTableWidget* table = view->scoreTable();
    QCOMPARE(table->rowCount(), lk);
    for (int j = 0; j < lk; ++j) {
        QCOMPARE(table->item(j, 1)->data(Qt::UserRole).toFloat(), e.scores(h)(i, j));
        QCOMPARE(table->item(j, 2)->data(Qt::UserRole).toFloat(), e.scaled(h)(i, j));
        QCOMPARE(table->item(j, 3)->data(Qt::UserRole).toFloat(), e.weights(h)(i, j));
        // The strip's row sums are the dot products, up to float rounding.
        const double sum = products.row(j).cast<double>().sum();
        QVERIFY(std::abs(sum - e.scores(h)(i, j)) <= 1e-5 * (1 + std::abs(sum)));
    }
    const Eigen::RowVectorXd total = weighted.cast<double>().colwise().sum();
    QVERIFY((total - context.cast<double>()).cwiseAbs().maxCoeff() < 1e-5);
    QCOMPARE(view->embeddingTable()->columnCount(), e.scene().dModel());
    for (int c = 0; c < e.scene().dModel(); ++c) {
        QCOMPARE(view->embeddingTable()->item(0, c)->text().toDouble(),
                 QString::number(e.scene().embeddings(i, c), 'g', 6).toDouble());
    }
}

void TestClassroom::neuronViewEqualsEngine() {
    classroom()->neuronDock()->toggleViewAction()->trigger();
    NeuronView* view = classroom()->neuronView();
    view->setHead(2);
    view->setQuery(3);
    settle();
    QCOMPARE(window_->grid()->selectedRow(), 3);  // the query is the grid's selected row
    checkNeuronView();
    // The grid's selection drives the view, too.
    window_->grid()->setSelectedRow(1);
    QCOMPARE(view->query(), 1);
    checkNeuronView();
    // An edit of token 1's embedding, typed into the view: everything follows.
    const double before = engine().scene().embeddings(1, 4);
    view->embeddingTable()->item(0, 4)->setText(QStringLiteral("2.75"));
    settle();
    QCOMPARE(engine().scene().embeddings(1, 4), 2.75);
    QVERIFY(before != 2.75);
    checkNeuronView();
    // And an edit made elsewhere (the document, as the tokens editor does).
    QVERIFY(window_->document()->setEmbeddingValue(Stream::Query, 1, 0, -1.5));
    settle();
    checkNeuronView();
    // Cross-attention: keys are the source tokens.
    open("cross-sentences");
    view->setQuery(2);
    checkNeuronView();
}

void TestClassroom::differenceIsExactlyCurrentMinusPinned() {
    PinCompareView* pin = classroom()->pinCompare();
    QVERIFY(!pin->hasPin());
    window_->findChild<QAction*>(QStringLiteral("pinAction"))->trigger();
    QVERIFY(pin->hasPin());
    QVERIFY(classroom()->pinDock()->isVisible());
    AttentionDocument* doc = window_->document();
    doc->setScale({ScaleKind::Divisor, 0.7});
    Mask mask = doc->scene().mask;
    mask.causal = true;
    doc->setMask(mask);
    pin->setHead(2);
    settle();
    QVERIFY(pin->problem().isEmpty());
    const EngineF::Matrix& pinned = pin->pinnedWeights(2);
    const EngineF::Matrix& current = engine().weights(2);
    VERIFY_MAP(pin->pinnedMap(), pinned);
    VERIFY_MAP(pin->currentMap(), current);
    bool changed = false;
    for (int i = 0; i < pinned.rows(); ++i) {
        for (int j = 0; j < pinned.cols(); ++j) {
            const float expected = current(i, j) - pinned(i, j);
            QCOMPARE(cell(pin->differenceMap(), i, j), static_cast<double>(expected));
            changed = changed || expected != 0.0f;
        }
    }
    QVERIFY(changed);
    // A diverging map, symmetric about 0: no change is white.
    const ValueRange range = pin->differenceMap()->colorRange();
    QCOMPARE(range.lower, -range.upper);
    // Undo both changes: the difference is exactly 0 again.
    doc->undoStack()->undo();
    doc->undoStack()->undo();
    settle();
    for (int i = 0; i < pinned.rows(); ++i) {
        for (int j = 0; j < pinned.cols(); ++j)
            QCOMPARE(cell(pin->differenceMap(), i, j), 0.0);
    }
    // Other tokens: the view says so rather than comparing unlike things.
    open("four-words");
    QVERIFY(!pin->problem().isEmpty());
}

void TestClassroom::f5TogglesAndOnlyRepinRepins() {
    PinCompareView* pin = classroom()->pinCompare();
    QDockWidget* dock = classroom()->pinDock();
    QApplication::setActiveWindow(window_.get());
    // F5 opens the view, pinning the first time; F5 again closes it.
    QTest::keyClick(window_.get(), Qt::Key_F5);
    settle();
    QVERIFY(dock->isVisible());
    QVERIFY(pin->hasPin());
    const EngineF::Matrix pinned = pin->pinnedWeights(0);
    QVERIFY(pinned == engine().weights(0));
    QTest::keyClick(window_.get(), Qt::Key_F5);
    settle();
    QVERIFY(!dock->isVisible());

    // An edit, then F5 twice more: the pin is the old one, not the edited weights.
    AttentionDocument* doc = window_->document();
    doc->setScale({ScaleKind::Divisor, 0.5});
    settle();
    QTest::keyClick(window_.get(), Qt::Key_F5);
    settle();
    QVERIFY(dock->isVisible());
    QVERIFY(pin->pinnedWeights(0) == pinned);
    QVERIFY(engine().weights(0) != pinned);
    // The difference is current − pinned: check one cell by hand, and that a weight that grew
    // is positive and painted blue, as the legend says.
    pin->setHead(0);
    settle();
    const EngineF::Matrix& current = engine().weights(0);
    Eigen::Index gi = 0, gj = 0;
    (current - pinned).maxCoeff(&gi, &gj);
    const float grew = current(gi, gj) - pinned(gi, gj);
    QVERIFY(grew > 0.0f);
    QCOMPARE(cell(pin->differenceMap(), int(gi), int(gj)), static_cast<double>(grew));
    const QColor grewColour = pin->differenceMap()->cellColor(int(gi), int(gj));
    QVERIFY2(grewColour.blue() > grewColour.red(), qPrintable(grewColour.name()));
    auto* legend = pin->findChild<QWidget*>(QStringLiteral("pinLegend"));
    QVERIFY(legend && legend->isVisible());
    QStringList legendTexts;
    for (const QLabel* label : legend->findChildren<QLabel*>())
        legendTexts << label->text();
    QVERIFY2(legendTexts.contains(QStringLiteral("blue: grew since pinned")),
             qPrintable(legendTexts.join(QStringLiteral(" | "))));
    QVERIFY(legendTexts.contains(QStringLiteral("red: fell since pinned")));

    // Re-pinning is an explicit action (Shift+F5, and the view's button): then the difference
    // is zero.
    QAction* repin = window_->findChild<QAction*>(QStringLiteral("repinAction"));
    QVERIFY(repin);
    QCOMPARE(repin->shortcut(), QKeySequence(Qt::SHIFT | Qt::Key_F5));
    QTest::keyClick(window_.get(), Qt::Key_F5, Qt::ShiftModifier);
    settle();
    QVERIFY(dock->isVisible());
    QVERIFY(pin->pinnedWeights(0) == engine().weights(0));
    for (int i = 0; i < current.rows(); ++i) {
        for (int j = 0; j < current.cols(); ++j)
            QCOMPARE(cell(pin->differenceMap(), i, j), 0.0);
    }
    auto* button = pin->findChild<QPushButton*>(QStringLiteral("repinButton"));
    QVERIFY(button && button->text().contains(QStringLiteral("Re-pin")));
    doc->undoStack()->undo();
    settle();
    button->click();
    QVERIFY(pin->pinnedWeights(0) == pinned);
}

void TestClassroom::threeMatricesSymmetricDespiteCausalMask() {
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

void TestClassroom::scalingSliderTicksCarryNumbers() {
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

void TestClassroom::scalingPlotGrowsLikeDk() {
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

void TestClassroom::permutationPropertyHoldsOnlyWithoutEncodings() {
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

void TestClassroom::threeMatricesShareMeansSymmetric() {
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

// Not a check: the README's screenshots, when AE_TOUR_DIR names a folder.
void TestClassroom::tour() {
    const QString dir = qEnvironmentVariable("AE_TOUR_DIR");
    if (dir.isEmpty()) QSKIP("set AE_TOUR_DIR to save the tour's screenshots");
    const auto save = [&](QWidget* w, const QString& name) {
        settle();
        QTest::qWait(150);
        const QImage image = w->grab().toImage();
        QVERIFY(image.save(dir + QLatin1Char('/') + name));
    };
    window_->resize(1600, 1000);
    ExamplesGallery* gallery = classroom()->gallery();
    classroom()->showGallery();
    gallery->list()->setCurrentRow(5);
    save(gallery, QStringLiteral("tour-gallery.png"));
    gallery->hide();

    open("gpt2-style");
    classroom()->walkthroughDock()->show();
    classroom()->walkthrough()->setStep(static_cast<int>(WalkStep::Softmax));
    window_->grid()->setSelectedRow(3);
    save(window_.get(), QStringLiteral("tour-walkthrough.png"));
    classroom()->walkthrough()->setStep(static_cast<int>(WalkStep::Query));
    save(window_.get(), QStringLiteral("tour-walkthrough-query.png"));
    classroom()->walkthroughDock()->hide();

    open("default");
    window_->findChild<QAction*>(QStringLiteral("viewAllHeadsAction"))->trigger();
    classroom()->neuronDock()->show();
    window_->resizeDocks({classroom()->neuronDock()}, {520}, Qt::Vertical);
    window_->findChild<QSpinBox*>(QStringLiteral("headSpin"))->setValue(1);
    classroom()->neuronView()->setQuery(2);
    save(window_.get(), QStringLiteral("tour-neuron.png"));
    classroom()->neuronDock()->hide();

    window_->findChild<QAction*>(QStringLiteral("pinAction"))->trigger();
    Mask mask = window_->document()->scene().mask;
    mask.causal = true;
    window_->document()->setMask(mask);
    save(window_.get(), QStringLiteral("tour-pin.png"));
    classroom()->pinDock()->hide();
    window_->document()->undoStack()->undo();

    QDialog* three = classroom()->projectionComparison();
    three->show();
    save(three, QStringLiteral("tour-three-matrices.png"));
    three->hide();
    QDialog* scaling = classroom()->scalingPlot();
    scaling->show();
    save(scaling, QStringLiteral("tour-sqrt-dk.png"));
    scaling->hide();
    open("journey");
    PositionsComparison* positions = classroom()->positionsComparison();
    positions->show();
    positions->setEncodings(false);
    save(positions, QStringLiteral("tour-positions-off.png"));
    positions->setEncodings(true);
    save(positions, QStringLiteral("tour-positions-on.png"));
    positions->hide();

    open("default");
    classroom()->walkthroughDock()->hide();
    window_->findChild<QAction*>(QStringLiteral("viewAllHeadsAction"))->trigger();
    window_->findChild<QAction*>(QStringLiteral("highContrastAction"))->trigger();
    QApplication::setActiveWindow(window_.get());
    QTest::keyClick(window_.get(), Qt::Key_F11);
    QVERIFY(classroom()->presentation()->isActive());
    QTest::keyClick(window_.get(), Qt::Key_Q);
    QTest::keyClick(window_.get(), Qt::Key_Q);
    save(window_.get(), QStringLiteral("tour-presentation.png"));
    QTest::keyClick(window_.get(), Qt::Key_Escape);
    window_->findChild<QAction*>(QStringLiteral("highContrastAction"))->trigger();
}

QTEST_MAIN(TestClassroom)
#include "test_classroom.moc"
