#pragma once
// The model view's table of head summaries: one row per head and one column per score of
// core/model/head_scores.h, sortable by any score (through a QSortFilterProxyModel), with a
// threshold on one score that highlights the heads above it (in the table and in the grid) and
// may hide the others.

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "core/model/model_analysis.h"

namespace ae::plot {

// Heads whose `score` is above `threshold` (NaN scores never are).
std::set<std::pair<int, int>> headsAbove(const std::vector<ae::model::HeadSummary>& summaries,
                                         const ae::model::HeadScore& score, double threshold);

class HeadSummaryModel : public QAbstractTableModel {
    Q_OBJECT
public:
    // Layer, head, then the scores in the order of ae::model::headScores().
    enum Column { LayerColumn, HeadColumn, FirstScoreColumn };
    static int lastScoreColumn();
    // The column of the score whose key is `key` (throws std::invalid_argument for none).
    static int scoreColumn(std::string_view key);
    // The score a column shows (FirstScoreColumn ≤ column ≤ lastScoreColumn()).
    static const ae::model::HeadScore& scoreOf(int column);
    // The number a column sorts by (NaN, unmeasured, sorts below every number).
    static constexpr int SortRole = Qt::UserRole;
    // True on a highlighted head's row.
    static constexpr int HighlightRole = Qt::UserRole + 1;

    using QAbstractTableModel::QAbstractTableModel;
    void setSummaries(const std::vector<ae::model::HeadSummary>& summaries);
    // Whose induction scores (every score that needs a repeated run) the summaries carry, and,
    // unless they are the run's own, why (a stale column reads grey and italic, and its tooltip
    // says so).
    void setInduction(ae::model::InductionState state, const QString& note);
    ae::model::InductionState inductionState() const { return induction_; }
    void setHighlighted(const std::set<std::pair<int, int>>& heads);
    // Short names in the score columns' headers, for columns too narrow for the full ones.
    void setShortHeaders(bool on);
    bool shortHeaders() const { return shortHeaders_; }
    // Digits after the point in the score columns (3 unless the columns are narrow).
    void setDecimals(int decimals);
    const ae::model::HeadSummary& summary(int row) const {
        return summaries_[static_cast<size_t>(row)];
    }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    std::vector<ae::model::HeadSummary> summaries_;
    std::set<std::pair<int, int>> highlighted_;
    ae::model::InductionState induction_ = ae::model::InductionState::Pending;
    QString inductionNote_;
    bool shortHeaders_ = false;
    int decimals_ = 3;
};

// Sorts by SortRole; with onlyHighlighted, shows only highlighted heads.
class HeadSummaryFilter : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit HeadSummaryFilter(QObject* parent = nullptr);
    void setOnlyHighlighted(bool on);
    bool onlyHighlighted() const { return onlyHighlighted_; }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    bool onlyHighlighted_ = false;
};

}  // namespace ae::plot
