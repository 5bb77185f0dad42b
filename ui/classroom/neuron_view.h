#pragma once
// The neuron view for one query (after BertViz's, but editable): q_i and every k_j, their
// elementwise product q_i∘k_j as one row per key, then per key the dot product, the scaled score
// and the softmax weight, each v_j scaled by its weight, and their sum, context_i. The numbers are
// the engine's (scores, scaled, weights, context are read, never recomputed); the products are
// the terms whose sum the engine's score is. Token i's embedding can be edited in place, and the
// view follows every resultsChanged.

#include <QWidget>

class QLabel;
class QSpinBox;
class QTableWidget;

namespace ae::document {
class AttentionDocument;
}  // namespace ae::document

namespace ae::plot {
class HeatmapController;
}  // namespace ae::plot

namespace ae::ui {

class RefreshWhenShown;

class NeuronView : public QWidget {
    Q_OBJECT
public:
    explicit NeuronView(document::AttentionDocument* document, QWidget* parent = nullptr);

    int head() const { return head_; }
    int query() const { return query_; }
    QSpinBox* querySpin() const { return querySpin_; }
    QSpinBox* headSpin() const { return headSpin_; }
    // Token i's embedding, one editable cell per dimension.
    QTableWidget* embeddingTable() const { return embedding_; }
    // Per key: token, q·k, ÷ divisor, weight. Column 1.. hold the engine's float in Qt::UserRole.
    QTableWidget* scoreTable() const { return scores_; }
    plot::HeatmapController* queryMap() const { return queryMap_; }        // 1 x dHead: q_i
    plot::HeatmapController* keysMap() const { return keysMap_; }          // Lk x dHead: k_j
    plot::HeatmapController* productMap() const { return productMap_; }    // Lk x dHead: q_i∘k_j
    plot::HeatmapController* weightedMap() const { return weightedMap_; }  // Lk x dHead: w_ij v_j
    plot::HeatmapController* contextMap() const { return contextMap_; }    // 1 x dHead: context_i

public slots:
    void setHead(int head);
    void setQuery(int query);
    void refresh();

signals:
    void queryChanged(int query);

private:
    void rebuildEmbeddingRow();
    void embeddingEdited(int row, int column);

    document::AttentionDocument* document_;
    QSpinBox* headSpin_;
    QSpinBox* querySpin_;
    QLabel* caption_;
    QTableWidget* embedding_;
    QTableWidget* scores_;
    plot::HeatmapController* queryMap_;
    plot::HeatmapController* keysMap_;
    plot::HeatmapController* productMap_;
    plot::HeatmapController* weightedMap_;
    plot::HeatmapController* contextMap_;
    int head_ = 0;
    int query_ = 0;
    bool filling_ = false;
    RefreshWhenShown* refresher_;
};

}  // namespace ae::ui
