// Background computing: large work leaves the GUI thread, newer input makes older jobs stale,
// a cancelled compute leaves the engine consistent, undo and refused values behave as when
// computing at once (the window's progress bar: tests/ui/test_compute_progress). Jobs are held on
// the worker with a semaphore (setBeforeJobForTesting), never timed.

#include <QCoreApplication>
#include <QSemaphore>
#include <QSignalSpy>
#include <QThread>
#include <QTimer>
#include <QUndoStack>
#include <QtTest>
#include <atomic>
#include <cstring>

#include "core/attention_engine.h"
#include "core/init_draw.h"
#include "document/attention_document.h"
#include "io/scene/scene_file.h"

using namespace ae;
using namespace ae::document;

namespace {

using EngineF = AttentionEngine<float>;

// d_model 32, 4 heads, biases and an output projection over `length` tokens.
Scene smallScene(int length) {
    InitSpec spec;
    spec.seed = 7;
    spec.std = 0.3;
    spec.dModel = 32;
    spec.output = true;
    spec.bias = true;
    Scene scene = drawnScene(spec, length, 4);
    scene.positional.kind = PositionalKind::Sinusoidal;
    return scene;
}

// Largest difference between every stage the document shows and a fresh compute of `scene`.
double differenceFromFresh(const EngineF& engine, const Scene& scene) {
    EngineF fresh(scene);
    fresh.compute();
    double worst = 0.0;
    auto compare = [&worst](const auto& a, const auto& b) {
        if (a.rows() != b.rows() || a.cols() != b.cols()) {
            worst = 1e30;
            return;
        }
        worst = std::max(worst, static_cast<double>((a - b).cwiseAbs().maxCoeff()));
    };
    if (engine.heads() != fresh.heads()) return 1e30;
    compare(engine.x(), fresh.x());
    compare(engine.query(), fresh.query());
    for (int h = 0; h < fresh.heads(); ++h) {
        compare(engine.scores(h), fresh.scores(h));
        compare(engine.weights(h), fresh.weights(h));
    }
    compare(engine.concat(), fresh.concat());
    compare(engine.output(), fresh.output());
    return worst;
}

}  // namespace

class TestAsyncCompute : public QObject {
    Q_OBJECT
private slots:
    void init();
    void cleanup();
    void ruleKeepsWindowSizesSynchronous();
    void smallWorkComputesAtOnce();
    void largeWorkRunsOffTheGuiThread();
    void rapidEditsShowOnlyTheLatestResult();
    void cancelledComputeLeavesTheEngineConsistent_data();
    void cancelledComputeLeavesTheEngineConsistent();
    void undoDuringARunningJob();
    void refusedValueInTheBackgroundKeepsTheOldValue();
    void refusedValueKeepsLaterEdits();
    void refusedSceneKeepsLaterEdits();
    void weightsOfAReplacedSceneAreKnownUntilEdited();
    void undoOfAReplacementRestoresEditsMadeBeforeIt();

private:
    // Threshold 0: every compute goes to the worker, held there until release().
    void holdJobs(AttentionDocument& document);
    void release() { gate_.release(1000); }

    QSemaphore gate_;
    std::atomic<int> jobsStarted_{0};
    std::atomic<bool> sawGuiThread_{false};
};

void TestAsyncCompute::init() {
    gate_.acquire(gate_.available());
    jobsStarted_ = 0;
    sawGuiThread_ = false;
}

void TestAsyncCompute::cleanup() {
    release();  // a document never waits on its destruction for a held job
}

void TestAsyncCompute::holdJobs(AttentionDocument& document) {
    document.scheduler().setBackgroundThreshold(0.0);
    QThread* gui = QThread::currentThread();
    document.scheduler().setBeforeJobForTesting([this, gui] {
        if (QThread::currentThread() == gui) sawGuiThread_ = true;
        ++jobsStarted_;
        gate_.acquire();
    });
}

