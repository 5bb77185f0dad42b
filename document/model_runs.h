#pragma once
// The runs the model session shows (document/model_session.h) and their analyses: the model's own
// run on the current input (the base), the one before it (undoing a text edit is then instant),
// and the run shown, which is the base or a what-if resumed from it. Induction scores follow a
// base run, and a what-if that only switches heads off, on the worker (ModelWork::Induction); the
// predictions follow the position the user picked.

#include <QObject>
#include <QString>
#include <atomic>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "document/model_reference.h"
#include "document/run_analysis.h"

namespace ae::io {
class ModelFolder;
}

namespace ae::document {

class ModelWork;

class ModelRuns : public QObject {
    Q_OBJECT
public:
    using Run = WindowRun;

    explicit ModelRuns(ModelWork* work, QObject* parent = nullptr);

    // A new model, `folder`, whose runs these will be (for the predictions and the induction
    // passes): the base run and the one before are forgotten; the run shown stays until the new
    // model's is shown. `special`: its tokenizer's [MASK] (where an encoder's predictions go by
    // default) and [SEP].
    void startModel(std::shared_ptr<io::ModelFolder> folder, SpecialTokenIds special = {});
    // Forgets the model, every run and every analysis (the model was closed).
    void clear();

    // A new base run of the model on `input`, and its analysis; the base it replaces is kept as
    // the one before when its input was another. Its induction is measured next.
    void installBase(std::shared_ptr<const Run> run, const ModelInput& input,
                     const RunAnalysis& analysis);
    // When the run before the base was on `input`, makes it the base again (and the base the one
    // before); whether it did.
    bool takePrevious(const ModelInput& input);

    std::shared_ptr<const Run> base() const { return base_; }
    const ModelInput& baseInput() const { return baseInput_; }
    const RunAnalysis& baseAnalysis() const { return baseAnalysis_; }
    std::shared_ptr<const Run> current() const { return current_; }
    const RunAnalysis& analysis() const { return analysis_; }

    // Shows `current` (the base, or a what-if from layer `layer`) with `analysis`. A what-if's
    // induction column shows the model's scores, marked stale, until `whatIfInductionComing`
    // (measureWhatIfInduction) brings its own.
    void show(std::shared_ptr<const Run> current, RunAnalysis analysis,
              bool whatIfInductionComing = false, int layer = 0);
    void showBase() { show(base_, baseAnalysis_); }
    // For a what-if that only switches heads `headsOff` of layer `layer` off (by zeros), measures
    // induction on the model with them off; whether it does.
    bool measureWhatIfInduction(std::shared_ptr<const Run> whatIf, int layer,
                                std::vector<int> headsOff);
    // Asks for the induction scores: measured if they can be and are not yet; else why not.
    std::optional<QString> measureInduction();
    // The induction pass under way (a repeated text: minutes on a big model) stops at its next
    // layer and delivers nothing: a newer text or model makes it stale.
    void stopInduction();

    // See ModelSession::setSelectedPosition.
    void setSelectedPosition(int position);
    int selectedPosition() const { return selectedPosition_; }
    const SpecialTokenIds& special() const { return special_; }
    // Heads whose weights differ between the base and the shown run by more than `threshold`.
    std::vector<std::pair<int, int>> changedHeads(double threshold) const;

signals:
    void resultsChanged();

private:
    // Measures the base run's induction scores on the worker, then shows them (resultsChanged).
    void measureInductionLater();
    // Stops the induction pass before, and gives the next one its flag.
    std::shared_ptr<std::atomic<bool>> newInductionStop();
    // Brings the predictions (and a what-if's "before") to the selected position on the current
    // run, if they are for another; whether they changed.
    bool predictAtSelectedPosition();

    ModelWork* work_;
    std::shared_ptr<std::atomic<bool>> inductionStop_;
    std::shared_ptr<io::ModelFolder> folder_;
    std::shared_ptr<const Run> base_;  // on baseInput_
    ModelInput baseInput_;
    RunAnalysis baseAnalysis_;
    std::shared_ptr<const Run> previousBase_;  // one step back: undo of a text edit is instant
    ModelInput previousInput_;
    RunAnalysis previousAnalysis_;
    std::shared_ptr<const Run> current_;
    // current_ is a run of the model open before startModel(): nothing compares it with the new
    // model's runs or feeds it to the new model, until show() gives one of the new model's.
    bool currentFromEarlierModel_ = false;
    RunAnalysis analysis_;
    int selectedPosition_ = -1;
    SpecialTokenIds special_;
};

}  // namespace ae::document
