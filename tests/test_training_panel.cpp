// The training dock: Step grows the loss curve and changes the document's weights, each stop is
// one undo step, Play/Pause stop cleanly, and destroying the panel mid-run is safe.
#include <QComboBox>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>

#include "attention_document.h"
#include "main_window.h"
#include "scene_file.h"
#include "training_panel.h"

using namespace ae;
using namespace ae::ui;

class TrainingPanelTest : public QObject {
    Q_OBJECT
private:
    AttentionDocument* document_ = nullptr;
    Scene start_;

private slots:
    void init() {
        document_ = new AttentionDocument;
        document_->resetScene(io::loadPreset("journey"));
        start_ = document_->scene();
    }
    void cleanup() { delete document_; }

    void stepGrowsTheCurveAndChangesTheWeights() {
        TrainingPanel panel(document_);
        for (int k = 1; k <= 3; ++k) {
            panel.step();
            QTRY_COMPARE(panel.lossPointCount(), k);
            QTRY_COMPARE(document_->undoStack()->count(), k);  // one undo step per click
        }
        QCOMPARE(panel.stepCount(), 3);
        QVERIFY(document_->scene().projections.query != start_.projections.query);
        QVERIFY(document_->errorText().isEmpty());
        // Undo takes the class back to before training.
        for (int k = 0; k < 3; ++k)
            document_->undoStack()->undo();
        QVERIFY(document_->scene().projections.query == start_.projections.query);
    }

    void playAndPauseStopCleanly() {
        TrainingPanel panel(document_);
        QSignalSpy results(document_, &AttentionDocument::resultsChanged);
        QElapsedTimer timer;
        timer.start();
        panel.play();
        QVERIFY(panel.isRunning());
        QTRY_VERIFY_WITH_TIMEOUT(panel.lossPointCount() >= 20, 10000);
        QTest::qWait(1000);  // long enough to count snapshots
        panel.pause();
        qInfo("%lld snapshots applied in %lld ms of training",
              static_cast<long long>(results.count()), timer.elapsed());
        // About one per TrainingWorker::kSnapshotMilliseconds; fewer if the window is slower.
        QVERIFY(results.count() >= 5);
        QVERIFY(!panel.isRunning());
        // The run becomes one undo step once its last snapshot is in; then nothing moves.
        QTRY_COMPARE(document_->undoStack()->count(), 1);
        const int points = panel.lossPointCount();
        const MatrixD query = document_->scene().projections.query;
        QTest::qWait(300);
        QCOMPARE(panel.lossPointCount(), points);
        QVERIFY(document_->scene().projections.query == query);
        QCOMPARE(panel.stepCount(), points);
        if (qEnvironmentVariableIsSet("AE_PANEL_SHOT")) {
            panel.resize(420, 520);
            panel.show();
            QVERIFY(QTest::qWaitForWindowExposed(&panel));
            QTest::qWait(100);
            panel.grab().save(qEnvironmentVariable("AE_PANEL_SHOT"));
        }
        qInfo("%d steps trained before the pause", points);

        // Play again continues the same trainer; Reset goes back to the start.
        panel.play();
        QTRY_VERIFY(panel.lossPointCount() > points);
        panel.reset();
        QCOMPARE(panel.lossPointCount(), 0);
        QTest::qWait(200);  // stale snapshots from the stopped run are dropped
        QVERIFY(document_->scene().projections.query == start_.projections.query);
    }

    void destroyingWhileRunningIsSafe() {
        auto* panel = new TrainingPanel(document_);
        panel->play();
        QTRY_VERIFY(panel->lossPointCount() > 0);
        delete panel;  // must stop the worker and join its thread
        QVERIFY(document_->errorText().isEmpty());
    }

    // match replaces the tokens (see Trainer::note()): the snapshot changes the structure too.
    void taskChoiceReachesTheTrainer() {
        TrainingPanel panel(document_);
        auto* task = panel.findChild<QComboBox*>("task");
        QVERIFY(task);
        task->setCurrentIndex(task->findText("match"));
        panel.step();
        QTRY_COMPARE(panel.lossPointCount(), 1);
        QVERIFY(document_->scene().tokens != start_.tokens);
        for (const std::string& token : document_->scene().tokens)
            QVERIFY2(token.size() == 1 && token[0] >= 'A' && token[0] <= 'Z', token.c_str());
    }

    void savesTheTrainedScene() {
        TrainingPanel panel(document_);
        panel.step();
        QTRY_COMPARE(panel.lossPointCount(), 1);
        QTemporaryDir dir;
        const QString file = dir.filePath("trained.scene.json");
        QVERIFY(panel.saveTrainedScene(file));
        QCOMPARE(QString(io::sceneToJson(io::loadSceneFile(file))),
                 QString(io::sceneToJson(document_->scene())));
    }

    void mainWindowHasTheDock() {
        MainWindow window;
        QVERIFY(window.findChild<TrainingPanel*>() != nullptr);
        auto* dock = window.findChild<QDockWidget*>("trainingDock");
        QVERIFY(dock != nullptr);
        QCOMPARE(dock->widget(), window.findChild<TrainingPanel*>());
    }
};

QTEST_MAIN(TrainingPanelTest)
#include "test_training_panel.moc"
