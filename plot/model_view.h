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
#include <utility>
#include <vector>

#include "core/model.h"
#include "core/model_analysis.h"

namespace ae::ui {

// Everything the view shows, as one value: the window builds it after each run or what-if.
struct ModelViewData {
    std::shared_ptr<const ae::model::ModelRun<float>> run;  // current run (what-ifs applied)
    QStringList tokens;                                     // one label per token (chips' text)
    std::function<QString(long long id)> tokenText;         // decodes a predicted id (null: the id)
    std::vector<ae::model::HeadSummary> summaries;   // layers*heads; induction NaN until measured
    std::vector<ae::model::Prediction> predictions;  // at the selected position, after what-ifs
    std::vector<ae::model::Prediction> basePredictions;  // same position, before any what-if
    std::vector<std::pair<int, int>> changedHeads;       // (layer, head) whose weights moved
    std::optional<std::pair<int, int>> openHead;         // (layer, head) open in the explorer
};

class ModelView : public QWidget {
    Q_OBJECT
public:
    explicit ModelView(QWidget* parent = nullptr);
    ~ModelView() override;

    // Repaints every visible part; parts whose inputs did not change are not redrawn.
    void setData(ModelViewData data);
    const ModelViewData& data() const { return data_; }
    // Larger fonts and lines, for a projector (ui/window/presentation_mode).
    void setPresentation(bool on);
    bool presentation() const { return presentation_; }
    // The query position the predictions and the rollout read (the last token by default).
    int selectedPosition() const { return selectedPosition_; }
    void setSelectedPosition(int position);

signals:
    void headActivated(int layer, int head);  // double-click or Enter on a head
    void positionSelected(int position);      // the query position predictions and rollout read
    void summariesNeeded();                   // the user asked for scores not yet measured

private:
    ModelViewData data_;
    bool presentation_ = false;
    int selectedPosition_ = -1;
};

}  // namespace ae::ui
