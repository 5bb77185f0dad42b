// The training dock's Model mode: a small model trains on the worker, its loss curve and every
// head's score lines grow, the lines are summarizeHeads / inductionScores of the snapshot's own
// model (which is the trainer's, weight for weight), the model view shows it, Pause / Reset /
// closing stop cleanly, and a saved folder opens with io::ModelFolder.
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QGuiApplication>
#include <QMainWindow>
#include <QMenu>
#include <QScreen>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>

#include "core/model/model_analysis.h"
#include "core/training/model_training.h"
#include "document/attention_document.h"
#include "document/model_session.h"
#include "io/model/model_folder.h"
#include "io/scene/scene_file.h"
#include "io/tokenizer/tokenizer.h"
#include "plot/model_panels.h"
#include "plot/model_view.h"
#include "plot/training_charts.h"
#include "qcustomplot.h"
#include "ui/classroom/classroom.h"
#include "ui/training/model_training_page.h"
#include "ui/training/model_training_worker.h"
#include "ui/training/training_panel.h"
#include "ui/window/main_window.h"
#include "ui/window/presentation_mode.h"

using namespace ae;
using namespace ae::ui;
using namespace ae::document;
using namespace ae::plot;

namespace {

// Small enough that a step takes a few milliseconds even on a loaded machine.
void chooseSmallModel(ModelTrainingPage* page, int layers, int heads, int hidden) {
    page->findChild<QSpinBox*>("modelLayers")->setValue(layers);
    page->findChild<QSpinBox*>("modelHeads")->setValue(heads);
    page->findChild<QSpinBox*>("modelHidden")->setValue(hidden);
}

// The value a graph holds at x = key (the score lines have one point per snapshot).
double valueAt(QCPGraph* graph, double key) {
    const auto it = graph->data()->findBegin(key, false);
    if (it == graph->data()->constEnd() || it->key != key) return std::nan("");
    return it->value;
}

}  // namespace

class TrainingModelTest : public QObject {
    Q_OBJECT
private:
    AttentionDocument* document_ = nullptr;

    // Trains until at least `points` loss points, then pauses and waits for the stopped snapshot.
    static void trainSome(ModelTrainingPage* page, int points) {
        page->play();
        QVERIFY(page->isRunning());
        QTRY_VERIFY_WITH_TIMEOUT(page->lossPointCount() >= points, 30000);
        page->pause();
        QVERIFY(!page->isRunning());
        QTRY_VERIFY(page->lastSnapshot() && page->lastSnapshot()->stopped);
    }

private slots:
    void init() {
        document_ = new AttentionDocument;
        document_->resetScene(io::loadPreset("journey"));
    }
    void cleanup() { delete document_; }

    void modelModeTrainsAndEveryLineGrows() {
        TrainingPanel panel(document_);
        panel.setMode(TrainingPanel::Mode::Model);
        QCOMPARE(panel.mode(), TrainingPanel::Mode::Model);
        ModelTrainingPage* page = panel.modelPage();
        chooseSmallModel(page, 2, 2, 16);
        const Scene before = document_->scene();
        trainSome(page, 10);
        // The mode is locked while a model trains, free again after.
        QVERIFY(panel.findChild<QComboBox*>("mode")->isEnabled());

        const auto snapshot = page->lastSnapshot();
        QCOMPARE(snapshot->step, page->stepCount());
        QCOMPARE(page->lossPointCount(), page->stepCount());
        QCOMPARE(page->inductionChart()->plot()->graphCount(), 4);
        QCOMPARE(page->previousTokenChart()->plot()->graphCount(), 4);
        QCOMPARE(page->inductionChart()->plot()->graph(3)->name(), QStringLiteral("L1 H1"));
        for (QCustomPlot* plot :
             {page->inductionChart()->plot(), page->previousTokenChart()->plot()}) {
            for (int i = 0; i < plot->graphCount(); ++i) {
                // Step 0 (the untrained model) and at least one later snapshot.
                QVERIFY(plot->graph(i)->dataCount() >= 2);
                QCOMPARE(plot->graph(i)->data()->constBegin()->key, 0.0);
            }
        }
        // The model trains on its own: the explorer's scene and its undo stack are untouched.
        QVERIFY(document_->scene().projections.query == before.projections.query);
        QCOMPARE(document_->undoStack()->count(), 0);
    }

