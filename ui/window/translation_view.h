#pragma once
// The Translation tab: an encoder–decoder model's run at a glance (document/translation_session.h).
// Three layers × heads grids, cross-attention (target rows, source columns), the encoder's
// self-attention and the decoder's, each head's summary in the read-out and in a sortable table
// under the grid; the alignment view (one
// head, a layer's mean or every layer's, exportable as a figure); and the next token after the
// target, before → after a what-if. Double-clicking a head opens it in the explorer.

#include <QWidget>
#include <array>

#include "core/model/what_if.h"

class QComboBox;
class QLabel;
class QTabWidget;
class QTableView;

namespace ae::document {
class TranslationSession;
}
namespace ae::plot {
class EffectMap;
class HeadGrid;
class HeadSummaryFilter;
class HeadSummaryModel;
class PredictionsPanel;
}  // namespace ae::plot

namespace ae::ui {

class TranslationView : public QWidget {
    Q_OBJECT
public:
    // What the alignment map averages: the cross grid's current head, its layer, or every layer.
    enum class Alignment { Head = 0, LayerMean = 1, EveryLayer = 2 };

    explicit TranslationView(document::TranslationSession* session, QWidget* parent = nullptr);

    plot::HeadGrid* grid(model::AttentionKind kind) const;
    QTabWidget* grids() const { return grids_; }
    plot::EffectMap* alignment() const { return alignment_; }
    QComboBox* alignmentChoice() const { return alignmentChoice_; }
    plot::PredictionsPanel* predictions() const { return predictions_; }
    // The heads of the grid in front, one row each with its summary, sortable by any score.
    QTableView* summaryTable() const { return table_; }
    plot::HeadSummaryModel* summaryModel() const { return summaryModel_; }
    QString readout() const;
    void setAlignment(Alignment alignment);
    // Larger fonts and frames, for a projector, and the summary table hidden.
    void setPresentation(bool on);

signals:
    void headActivated(model::AttentionKind kind, int layer, int head);

private:
    void showRun();
    void showAlignment();
    void showOpenHead();
    void showSummaries();
    model::AttentionKind kindInFront() const;

    document::TranslationSession* session_;
    QTabWidget* grids_;
    std::array<plot::HeadGrid*, 3> grid_{};  // by model::AttentionKind
    QLabel* readout_;
    QComboBox* alignmentChoice_;
    plot::EffectMap* alignment_;
    plot::PredictionsPanel* predictions_;
    QTableView* table_;
    plot::HeadSummaryModel* summaryModel_;
    plot::HeadSummaryFilter* summaryFilter_;
};

}  // namespace ae::ui
