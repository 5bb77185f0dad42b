// The Workbench tab: activation patching on the open model's text in the window. The maps hold
// the library's effects (core/model/workbench.h) for the texts and tokens typed; the changed
// tokens and a length mismatch are said before a run; a bad token is refused in one line.
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>
#include <QUndoStack>
#include <QtTest>

#include <QCheckBox>
#include <QDir>
#include <QListWidget>
#include <QTemporaryDir>
#include "core/model/edited_model.h"
#include "core/model/workbench.h"
#include "core/value_weighting.h"
#include "document/attention_document.h"
#include "document/model_session.h"
#include "document/workbench_presets.h"
#include "document/workbench_session.h"
#include "io/model/model_folder.h"
#include "plot/effect_map.h"
#include "plot/head_grid.h"
#include "plot/head_summary_table.h"
#include "plot/model_view.h"
#include "plot/workbench_charts.h"
#include "support/model_window_fixture.h"
#include "ui/classroom/classroom.h"
#include "ui/classroom/examples_gallery.h"
#include "ui/files/export_dialog.h"
#include "ui/files/map_export.h"
#include "ui/window/presentation_mode.h"
#include "ui/window/workbench_panel.h"

using namespace ae;
using namespace ae::test;

// The model's text and the corrupted one the tests share, on gpt2-tiny (2 layers of 4 heads).
const std::vector<long long> kClean{7, 41, 3, 59, 22, 15, 36};
const std::vector<long long> kCorrupt{7, 41, 3, 12, 22, 15, 36};

class TestWorkbenchWindow : public QObject, public ModelWindowFixture {
    Q_OBJECT

private slots:
    void initTestCase() { startModelWindowTests(QStringLiteral("test_workbench_window")); }
    void init() { openWindow(); }
    void cleanup() { closeWindow(); }

    void patchingMapsHoldTheLibrarysEffects() {
        openModel();
        session()->setIds({7, 41, 3, 59, 22, 15, 36});
        settle();
        ui::WorkbenchPanel* bench = window_->workbench();
        auto* tabs = window_->findChild<QTabWidget*>(QStringLiteral("centralTabs"));
        tabs->setCurrentIndex(2);  // Explorer, Model, Workbench
        bench->corruptedField()->setText(QStringLiteral("7 41 3 12 22 15 36"));
        const QString changes = bench->findChild<QLabel*>(QStringLiteral("patchChanges"))->text();
        QVERIFY2(changes.contains(QStringLiteral("3: #59 → <b>#12</b>")), qPrintable(changes));
        bench->targetField()->setText(QStringLiteral("5"));
        bench->foilField()->setText(QStringLiteral("9"));
        QSignalSpy finished(bench->workbench(), &document::WorkbenchSession::finished);
        bench->runButton()->click();
        QVERIFY(finished.wait(60000));
        const io::ModelFolder folder(gpt2Tiny());
        const model::PatchingResult expected = model::activationPatching<float>(
            folder.model(), {7, 41, 3, 59, 22, 15, 36}, {7, 41, 3, 12, 22, 15, 36}, -1, 5, 9);
        QCOMPARE(bench->headsMap()->rows(), 2);
        QCOMPARE(bench->headsMap()->columns(), 4);
        QCOMPARE(bench->residualMap()->columns(), 7);
        for (int l = 0; l < 2; ++l) {
            for (int h = 0; h < 4; ++h) {
                QCOMPARE(bench->headsMap()->value(l, h),
                         expected.heads[static_cast<std::size_t>(l)][static_cast<std::size_t>(h)]);
                QCOMPARE(
                    bench->patternMap()->value(l, h),
                    expected.pattern[static_cast<std::size_t>(l)][static_cast<std::size_t>(h)]);
            }
            for (int t = 0; t < 7; ++t)
                QCOMPARE(
                    bench->residualMap()->value(l, t),
                    expected.residual[static_cast<std::size_t>(l)][static_cast<std::size_t>(t)]);
        }
        QVERIFY(bench->residualMap()->range() >= 1.0);
        QVERIFY2(bench->statusText().contains(QStringLiteral("logit(#5) − logit(#9)")),
                 qPrintable(bench->statusText()));
        QCOMPARE(bench->findChild<QProgressBar*>()->value(), 1000);
        QCOMPARE(window_->size(), QSize(1024, 768));  // the tab fits the window it opened in
        const QString shots = qEnvironmentVariable("AE_SHOTS_DIR");
        if (!shots.isEmpty()) {
            QTest::qWait(200);  // the maps' queued replots
            QVERIFY(
                window_->grab().save(shots + QStringLiteral("/workbench-patching-1024x768.png")));
        }
    }

