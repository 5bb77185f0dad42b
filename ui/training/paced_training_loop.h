#pragma once
// What the two training workers share (TrainingWorker for the one-layer scene, ModelTrainingWorker
// for a whole model): steps paced to a rate, run in chunks on the worker's own event loop so a
// stop request is seen within a snapshot interval, and snapshots never sent faster than the
// window takes them. A subclass owns the trainer and says how to take one step and how to make
// a snapshot.

#include <QElapsedTimer>
#include <QObject>
#include <atomic>
#include <vector>

namespace ae::ui {

// Paces training steps to a rate on a clock the caller reads (milliseconds), so the rule can be
// driven by simulated time in a test: the first step is due at start, step k at start + k/rate.
// A rate of 0 means no limit.
class StepPacer {
public:
    void start(qint64 nowMilliseconds, double stepsPerSecond);
    double rate() const { return stepsPerSecond_; }
    // Steps that may run at `now` (a large number when unlimited).
    qint64 due(qint64 nowMilliseconds) const;
    void taken(qint64 steps) { taken_ += steps; }
    // Milliseconds from `now` until the next step is due (0 when one is due, or unlimited).
    qint64 wait(qint64 nowMilliseconds) const;

private:
    qint64 start_ = 0;
    qint64 taken_ = 0;
    double stepsPerSecond_ = 0.0;
};

class PacedTrainingLoop : public QObject {
    Q_OBJECT
public:
    // The interval between snapshots while running.
    static constexpr int kSnapshotMilliseconds = 50;

    // Thread-safe: asks a running loop to stop after its current step.
    void requestStop() { running_ = false; }
    bool isRunning() const { return running_; }
    // Thread-safe: the window has applied the last snapshot and can take another.
    void snapshotTaken() { snapshotInFlight_ = false; }
    // Thread-safe: at most this many steps a second while running (0: as fast as it can), so a
    // class can watch the weights move. Takes effect at the next step, also mid-run.
    void setStepsPerSecond(double stepsPerSecond) { stepsPerSecond_ = stepsPerSecond; }
    double stepsPerSecond() const { return stepsPerSecond_; }

    // Steps until requestStop(), paced by setStepsPerSecond(); a snapshot every
    // kSnapshotMilliseconds, or after every step when the rate is slower than that.
    void run();
    void stepOnce();  // one step, then a stopped snapshot

protected:
    using QObject::QObject;

    // A new trainer (configure): snapshots carry `generation` from now on, and a chunk of the old
    // trainer's chain still queued stops without a snapshot (which would carry the new
    // generation), while the next run() starts a chain of its own.
    void startGeneration(int generation);
    virtual bool hasTrainer() const = 0;
    // One step, its loss appended to pendingLosses_; false (and failed() emitted, running_
    // cleared) if the step was refused.
    virtual bool guardedStep() = 0;
    // Emits a snapshot if forced (`stopped`) or if the window has taken the previous one.
    virtual void emitSnapshot(bool stopped) = 0;

    std::vector<double> pendingLosses_;  // since the last snapshot (worker thread only)
    std::atomic<bool> running_{false};
    std::atomic<bool> snapshotInFlight_{false};
    int generation_ = 0;

private:
    // One chunk of the chain run() started for trainer `generation`; a chunk still queued when
    // startGeneration() replaced the trainer ends the old chain without a word.
    void runChunk(int generation);

    std::atomic<double> stepsPerSecond_{0.0};
    StepPacer pacer_;           // worker thread only
    QElapsedTimer clock_;       // the pacer's clock
    bool chainActive_ = false;  // a runChunk() is queued or running (worker thread only)
};

}  // namespace ae::ui
