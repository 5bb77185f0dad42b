#pragma once
// The model view's layers x heads grid: one small weight map per head, painted as images by one
// widget (not a plot per head: 144 maps at L = 128 repaint in a few milliseconds). Large maps are
// pooled (max) to at most kMaxShownCells a side, as the heatmaps pool. Rows are layers ("L0"
// at the top), columns heads ("H0" at the left); each map's rows are queries, columns keys.
//
// Marks: the head open in the explorer (thick orange frame), heads above the summaries'
// threshold (blue frame), heads a what-if changed (vermillion corner), the keyboard's head
// (dashed frame while the grid has focus). Okabe-Ito colours, told apart by shape as well.

#include <QImage>
#include <QStringList>
#include <QWidget>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "core/model/model.h"
#include "core/model/model_analysis.h"
#include "plot/color_maps.h"
#include "plot/pooling.h"

class QCPColorGradient;

namespace ae::plot {

using HeadId = std::pair<int, int>;  // (layer, head)

class HeadGrid : public QWidget {
    Q_OBJECT
public:
    static constexpr int kMaxShownCells = ae::model::kDigestCells;
    // Shared: every map on 0 .. the largest weight of any map. PerMap: each on 0 .. its own
    // largest weight, so diffuse heads show their pattern too. In a decoder the first row (one
    // key, weight 1) does not count: it would make every range 0 .. 1.
    enum class RangeMode { Shared, PerMap };

    explicit HeadGrid(QWidget* parent = nullptr);

    // Rebuilds every map's image. tokens: one label per token (missing ones show the position).
    // `valueWeighted` (one digest a layer), when given, is drawn in place of the run's weights.
    void setRun(std::shared_ptr<const ae::model::ModelRun<float>> run, const QStringList& tokens,
                std::shared_ptr<const std::vector<ae::model::LayerDigest>> valueWeighted = {});
    bool valueWeighted() const { return static_cast<bool>(valueWeighted_); }
    // An encoder–decoder model's cross-attention instead: `decoderRun` is its decoder stack's
    // run, and each map is a layer's cross-attention weights (LayerRecord::cross), its rows the
    // target tokens `targetTokens`, its columns the source tokens `sourceTokens`.
    void setCrossRun(std::shared_ptr<const ae::model::ModelRun<float>> decoderRun,
                     const QStringList& targetTokens, const QStringList& sourceTokens);
    bool showsCrossAttention() const { return cross_; }
    // A pass under way: layer `layer` (of `layers`) has finished on `tokens` tokens, its heads'
    // digests `heads`. Layer 0 starts a new picture (the layers not yet run are blank); setRun
    // replaces it with the finished run's.
    void showLayerDigest(int layer, int layers, int tokens,
                         const std::vector<ae::model::HeadDigest>& heads);
    // A new pass of `layers` layers of `heads` heads on `tokens` tokens: every layer a blank
    // frame until showLayerDigest fills it.
    void startLayerByLayer(int layers, int heads, int tokens);
    // Head `head`'s summary as the grid has it (a default one when it has none).
    ae::model::HeadSummary summaryOf(HeadId head) const {
        const size_t i = static_cast<size_t>(index(head));
        return i < summaries_.size() ? summaries_[i] : ae::model::HeadSummary{};
    }
    // Layers shown so far by showLayerDigest, or -1 with a finished run.
    int layersFilled() const { return filled_; }
    void setSummaries(const std::vector<ae::model::HeadSummary>& summaries);
    void setHighlighted(const std::set<HeadId>& heads);
    const std::set<HeadId>& highlighted() const { return highlighted_; }
    void setChangedHeads(const std::set<HeadId>& heads);
    void setOpenHead(std::optional<HeadId> head);
    // A sentence pair's boundary: the first token of sentence B (-1: none). Every map shows it as
    // a line before that row and that column.
    void setPairStart(int position);
    int pairStart() const { return pairStart_; }
    void setRangeMode(RangeMode mode);
    RangeMode rangeMode() const { return rangeMode_; }
    void setColorMap(ColorMap map);
    // Thicker frames and larger labels for a projector.
    void setPresentation(bool on);

    int layers() const { return layers_; }
    int heads() const { return heads_; }
    HeadId currentHead() const { return current_; }
    void setCurrentHead(HeadId head);

    // Read-back, from what is painted.
    QRect mapRect(HeadId head) const;  // where the head's map is painted, in widget pixels
    PoolShape poolShape() const { return pool_; }
    // The colour painted for matrix cell (row = query, column = key) of a head's map (its pool's
    // colour when pooled).
    QColor paintedColor(HeadId head, int row, int column) const;
    // The values the head's colours span.
    std::pair<double, double> colorRange(HeadId head) const;
    std::optional<HeadId> headAt(const QPoint& pixel) const;
    // What the read-out says for the pointer at `pixel`: the head and its summary numbers, and
    // for the cell under it, query token -> key token and the weight. Empty off the maps.
    QString hoverText(const QPoint& pixel) const;
    // The row and column labels as painted ("L0".., "H0".. every labelStep()-th).
    QStringList layerLabels() const;
    QStringList headLabels() const;
    int headLabelStep() const;
    QFont labelFont() const;
    double lastRefillMilliseconds() const { return refillMs_; }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

signals:
    void headActivated(int layer, int head);  // double-click or Enter
    void currentHeadChanged(int layer, int head);
    void hoverTextChanged(const QString& text);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void leaveEvent(QEvent* event) override;
    void focusInEvent(QFocusEvent* event) override;
    void focusOutEvent(QFocusEvent* event) override;

private:
    struct Geometry {
        int labelWidth = 0, headerHeight = 0, cell = 0, gap = 0, legendHeight = 0;
    };
    Geometry geometry() const;
    void refill();
    void recolor();
    void recolorHead(QCPColorGradient& gradient, int layer, int head);
    int index(HeadId head) const { return head.first * heads_ + head.second; }
    QString cellText(HeadId head, int shownRow, int shownColumn) const;
    QString tokenLabel(int position) const;
    QString keyLabel(int position) const;  // a column's token: the source's in cross-attention
    void setHoverText(const QString& text);

    std::shared_ptr<const ae::model::ModelRun<float>> run_;
    QStringList tokens_;
    QStringList keyTokens_;  // cross-attention's source tokens (self-attention: tokens_)
    bool cross_ = false;
    int layers_ = 0, heads_ = 0, tokenCount_ = 0;
    int keyCount_ = 0;  // the maps' columns: tokenCount_, or the source's in cross-attention
    int pairStart_ = -1;
    int filled_ = -1;
    PoolShape pool_;
    std::shared_ptr<const std::vector<ae::model::LayerDigest>> valueWeighted_;
    std::vector<std::vector<double>> pooled_;  // per head, shownRows x shownColumns, row-major
    std::vector<double> ownMax_;               // per head
    std::vector<QImage> images_;               // per head
    std::vector<ae::model::HeadSummary> summaries_;
    std::set<HeadId> highlighted_, changed_;
    std::optional<HeadId> open_;
    HeadId current_{0, 0};
    RangeMode rangeMode_ = RangeMode::Shared;
    ColorMap colorMap_ = ColorMap::Viridis;
    bool presentation_ = false;
    QString hoverText_;
    double refillMs_ = 0;
};

// "L3 H5" and the summary's numbers, as the read-out and the table's tool tip write them.
QString headSummaryText(const ae::model::HeadSummary& summary);

}  // namespace ae::plot
