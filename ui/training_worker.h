#pragma once
// The trainer's side of the training panel: lives in its own QThread and owns its Trainer, so
// Adam steps never block the window. It reports by snapshots, each a copy of the trained scene
// plus the losses since the previous snapshot, at most one every ~50 ms and never more than the
// window has taken (a slow repaint skips snapshots, it does not queue them up).

#include <QObject>
#include <QString>
#include <atomic>
#include <memory>
#include <optional>
#include <vector>

#include "attention_training.h"

namespace ae::ui {

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

public slots:
    // (Re)creates the trainer; emits failed() if the scene cannot learn the task. Snapshots
    // carry `generation` from then on.
    void configure(const ae::Scene& scene, int task, double learningRate, qulonglong seed,
                   int generation);
    void run();       // steps until requestStop(); a snapshot every kSnapshotMilliseconds
    void stepOnce();  // one step, then a stopped snapshot

signals:
    void snapshotReady(std::shared_ptr<const ae::ui::TrainingSnapshot> snapshot);
    void failed(const QString& message);
    void noteReady(const QString& note);

private:
    void runChunk();
    // Emits a snapshot if forced or if the window has taken the previous one.
    void emitSnapshot(bool stopped);
    bool guardedStep();

    std::optional<Trainer> trainer_;
    std::vector<double> pendingLosses_;
    std::atomic<bool> running_{false};
    std::atomic<bool> snapshotInFlight_{false};
    int generation_ = 0;
    bool chainActive_ = false;  // a runChunk() is queued or running (worker thread only)
};

}  // namespace ae::ui
