#pragma once
// The model view's side panels, each drawn from a ModelRun (or what was computed from it):
// attention rollout, the next-token predictions and one head's query-key map.

#include <Eigen/Core>
#include <QStringList>
#include <QWidget>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "core/model/model.h"
#include "core/model/model_analysis.h"

class QButtonGroup;
class QCPCurve;
class QCustomPlot;
class QLabel;
class QTableWidget;

namespace ae::plot {

class HeatmapController;

// Two maps: the rollout of every layer (T x T, query rows, input-token columns) and, for the
// selected position, what each layer's rollout gives it (layers x T: row l is rollout(l)'s row).
class RolloutPanel : public QWidget {
    Q_OBJECT
public:
    explicit RolloutPanel(QWidget* parent = nullptr);
    // The rollout of `run` (attentionRollout: every layer's maps multiplied through). Computed
    // when the panel is shown, or by drawIfStale(): behind another tab it waits, as the query-key
    // map does.
    void setRun(std::shared_ptr<const ae::model::ModelRun<float>> run, const QStringList& tokens);
    void drawIfStale();
    void setPosition(int position);
    int position() const { return position_; }
    HeatmapController* rolloutMap() const { return rolloutMap_; }
    HeatmapController* perLayerMap() const { return perLayerMap_; }

signals:
    void positionClicked(int position);

protected:
    void showEvent(QShowEvent* event) override;

private:
    void draw();
    void showPerLayer();

    std::shared_ptr<const ae::model::ModelRun<float>> run_;
    bool stale_ = false;  // setRun() came while hidden
    HeatmapController* rolloutMap_;
    HeatmapController* perLayerMap_;
    std::vector<Eigen::MatrixXd> rollout_;
    QStringList tokens_;
    int position_ = 0;
};

// The ten most probable next tokens at the selected position, and, after a what-if, how each
// one's probability moved (before → after, ▲ blue up, ▼ orange down).
// A probability as the predictions write it: three significant digits and at least three
// decimals (0.659, 0.0123, 0.00456), scientific below 0.001 (4.57e-05).
QString probabilityText(double probability, int significant = 3);
// The fewest significant digits (3 to 6) at which `before` and `after` read apart, if they differ.
int significantDigitsToTellApart(double before, double after);

class PredictionsPanel : public QWidget {
    Q_OBJECT
public:
    enum Column { TokenColumn, BeforeColumn, ProbabilityColumn, RankColumn, ColumnCount };
    explicit PredictionsPanel(QWidget* parent = nullptr);
    void setPredictions(const std::vector<ae::model::Prediction>& predictions,
                        const std::vector<ae::model::Prediction>& before,
                        const std::function<QString(long long)>& tokenText,
                        const QString& positionText);
    // Fill-mask (an encoder's masked-LM head): the tokens the model guesses at a position, not
    // the next token after it.
    void setFillMask(bool fillMask);
    QTableWidget* table() const { return table_; }
    QString heading() const;

private:
    QLabel* heading_;
    QTableWidget* table_;
    bool fillMask_ = false;
};

// AttentionViz's query-key map for one head: its queries (blue circles) and keys (orange
// squares) on two principal components, each labelled by its token.
class QueryKeyPanel : public QWidget {
    Q_OBJECT
public:
    explicit QueryKeyPanel(QWidget* parent = nullptr);
    void setHead(std::shared_ptr<const ae::model::ModelRun<float>> run, int layer, int head,
                 const QStringList& tokens);
    void setMode(ae::model::QkProjectionMode mode);
    ae::model::QkProjectionMode mode() const { return mode_; }
    QCustomPlot* plot() const { return plot_; }
    // Draws what the last setHead/setMode asked for, if the panel was hidden then: a hidden
    // panel (a tab behind another) waits until it is shown, drawn for an export, or read.
    void drawIfStale();
    // What is plotted, read back from the plot's graphs (drawn first if stale): T query points,
    // then T key points.
    std::vector<QPointF> plottedQueries();
    std::vector<QPointF> plottedKeys();
    QString xAxisTitle();
    QString yAxisTitle();
    void setPresentation(bool on);
    // What the pointer at `pixel` (in the plot's pixels) is over: "query 5 “cat”" for the
    // nearest point within its marker and 3 pixels, or empty. The map's tooltip while hovering:
    // in a crowded map most points go without a label.
    QString pointTextAt(QPointF pixel) const;

protected:
    void showEvent(QShowEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void redraw();
    void draw();
    void placeLabels();
    void relabel();
    // Every point where the plot as laid out draws it: the T queries, then the T keys.
    std::vector<QPointF> pointPixels() const;

    // What the labels are placed from: placed again, in the plot's new pixels, when it is
    // resized (an export sized after drawing, a splitter dragged).
    struct Labelled {
        ae::model::QkProjection projection;
        QStringList labels;
        QFont font;
    };
    std::optional<Labelled> labelled_;

    QCustomPlot* plot_;
    bool stale_ = false;                        // redraw() was asked for while hidden
    QCPCurve* curves_[2] = {nullptr, nullptr};  // queries, keys
    QButtonGroup* modes_;
    std::shared_ptr<const ae::model::ModelRun<float>> run_;
    int layer_ = 0, head_ = 0;
    QStringList tokens_;
    ae::model::QkProjectionMode mode_ = ae::model::QkProjectionMode::Separate;
    bool presentation_ = false;
};

}  // namespace ae::plot
