#pragma once
// The "what if" comparisons of Explain menu, each side by side for the same tokens:
//   PinCompareView        pinned weights, current weights and current − pinned;
//   ProjectionComparison  separate W_Q/W_K, shared Q = K, and identity projections;
//   ScalingPlot           the engine's own scaling study over d_k = 1 .. 1024;
//   PositionsComparison   a token permutation with and without positional encodings.
// Each what-if is computed by its own AttentionEngine on a converted copy of the scene, so the
// document (and its undo history) never changes.

#include <QDialog>
#include <QPointF>
#include <QVector>
#include <QWidget>
#include <vector>

#include "core/scaling_study.h"
#include "plot/stage.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QSpinBox;

namespace ae::document {
class AttentionDocument;
}  // namespace ae::document

namespace ae::plot {
class HeatmapController;
class ScalingChart;
}  // namespace ae::plot

namespace ae::ui {

class RefreshWhenShown;

class PinCompareView : public QWidget {
    Q_OBJECT
public:
    explicit PinCompareView(document::AttentionDocument* document, QWidget* parent = nullptr);

    bool hasPin() const { return !pinned_.empty(); }
    // The weights pinned for head h (Lq x Lk).
    const plot::EngineF::Matrix& pinnedWeights(int head) const { return pinned_[head]; }
    plot::HeatmapController* pinnedMap() const { return pinnedMap_; }
    plot::HeatmapController* currentMap() const { return currentMap_; }
    plot::HeatmapController* differenceMap() const { return differenceMap_; }  // current − pinned
    int head() const { return head_; }
    // Why the comparison cannot be shown (nothing pinned, shapes differ), or empty.
    QString problem() const { return problem_; }

public slots:
    // Pins (or re-pins) the shown weights. Only this replaces a pin: edits never do.
    void pin();
    void setHead(int head);
    void refresh();

private:
    document::AttentionDocument* document_;
    RefreshWhenShown* refresher_;
    QPushButton* pinButton_;
    QSpinBox* headSpin_;
    QLabel* status_;
    QWidget* legend_;  // what the difference map's colours mean
    plot::HeatmapController* pinnedMap_;
    plot::HeatmapController* currentMap_;
    plot::HeatmapController* differenceMap_;
    std::vector<plot::EngineF::Matrix> pinned_;  // one per head
    std::vector<std::string> pinnedTokens_, pinnedKeys_;
    QString pinnedDescription_;
    QString problem_;
    int head_ = 0;
};

class ProjectionComparison : public QDialog {
    Q_OBJECT
public:
    ProjectionComparison(document::AttentionDocument* document, QWidget* parent = nullptr);

    static constexpr int kVariants = 3;  // separate, shared Q = K, identity
    // What the maps show: the scores (the default, where shared Q = K is symmetric) or the
    // weights. Either way every variant is computed without the scene's mask.
    bool showsScores() const;
    void setShowsScores(bool scores);
    // The weights of one variant for the shown head (empty if it could not be computed).
    const plot::EngineF::Matrix& weights(int variant) const { return weights_[variant]; }
    const plot::EngineF::Matrix& scores(int variant) const { return scores_[variant]; }
    plot::HeatmapController* map(int variant) const { return maps_[variant]; }

public slots:
    void setHead(int head);
    void refresh();

private:
    document::AttentionDocument* document_;
    RefreshWhenShown* refresher_;
    QComboBox* shown_;
    QLabel* maskNote_;  // shown when the scene has a mask the comparison leaves out
    plot::HeatmapController* maps_[kVariants];
    QLabel* captions_[kVariants];
    plot::EngineF::Matrix weights_[kVariants];
    plot::EngineF::Matrix scores_[kVariants];
    int head_ = 0;
};

class ScalingPlot : public QDialog {
    Q_OBJECT
public:
    explicit ScalingPlot(QWidget* parent = nullptr);

    // d_k = 1, 2, 4 … 1024, as computed by scalingStudy (the plot's data).
    const std::vector<ScalingPoint>& points() const { return points_; }
    plot::ScalingChart* chart() const { return chart_; }
    // The (d_k, value) points the chart draws for one curve (0: raw variance, 1: scaled variance).
    QVector<QPointF> drawnCurve(int curve) const;
    static constexpr int kTokens = 16;
    static constexpr int kTrials = 32;

private:
    std::vector<ScalingPoint> points_;
    plot::ScalingChart* chart_;
};

class PositionsComparison : public QDialog {
    Q_OBJECT
public:
    PositionsComparison(document::AttentionDocument* document, QWidget* parent = nullptr);

    bool encodings() const;
    void setEncodings(bool on);
    // Largest |weights(permuted)[p, q] − weights(original)[perm[p], permK[q]]| for the shown head:
    // about 0 (float rounding) when order does not matter.
    double maxDeviation() const { return deviation_; }
    // Token p of the permuted sentence is token permutation()[p] of the original.
    const std::vector<int>& permutation() const { return perm_; }
    plot::HeatmapController* originalMap() const { return maps_[0]; }
    plot::HeatmapController* permutedMap() const { return maps_[1]; }
    plot::HeatmapController* reorderedMap() const { return maps_[2]; }

public slots:
    void setHead(int head);
    void refresh();

private:
    document::AttentionDocument* document_;
    RefreshWhenShown* refresher_;
    QCheckBox* encodings_;
    QComboBox* permutationKind_;
    QLabel* verdict_;
    plot::HeatmapController* maps_[3];
    std::vector<int> perm_;
    double deviation_ = 0;
    int head_ = 0;
};

}  // namespace ae::ui
