#include "ui/training/paced_training_loop.h"

#include <QMetaObject>
#include <QTimer>
#include <algorithm>
#include <cmath>
#include <limits>

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

void PacedTrainingLoop::startGeneration(int generation) {
    generation_ = generation;
    running_ = false;
    chainActive_ = false;
    pendingLosses_.clear();
}

void PacedTrainingLoop::run() {
    if (!hasTrainer()) return;
    running_ = true;
    // Time spent paused is not owed: the pace starts again now.
    if (!clock_.isValid()) clock_.start();
    pacer_.start(clock_.elapsed(), stepsPerSecond_);
    // A pause and a quick resume find the previous chain of chunks still queued: reuse it.
    if (chainActive_) return;
    chainActive_ = true;
    runChunk(generation_);
}

void PacedTrainingLoop::runChunk(int generation) {
    if (generation != generation_) return;  // the trainer it ran was replaced
    // One chunk of steps per event-loop turn, so a stop request or quit() is seen within a
    // snapshot interval (or one step, when a step takes longer) even though the loop never waits.
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

void PacedTrainingLoop::emitSnapshot(bool stopped) {
    if (!hasTrainer()) return;
    // While running, a snapshot the window has not yet applied is simply not followed by another:
    // the losses keep accumulating and go out with the next one.
    if (!stopped && snapshotInFlight_) return;
    sendSnapshot(stopped);
}

void PacedTrainingLoop::fail(int step, const QString& reason) {
    running_ = false;
    emit failed(QStringLiteral("step %1: %2").arg(step).arg(reason));
}

void PacedTrainingLoop::stampProgress(TrainingProgress& progress, int step, bool stopped) {
    progress.step = step;
    progress.losses.swap(pendingLosses_);
    progress.stopped = stopped;
    progress.generation = generation_;
    snapshotInFlight_ = true;
}

void PacedTrainingLoop::stepOnce() {
    if (!hasTrainer() || running_) return;
    guardedStep();
    emitSnapshot(true);
}

}  // namespace ae::ui
