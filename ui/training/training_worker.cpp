#include "ui/training/training_worker.h"

#include <QMetaObject>
#include <QTimer>
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/scene_error.h"

namespace ae::ui {

void StepPacer::start(qint64 nowMilliseconds, double stepsPerSecond) {
    start_ = nowMilliseconds;
    taken_ = 0;
    stepsPerSecond_ = stepsPerSecond > 0.0 && std::isfinite(stepsPerSecond) ? stepsPerSecond : 0.0;
}

qint64 StepPacer::due(qint64 nowMilliseconds) const {
    if (stepsPerSecond_ <= 0.0) return std::numeric_limits<qint64>::max();
    const double elapsed = static_cast<double>(std::max<qint64>(0, nowMilliseconds - start_));
    const auto allowed = static_cast<qint64>(std::floor(elapsed * stepsPerSecond_ / 1000.0)) + 1;
    return std::max<qint64>(0, allowed - taken_);
}

qint64 StepPacer::wait(qint64 nowMilliseconds) const {
    if (stepsPerSecond_ <= 0.0 || due(nowMilliseconds) > 0) return 0;
    // Step number taken_ is due at start + taken_ / rate seconds.
    const auto next = start_ + static_cast<qint64>(std::ceil(taken_ * 1000.0 / stepsPerSecond_));
    return std::max<qint64>(1, next - nowMilliseconds);
}

void TrainingWorker::configure(const Scene& scene, int task, double learningRate, qulonglong seed,
                               int generation) {
    generation_ = generation;
    running_ = false;
    // A chunk of the old trainer's chain may still be queued: it stops without a snapshot (which
    // would carry the new generation), and the next run() starts a chain of its own.
    chainActive_ = false;
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
    // Time spent paused is not owed: the pace starts again now.
    if (!clock_.isValid()) clock_.start();
    pacer_.start(clock_.elapsed(), stepsPerSecond_);
    // A pause and a quick resume find the previous chain of chunks still queued: reuse it.
    if (chainActive_) return;
    chainActive_ = true;
    runChunk(generation_);
}

void TrainingWorker::runChunk(int generation) {
    if (generation != generation_) return;  // the trainer it ran was replaced
    // One chunk of steps per event-loop turn, so a stop request or quit() is seen within a
    // snapshot interval even though the loop never waits.
    QElapsedTimer timer;
    timer.start();
    while (running_ && timer.elapsed() < kSnapshotMilliseconds) {
        if (pacer_.rate() != stepsPerSecond_) pacer_.start(clock_.elapsed(), stepsPerSecond_);
        if (pacer_.due(clock_.elapsed()) <= 0) break;
        if (!guardedStep()) break;
        pacer_.taken(1);
    }
    if (running_) {
        // A chunk that only waited has nothing new to show.
        if (!pendingLosses_.empty()) emitSnapshot(false);
        // Slower than the machine can go: sleep (in the event loop) until the next step is due,
        // waking at least every snapshot interval to see a new rate.
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
