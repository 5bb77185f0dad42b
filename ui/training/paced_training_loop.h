#pragma once
// What the two training workers share (TrainingWorker for the one-layer scene, ModelTrainingWorker
// for a whole model): steps paced to a rate, run in chunks on the worker's own event loop so a
// stop request is seen within a snapshot interval, and snapshots never sent faster than the
// window takes them. A subclass owns the trainer and says how to take one step and how to make
// a snapshot.

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <atomic>
#include <vector>

namespace ae::ui {

// What every snapshot carries besides the trainer's own numbers.
struct TrainingProgress {
    int step = 0;
    std::vector<double> losses;  // batch loss of each step since the previous snapshot
    bool stopped = false;        // the last snapshot of a run (after pause or a single step)
    int generation = 0;          // of the configure() call, so the window can drop stale ones
};

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

signals:
    // A trainer refused its options, a step or a snapshot; a running loop has stopped.
    void failed(const QString& message);

protected:
    using QObject::QObject;

    // A new trainer (configure): snapshots carry `generation` from now on, and a chunk of the old
    // trainer's chain still queued stops without a snapshot (which would carry the new
    // generation), while the next run() starts a chain of its own.
    void startGeneration(int generation);
    virtual bool hasTrainer() const = 0;
    // One step, its loss appended to pendingLosses_; false (and failed() emitted, running_
    // cleared) if the step was refused. A subclass calls stepOrFail().
    virtual bool guardedStep() = 0;
    // Emits a snapshot through sendSnapshot() if there is a trainer and the snapshot is forced
    // (`stopped`) or the window has taken the previous one.
    void emitSnapshot(bool stopped);
    // Makes the trainer's snapshot, stamps it (stampProgress) and emits it; or fail()s.
    virtual void sendSnapshot(bool stopped) = 0;

    // guardedStep() of a trainer whose step() returns the batch loss or throws `Refusal`:
    // `takeStep` takes one step and returns its loss; a `Refusal` it throws stops the run and
    // emits failed() with the trainer's step count.
    template <typename Refusal, typename Trainer, typename TakeStep>
    bool stepOrFail(const Trainer& trainer, TakeStep takeStep) {
        try {
            pendingLosses_.push_back(takeStep());
            return true;
        } catch (const Refusal& error) {
            // A refused step is, in practice, a learning rate too large for the weights.
            fail(trainer.stepCount(), QString::fromStdString(error.what()) +
                                          QStringLiteral(" (try a smaller learning rate)"));
            return false;
        }
    }
    // Stops the run and emits failed("step `step`: `reason`").
    void fail(int step, const QString& reason);
    // Fills the progress of a snapshot about to be emitted: `step`, the losses since the last
    // snapshot (which it takes), `stopped` and the generation; and waits for the window to take it.
    void stampProgress(TrainingProgress& progress, int step, bool stopped);

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