    void mismatchesAreSaidInOneLine() {
        openModel();
        session()->setIds({7, 41, 3, 59, 22});
        settle();
        ui::WorkbenchPanel* bench = window_->workbench();
        bench->corruptedField()->setText(QStringLiteral("7 41 3"));
        QVERIFY(bench->findChild<QLabel*>(QStringLiteral("patchChanges"))
                    ->text()
                    .contains(QStringLiteral("3 tokens against the text's 5")));
        QSignalSpy problem(bench->workbench(), &document::WorkbenchSession::problem);
        bench->targetField()->setText(QStringLiteral("5"));
        bench->runButton()->click();
        QCOMPARE(problem.count(), 1);
        QVERIFY(bench->statusText().contains(
            QStringLiteral("patching needs texts of the same length")));
        bench->corruptedField()->setText(QStringLiteral("7 41 3 12 22"));
        bench->targetField()->setText(QStringLiteral("64"));
        bench->runButton()->click();
        QVERIFY2(bench->statusText().contains(QStringLiteral("is not a token id in [0, 64)")),
                 qPrintable(bench->statusText()));
        // An analysis that would not fit is refused before it allocates, naming what it needs.
        bench->targetField()->setText(QStringLiteral("5"));
        bench->workbench()->setMemoryLimit(1000);
        bench->runButton()->click();
        QVERIFY2(
            bench->statusText().contains(QStringLiteral("too large")) &&
                bench->statusText().contains(QStringLiteral("the clean and the corrupted run")),
            qPrintable(bench->statusText()));
        QVERIFY(!bench->workbench()->isRunning());
        bench->workbench()->setMemoryLimit(-1);
        bench->corruptedField()->setText(QStringLiteral("7 forty 3"));
        QVERIFY(bench->findChild<QLabel*>(QStringLiteral("patchChanges"))
                    ->text()
                    .contains(QStringLiteral("\"forty\" is not an id")));
    }

    // Runs the panel's analysis and waits for it.
    static void runAndWait(ui::WorkbenchPanel* bench) {
        QSignalSpy finished(bench->workbench(), &document::WorkbenchSession::finished);
        bench->runButton()->click();
        QVERIFY2(finished.wait(60000), qPrintable(bench->statusText()));
    }

    // With AE_SHOTS_DIR set, the window with the Workbench tab in front as NAME-1024x768.png.
    void shoot(const QString& name) {
        const QString shots = qEnvironmentVariable("AE_SHOTS_DIR");
        if (shots.isEmpty()) return;
        window_->findChild<QTabWidget*>(QStringLiteral("centralTabs"))->setCurrentIndex(2);
        QTest::qWait(300);  // the maps' queued replots
        QVERIFY(window_->grab().save(shots + QStringLiteral("/%1-1024x768.png").arg(name)));
    }

    ui::WorkbenchPanel* benchOnTheText() {
        openModel();
        session()->setIds(kClean);
        settle();
        return window_->workbench();
    }

    void lensGridAndCurveHoldTheLibrarysLens() {
        ui::WorkbenchPanel* bench = benchOnTheText();
        bench->modeBox()->setCurrentIndex(1);
        bench->targetField()->setText(QStringLiteral("5"));
        bench->foilField()->setText(QStringLiteral("9"));
        runAndWait(bench);
        const io::ModelFolder folder(gpt2Tiny());
        const auto run = model::runModel<float>(folder.model(), kClean);
        const model::LensResult expected = model::logitLens(folder.model(), run, {5, 9}, 5);
        QCOMPARE(bench->lensMap()->rows(), 3);  // entering L0, entering L1, the output
        QCOMPARE(bench->lensMap()->columns(), 7);
        for (int b = 0; b < 3; ++b)
            for (int t = 0; t < 7; ++t) {
                const auto at = static_cast<std::size_t>(b);
                const auto p = static_cast<std::size_t>(t);
                QCOMPARE(bench->lensMap()->value(b, t), expected.topProbabilities[at][p][0]);
                QCOMPARE(bench->lensMap()->text(b, t),
                         session()->tokenLabel(expected.topIds[at][p][0]));
            }
        QCOMPARE(bench->lensCurve()->lineCount(), 2);
        for (int b = 0; b < 3; ++b) {
            QCOMPARE(bench->lensCurve()->pointValue(0, b),
                     expected.targetProbabilities[static_cast<std::size_t>(b)][6][0]);
            QCOMPARE(bench->lensCurve()->pointValue(1, b),
                     expected.targetProbabilities[static_cast<std::size_t>(b)][6][1]);
        }
        // The last boundary is the model's own output.
        const model::Matrix<float> logits = run.logits.row(6);
        Eigen::Index top = 0;
        logits.row(0).maxCoeff(&top);
        QCOMPARE(expected.topIds[2][6][0], static_cast<long long>(top));
        shoot(QStringLiteral("workbench-lens"));
        // The curve as a logit difference: one line, logit(5) − logit(9) at each boundary, the
        // last the model's own logits; an undoable setting.
        auto* measure = bench->findChild<QComboBox*>(QStringLiteral("lensMeasure"));
        const int steps = window_->document()->undoStack()->count();
        measure->setCurrentIndex(1);
        QVERIFY(session()->document()->undoStack()->count() == steps + 1);
        QCOMPARE(bench->lensCurve()->lineCount(), 1);
        shoot(QStringLiteral("workbench-lens-difference"));
        for (int b = 0; b < 3; ++b) {
            const auto& logits = expected.targetLogits[static_cast<std::size_t>(b)][6];
            QCOMPARE(bench->lensCurve()->pointValue(0, b), logits[0] - logits[1]);
        }
        QVERIFY(std::abs(bench->lensCurve()->pointValue(0, 2) -
                         (double(run.logits(6, 5)) - double(run.logits(6, 9)))) < 1e-5);
        window_->document()->undoStack()->undo();
        QCOMPARE(measure->currentIndex(), 0);
        QCOMPARE(bench->lensCurve()->lineCount(), 2);
    }