    // The lines are the snapshot model's scores, and that model is the trainer's: a trainer with
    // the same options, stepped as often, has the very same weights.
    void scoreLinesAreTheSnapshotModelsScores() {
        TrainingPanel panel(document_);
        panel.setMode(TrainingPanel::Mode::Model);
        ModelTrainingPage* page = panel.modelPage();
        chooseSmallModel(page, 2, 2, 16);
        trainSome(page, 5);
        const auto snapshot = page->lastSnapshot();
        QVERIFY(snapshot->step >= 5);

        const model::ModelRun<double> run =
            model::runModel<double>(snapshot->model->model, snapshot->probeIds);
        const std::vector<model::HeadSummary> summaries = model::summarizeHeads(run);
        const std::vector<double> induction = model::inductionScores(run, 0, snapshot->probePeriod);
        QCOMPARE(static_cast<int>(summaries.size()), 4);
        for (int i = 0; i < 4; ++i) {
            QCOMPARE(valueAt(page->previousTokenChart()->plot()->graph(i), snapshot->step),
                     summaries[static_cast<std::size_t>(i)].previousToken);
            QCOMPARE(valueAt(page->inductionChart()->plot()->graph(i), snapshot->step),
                     induction[static_cast<std::size_t>(i)]);
        }

        // The window's default mixes in previous-token steps, as docs/training.md recommends.
        QCOMPARE(snapshot->options.previousTokenEvery, 4);
        QCOMPARE(page->options().previousTokenEvery, 4);
        model::ModelTrainer trainer(page->options());
        for (int s = 0; s < snapshot->step; ++s)
            trainer.step();
        QCOMPARE(trainer.probeIds(), snapshot->probeIds);
        QCOMPARE(trainer.parameters().size(), snapshot->model->tensors.size());
        for (std::size_t i = 0; i < trainer.parameters().size(); ++i)
            QVERIFY(trainer.parameters()[i] == snapshot->model->tensors[i]);
        const model::HeadScores scores = trainer.probeHeads();
        QVERIFY(scores.induction == induction);

        // The losses on the curve are the trainer's batch losses, step by step.
        model::ModelTrainer again(page->options());
        QCPGraph* loss = page->lossChart()->plot()->graph(0);
        for (int s = 1; s <= 3; ++s)
            QCOMPARE(valueAt(loss, s), again.step());
    }

    void modelViewShowsTheModelOnTheProbe() {
        TrainingPanel panel(document_);
        panel.setMode(TrainingPanel::Mode::Model);
        ModelTrainingPage* page = panel.modelPage();
        chooseSmallModel(page, 2, 2, 16);
        page->step();
        QTRY_VERIFY(page->lastSnapshot() && page->lastSnapshot()->step == 1);
        const auto snapshot = page->lastSnapshot();
        const ModelViewData& data = page->modelView()->data();
        QVERIFY(data.run == snapshot->run);
        QCOMPARE(data.run->tokens, snapshot->probeIds);
        QCOMPARE(data.tokens.size(), static_cast<qsizetype>(snapshot->probeIds.size()));
        QCOMPARE(data.summaries.size(), std::size_t(4));
        QCOMPARE(data.summaries[3].induction, snapshot->summaries[3].induction);
        QVERIFY(!data.predictions.empty());
        // Nothing to compare with: no before → after column.
        QVERIFY(data.basePredictions.empty());
        QVERIFY(page->modelView()->predictionsPanel()->table()->isColumnHidden(
            PredictionsPanel::BeforeColumn));
        // The probe is a period of random ids repeated twice.
        const int n = snapshot->probePeriod;
        QCOMPARE(static_cast<int>(snapshot->probeIds.size()), 2 * n);
        for (int i = 0; i < n; ++i)
            QCOMPARE(snapshot->probeIds[static_cast<std::size_t>(i + n)],
                     snapshot->probeIds[static_cast<std::size_t>(i)]);
        // Another step: the view gets the new run.
        page->step();
        QTRY_VERIFY(page->modelView()->data().run != snapshot->run);
        QCOMPARE(page->lastSnapshot()->step, 2);
    }

