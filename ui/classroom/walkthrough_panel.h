#pragma once
// The guided walkthrough: one step of the pipeline at a time, from the inputs to W_O. Each step
// names the matrices involved (the grid shows one head, all stages, and marks them; inputs and
// weight matrices, which the grid does not show, appear in the panel's own map), gives the formula
// and explains it with the engine's live numbers for the current head and query.
//
// A second tour (issue 17) walks through the built-in trained model tourModelName(): each step
// acts on the window through the ModelSession (opens the model on its repeated sequence, opens
// the previous-token head, the induction head, switches the previous-token head off) and reads
// the induction head's stripe from the model's live run. The heads come from the model's
// about.json ("tour": {"previous_token": [layer, head], "induction": [layer, head]}), written from
// what training measured.

#include <QList>
#include <QString>
#include <QWidget>
#include <optional>
#include <vector>

#include "core/model/model.h"
#include "plot/stage.h"

class QComboBox;
class QLabel;
class QPushButton;

namespace ae::document {
class AttentionDocument;
class ModelSession;
}  // namespace ae::document

namespace ae::plot {
class HeatmapController;
class HeatmapGrid;
}  // namespace ae::plot

namespace ae::ui {

class RefreshWhenShown;

enum class WalkStep {
    Inputs,
    Norm,
    Query,
    Key,
    Value,
    Scores,
    Divide,
    Mask,
    Softmax,
    Mix,
    Concat,
    OutputProjection
};
constexpr int kWalkStepCount = 12;

// The grid stage a step is about, if it has one (inputs and norm come before every stage).
// `softCap`: the layer has one, so the mask and the softmax read the capped scores.
std::optional<Stage> walkStepStage(WalkStep step, bool softCap = false);
// Every grid stage the step involves, marked while it is shown; with a soft-cap the divide step
// shows the scaled scores beside the capped ones.
QList<Stage> walkStepStages(WalkStep step, bool softCap = false);
// The same for `scene`: its divide step also shows the position terms and bias it adds.
QList<Stage> walkStepStages(WalkStep step, const Scene& scene);
QString walkStepTitle(WalkStep step);
// The title for `scene`: the norm step is "RMS norm" on a Llama- or Qwen-style layer.
QString walkStepTitle(WalkStep step, const Scene& scene);

enum class WalkTour { Layer, TrainedModel };

// The trained-model tour: its steps, and the built-in model it opens.
enum class ModelTourStep { Open, PreviousToken, Induction, Composition, SwitchOff };
constexpr int kModelTourStepCount = 5;
QString modelTourStepTitle(ModelTourStep step);
QString tourModelName();  // "tiny-induction" (resources/models/tiny-induction)

// What the tour needs from the built-in model's about.json; nothing when the model is not
// installed or its about.json has no "tour" object naming two heads the model has.
struct ModelTourPlan {
    QString location;            // "builtin:NAME"
    std::vector<long long> ids;  // about.json's ids: a sequence repeated twice
    int previousLayer = 0, previousHead = 0;
    int inductionLayer = 0, inductionHead = 0;
};
std::optional<ModelTourPlan> modelTourPlan();

// The mean weight of a head on the induction stripe of `ids` = one period N repeated twice: from
// each position i of the second copy (N ≤ i < 2N) to i − N + 1, the token after the earlier
// occurrence of the token at i. `weights` is T x T, T = ids.size(). NaN when ids is not a period
// repeated twice.
double inductionStripe(const model::Matrix<float>& weights, const std::vector<long long>& ids);

class WalkthroughPanel : public QWidget {
    Q_OBJECT
public:
    WalkthroughPanel(document::AttentionDocument* document, plot::HeatmapGrid* grid,
                     QWidget* parent = nullptr);
    QSize sizeHint() const override;
    // The window's model session: without one the trained-model tour is not offered.
    void setModelSession(document::ModelSession* session);

    WalkTour tour() const { return tour_; }
    // Switches tour (from its first step; the trained-model tour then acts: opens the model).
    void setTour(WalkTour tour);
    QComboBox* tourChoice() const { return tourChoice_; }
    int stepCount() const;
    // The trained-model tour's plan, when it is offered.
    const std::optional<ModelTourPlan>& plan() const { return plan_; }

    int step() const { return step_; }
    WalkStep currentStep() const { return static_cast<WalkStep>(step_); }
    // Whether the current step does anything in this scene (norm off, no W_O, no mask: no).
    bool currentStepApplies() const;
    QString formulaText() const;
    QString explanationText() const;
    // The panel's own map (inputs, W_Q/W_K/W_V head columns, W_O), hidden on other steps.
    plot::HeatmapController* matrixMap() const { return map_; }
    bool matrixMapShown() const;
    // Marks the grid (or stops marking it, when the panel is hidden).
    void setActive(bool active);

public slots:
    void next();
    void back();
    void setStep(int step);
    void refresh();

signals:
    // The grid should show one head, all stages: the panel asks, the window switches its mode.
    void allStagesViewRequested();
    // The trained-model tour: open this built-in model ("builtin:NAME"), as File › Open built-in
    // model does (unsaved changes are asked about), and show the model view.
    void modelRequested(const QString& location);
    void modelViewRequested();
    // The composition step: the Workbench tab in front, showing the K-composition matrix.
    void compositionRequested();

private:
    void fillMatrixMap();
    void refreshModelTour();
    // The composition step's numbers: the previous-token head's K-composition into the induction
    // head, random weights' score, its rank among the pairs of heads in different layers.
    struct TourComposition {
        double score = 0, baseline = 0;
        int rank = 0, pairs = 0;
    };
    TourComposition tourComposition() const;
    // The loss on the second copy's next tokens (model::nextTokenLoss), with every head on or
    // with the previous-token head switched off; measured once a plan.
    double tourLoss(bool previousOff) const;
    mutable std::optional<TourComposition> composition_;
    mutable std::optional<double> lossOn_, lossOff_;
    // Does what the current model-tour step does to the window; what needs the model open waits
    // (actPending_) until the session has run.
    void actOnModelTourStep();
    void onSessionResults();
    bool tourModelIsOpen() const;

    document::AttentionDocument* document_;
    plot::HeatmapGrid* grid_;
    document::ModelSession* session_ = nullptr;
    std::optional<ModelTourPlan> plan_;
    WalkTour tour_ = WalkTour::Layer;
    bool actPending_ = false;
    QComboBox* tourChoice_;
    QLabel* heading_;
    QLabel* formula_;
    QLabel* explanation_;
    plot::HeatmapController* map_;
    QPushButton* back_;
    QPushButton* next_;
    int step_ = 0;
    bool active_ = false;
    RefreshWhenShown* refresher_;
};

}  // namespace ae::ui