    void attributionBarsAddUpToTheLogitDifference() {
        ui::WorkbenchPanel* bench = benchOnTheText();
        bench->modeBox()->setCurrentIndex(2);
        bench->targetField()->setText(QStringLiteral("5"));
        bench->foilField()->setText(QStringLiteral("9"));
        bench->positionBox()->setValue(4);
        runAndWait(bench);
        const io::ModelFolder folder(gpt2Tiny());
        const auto run = model::runModel<float>(folder.model(), kClean);
        const model::AttributionResult expected =
            model::directLogitAttribution(folder.model(), run, 4, 5, 9);
        for (int l = 0; l < 2; ++l)
            for (int h = 0; h < 4; ++h)
                QCOMPARE(bench->attributionMap()->value(l, h),
                         expected.heads[static_cast<std::size_t>(l)][static_cast<std::size_t>(h)]);
        plot::BarChart* bars = bench->attributionBars();
        QCOMPARE(bars->barCount(), 7);
        double parts = 0;
        for (int i = 0; i < 5; ++i)
            parts += bars->barValue(i);
        QCOMPARE(bars->barValue(5), expected.sum);
        QCOMPARE(bars->barValue(6), expected.logitDifference);
        QVERIFY(std::abs(parts - bars->barValue(6)) <= 1e-4 * (1 + std::abs(bars->barValue(6))));
        QVERIFY2(bench->statusText().contains(QStringLiteral("at position 4")),
                 qPrintable(bench->statusText()));
        shoot(QStringLiteral("workbench-attribution"));
    }

    void compositionShowsTheScoresAgainstRandomWeights() {
        ui::WorkbenchPanel* bench = benchOnTheText();
        bench->modeBox()->setCurrentIndex(3);
        QVERIFY(!bench->targetField()->isEnabled());
        runAndWait(bench);
        const io::ModelFolder folder(gpt2Tiny());
        const model::CompositionResult expected = model::compositionScores(folder.model());
        QCOMPARE(bench->compositionMap()->rows(), 8);
        for (int i = 0; i < 8; ++i)
            for (int j = 0; j < 8; ++j)
                QCOMPARE(bench->compositionMap()->value(i, j), expected.k(i, j));
        bench->findChild<QComboBox*>(QStringLiteral("compositionKind"))->setCurrentIndex(2);
        QCOMPARE(bench->compositionMap()->value(1, 6), expected.v(1, 6));
        double pairs = 0;
        for (int b = 0; b < bench->compositionHistogram()->barCount(); ++b)
            pairs += bench->compositionHistogram()->barValue(b);
        QCOMPARE(pairs, 16.0);  // 4 heads of layer 0 x 4 of layer 1
        const double baseline = model::randomCompositionBaseline(32, 8);
        QVERIFY2(bench->statusText().contains(QString::number(baseline, 'g', 4)),
                 qPrintable(bench->statusText()));
        shoot(QStringLiteral("workbench-composition"));
    }

    void clickingAHeadShowsBothPatternsAndOpensIt() {
        ui::WorkbenchPanel* bench = benchOnTheText();
        bench->corruptedField()->setText(QStringLiteral("7 41 3 12 22 15 36"));
        bench->targetField()->setText(QStringLiteral("5"));
        runAndWait(bench);
        // Before any click: the head whose output restores the most.
        int bestLayer = 0, bestHead = 0;
        for (int l = 0; l < 2; ++l)
            for (int h = 0; h < 4; ++h)
                if (std::abs(bench->headsMap()->value(l, h)) >
                    std::abs(bench->headsMap()->value(bestLayer, bestHead))) {
                    bestLayer = l;
                    bestHead = h;
                }
        QVERIFY2(bench->cleanPatternMap()->title().contains(
                     QStringLiteral("L%1 H%2").arg(bestLayer).arg(bestHead)),
                 qPrintable(bench->cleanPatternMap()->title()));
        emit bench->headsMap()->cellClicked(1, 2);
        QVERIFY(bench->cleanPatternMap()->title().contains(QStringLiteral("L1 H2")));
        const io::ModelFolder folder(gpt2Tiny());
        const auto clean = model::runModel<float>(folder.model(), kClean);
        const auto corrupt = model::runModel<float>(folder.model(), kCorrupt);
        QCOMPARE(bench->cleanPatternMap()->rows(), 7);
        for (int i = 0; i < 7; ++i)
            for (int j = 0; j < 7; ++j) {
                QCOMPARE(bench->cleanPatternMap()->value(i, j),
                         static_cast<double>(clean.layers[1].weights[2](i, j)));
                QCOMPARE(bench->corruptPatternMap()->value(i, j),
                         static_cast<double>(corrupt.layers[1].weights[2](i, j)));
            }
        QVERIFY(bench->cleanPatternMap()->title().contains(QStringLiteral("L1 H2")));
        shoot(QStringLiteral("workbench-head-patterns"));
        auto* open = bench->findChild<QPushButton*>(QStringLiteral("openHeadInExplorer"));
        QVERIFY(open->isEnabled());
        open->click();
        settle();
        QCOMPARE(session()->layer(), 1);
        QCOMPARE(session()->head(), 2);
        auto* tabs = window_->findChild<QTabWidget*>(QStringLiteral("centralTabs"));
        QCOMPARE(tabs->currentIndex(), 0);  // the Explorer
    }

