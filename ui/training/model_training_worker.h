#pragma once
// The trainer's side of the training dock's Model mode (core/model_training.h): lives in its own
// QThread and owns its ModelTrainer, so Adam steps never block the window. Like TrainingWorker it
// reports by snapshots, at most one every ~50 ms and never more than the window has taken. A
// snapshot carries everything the window shows, computed here: a copy of the weights, the model's
// run on the trainer's probe sequence (random ids repeated twice) and every head's summary on it,
// so the window only draws.

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <atomic>
#include <memory>
#include <optional>
#include <vector>

#include "core/model.h"
#include "core/model_analysis.h"
#include "core/model_training.h"
#include "ui/training/model_snapshot.h"
#include "ui/training/training_worker.h"

namespace ae::ui {

struct ModelTrainingSnapshot {
    std::shared_ptr<const OwnedModel> model;  // the weights after `step` steps
    model::ModelTrainingOptions options;
    std::vector<long long> probeIds;  // N random ids, then the same N (ModelTrainer::probeIds)
    int probePeriod = 0;              // N
    // runModel<float> on probeIds, every position's logits kept (for the model view).
    std::shared_ptr<const model::ModelRun<float>> run;
    // summarizeHeads of runModel<double> on probeIds, with induction from inductionScores(run,
    // 0, probePeriod): layers·heads entries, layer by layer.
    std::vector<model::HeadSummary> summaries;
    int step = 0;
    std::vector<double> losses;  // batch loss of each step since the previous snapshot
    bool stopped = false;        // the last snapshot of a run (after pause or a single step)
    int generation = 0;          // of the configure() call, so the window can drop stale ones
};

// Summaries of every head on the probe sequence, with their induction scores: what the snapshot
// carries, and what a test recomputes from the snapshot's model.
std::vector<model::HeadSummary> probeSummaries(const model::Model& model,
                                               const std::vector<long long>& probeIds,
                                               int probePeriod);

class ModelTrainingWorker : public QObject {
    Q_OBJECT
public:
    static constexpr int kSnapshotMilliseconds = TrainingWorker::kSnapshotMilliseconds;

    // Thread-safe, as TrainingWorker's.
    void requestStop() { running_ = false; }
    bool isRunning() const { return running_; }
    void snapshotTaken() { snapshotInFlight_ = false; }
    void setStepsPerSecond(double stepsPerSecond) { stepsPerSecond_ = stepsPerSecond; }
    double stepsPerSecond() const { return stepsPerSecond_; }

public slots:
    // (Re)creates the trainer and sends a stopped snapshot of the untrained model (step 0);
    // emits failed() if the options are refused.
    void configure(const ae::model::ModelTrainingOptions& options, int generation);
    void run();
    void stepOnce();

signals:
    void snapshotReady(std::shared_ptr<const ae::ui::ModelTrainingSnapshot> snapshot);
    void failed(const QString& message);

private:
    // One chunk of the chain run() started for trainer `generation`; a chunk still queued when
    // configure() replaced the trainer ends the old chain without a word.
    void runChunk(int generation);
    void emitSnapshot(bool stopped);
    bool guardedStep();

    std::optional<model::ModelTrainer> trainer_;
    std::vector<double> pendingLosses_;
    std::atomic<bool> running_{false};
    std::atomic<bool> snapshotInFlight_{false};
    std::atomic<double> stepsPerSecond_{0.0};
    StepPacer pacer_;
    QElapsedTimer clock_;
    int generation_ = 0;
    bool chainActive_ = false;
};

}  // namespace ae::ui
