#pragma once
// The model view (issue 16): a whole model's run at a glance. A layers x heads grid of small
// weight maps, the heads' summaries (sortable, with a threshold), attention rollout, the
// next-token predictions and one head's query-key map. Drawn from a ModelRun handed in by
// whoever runs the model (the window, or `render --view`); plot/ knows no document.

#include <QStringList>
#include <QWidget>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "core/model/model.h"
#include "core/model/model_analysis.h"
#include "plot/head_summary_table.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QTabWidget;
class QTableView;

namespace ae::plot {

// Everything the view shows, as one value: the window builds it after each run or what-if.
struct ModelViewData {
    std::shared_ptr<const ae::model::ModelRun<float>> run;  // current run (what-ifs applied)
    QStringList tokens;                                     // one label per token (chips' text)
    std::function<QString(long long id)> tokenText;         // decodes a predicted id (null: the id)
    std::vector<ae::model::HeadSummary> summaries;  // layers*heads; induction NaN until measured
    // Whose induction scores `summaries` carry, and, unless they are the run's own, why.
    ae::model::InductionState induction = ae::model::InductionState::Pending;
    QString inductionNote;
    // The query position the predictions are for and the rollout reads; -1 (or past the end):
    // the last token. Whoever computes the predictions owns it, so the list, its heading, the
    // position box and the rollout's row cannot disagree.
    int position = -1;
    std::vector<ae::model::Prediction> predictions;  // at `position`, after what-ifs
    // Same position, before the what-if; empty (no before → after column) when there is none.
    std::vector<ae::model::Prediction> basePredictions;
    std::vector<std::pair<int, int>> changedHeads;  // (layer, head) whose weights moved
    std::optional<std::pair<int, int>> openHead;    // (layer, head) open in the explorer
    // A sentence pair's first token of sentence B (the maps mark the boundary), or -1.
    int pairStart = -1;
    // Every head's weights (T x T each) of a layer the run dropped the maps of
    // (model::RunOptions::keptMaps), recomputed from the model (model::recomputedLayerMaps) for
    // an export that draws them. Null when the run keeps every map.
    std::function<std::vector<ae::model::Matrix<float>>(int layer)> layerWeights;
    // The grid's maps value-weighted (one digest a layer: document::valueWeightedDigests), drawn
    // in place of the weights; null: the weights.
    std::shared_ptr<const std::vector<ae::model::LayerDigest>> valueWeighted;
};

class HeadGrid;
class PredictionsPanel;
class QueryKeyPanel;
class RolloutPanel;

class ModelView : public QWidget {
    Q_OBJECT
public:
    explicit ModelView(QWidget* parent = nullptr);
    ~ModelView() override;

    // Repaints every visible part; parts whose inputs did not change are not redrawn.
    void setData(ModelViewData data);
    // A pass under way has finished layer `layer` (HeadGrid::showLayerDigest): the grid shows
    // the layers done while the rest runs; setData's next run replaces them.
    void showLayerDigest(int layer, int layers, int tokens,
                         const std::vector<ae::model::HeadDigest>& heads);
    // A model being opened: its pass's frames, blank, before its first layer is done.
    void startLayerByLayer(int layers, int heads, int tokens);
    const ModelViewData& data() const { return data_; }
    // Larger fonts and lines, for a projector (ui/window/presentation_mode).
    void setPresentation(bool on);
    bool presentation() const { return presentation_; }
    // The query position the predictions and the rollout read: the data's position (the last
    // token by default). setSelectedPosition is the user's choice: the view shows it and emits
    // positionSelected, and the owner of the data answers with predictions for it.
    int selectedPosition() const { return selectedPosition_; }
    void setSelectedPosition(int position);

    // The parts, for tests and for exporting one of them.
    HeadGrid* grid() const { return grid_; }
    QCheckBox* valueWeightedBox() const { return valueWeighted_; }
    QTableView* summaryTable() const { return table_; }
    HeadSummaryModel* summaryModel() const { return summaryModel_; }
    HeadSummaryFilter* summaryFilter() const { return summaryFilter_; }
    // The rollout, computed first if it waited (its tab behind another when the run changed).
    RolloutPanel* rolloutPanel() const;
    PredictionsPanel* predictionsPanel() const { return predictions_; }
    QueryKeyPanel* queryKeyPanel() const { return queryKey_; }
    QTabWidget* panels() const { return panels_; }
    // The grid's colour range: one for every map, or each map its own.
    void setSharedRange(bool shared);
    // Heads whose `score` is above `threshold` are highlighted in the grid and the table (when
    // on), and with onlyAbove the table lists only them.
    void setThreshold(bool on, const ae::model::HeadScore& score, double threshold,
                      bool onlyAbove = false);
    std::set<std::pair<int, int>> highlightedHeads() const { return highlighted_; }
    QString readout() const;

signals:
    void headActivated(int layer, int head);  // double-click or Enter on a head
    void positionSelected(int position);      // the query position predictions and rollout read
    void summariesNeeded();                   // the user asked for scores not yet measured
    void valueWeightedToggled(bool on);       // the grid's "Value-weighted" box

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void updateHighlight();
    // The score the threshold is on.
    const ae::model::HeadScore& thresholdedScore() const;
    void fitSummaryColumns();
    void updatePositions();
    void updatePredictions();
    void updateQueryKey();
    QString positionText(int position) const;
    // `position` when it is one of the run's tokens, else the last token (-1 without a run).
    int resolvedPosition(int position) const;

    ModelViewData data_;
    bool presentation_ = false;
    int selectedPosition_ = -1;
    std::set<std::pair<int, int>> highlighted_;

    HeadGrid* grid_;
    QLabel* readout_;
    QComboBox* rangeChoice_;
    QComboBox* positionChoice_;
    QTabWidget* panels_;
    QCheckBox* thresholdOn_;
    QCheckBox* valueWeighted_;
    QComboBox* thresholdScore_;
    QDoubleSpinBox* threshold_;
    QCheckBox* onlyAbove_;
    QPushButton* measureInduction_;
    QTableView* table_;
    HeadSummaryModel* summaryModel_;
    HeadSummaryFilter* summaryFilter_;
    RolloutPanel* rollout_;
    PredictionsPanel* predictions_;
    QueryKeyPanel* queryKey_;
};

}  // namespace ae::plot