    void answerAndFoilComeFromThePredictions() {
        ui::WorkbenchPanel* bench = benchOnTheText();
        const QStringList choices = bench->predictionChoices();
        const auto& predictions = session()->analysis().predictions;
        QVERIFY(!predictions.empty());
        QCOMPARE(choices.size(), static_cast<qsizetype>(predictions.size()));
        QCOMPARE(choices.front(), QStringLiteral("#%1").arg(predictions.front().token));
        bench->targetField()->setText(choices.front());
        QCOMPARE(bench->findChild<QLabel*>(QStringLiteral("targetToken"))->text(),
                 QStringLiteral("= ") + session()->tokenLabel(predictions.front().token));
        bench->foilField()->setText(QStringLiteral("#999"));
        QVERIFY(bench->findChild<QLabel*>(QStringLiteral("foilToken"))
                    ->text()
                    .contains(QStringLiteral("not one token")));
    }

    void settingsAreUndoableSavedAndRestored() {
        ui::WorkbenchPanel* bench = benchOnTheText();
        bench->corruptedField()->setText(QStringLiteral("7 41 3 12 22 15 36"));
        emit bench->corruptedField()->editingFinished();
        bench->targetField()->setText(QStringLiteral("5"));
        emit bench->targetField()->editingFinished();
        bench->modeBox()->setCurrentIndex(1);
        settle();
        const auto held = document::workbenchSettings(window_->document()->scene().viewJson);
        QVERIFY(held);
        QCOMPARE(held->corrupted, QStringLiteral("7 41 3 12 22 15 36"));
        QCOMPARE(held->target, QStringLiteral("5"));
        QVERIFY(held->mode == document::WorkbenchMode::Lens);
        // Undo takes back the mode, then the answer, each in the tab too.
        window_->document()->undoStack()->undo();
        settle();
        QCOMPARE(bench->modeBox()->currentIndex(), 0);
        window_->document()->undoStack()->undo();
        settle();
        QCOMPARE(bench->targetField()->text(), QString());
        QCOMPARE(bench->corruptedField()->text(), QStringLiteral("7 41 3 12 22 15 36"));
        window_->document()->undoStack()->redo();
        window_->document()->undoStack()->redo();
        settle();
        QCOMPARE(bench->targetField()->text(), QStringLiteral("5"));
        auto* tabs = window_->findChild<QTabWidget*>(QStringLiteral("centralTabs"));
        tabs->setCurrentIndex(2);

        const QString file = dir_->filePath(QStringLiteral("workbench.json"));
        QString error;
        QVERIFY2(window_->fileActions()->saveTo(file, &error), qPrintable(error));
        startAnotherWindow(QSize(1024, 768));
        QVERIFY(window_->openSceneFile(file, &error));
        settle();
        bench = window_->workbench();
        QCOMPARE(bench->modeBox()->currentIndex(), 1);
        QCOMPARE(bench->targetField()->text(), QStringLiteral("5"));
        QCOMPARE(bench->corruptedField()->text(), QStringLiteral("7 41 3 12 22 15 36"));
        tabs = window_->findChild<QTabWidget*>(QStringLiteral("centralTabs"));
        QCOMPARE(tabs->currentIndex(), 2);
    }

