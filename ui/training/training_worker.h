#pragma once
// The trainer's side of the training panel: lives in its own QThread and owns its Trainer, so
// Adam steps never block the window. It reports by snapshots, each a copy of the trained scene
// plus the losses since the previous snapshot, at most one every ~50 ms and never more than the
// window has taken (a slow repaint skips snapshots, it does not queue them up).

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <atomic>
#include <memory>
#include <optional>
#include <vector>

#include "core/attention_training.h"

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

struct TrainingSnapshot {
    Scene scene;
    int step = 0;
    std::vector<double> losses;  // batch loss of each step since the previous snapshot
    bool stopped = false;        // the last snapshot of a run (after pause or a single step)
    int generation = 0;          // of the configure() call, so the window can drop stale ones
};

class TrainingWorker : public QObject {
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

public slots:
    // (Re)creates the trainer; emits failed() if the scene cannot learn the task. Snapshots
    // carry `generation` from then on.
    void configure(const ae::Scene& scene, int task, double learningRate, qulonglong seed,
                   int generation);
    // Steps until requestStop(), paced by setStepsPerSecond(); a snapshot every
    // kSnapshotMilliseconds, or after every step when the rate is slower than that.
    void run();
    void stepOnce();  // one step, then a stopped snapshot

signals:
    void snapshotReady(std::shared_ptr<const ae::ui::TrainingSnapshot> snapshot);
    void failed(const QString& message);
    void noteReady(const QString& note);

private:
    // One chunk of the chain run() started for trainer `generation`; a chunk still queued when
    // configure() replaced the trainer ends the old chain without a word.
    void runChunk(int generation);
    // Emits a snapshot if forced or if the window has taken the previous one.
    void emitSnapshot(bool stopped);
    bool guardedStep();

    std::optional<Trainer> trainer_;
    std::vector<double> pendingLosses_;
    std::atomic<bool> running_{false};
    std::atomic<bool> snapshotInFlight_{false};
    std::atomic<double> stepsPerSecond_{0.0};
    StepPacer pacer_;      // worker thread only
    QElapsedTimer clock_;  // the pacer's clock
    int generation_ = 0;
    bool chainActive_ = false;  // a runChunk() is queued or running (worker thread only)
};

}  // namespace ae::ui