    // A reset reconfigures the worker while a chunk of the old run is still queued: that chunk
    // ends the old chain in silence. (It used to send a "stopped" snapshot stamped with the new
    // generation: a second step-0 point after a reset, seen now and then in the test below.)
    void aChunkQueuedBeforeAResetSendsNothing() {
        ModelTrainingWorker worker;
        QList<std::shared_ptr<const ModelTrainingSnapshot>> snapshots;
        connect(&worker, &ModelTrainingWorker::snapshotReady, this,
                [&](std::shared_ptr<const ModelTrainingSnapshot> s) {
                    snapshots << s;
                    worker.snapshotTaken();
                });
        model::ModelTrainingOptions options;
        options.layers = 1;
        options.heads = 2;
        options.hidden = 16;
        options.length = 16;
        options.batch = 2;
        worker.configure(options, 1);
        QCOMPARE(snapshots.size(), 1);
        worker.setStepsPerSecond(1000.0);
        worker.run();  // one chunk now; the next is queued on this thread's event loop
        worker.requestStop();
        worker.configure(options, 2);
        const int afterReset = static_cast<int>(snapshots.size());
        QCOMPARE(snapshots.last()->generation, 2);
        QCOMPARE(snapshots.last()->step, 0);
        QTest::qWait(200);  // the queued chunk runs
        QCOMPARE(static_cast<int>(snapshots.size()), afterReset);
        // And a new run starts a chain of its own.
        worker.run();
        QTRY_VERIFY(snapshots.last()->step > 0);
        QCOMPARE(snapshots.last()->generation, 2);
        worker.requestStop();
        QTest::qWait(100);
    }

    void pauseResetAndCloseStopCleanly() {
        auto* panel = new TrainingPanel(document_);
        panel->setMode(TrainingPanel::Mode::Model);
        ModelTrainingPage* page = panel->modelPage();
        chooseSmallModel(page, 1, 2, 16);
        trainSome(page, 3);
        const int points = page->lossPointCount();
        QTest::qWait(300);
        QCOMPARE(page->lossPointCount(), points);  // paused means nothing moves

        page->play();
        QTRY_VERIFY(page->lossPointCount() > points);
        page->reset();
        QVERIFY(!page->isRunning());
        QCOMPARE(page->lossPointCount(), 0);
        QCOMPARE(page->stepCount(), 0);
        // The new trainer's untrained model arrives; the old run's snapshots are dropped.
        QTRY_VERIFY(page->lastSnapshot() && page->lastSnapshot()->step == 0);
        QTest::qWait(300);
        QCOMPARE(page->lossPointCount(), 0);
        QCOMPARE(page->inductionChart()->plot()->graph(0)->dataCount(), 1);

        page->play();
        QTRY_VERIFY(page->lossPointCount() > 0);
        delete panel;  // must stop the worker and join its thread while it trains
    }

    // Options the trainer refuses are named, and nothing starts.
    void refusedOptionsAreShown() {
        TrainingPanel panel(document_);
        panel.setMode(TrainingPanel::Mode::Model);
        ModelTrainingPage* page = panel.modelPage();
        chooseSmallModel(page, 1, 3, 16);  // 3 heads do not divide 16
        QSignalSpy messages(&panel, &TrainingPanel::messageRequested);
        page->play();
        QVERIFY(!page->isRunning());
        QCOMPARE(messages.count(), 1);
        QVERIFY2(messages.first().first().toString().contains("heads"),
                 qPrintable(messages.first().first().toString()));
    }