    void aHeadSwitchedOffFlowsIntoTheWorkbench() {
        ui::WorkbenchPanel* bench = benchOnTheText();
        emit window_->modelView()->headActivated(0, 1);
        settle();
        Scene::Ablation off;
        off.heads = {1};
        window_->document()->setAblation(off);
        settle();
        QCOMPARE(session()->whatIfLayer(), 0);
        QVERIFY2(bench->editedText().contains(QStringLiteral("L0 H1 switched off")),
                 qPrintable(bench->editedText()));
        bench->corruptedField()->setText(QStringLiteral("7 41 3 12 22 15 36"));
        bench->targetField()->setText(QStringLiteral("5"));
        bench->foilField()->setText(QStringLiteral("9"));
        runAndWait(bench);
        const io::ModelFolder folder(gpt2Tiny());
        const model::PatchingResult expected = model::activationPatching<float>(
            folder.model(), kClean, kCorrupt, -1, 5, 9, {}, {}, {{0, 1}});
        const model::PatchingResult unedited =
            model::activationPatching<float>(folder.model(), kClean, kCorrupt, -1, 5, 9);
        // Switched off in both runs, so patching it changes nothing: 0 up to the float rounding of
        // the batched rerun (about 4e-7 here).
        QVERIFY(std::abs(bench->headsMap()->value(0, 1)) < 1e-5);
        for (int l = 0; l < 2; ++l)
            for (int h = 0; h < 4; ++h)
                QCOMPARE(bench->headsMap()->value(l, h),
                         expected.heads[static_cast<std::size_t>(l)][static_cast<std::size_t>(h)]);
        QVERIFY(expected.cleanMetric != unedited.cleanMetric);
        QVERIFY(bench->editedText().contains(QStringLiteral("Edited model")));
        // An edit of this text's numbers cannot go to a second text: the tab says so.
        QVERIFY(window_->document()->setEmbeddingValue(Stream::Query, 2, 3, 5.0));
        settle();
        QVERIFY2(bench->editedText().contains(QStringLiteral("shows the model without it")),
                 qPrintable(bench->editedText()));
    }

    // An edited weight flows into every run of the workbench, the corrupted text's included:
    // the sweep is the library's on the edited model (model::withLayerWeights), which differs
    // from the model's own, and the tab names what was edited.
    void anEditedWeightFlowsIntoTheWorkbench() {
        ui::WorkbenchPanel* bench = benchOnTheText();
        emit window_->modelView()->headActivated(0, 1);
        settle();
        const Scene pristine = window_->document()->scene();
        const double was = pristine.projections.value(3, 5);
        QVERIFY(window_->document()->setWeightValue(document::WeightMatrix::Value, 3, 5, was + 4));
        Scene::Ablation off;
        off.heads = {2};
        window_->document()->setAblation(off);
        settle();
        QCOMPARE(session()->whatIfLayer(), 0);
        QCOMPARE(bench->editedText(),
                 QStringLiteral("Edited model: W_V of layer 0 edited; L0 H2 switched off"));
        bench->corruptedField()->setText(QStringLiteral("7 41 3 12 22 15 36"));
        bench->targetField()->setText(QStringLiteral("5"));
        bench->foilField()->setText(QStringLiteral("9"));
        runAndWait(bench);
        const io::ModelFolder folder(gpt2Tiny());
        const model::Model edited =
            model::withLayerWeights(folder.model(), 0, window_->document()->scene(), pristine);
        const model::PatchingResult expected =
            model::activationPatching<float>(edited, kClean, kCorrupt, -1, 5, 9, {}, {}, {{0, 2}});
        const model::PatchingResult headOffOnly = model::activationPatching<float>(
            folder.model(), kClean, kCorrupt, -1, 5, 9, {}, {}, {{0, 2}});
        QVERIFY(std::abs(expected.cleanMetric - headOffOnly.cleanMetric) > 1e-3);
        for (int l = 0; l < 2; ++l)
            for (int h = 0; h < 4; ++h)
                QCOMPARE(bench->headsMap()->value(l, h),
                         expected.heads[static_cast<std::size_t>(l)][static_cast<std::size_t>(h)]);
        // The lens reads the edited model too, with L0 H2 switched off.
        bench->modeBox()->setCurrentIndex(1);
        runAndWait(bench);
        model::RunOptions headOff;
        headOff.ablations = {{0, 2}};
        const model::LensResult lens =
            model::logitLens(edited, model::runModel<float>(edited, kClean, headOff), {5, 9}, 5);
        const model::LensResult ownLens = model::logitLens(
            folder.model(), model::runModel<float>(folder.model(), kClean, headOff), {5, 9}, 5);
        QVERIFY(std::abs(lens.topProbabilities[2][6][0] - ownLens.topProbabilities[2][6][0]) >
                1e-4);
        for (int b = 0; b < 3; ++b)
            for (int t = 0; t < 7; ++t)
                QCOMPARE(bench->lensMap()->value(b, t),
                         lens.topProbabilities[std::size_t(b)][std::size_t(t)][0]);
        // What the weights do not hold is named, and the workbench leaves it out.
        Scale halved = window_->document()->scene().scale;
        halved.divisor *= 0.5;
        window_->document()->setScale(halved);
        settle();
        QCOMPARE(bench->editedText(),
                 QStringLiteral("The what-if in layer 0 changes the scale, which the model's "
                                "weights do not hold: the workbench shows the model without it"));
    }