void TestAsyncCompute::ruleKeepsWindowSizesSynchronous() {
    // The documented rule, at the benchmark's BERT shape: every change at L = 512 stays under the
    // threshold (computed within the frame); a rescale at L = 2048 goes to the worker.
    auto bert = [](int length) {
        Scene scene;
        scene.tokens.assign(static_cast<size_t>(length), "t");
        scene.embeddings = MatrixD::Zero(length, 768);
        scene.projections.mode = ProjectionMode::Separate;
        scene.projections.query = scene.projections.key = scene.projections.value =
            MatrixD::Zero(768, 768);
        scene.projections.hasOutput = true;
        scene.projections.output = MatrixD::Zero(768, 768);
        scene.heads = 12;
        return scene;
    };
    const double threshold = ComputeScheduler::kDefaultBackgroundFlops;
    QVERIFY(estimatedComputeFlops(bert(512), WorkFrom::Inputs) < threshold);
    QVERIFY(estimatedComputeFlops(bert(2048), WorkFrom::Scaling) > threshold);
    QVERIFY(estimatedComputeFlops(bert(2048), WorkFrom::EditedRows, 1) > threshold);
    // Later starts cost less, and the estimate grows with the work.
    const Scene s = bert(1024);
    QVERIFY(estimatedComputeFlops(s, WorkFrom::Inputs) >
            estimatedComputeFlops(s, WorkFrom::Scores));
    QVERIFY(estimatedComputeFlops(s, WorkFrom::Scores) >
            estimatedComputeFlops(s, WorkFrom::Scaling));
    QVERIFY(estimatedComputeFlops(s, WorkFrom::Scaling) >
            estimatedComputeFlops(s, WorkFrom::Output));
    QCOMPARE(estimatedComputeFlops(s, WorkFrom::Nothing), 0.0);
}

void TestAsyncCompute::smallWorkComputesAtOnce() {
    AttentionDocument document;
    QSignalSpy results(&document, &AttentionDocument::resultsChanged);
    document.resetScene(smallScene(12));
    QCOMPARE(results.count(), 1);  // before resetScene returned
    QVERIFY(!document.scheduler().isComputing());
    document.setScale({ScaleKind::Divisor, 3.0});
    QCOMPARE(results.count(), 2);
    QVERIFY(differenceFromFresh(document.engine(), document.scene()) <= 1e-5);
}

void TestAsyncCompute::largeWorkRunsOffTheGuiThread() {
    AttentionDocument document;
    document.resetScene(smallScene(16));
    holdJobs(document);
    QSignalSpy results(&document, &AttentionDocument::resultsChanged);
    const Scene before = document.scene();
    document.setScale({ScaleKind::Divisor, 2.5});
    // The edit is in the scene of truth at once; the shown results are still the old ones.
    QCOMPARE(document.scene().scale.divisor, 2.5);
    QVERIFY(document.scheduler().isComputing());
    QCOMPARE(results.count(), 0);
    QVERIFY(document.engine().scene().scale.kind == before.scale.kind);
    QVERIFY(differenceFromFresh(document.engine(), before) <= 1e-5);
    // The job is held on the worker, yet the GUI thread's event loop keeps running.
    bool timerRan = false;
    QTimer::singleShot(0, this, [&timerRan] { timerRan = true; });
    QTRY_VERIFY(timerRan);
    QTRY_COMPARE(jobsStarted_.load(), 1);
    QVERIFY(document.scheduler().isComputing());
    release();
    document.waitForResults();
    QVERIFY(!sawGuiThread_);
    QCOMPARE(results.count(), 1);
    QVERIFY(!document.scheduler().isComputing());
    QCOMPARE(document.engine().scene().scale.divisor, 2.5);
    QVERIFY(differenceFromFresh(document.engine(), document.scene()) <= 1e-5);
}

void TestAsyncCompute::rapidEditsShowOnlyTheLatestResult() {
    AttentionDocument document;
    document.resetScene(smallScene(20));
    holdJobs(document);
    QSignalSpy results(&document, &AttentionDocument::resultsChanged);
    document.setScale({ScaleKind::Divisor, 1.5});  // job 1, held
    QTRY_COMPARE(jobsStarted_.load(), 1);
    for (double divisor : {2.0, 3.0, 4.5})
        document.setScale({ScaleKind::Divisor, divisor});
    Mask causal;
    causal.causal = true;
    document.setMask(causal);
    document.setEmbeddingValue(Stream::Query, 3, 5, 0.75);
    document.setHeads(2);
    release();
    document.waitForResults();
    // Job 1 was cancelled before showing anything; job 2 stopped at the embedding edit to judge
    // it on its own and was stale when done; job 3 computed the latest scene. Only it is shown.
    QCOMPARE(jobsStarted_.load(), 3);
    QCOMPARE(results.count(), 1);
    QCOMPARE(document.engine().scene().scale.divisor, 4.5);
    QCOMPARE(document.engine().heads(), 2);
    QVERIFY(document.errorText().isEmpty());
    QVERIFY(differenceFromFresh(document.engine(), document.scene()) <= 1e-5);
}