    void savedFolderOpensAsAModel() {
        TrainingPanel panel(document_);
        panel.setMode(TrainingPanel::Mode::Model);
        ModelTrainingPage* page = panel.modelPage();
        chooseSmallModel(page, 2, 2, 16);
        page->findChild<QComboBox*>("modelPositions")->setCurrentIndex(1);  // learned (gpt2)
        QVERIFY(!page->saveModel(QDir::temp().filePath("never-written")));  // nothing trained
        trainSome(page, 3);
        const auto snapshot = page->lastSnapshot();
        QCOMPARE(snapshot->model->model.config.family, model::Family::Gpt2);
        QTemporaryDir dir;
        const QString folder = dir.filePath("trained");
        QString error;
        QVERIFY2(page->saveModel(folder, &error), qPrintable(error));
        const io::ModelFolder opened(folder);
        QCOMPARE(opened.model().config.layers, 2);
        QCOMPARE(opened.model().config.heads, 2);
        // The same numbers as the snapshot: F64 round-trips exactly.
        const auto a = model::runModel<double>(opened.model(), snapshot->probeIds);
        const auto b = model::runModel<double>(snapshot->model->model, snapshot->probeIds);
        QVERIFY(a.logits == b.logits);
        QVERIFY(QFileInfo::exists(folder + "/vocab.json"));
        const io::Tokenizer tokenizer = io::Tokenizer::load(folder);
        QCOMPARE(tokenizer.encode(QStringLiteral("ab"), false), (std::vector<int>{'a', 'b'}));
    }

    // Eight heads or more: only the top four are coloured and in the legend.
    void onlyTheTopHeadsAreLabelled() {
        TrainingPanel panel(document_);
        panel.setMode(TrainingPanel::Mode::Model);
        ModelTrainingPage* page = panel.modelPage();
        chooseSmallModel(page, 2, 4, 16);
        page->step();
        QTRY_VERIFY(page->lastSnapshot() && page->lastSnapshot()->step == 1);
        QCustomPlot* plot = page->inductionChart()->plot();
        QCOMPARE(plot->graphCount(), 8);
        QCOMPARE(plot->legend->itemCount(), ModelTrainingPage::kLabelledHeads);
        // The labelled ones are the highest at the latest step.
        double lowestLabelled = 1e9, highestOther = -1e9;
        for (int i = 0; i < 8; ++i) {
            const double v = valueAt(plot->graph(i), 1);
            if (plot->legend->hasItemWithPlottable(plot->graph(i)))
                lowestLabelled = std::min(lowestLabelled, v);
            else
                highestOther = std::max(highestOther, v);
        }
        QVERIFY(lowestLabelled >= highestOther);

        chooseSmallModel(page, 1, 4, 16);
        page->reset();
        QTRY_VERIFY(page->lastSnapshot() && page->inductionChart()->plot()->graphCount() == 4);
        QCOMPARE(plot->legend->itemCount(), 4);
    }

    // In a window, the model view has a dock of its own that shows when training starts.
    void theModelViewDockShowsWhenTrainingStarts() {
        QMainWindow window;
        QMenu menu;
        TrainingPanel* panel = addTrainingDock(&window, document_, &menu);
        auto* trainingDock = window.findChild<QDockWidget*>("trainingDock");
        auto* viewDock = window.findChild<QDockWidget*>("trainingModelDock");
        QVERIFY(trainingDock && viewDock);
        window.show();
        trainingDock->show();
        QVERIFY(!viewDock->isVisible());
        panel->setMode(TrainingPanel::Mode::Model);
        chooseSmallModel(panel->modelPage(), 1, 2, 16);
        panel->modelPage()->step();
        QVERIFY(viewDock->isVisible());
        QVERIFY(viewDock->isAncestorOf(panel->modelPage()->modelView()));
        QTRY_VERIFY(panel->modelPage()->lastSnapshot());
    }

