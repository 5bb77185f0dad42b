#include "ui/training/training_worker.h"

#include "core/scene_error.h"

namespace ae::ui {

void TrainingWorker::configure(const Scene& scene, int task, double learningRate, qulonglong seed,
                               int generation) {
    startGeneration(generation);
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