void TestAsyncCompute::cancelledComputeLeavesTheEngineConsistent_data() {
    QTest::addColumn<QString>("edit");
    QTest::addColumn<QString>("cancelAt");
    for (const char* edit :
         {"scene", "scale", "mask", "heads", "embedding", "weights", "weights then embedding"}) {
        for (const char* stage : {"edited rows", "inputs", "projections", "heads", "output"}) {
            QTest::addRow("%s at %s", edit, stage) << QString(edit) << QString(stage);
        }
    }
}

void TestAsyncCompute::cancelledComputeLeavesTheEngineConsistent() {
    QFETCH(QString, edit);
    QFETCH(QString, cancelAt);
    Scene scene = smallScene(24);
    EngineF engine(scene);
    engine.compute();
    if (edit == "scene") {
        scene.embeddings(2, 2) += 0.5;
        engine.setScene(scene);
    } else if (edit == "scale") {
        scene.scale = {ScaleKind::Divisor, 7.0};
        engine.setScale(scene.scale);
    } else if (edit == "mask") {
        scene.mask.causal = true;
        engine.setMask(scene.mask);
    } else if (edit == "heads") {
        scene.heads = 8;
        engine.setHeads(8);
    } else if (edit == "embedding") {
        scene.embeddings(5, 1) = -1.25;
        engine.setEmbeddingValue(Stream::Query, 5, 1, -1.25);
    } else {
        scene.projections.value(3, 4) = 0.9;
        engine.setProjections(scene.projections);
        if (edit == "weights then embedding") {  // both before one compute, as a queued job has
            scene.embeddings(6, 2) = 2.5;
            engine.setEmbeddingValue(Stream::Query, 6, 2, 2.5);
        }
    }
    std::atomic<bool> cancel{false};
    ComputeControl control;
    control.cancel = &cancel;
    bool reached = false;
    control.progress = [&](double, const char* stage) {
        if (cancelAt == stage) {
            reached = true;
            cancel = true;
        }
    };
    bool cancelled = false;
    try {
        engine.compute(control);
    } catch (const ComputeCancelled&) {
        cancelled = true;
    }
    // A stage this edit does not redo is never reported; after the output nothing is left to stop.
    QCOMPARE(cancelled, reached && cancelAt != "output");
    engine.compute();
    QVERIFY(differenceFromFresh(engine, scene) <= 1e-5);
}

void TestAsyncCompute::undoDuringARunningJob() {
    AttentionDocument document;
    document.resetScene(smallScene(16));
    const Scene original = document.scene();
    holdJobs(document);
    document.setScale({ScaleKind::Divisor, 9.0});
    QTRY_COMPARE(jobsStarted_.load(), 1);
    QVERIFY(document.undoStack()->canUndo());
    document.undoStack()->undo();  // while job 1 is held
    QCOMPARE(document.scene().scale.kind, original.scale.kind);
    release();
    document.waitForResults();
    QCOMPARE(document.engine().scene().scale.kind, original.scale.kind);
    QVERIFY(differenceFromFresh(document.engine(), original) <= 1e-5);
    QVERIFY(document.undoStack()->canRedo());
    document.undoStack()->redo();
    document.waitForResults();
    QCOMPARE(document.engine().scene().scale.divisor, 9.0);
    QVERIFY(differenceFromFresh(document.engine(), document.scene()) <= 1e-5);
}

void TestAsyncCompute::refusedValueInTheBackgroundKeepsTheOldValue() {
    AttentionDocument document;
    document.resetScene(smallScene(16));
    const double old = document.scene().embeddings(2, 3);
    holdJobs(document);
    release();
    QSignalSpy refused(&document, &AttentionDocument::editRefused);
    QString error;
    // Float scores overflow: refused once the worker has computed it.
    QVERIFY(document.setEmbeddingValue(Stream::Query, 2, 3, 1e25, &error));
    QCOMPARE(document.scene().embeddings(2, 3), 1e25);
    document.waitForResults();
    QCOMPARE(refused.count(), 1);
    const QString message = refused.first().at(0).toString();
    QVERIFY2(message.contains(QStringLiteral("overflow")) &&
                 message.contains(QStringLiteral("kept %1").arg(old)),
             qPrintable(message));
    QCOMPARE(document.scene().embeddings(2, 3), old);
    QVERIFY(document.errorText().isEmpty());
    QCOMPARE(document.undoStack()->count(), 0);  // the refused step is gone
    QVERIFY(differenceFromFresh(document.engine(), document.scene()) <= 1e-5);
}

