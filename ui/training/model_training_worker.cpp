#include "ui/training/model_training_worker.h"

#include <algorithm>
#include <cmath>

namespace ae::ui {

std::vector<model::HeadSummary> probeSummaries(const model::Model& model,
                                               const std::vector<long long>& probeIds,
                                               int probePeriod) {
    const model::ModelRun<double> run = model::runModel<double>(model, probeIds);
    std::vector<model::HeadSummary> summaries = model::summarizeHeads(run);
    model::addRepeatedRunScores(summaries, run, 0, probePeriod);
    return summaries;
}

void ModelTrainingWorker::configure(const model::ModelTrainingOptions& options, int generation) {
    startGeneration(generation);
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
    return stepOrFail<model::ModelError>(*trainer_, [this] {
        const double loss = trainer_->step();
        if (!std::isfinite(loss)) throw model::ModelError("the loss is not finite");
        return loss;
    });
}

void ModelTrainingWorker::sendSnapshot(bool stopped) {
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
        fail(trainer_->stepCount(), QString::fromStdString(error.what()));
        return;
    }
    stampProgress(*snapshot, trainer_->stepCount(), stopped);
    emit snapshotReady(snapshot);
}

}  // namespace ae::ui