    // The gallery's Induction experiment: the built-in model on its sequence, the Workbench tab
    // set up and run; the induction heads of layer 1 carry the answer, layer 0's heads do not.
    void inductionExperimentFindsTheInductionHeads() {
        qputenv("AE_MODELS_PATH", QByteArray(AE_SHIPPED_MODELS_DIR));
        ui::ExamplesGallery* gallery = window_->classroom()->gallery();
        const int row =
            static_cast<int>(std::find_if(gallery->entries().begin(), gallery->entries().end(),
                                          [](const ui::GalleryExample& e) {
                                              return e.workbench == QLatin1String("induction");
                                          }) -
                             gallery->entries().begin());
        QVERIFY(row < gallery->entries().size());
        gallery->list()->setCurrentRow(row);
        QSignalSpy finished(window_->workbench()->workbench(),
                            &document::WorkbenchSession::finished);
        gallery->openSelected();
        settle();
        QVERIFY(finished.count() == 1 || finished.wait(60000));
        QCOMPARE(session()->builtInName(), QStringLiteral("tiny-induction"));
        ui::WorkbenchPanel* bench = window_->workbench();
        const document::WorkbenchPreset& preset = *document::findWorkbenchPreset("induction");
        QVERIFY(bench->workbench()->settings() == preset.settings);
        QCOMPARE(window_->centralTabs()->currentIndex(), 2);
        QCOMPARE(bench->corruptedField()->text(), preset.settings.corrupted);
        QCOMPARE(bench->headsMap()->rows(), 2);
        for (int h = 0; h < 4; ++h)
            QVERIFY2(std::abs(bench->headsMap()->value(0, h)) < 0.1,
                     qPrintable(QString::number(bench->headsMap()->value(0, h))));
        const double h2 = bench->headsMap()->value(1, 2), h3 = bench->headsMap()->value(1, 3);
        qInfo("induction experiment: L1H2 %.3f, L1H3 %.3f", h2, h3);
        QVERIFY(h2 > 0.3 && h3 > 0.3);
        QVERIFY(bench->cleanPatternMap()->title().contains(h3 > h2 ? QStringLiteral("L1 H3")
                                                                   : QStringLiteral("L1 H2")));
        // The experiment's settings are the scene's, as any the user makes.
        QVERIFY(document::workbenchSettings(window_->document()->scene().viewJson));
        shoot(QStringLiteral("workbench-induction"));
        if (!qEnvironmentVariable("AE_SHOTS_DIR").isEmpty()) {
            window_->classroom()->presentation()->setActive(true);
            QTest::qWait(500);
            shoot(QStringLiteral("workbench-presentation"));
            window_->classroom()->presentation()->setActive(false);
        }
        qunsetenv("AE_MODELS_PATH");
    }

    // IOI needs GPT-2 small: found among the recent models or in the hub cache by its config, or
    // refused in one line that says how to get it.
    void ioiExperimentLooksForGpt2Small() {
        QTemporaryDir place;
        const QString hub = place.filePath(QStringLiteral("hub"));
        QString why;
        qputenv("HF_HUB_CACHE", hub.toLocal8Bit());
        QVERIFY(!window_->openWorkbenchPreset(QStringLiteral("ioi"), {}, &why));
        QVERIFY2(why.contains(QStringLiteral("GPT-2 small")) &&
                     why.contains(QStringLiteral("docs/models.md")),
                 qPrintable(why));
        QVERIFY(!why.contains(QLatin1Char('\n')));
        // A folder whose config.json is GPT-2 small's (only the config is read to find it).
        const QString snapshot = hub + QStringLiteral("/models--gpt2/snapshots/abc");
        QVERIFY(QDir().mkpath(snapshot));
        QVERIFY(QDir().mkpath(hub + QStringLiteral("/models--gpt2/refs")));
        QFile ref(hub + QStringLiteral("/models--gpt2/refs/main"));
        QVERIFY(ref.open(QIODevice::WriteOnly));
        ref.write("abc");
        ref.close();
        QFile config(snapshot + QStringLiteral("/config.json"));
        QVERIFY(config.open(QIODevice::WriteOnly));
        config.write(
            "{\"model_type\": \"gpt2\", \"n_layer\": 12, \"n_head\": 12, "
            "\"n_embd\": 768, \"vocab_size\": 50257}");
        config.close();
        QVERIFY(document::isGpt2Small(snapshot));
        QVERIFY(!document::isGpt2Small(gpt2Tiny()));
        QCOMPARE(document::findGpt2Small({gpt2Tiny()}, hub), snapshot);
        QCOMPARE(document::findGpt2Small({snapshot, gpt2Tiny()}, QString()), snapshot);
        qunsetenv("HF_HUB_CACHE");
        const document::WorkbenchPreset& ioi = *document::findWorkbenchPreset("ioi");
        QCOMPARE(ioi.settings.target, QStringLiteral(" Mary"));
        QCOMPARE(ioi.settings.foil, QStringLiteral(" John"));
        QVERIFY(ioi.text.endsWith(QStringLiteral("John gave a drink to")));
        QVERIFY(ioi.settings.corrupted.endsWith(QStringLiteral("Mary gave a drink to")));
    }

