#pragma once
// The trainer's side of the training dock's Model mode (core/training/model_training.h): lives in
// its own QThread and owns its ModelTrainer, so Adam steps never block the window. Like
// TrainingWorker it reports by snapshots, at most one every ~50 ms and never more than the window
// has taken. A snapshot carries everything the window shows, computed here: a copy of the weights,
// the model's run on the trainer's probe sequence (random ids repeated twice) and every head's
// summary on it, so the window only draws.

#include <QString>
#include <memory>
#include <optional>
#include <vector>

#include "core/model/model.h"
#include "core/model/model_analysis.h"
#include "core/training/model_training.h"
#include "ui/training/model_snapshot.h"
#include "ui/training/paced_training_loop.h"

namespace ae::ui {

struct ModelTrainingSnapshot : TrainingProgress {
    std::shared_ptr<const OwnedModel> model;  // the weights after `step` steps
    model::ModelTrainingOptions options;
    std::vector<long long> probeIds;  // N random ids, then the same N (ModelTrainer::probeIds)
    int probePeriod = 0;              // N
    // runModel<float> on probeIds, every position's logits kept (for the model view).
    std::shared_ptr<const model::ModelRun<float>> run;
    // summarizeHeads of runModel<double> on probeIds, with induction (addRepeatedRunScores(run,
    // 0, probePeriod)): layers·heads entries, layer by layer.
    std::vector<model::HeadSummary> summaries;
};

// Summaries of every head on the probe sequence, with their induction scores: what the snapshot
// carries, and what a test recomputes from the snapshot's model.
std::vector<model::HeadSummary> probeSummaries(const model::Model& model,
                                               const std::vector<long long>& probeIds,
                                               int probePeriod);

class ModelTrainingWorker : public PacedTrainingLoop {
    Q_OBJECT
public slots:
    // (Re)creates the trainer and sends a stopped snapshot of the untrained model (step 0);
    // emits failed() if the options are refused.
    void configure(const ae::model::ModelTrainingOptions& options, int generation);

signals:
    void snapshotReady(std::shared_ptr<const ae::ui::ModelTrainingSnapshot> snapshot);

private:
    bool hasTrainer() const override { return trainer_.has_value(); }
    bool guardedStep() override;
    void sendSnapshot(bool stopped) override;

    std::optional<model::ModelTrainer> trainer_;
};

}  // namespace ae::ui
