#include "training_worker.h"

#include <QElapsedTimer>
#include <QMetaObject>

#include "scene_error.h"

namespace ae::ui {

void TrainingWorker::configure(const Scene& scene, int task, double learningRate, qulonglong seed,
                               int generation) {
    generation_ = generation;
    running_ = false;
    pendingLosses_.clear();
    trainer_.reset();
    TrainingOptions options;
    options.learningRate = learningRate;
    options.seed = seed;
    // No step budget in the window: the rate stays constant however long the class watches.
    options.totalSteps = 0;
    try {
        trainer_.emplace(scene, static_cast<TrainingTask>(task), options);
    } catch (const SceneError& error) {
        emit failed(QString::fromStdString(error.what()));
        return;
    }
    // The adapted scene (note()) reaches the window with the first step's snapshot.
    emit noteReady(QString::fromStdString(trainer_->note()));
}

bool TrainingWorker::guardedStep() {
    try {
        pendingLosses_.push_back(trainer_->step());
        return true;
    } catch (const SceneError& error) {
        running_ = false;
        emit failed(QStringLiteral("step %1: %2 (try a smaller learning rate)")
                        .arg(trainer_->stepCount())
                        .arg(QString::fromStdString(error.what())));
        return false;
    }
}

void TrainingWorker::run() {
    if (!trainer_) return;
    running_ = true;
    // A pause and a quick resume find the previous chain of chunks still queued: reuse it.
    if (chainActive_) return;
    chainActive_ = true;
    runChunk();
}

void TrainingWorker::runChunk() {
    // One chunk of steps per event-loop turn, so a stop request or quit() is seen within a
    // snapshot interval even though the loop never waits.
    QElapsedTimer timer;
    timer.start();
    while (running_ && timer.elapsed() < kSnapshotMilliseconds) {
        if (!guardedStep()) break;
    }
    if (running_) {
        emitSnapshot(false);
        QMetaObject::invokeMethod(this, &TrainingWorker::runChunk, Qt::QueuedConnection);
    } else {
        chainActive_ = false;
        emitSnapshot(true);
    }
}

void TrainingWorker::stepOnce() {
    if (!trainer_ || running_) return;
    guardedStep();
    emitSnapshot(true);
}

void TrainingWorker::emitSnapshot(bool stopped) {
    if (!trainer_) return;
    // While running, a snapshot the window has not yet applied is simply not followed by another:
    // the losses keep accumulating and go out with the next one.
    if (!stopped && snapshotInFlight_) return;
    auto snapshot = std::make_shared<TrainingSnapshot>();
    snapshot->scene = trainer_->scene();
    snapshot->step = trainer_->stepCount();
    snapshot->losses.swap(pendingLosses_);
    snapshot->stopped = stopped;
    snapshot->generation = generation_;
    snapshotInFlight_ = true;
    emit snapshotReady(snapshot);
}

}  // namespace ae::ui
