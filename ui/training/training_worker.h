#pragma once
// The trainer's side of the training panel: lives in its own QThread and owns its Trainer, so
// Adam steps never block the window. It reports by snapshots, each a copy of the trained scene
// plus the losses since the previous snapshot, at most one every ~50 ms and never more than the
// window has taken (a slow repaint skips snapshots, it does not queue them up).

#include <QString>
#include <memory>
#include <optional>

#include "core/training/attention_training.h"
#include "ui/training/paced_training_loop.h"

namespace ae::ui {

struct TrainingSnapshot : TrainingProgress {
    Scene scene;
};

class TrainingWorker : public PacedTrainingLoop {
    Q_OBJECT
public slots:
    // (Re)creates the trainer; emits failed() if the scene cannot learn the task. Snapshots
    // carry `generation` from then on.
    void configure(const ae::Scene& scene, int task, double learningRate, qulonglong seed,
                   int generation);

signals:
    void snapshotReady(std::shared_ptr<const ae::ui::TrainingSnapshot> snapshot);
    void noteReady(const QString& note);

private:
    bool hasTrainer() const override { return trainer_.has_value(); }
    bool guardedStep() override;
    void sendSnapshot(bool stopped) override;

    std::optional<Trainer> trainer_;
};

}  // namespace ae::ui