void TestAsyncCompute::refusedValueKeepsLaterEdits() {
    AttentionDocument document;
    document.resetScene(smallScene(16));
    const Scene original = document.scene();
    holdJobs(document);
    QSignalSpy refused(&document, &AttentionDocument::editRefused);
    // Beyond float: Q, and so the scores, overflow. Job 1 checks it.
    QVERIFY(document.setWeightValue(WeightMatrix::Query, 1, 1, 1e300));
    QTRY_COMPARE(jobsStarted_.load(), 1);
    document.setScale({ScaleKind::Divisor, 6.0});  // made while the check runs
    document.setEmbeddingValue(Stream::Query, 0, 0, 0.5);
    release();
    document.waitForResults();
    QCOMPARE(refused.count(), 1);
    QCOMPARE(document.scene().projections.query(1, 1), original.projections.query(1, 1));
    QCOMPARE(document.scene().scale.divisor, 6.0);
    QCOMPARE(document.scene().embeddings(0, 0), 0.5);
    QVERIFY(document.errorText().isEmpty());
    QVERIFY(differenceFromFresh(document.engine(), document.scene()) <= 1e-5);
    // Undo takes back the later edits; the refused step does nothing when reached.
    while (document.undoStack()->canUndo()) {
        document.undoStack()->undo();
        document.waitForResults();
    }
    QCOMPARE(document.scene().embeddings(0, 0), original.embeddings(0, 0));
    QCOMPARE(document.scene().scale.kind, original.scale.kind);
    QCOMPARE(document.scene().projections.query(1, 1), original.projections.query(1, 1));
    QVERIFY(differenceFromFresh(document.engine(), original) <= 1e-5);
}

void TestAsyncCompute::refusedSceneKeepsLaterEdits() {
    AttentionDocument document;
    document.resetScene(smallScene(16));
    const Scene original = document.scene();
    holdJobs(document);
    QSignalSpy refused(&document, &AttentionDocument::editRefused);
    QSignalSpy structure(&document, &AttentionDocument::structureChanged);
    // A whole new scene (say an import) whose Q overflows in float. Job 1 checks it.
    Scene overflowing = original;
    overflowing.tokens[0] = "imported";
    overflowing.projections.query(1, 1) = 1e300;
    QVERIFY(document.replaceScene(overflowing, QStringLiteral("Import weights")));
    QTRY_COMPARE(jobsStarted_.load(), 1);
    document.setScale({ScaleKind::Divisor, 6.0});  // made while the check runs
    document.setEmbeddingValue(Stream::Query, 0, 0, 0.5);
    const int structureBefore = structure.count();
    release();
    document.waitForResults();
    QCOMPARE(refused.count(), 1);
    QVERIFY2(refused.first().at(0).toString().contains(QStringLiteral("overflow")),
             qPrintable(refused.first().at(0).toString()));
    QVERIFY(structure.count() > structureBefore);  // the editors show the old scene again
    // The old scene, with the two later edits replayed on it.
    QCOMPARE(document.scene().tokens[0], original.tokens[0]);
    QCOMPARE(document.scene().projections.query(1, 1), original.projections.query(1, 1));
    QCOMPARE(document.scene().scale.divisor, 6.0);
    QCOMPARE(document.scene().embeddings(0, 0), 0.5);
    QVERIFY(document.errorText().isEmpty());
    QVERIFY(differenceFromFresh(document.engine(), document.scene()) <= 1e-5);
    // The refused step is dropped when undo reaches it; the two later ones undo as usual.
    QCOMPARE(document.undoStack()->count(), 3);
    while (document.undoStack()->canUndo()) {
        document.undoStack()->undo();
        document.waitForResults();
    }
    QCOMPARE(document.undoStack()->count(), 2);
    QVERIFY(!document.isModified());
    QCOMPARE(document.scene().tokens[0], original.tokens[0]);
    QCOMPARE(document.scene().embeddings(0, 0), original.embeddings(0, 0));
    QCOMPARE(document.scene().scale.kind, original.scale.kind);
    QVERIFY(differenceFromFresh(document.engine(), original) <= 1e-5);
}

