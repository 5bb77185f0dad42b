#include "ui/training/model_training_worker.h"

#include <QMetaObject>
#include <QTimer>
#include <algorithm>
#include <cmath>

namespace ae::ui {

std::vector<model::HeadSummary> probeSummaries(const model::Model& model,
                                               const std::vector<long long>& probeIds,
                                               int probePeriod) {
    const model::ModelRun<double> run = model::runModel<double>(model, probeIds);
    std::vector<model::HeadSummary> summaries = model::summarizeHeads(run);
    const std::vector<double> induction = model::inductionScores(run, 0, probePeriod);
    for (std::size_t i = 0; i < summaries.size(); ++i)
        summaries[i].induction = induction[i];
    return summaries;
}

void ModelTrainingWorker::configure(const model::ModelTrainingOptions& options, int generation) {
    generation_ = generation;
    running_ = false;
    // A chunk of the old trainer's chain may still be queued: it sees the new generation and
    // stops without a snapshot (its "stopped" snapshot would otherwise carry the new generation
    // and add a second step-0 point), and the next run() starts a chain of its own.
    chainActive_ = false;
    pendingLosses_.clear();
    trainer_.reset();
    try {
        trainer_.emplace(options);
    } catch (const model::ModelError& error) {
        emit failed(QString::fromStdString(error.what()));
        return;
    }
    // The untrained model, so the view and the score lines start at step 0.
    emitSnapshot(true);
}

bool ModelTrainingWorker::guardedStep() {
    try {
        const double loss = trainer_->step();
        if (!std::isfinite(loss)) throw model::ModelError("the loss is not finite");
        pendingLosses_.push_back(loss);
        return true;
    } catch (const model::ModelError& error) {
        running_ = false;
        emit failed(QStringLiteral("step %1: %2 (try a smaller learning rate)")
                        .arg(trainer_->stepCount())
                        .arg(QString::fromStdString(error.what())));
        return false;
    }
}

void ModelTrainingWorker::run() {
    if (!trainer_) return;
    running_ = true;
    if (!clock_.isValid()) clock_.start();
    pacer_.start(clock_.elapsed(), stepsPerSecond_);
    if (chainActive_) return;
    chainActive_ = true;
    runChunk(generation_);
}

void ModelTrainingWorker::runChunk(int generation) {
    if (generation != generation_) return;  // the trainer it ran was replaced
    // As TrainingWorker::runChunk: a chunk of steps per event-loop turn, so a stop request or
    // quit() is seen within a snapshot interval (or one step, when a step takes longer).
    QElapsedTimer timer;
    timer.start();
    while (running_ && timer.elapsed() < kSnapshotMilliseconds) {
        if (pacer_.rate() != stepsPerSecond_) pacer_.start(clock_.elapsed(), stepsPerSecond_);
        if (pacer_.due(clock_.elapsed()) <= 0) break;
        if (!guardedStep()) break;
        pacer_.taken(1);
    }
    if (running_) {
        if (!pendingLosses_.empty()) emitSnapshot(false);
        const qint64 wait = std::min<qint64>(pacer_.wait(clock_.elapsed()), kSnapshotMilliseconds);
        const auto next = [this, generation] { runChunk(generation); };
        if (wait > 0)
            QTimer::singleShot(static_cast<int>(wait), this, next);
        else
            QMetaObject::invokeMethod(this, next, Qt::QueuedConnection);
    } else {
        chainActive_ = false;
        emitSnapshot(true);
    }
}

void ModelTrainingWorker::stepOnce() {
    if (!trainer_ || running_) return;
    guardedStep();
    emitSnapshot(true);
}

void ModelTrainingWorker::emitSnapshot(bool stopped) {
    if (!trainer_) return;
    if (!stopped && snapshotInFlight_) return;
    auto snapshot = std::make_shared<ModelTrainingSnapshot>();
    try {
        snapshot->model = snapshotModel(*trainer_);
        snapshot->options = trainer_->options();
        snapshot->probeIds = trainer_->probeIds();
        snapshot->probePeriod = trainer_->probePeriod();
        model::RunOptions runOptions;
        runOptions.logitsForEveryPosition = true;  // the view's predictions at any position
        snapshot->run = std::make_shared<const model::ModelRun<float>>(
            model::runModel<float>(snapshot->model->model, snapshot->probeIds, runOptions));
        snapshot->summaries =
            probeSummaries(snapshot->model->model, snapshot->probeIds, snapshot->probePeriod);
    } catch (const model::ModelError& error) {
        running_ = false;
        emit failed(QStringLiteral("step %1: %2")
                        .arg(trainer_->stepCount())
                        .arg(QString::fromStdString(error.what())));
        return;
    }
    snapshot->step = trainer_->stepCount();
    snapshot->losses.swap(pendingLosses_);
    snapshot->stopped = stopped;
    snapshot->generation = generation_;
    snapshotInFlight_ = true;
    emit snapshotReady(snapshot);
}

}  // namespace ae::ui
