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
    return stepOrFail<SceneError>(*trainer_, [this] { return trainer_->step(); });
}

void TrainingWorker::sendSnapshot(bool stopped) {
    auto snapshot = std::make_shared<TrainingSnapshot>();
    snapshot->scene = trainer_->scene();
    stampProgress(*snapshot, trainer_->stepCount(), stopped);
    emit snapshotReady(snapshot);
}

}  // namespace ae::ui
