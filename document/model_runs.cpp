#include "document/model_runs.h"

#include "document/model_work.h"
#include "io/model/model_folder.h"

namespace ae::document {

ModelRuns::ModelRuns(ModelWork* work, QObject* parent) : QObject(parent), work_(work) {}

void ModelRuns::startModel(std::shared_ptr<io::ModelFolder> folder, SpecialTokenIds special) {
    folder_ = std::move(folder);
    special_ = special;
    previousBase_.reset();
    base_.reset();
    currentFromEarlierModel_ = current_ != nullptr;
}

void ModelRuns::clear() {
    startModel(nullptr);
    current_.reset();
    currentFromEarlierModel_ = false;
    analysis_ = {};
    baseAnalysis_ = {};
}

void ModelRuns::installBase(std::shared_ptr<const Run> run, const ModelInput& input,
                            const RunAnalysis& analysis) {
    if (base_ && baseInput_ != input) {
        previousBase_ = base_;
        previousInput_ = baseInput_;
        previousAnalysis_ = baseAnalysis_;
    }
    base_ = std::move(run);
    baseInput_ = input;
    baseAnalysis_ = analysis;
    measureInductionLater();
}

bool ModelRuns::takePrevious(const ModelInput& input) {
    if (!previousBase_ || previousInput_ != input) return false;
    std::swap(base_, previousBase_);
    std::swap(baseInput_, previousInput_);
    std::swap(baseAnalysis_, previousAnalysis_);
    // Its induction scores may not have arrived before the text changed.
    if (baseAnalysis_.induction == model::InductionState::Pending) measureInductionLater();
    return true;
}

void ModelRuns::show(std::shared_ptr<const Run> current, RunAnalysis analysis,
                     bool whatIfInductionComing, int layer) {
    current_ = std::move(current);
    currentFromEarlierModel_ = false;
    analysis_ = std::move(analysis);
    // A what-if's measurement on the same channel may have made the model's own stale.
    if (current_ == base_ && baseAnalysis_.induction == model::InductionState::Pending &&
        !work_->isPending(ModelWork::Induction))
        measureInductionLater();
    // Until a what-if's own induction is measured (measureWhatIfInduction), or when it cannot be,
    // the column shows the model's scores, marked as such: they may have arrived after the
    // what-if's work started.
    if (current_ != base_)
        showModelInductionOnWhatIf(analysis_, baseAnalysis_, whatIfInductionComing, layer);
    // A position picked while the work ran, or an undo back to a text whose predictions were
    // for another position.
    predictAtSelectedPosition();
    emit resultsChanged();
}

namespace {

// inductionOf on the worker, stopped at its next layer once `stop` is set: null then (a newer
// text or model made it stale).
std::shared_ptr<const InductionResult> inductionUnlessStopped(
    const WindowRun& run, const model::Model& model,
    const std::vector<model::HeadAblation>& ablations,
    const std::shared_ptr<std::atomic<bool>>& stop) {
    try {
        return std::make_shared<const InductionResult>(
            inductionOf(run, model, ablations, [stop] { return !stop->load(); }));
    } catch (const model::RunCancelled&) {
        return nullptr;
    }
}

}  // namespace

void ModelRuns::measureInductionLater() {
    std::shared_ptr<const Run> run = base_;
    std::shared_ptr<io::ModelFolder> folder = folder_;
    if (!run || !folder) return;
    const auto stop = newInductionStop();
    work_->post(ModelWork::Induction, tr("Measuring induction"), [this, run, folder, stop] {
        const auto result = inductionUnlessStopped(*run, folder->model(), {}, stop);
        return [this, run, result] {
            if (!result || run != base_) return;  // stopped, or the text changed meanwhile
            takeModelInduction(*result, baseAnalysis_, analysis_, current_ == base_);
            emit resultsChanged();
        };
    });
}

std::shared_ptr<std::atomic<bool>> ModelRuns::newInductionStop() {
    stopInduction();
    inductionStop_ = std::make_shared<std::atomic<bool>>(false);
    return inductionStop_;
}

void ModelRuns::stopInduction() {
    if (inductionStop_) inductionStop_->store(true);
}

bool ModelRuns::measureWhatIfInduction(std::shared_ptr<const Run> whatIf, int layer,
                                       std::vector<int> headsOff) {
    std::shared_ptr<io::ModelFolder> folder = folder_;
    if (!folder || !whatIf || headsOff.empty() ||
        baseAnalysis_.induction == model::InductionState::Unmeasurable)
        return false;
    std::vector<model::HeadAblation> ablations;
    for (int h : headsOff)
        ablations.push_back({layer, h});
    const auto stop = newInductionStop();
    work_->post(ModelWork::Induction, tr("Measuring induction on the what-if"),
                [this, whatIf, folder, ablations, stop] {
                    const auto result =
                        inductionUnlessStopped(*whatIf, folder->model(), ablations, stop);
                    return [this, whatIf, result] {
                        if (!result || whatIf != current_ || !result->problem.isEmpty()) return;
                        setInduction(analysis_.summaries, result->scores);
                        analysis_.induction = model::InductionState::Measured;
                        analysis_.inductionNote.clear();
                        emit resultsChanged();
                    };
                });
    return true;
}

std::optional<QString> ModelRuns::measureInduction() {
    if (analysis_.induction == model::InductionState::Unmeasurable ||
        analysis_.induction == model::InductionState::Stale)
        return analysis_.inductionNote;
    if (baseAnalysis_.induction == model::InductionState::Pending &&
        !work_->isPending(ModelWork::Induction))
        measureInductionLater();
    return std::nullopt;
}

std::vector<std::pair<int, int>> ModelRuns::changedHeads(double threshold) const {
    if (!base_ || !current_ || base_ == current_ || currentFromEarlierModel_) return {};
    return document::changedHeads(*base_, *current_, threshold);
}

void ModelRuns::setSelectedPosition(int position) {
    // A decoder's last token is where its predictions go anyway: choosing it follows the text
    // as it grows.
    const int tokens = current_ ? static_cast<int>(current_->tokens.size()) : 0;
    const int last = current_ && !current_->config.isDecoder() ? tokens : tokens - 1;
    selectedPosition_ = position >= 0 && position < last ? position : -1;
    if (predictAtSelectedPosition()) emit resultsChanged();
}

bool ModelRuns::predictAtSelectedPosition() {
    const int tokens = current_ ? static_cast<int>(current_->tokens.size()) : 0;
    const int last = current_ && !current_->config.isDecoder() ? tokens : tokens - 1;
    if (selectedPosition_ >= last) selectedPosition_ = -1;
    if (!current_ || !base_ || currentFromEarlierModel_ || !hasPredictions(*current_) ||
        tokens == 0)
        return false;
    const int at = selectedPosition_ >= 0 ? selectedPosition_
                                          : defaultPredictionPosition(*current_, special_.mask);
    return predictAt(at, folder_->model(), *current_, analysis_, *base_, baseAnalysis_);
}

}  // namespace ae::document
