// The guided walkthrough: each step marks its stages in the grid, its own map shows exactly the
// engine's (or the scene's) matrix, and its text follows the live numbers and says what does not
// apply to the scene.

#include <QAction>
#include <QDockWidget>
#include <QSpinBox>
#include <QUndoStack>
#include <QtTest>
#include <cmath>

#include "document/attention_document.h"
#include "plot/heatmap_controller.h"
#include "plot/heatmap_grid.h"
#include "support/classroom_fixture.h"
#include "support/map_equals.h"
#include "ui/classroom/classroom.h"
#include "ui/classroom/walkthrough_panel.h"
#include "ui/window/main_window.h"

using namespace ae;
using namespace ae::ui;
using namespace ae::plot;

class TestClassroomWalkthrough : public QObject, private test::ClassroomFixture {
    Q_OBJECT
private slots:
    void initTestCase() { test::startClassroomTests(); }
    void init() { openWindow(); }
    void cleanup() { closeWindow(); }
    void walkthroughStepsMapOntoEngineStages();
    void walkthroughSaysWhatDoesNotApply();
    void walkthroughExplainsAnRmsNorm();
};

void TestClassroomWalkthrough::walkthroughStepsMapOntoEngineStages() {
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

void TestClassroomWalkthrough::walkthroughSaysWhatDoesNotApply() {
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
void TestClassroomWalkthrough::walkthroughExplainsAnRmsNorm() {
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

QTEST_MAIN(TestClassroomWalkthrough)
#include "test_classroom_walkthrough.moc"
