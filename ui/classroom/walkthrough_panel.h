#pragma once
// The guided walkthrough: one step of the pipeline at a time, from the inputs to W_O. Each step
// names the matrices involved (the grid shows one head, all stages, and marks them; inputs and
// weight matrices, which the grid does not show, appear in the panel's own map), gives the formula
// and explains it with the engine's live numbers for the current head and query.

#include <QList>
#include <QString>
#include <QWidget>
#include <optional>

#include "plot/stage.h"

class QLabel;
class QPushButton;

namespace ae::ui {

class AttentionDocument;
class HeatmapController;
class HeatmapGrid;

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
std::optional<Stage> walkStepStage(WalkStep step);
// Every grid stage the step involves, marked while it is shown.
QList<Stage> walkStepStages(WalkStep step);
QString walkStepTitle(WalkStep step);

class WalkthroughPanel : public QWidget {
    Q_OBJECT
public:
    WalkthroughPanel(AttentionDocument* document, HeatmapGrid* grid, QWidget* parent = nullptr);

    int step() const { return step_; }
    WalkStep currentStep() const { return static_cast<WalkStep>(step_); }
    // Whether the current step does anything in this scene (norm off, no W_O, no mask: no).
    bool currentStepApplies() const;
    QString formulaText() const;
    QString explanationText() const;
    // The panel's own map (inputs, W_Q/W_K/W_V head columns, W_O), hidden on other steps.
    HeatmapController* matrixMap() const { return map_; }
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

protected:
    // Hidden views skip the engine's changes (a BERT-sized slider drag must stay fast) and catch
    // up when shown.
    void showEvent(QShowEvent* event) override;

private:
    void onResultsChanged();
    void fillMatrixMap();

    AttentionDocument* document_;
    HeatmapGrid* grid_;
    QLabel* heading_;
    QLabel* formula_;
    QLabel* explanation_;
    HeatmapController* map_;
    QPushButton* back_;
    QPushButton* next_;
    int step_ = 0;
    bool active_ = false;
    bool stale_ = false;
};

}  // namespace ae::ui