    // The model view's Value-weighted box: every head's map becomes ‖α_ij·v_j·W_O^h‖ normalised
    // per row, as the library computes it, and its mean share on token 0 is the head's sink_norm.
    void valueWeightedMapsInTheModelView() {
        benchOnTheText();
        plot::ModelView* view = window_->modelView();
        // The heads table's sink column is filled after the run, the box off: a run that kept
        // its maps is weighed anyway.
        {
            const io::ModelFolder folder(gpt2Tiny());
            const model::ValueNormsResult expected =
                model::valueNorms(folder.model(), model::runModel<double>(folder.model(), kClean));
            const int column = plot::HeadSummaryModel::scoreColumn("sink_norm");
            plot::HeadSummaryModel* table = view->summaryModel();
            QCOMPARE(table->rowCount(), 8);
            for (int row = 0; row < 8; ++row) {
                const model::HeadSummary& s = table->summary(row);
                const double shown =
                    table->index(row, column).data(plot::HeadSummaryModel::SortRole).toDouble();
                QVERIFY2(std::abs(shown - expected.sinkNorm[static_cast<std::size_t>(
                                              s.layer)][static_cast<std::size_t>(s.head)]) <= 1e-5,
                         qPrintable(QString::number(shown)));
            }
        }
        view->valueWeightedBox()->setChecked(true);
        settle();
        const auto digests = session()->valueWeightedDigests();
        QVERIFY(digests);
        QVERIFY(view->grid()->valueWeighted());
        const io::ModelFolder folder(gpt2Tiny());
        const model::Model& m = folder.model();
        const auto run = model::runModel<float>(m, kClean);
        const auto runDouble = model::runModel<double>(m, kClean);
        const model::ValueNormsResult norms = model::valueNorms(m, runDouble);
        for (int l = 0; l < 2; ++l) {
            const Eigen::MatrixXd f = model::valueOutputNorms(m, run, l);
            for (int h = 0; h < 4; ++h) {
                const auto at = static_cast<std::size_t>(l), head = static_cast<std::size_t>(h);
                const model::Matrix<float> expected =
                    ae::valueWeightedMap(run.layers[at].weights[head], f.row(h));
                const std::vector<float>& shown = (*digests)[at].heads[head].pooled;
                QCOMPARE(static_cast<Eigen::Index>(shown.size()), expected.size());
                for (Eigen::Index i = 0; i < expected.size(); ++i)
                    QVERIFY(std::abs(shown[static_cast<std::size_t>(i)] - expected.data()[i]) <=
                            1e-6f);
                // Rows sum to 1: a share of what the head moves.
                QVERIFY(std::abs(expected.row(6).sum() - 1.0f) <= 1e-5f);
                QVERIFY(std::abs((*digests)[at].heads[head].summary.firstToken -
                                 norms.sinkNorm[at][head]) <= 1e-5);
            }
        }
        if (!qEnvironmentVariable("AE_SHOTS_DIR").isEmpty()) {
            window_->centralTabs()->setCurrentWidget(view);
            QTest::qWait(300);
            QVERIFY(window_->grab().save(qEnvironmentVariable("AE_SHOTS_DIR") +
                                         QStringLiteral("/model-value-weighted-1024x768.png")));
        }
        const QRect r = view->grid()->mapRect({1, 2});
        QVERIFY2(view->grid()->hoverText(r.center()).contains(QStringLiteral("value-weighted")),
                 qPrintable(view->grid()->hoverText(r.center())));
        view->valueWeightedBox()->setChecked(false);
        settle();
        QVERIFY(!view->grid()->valueWeighted());
        QVERIFY(!session()->valueWeightedDigests());
    }