// hasWeightsOf answers "are these still the replaced scene's weights?" from a revision, which is
// what lets the model session and the weights editor skip comparing every weight. It must turn
// false for every edit that can touch a weight, and only then.
void TestAsyncCompute::weightsOfAReplacedSceneAreKnownUntilEdited() {
    AttentionDocument document;
    document.resetScene(smallScene(16));
    auto replacement = std::make_shared<const Scene>(smallScene(16));
    QVERIFY(!document.hasWeightsOf(replacement));
    QVERIFY(document.replaceScene(replacement, QStringLiteral("Replace")));
    QVERIFY(document.hasWeightsOf(replacement));
    QVERIFY(!document.hasWeightsOf(std::make_shared<const Scene>(*replacement)));  // a copy
    // Edits after the weights leave them alone.
    document.setScale({ScaleKind::Divisor, 3.0});
    Mask causal;
    causal.causal = true;
    document.setMask(causal);
    document.setEmbeddingValue(Stream::Query, 0, 0, 0.25);
    document.waitForResults();
    QVERIFY(document.hasWeightsOf(replacement));
    // A weight edit, even of a value back to itself, and its undo: not known any more.
    const double old = document.scene().projections.value(2, 3);
    QVERIFY(document.setWeightValue(WeightMatrix::Value, 2, 3, old + 1.0));
    QVERIFY(!document.hasWeightsOf(replacement));
    document.undoStack()->undo();
    document.waitForResults();
    QCOMPARE(document.scene().projections.value(2, 3), old);
    QVERIFY(!document.hasWeightsOf(replacement));
    // Redo of a replacement applies the same shared scene: known again.
    auto second = std::make_shared<const Scene>(smallScene(8));
    QVERIFY(document.replaceScene(second, QStringLiteral("Replace again")));
    QVERIFY(document.hasWeightsOf(second));
    document.undoStack()->undo();
    QVERIFY(!document.hasWeightsOf(second));
    document.undoStack()->redo();
    document.waitForResults();
    QVERIFY(document.hasWeightsOf(second));
    // A replacement refused in the background is taken back: its weights are not the scene's.
    holdJobs(document);
    Scene overflowingScene = *second;
    overflowingScene.projections.query(1, 1) = 1e300;
    auto overflowing = std::make_shared<const Scene>(overflowingScene);
    QVERIFY(document.replaceScene(overflowing, QStringLiteral("Import weights")));
    QVERIFY(document.hasWeightsOf(overflowing));  // until the verdict
    release();
    document.waitForResults();
    QVERIFY(!document.hasWeightsOf(overflowing));
    QCOMPARE(document.scene().projections.query(1, 1), second->projections.query(1, 1));
}

// A replacement's undo step keeps the scene it replaced. When that is the last replacement
// untouched it is shared, not copied; an edit made after it must then be in what undo restores.
void TestAsyncCompute::undoOfAReplacementRestoresEditsMadeBeforeIt() {
    AttentionDocument document;
    document.resetScene(smallScene(16));
    auto first = std::make_shared<const Scene>(smallScene(12));
    auto second = std::make_shared<const Scene>(smallScene(8));
    auto third = std::make_shared<const Scene>(smallScene(6));
    QVERIFY(document.replaceScene(first, QStringLiteral("First")));
    QVERIFY(document.replaceScene(second, QStringLiteral("Second")));  // replaces `first` as is
    document.setScale({ScaleKind::Divisor, 5.0});
    QVERIFY(document.replaceScene(third, QStringLiteral("Third")));  // replaces an edited scene
    document.undoStack()->undo();
    document.waitForResults();
    QCOMPARE(document.scene().queryCount(), 8);
    QCOMPARE(document.scene().scale.kind, ScaleKind::Divisor);
    QCOMPARE(document.scene().scale.divisor, 5.0);
    document.undoStack()->undo();  // the scale
    document.undoStack()->undo();  // the second replacement
    document.waitForResults();
    QCOMPARE(document.scene().queryCount(), 12);
    QCOMPARE(io::sceneToJson(document.scene()), io::sceneToJson(*first));
    QVERIFY(differenceFromFresh(document.engine(), *first) <= 1e-5);
}

QTEST_MAIN(TestAsyncCompute)
#include "test_async_compute.moc"