    // In the window, a saved model opens like any checkpoint: the session has it, on its layers.
    void aSavedModelOpensInTheWindow() {
        MainWindow window;
        window.openPreset("journey");
        auto* panel =
            qobject_cast<TrainingPanel*>(window.findChild<QDockWidget*>("trainingDock")->widget());
        QVERIFY(panel);
        panel->setMode(TrainingPanel::Mode::Model);
        ModelTrainingPage* page = panel->modelPage();
        chooseSmallModel(page, 2, 2, 16);
        page->step();
        QTRY_VERIFY(page->lastSnapshot() && page->lastSnapshot()->step == 1);
        QTemporaryDir dir;
        const QString folder = dir.filePath("trained");
        QVERIFY(page->saveModel(folder));
        emit panel->openModelRequested(folder);  // what Save model and open it… does last
        window.modelSession()->waitUntilIdle();
        QTRY_VERIFY(window.modelSession()->isOpen());
        QCOMPARE(window.modelSession()->model()->config.layers, 2);
        QCOMPARE(window.modelSession()->model()->config.heads, 2);
        QVERIFY(window.modelSession()->currentRun());
    }

    // The dock's model view follows presentation mode, as the window's does, and View › Reset
    // layout puts its dock back with the others (hidden, on the right).
    void trainingModelViewFollowsPresentationAndReset() {
        MainWindow window;
        window.openPreset("journey");
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        auto* panel =
            qobject_cast<TrainingPanel*>(window.findChild<QDockWidget*>("trainingDock")->widget());
        QVERIFY(panel);
        ModelView* view = panel->modelPage()->modelView();
        QVERIFY(!view->presentation());
        window.classroom()->presentation()->setActive(true);
        QVERIFY(view->presentation());
        window.classroom()->presentation()->setActive(false);
        QVERIFY(!view->presentation());
        auto* viewDock = window.findChild<QDockWidget*>("trainingModelDock");
        QVERIFY(viewDock);
        viewDock->setFloating(true);
        viewDock->show();
        window.resetLayout();
        QVERIFY(!viewDock->isFloating());
        QVERIFY(!viewDock->isVisible());
        QCOMPARE(window.dockWidgetArea(viewDock), Qt::RightDockWidgetArea);
    }

    // Not a check: with AE_TRAINING_SHOT=FILE.png, the whole window trains the default model on
    // induction for AE_TRAINING_SECONDS (120) or until a head scores 0.8, then saves a picture.
    // Run under xvfb-run with the screen size wanted (docs/training-induction.png).
    void windowTrainingPicture() {
        const QString file = qEnvironmentVariable("AE_TRAINING_SHOT");
        if (file.isEmpty()) QSKIP("AE_TRAINING_SHOT not set");
        const int seconds = qEnvironmentVariableIntValue("AE_TRAINING_SECONDS") > 0
                                ? qEnvironmentVariableIntValue("AE_TRAINING_SECONDS")
                                : 120;
        MainWindow window;
        window.openPreset("journey");
        window.setGeometry(QGuiApplication::primaryScreen()->availableGeometry());
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        auto* dock = window.findChild<QDockWidget*>("trainingDock");
        dock->show();
        // As a teacher would for room: the one-layer panels on the left are closed.
        for (const char* name : {"controlsDock", "tokensDock", "weightsDock"}) {
            if (auto* d = window.findChild<QDockWidget*>(QLatin1String(name))) d->hide();
        }
        auto* panel = qobject_cast<TrainingPanel*>(dock->widget());
        QVERIFY(panel);
        panel->setMode(TrainingPanel::Mode::Model);
        ModelTrainingPage* page = panel->modelPage();
        page->play();
        QElapsedTimer timer;
        timer.start();
        double best = 0;
        while (timer.elapsed() < seconds * 1000 && best < 0.8) {
            QTest::qWait(500);
            if (const auto s = page->lastSnapshot()) {
                for (const auto& h : s->summaries)
                    best = std::max(best, h.induction);
            }
        }
        page->pause();
        QTRY_VERIFY(page->lastSnapshot()->stopped);
        QTest::qWait(300);
        qInfo("step %d, best induction %.3f after %lld ms", page->stepCount(), best,
              timer.elapsed());
        QVERIFY(window.grab().save(file));
    }
};

QTEST_MAIN(TrainingModelTest)
#include "test_training_model.moc"