    void mapsExportAsImagesAndNumbers() {
        ui::WorkbenchPanel* bench = benchOnTheText();
        bench->corruptedField()->setText(QStringLiteral("7 41 3 12 22 15 36"));
        bench->targetField()->setText(QStringLiteral("5"));
        runAndWait(bench);
        const plot::EffectMap& map = *bench->residualMap();
        const QString csv = dir_->filePath(QStringLiteral("residual.csv"));
        QCOMPARE(ui::saveMapFile(map, csv), QString());
        QFile csvFile(csv);
        QVERIFY(csvFile.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = csvFile.readAll().trimmed().split('\n');
        QCOMPARE(lines.size(), 2);
        QCOMPARE(lines[1].split(',').size(), 7);
        QCOMPARE(lines[1].split(',')[6].toDouble(), map.value(1, 6));
        const QString npy = dir_->filePath(QStringLiteral("residual.npy"));
        QCOMPARE(ui::saveMapFile(map, npy), QString());
        QFile npyFile(npy);
        QVERIFY(npyFile.open(QIODevice::ReadOnly));
        const QByteArray npyBytes = npyFile.readAll();
        QVERIFY(npyBytes.startsWith("\x93NUMPY"));
        QVERIFY(npyBytes.contains("'shape': (2, 7)"));
        QCOMPARE(npyBytes.size() % 8, 0);
        const QString png = dir_->filePath(QStringLiteral("residual.png"));
        QCOMPARE(ui::saveMapFile(map, png), QString());
        QImage image(png);
        QVERIFY(!image.isNull());
        QVERIFY(image.width() >= 640);
        for (const char* suffix : {"svg", "pdf"}) {
            const QString file = dir_->filePath(QStringLiteral("residual.") + suffix);
            QCOMPARE(ui::saveMapFile(map, file), QString());
            QFile written(file);
            QVERIFY(written.open(QIODevice::ReadOnly));
            QVERIFY(written.size() > 1000);
        }
        QVERIFY(ui::saveMapFile(map, dir_->filePath(QStringLiteral("r.txt")))
                    .contains(QStringLiteral(".csv or .npy")));

        // The export dialog, as for any map: a PDF one column wide (3.5 in, 252 pt), a title of
        // the figure's own, a fixed colour range; the window's map keeps its own.
        ui::ExportDialog dialog(&map);
        const auto pick = [&dialog](const char* name, int index) {
            dialog.findChild<QComboBox*>(QLatin1String(name))->setCurrentIndex(index);
        };
        const QString pdf = dir_->filePath(QStringLiteral("figure.pdf"));
        pick("formatCombo", 2);  // PNG, JPG, PDF, SVG
        pick("paperCombo", 1);   // pixels, one column, page width
        pick("titleCombo", 2);
        dialog.findChild<QLineEdit*>(QStringLiteral("titleEdit"))
            ->setText(QStringLiteral("Residual stream, L1"));
        dialog.setTarget(pdf);
        QString error;
        QVERIFY2(dialog.exportNow(&error), qPrintable(error));
        QFile pdfFile(pdf);
        QVERIFY(pdfFile.open(QIODevice::ReadOnly));
        const QByteArray pdfBytes = pdfFile.readAll();
        QVERIFY(pdfBytes.contains("/MediaBox [0 0 252"));
        // The title is drawn: the SVG holds it as text (and as the file's title).
        pick("formatCombo", 3);
        pick("paperCombo", 0);
        const QString svg = dir_->filePath(QStringLiteral("figure.svg"));
        dialog.setTarget(svg);
        QVERIFY2(dialog.exportNow(&error), qPrintable(error));
        QFile svgFile(svg);
        QVERIFY(svgFile.open(QIODevice::ReadOnly));
        QCOMPARE(svgFile.readAll().count(">Residual stream, L1<"), 2);
        QCOMPARE(map.title(), QStringLiteral("Residual stream"));
        // A fixed range draws other colours than the map's own.
        pick("paperCombo", 0);
        pick("formatCombo", 0);
        const QString own = dir_->filePath(QStringLiteral("own.png"));
        dialog.setTarget(own);
        QVERIFY2(dialog.exportNow(&error), qPrintable(error));
        pick("rangeCombo", 2);
        dialog.findChild<QDoubleSpinBox*>(QStringLiteral("rangeLowSpin"))->setValue(-8);
        dialog.findChild<QDoubleSpinBox*>(QStringLiteral("rangeHighSpin"))->setValue(8);
        const QString fixed = dir_->filePath(QStringLiteral("fixed.png"));
        dialog.setTarget(fixed);
        QVERIFY2(dialog.exportNow(&error), qPrintable(error));
        QVERIFY(QImage(own) != QImage(fixed));
        // Its colour scale is ticked at the figure's ends and still marks the clean answer.
        pick("formatCombo", 3);
        const QString fixedSvg = dir_->filePath(QStringLiteral("fixed.svg"));
        dialog.setTarget(fixedSvg);
        QVERIFY2(dialog.exportNow(&error), qPrintable(error));
        QFile fixedSvgFile(fixedSvg);
        QVERIFY(fixedSvgFile.open(QIODevice::ReadOnly));
        const QByteArray fixedSvgBytes = fixedSvgFile.readAll();
        QVERIFY(fixedSvgBytes.contains(">-8<") && fixedSvgBytes.contains(">8<"));
        QVERIFY(fixedSvgBytes.contains(">1 = clean<"));
        const QString shots = qEnvironmentVariable("AE_SHOTS_DIR");
        if (!shots.isEmpty()) {
            dialog.show();
            QTest::qWait(100);
            QVERIFY(dialog.grab().save(shots + QStringLiteral("/workbench-export-dialog.png")));
            QFile::copy(fixed, shots + QStringLiteral("/workbench-export-fixed.png"));
        }
        QCOMPARE(QImage(own).size(), QImage(fixed).size());
        QVERIFY(std::abs(map.range() - 1.0) < 1e-12 || map.range() > 1.0);
    }
};

QTEST_MAIN(TestWorkbenchWindow)
#include "test_workbench_window.moc"
