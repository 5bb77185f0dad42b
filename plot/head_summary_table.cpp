#include "plot/head_summary_table.h"

#include <QFont>

#include <QColor>
#include <cmath>
#include <limits>

namespace ae::plot {

std::set<std::pair<int, int>> headsAbove(const std::vector<ae::model::HeadSummary>& summaries,
                                         const ae::model::HeadScore& score, double threshold) {
    std::set<std::pair<int, int>> heads;
    for (const auto& s : summaries) {
        const double value = s.*score.value;
        if (!std::isnan(value) && value > threshold) heads.insert({s.layer, s.head});
    }
    return heads;
}

int HeadSummaryModel::lastScoreColumn() {
    return FirstScoreColumn + static_cast<int>(ae::model::headScores().size()) - 1;
}

int HeadSummaryModel::scoreColumn(std::string_view key) {
    const ae::model::HeadScore& score = ae::model::headScore(key);
    return FirstScoreColumn + static_cast<int>(&score - ae::model::headScores().data());
}

const ae::model::HeadScore& HeadSummaryModel::scoreOf(int column) {
    return ae::model::headScores().at(static_cast<size_t>(column - FirstScoreColumn));
}

void HeadSummaryModel::setSummaries(const std::vector<ae::model::HeadSummary>& summaries) {
    // The same heads with new scores (a what-if, induction measured): the table keeps its
    // selection and scroll position and only re-sorts.
    if (summaries.size() == summaries_.size() && !summaries_.empty()) {
        summaries_ = summaries;
        emit dataChanged(index(0, 0), index(rowCount() - 1, lastScoreColumn()));
        return;
    }
    beginResetModel();
    summaries_ = summaries;
    endResetModel();
}

void HeadSummaryModel::setInduction(ae::model::InductionState state, const QString& note) {
    if (state == induction_ && note == inductionNote_) return;
    induction_ = state;
    inductionNote_ = note;
    if (summaries_.empty()) return;
    for (int column = FirstScoreColumn; column <= lastScoreColumn(); ++column) {
        if (scoreOf(column).needsRepeatedRun)
            emit dataChanged(index(0, column), index(rowCount() - 1, column));
    }
}

void HeadSummaryModel::setHighlighted(const std::set<std::pair<int, int>>& heads) {
    if (heads == highlighted_) return;
    highlighted_ = heads;
    if (!summaries_.empty()) {
        emit dataChanged(index(0, 0), index(rowCount() - 1, lastScoreColumn()),
                         {Qt::BackgroundRole, HighlightRole});
    }
}

int HeadSummaryModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(summaries_.size());
}

int HeadSummaryModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : lastScoreColumn() + 1;
}

QVariant HeadSummaryModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const auto& s = summaries_[static_cast<size_t>(index.row())];
    const bool highlighted = highlighted_.count({s.layer, s.head}) > 0;
    if (role == HighlightRole) return highlighted;
    if (role == Qt::BackgroundRole)
        return highlighted ? QVariant(QColor(0xCC, 0xE3, 0xF2)) : QVariant();
    const bool repeatedRun =
        index.column() >= FirstScoreColumn && scoreOf(index.column()).needsRepeatedRun;
    const bool stale = repeatedRun && induction_ == ae::model::InductionState::Stale;
    if (role == Qt::ForegroundRole) {
        if (stale) return QColor(0x80, 0x80, 0x80);
        return highlighted ? QVariant(QColor(Qt::black)) : QVariant();
    }
    if (role == Qt::FontRole && stale) {
        QFont italic;
        italic.setItalic(true);
        return italic;
    }
    if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
    double value = 0;
    switch (index.column()) {
        case LayerColumn:
            value = s.layer;
            break;
        case HeadColumn:
            value = s.head;
            break;
        default:
            value = s.*scoreOf(index.column()).value;
    }
    if (role == SortRole)
        return std::isnan(value) ? -std::numeric_limits<double>::infinity() : value;
    if (role == Qt::DisplayRole) {
        if (index.column() <= HeadColumn) return static_cast<int>(value);
        return std::isnan(value) ? QStringLiteral("–") : QString::number(value, 'f', decimals_);
    }
    if (role == Qt::ToolTipRole && repeatedRun) {
        using ae::model::InductionState;
        switch (induction_) {
            case InductionState::Measured:
                return tr("%1 score on this text repeated twice")
                    .arg(QString::fromUtf8(scoreOf(index.column()).label));
            case InductionState::Pending:
                return tr("Not measured yet: Measure induction runs the text repeated twice.");
            case InductionState::Unmeasurable:
                return tr("Not measured: %1.").arg(inductionNote_);
            case InductionState::Stale:
                return tr("Not measured on the what-if: %1.").arg(inductionNote_);
        }
    }
    return {};
}

QVariant HeadSummaryModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal) return {};
    if (role == Qt::DisplayRole) {
        // L and H, as the grid labels its rows and columns: the room goes to the scores.
        if (section == LayerColumn) return tr("L");
        if (section == HeadColumn) return tr("H");
        if (section < FirstScoreColumn || section > lastScoreColumn()) return {};
        const ae::model::HeadScore& score = scoreOf(section);
        if (shortHeaders_) return QString::fromUtf8(score.shortLabel);
        // Two lines: seven columns fit beside the grid on a wide screen.
        return QString::fromUtf8(score.label).replace(QLatin1Char(' '), QLatin1Char('\n'));
    }
    if (role == Qt::ToolTipRole) {
        if (section == LayerColumn) return tr("Layer");
        if (section == HeadColumn) return tr("Head");
        if (section >= FirstScoreColumn && section <= lastScoreColumn())
            return QString::fromUtf8(scoreOf(section).help);
    }
    return {};
}

void HeadSummaryModel::setShortHeaders(bool on) {
    if (on == shortHeaders_) return;
    shortHeaders_ = on;
    emit headerDataChanged(Qt::Horizontal, FirstScoreColumn, lastScoreColumn());
}

void HeadSummaryModel::setDecimals(int decimals) {
    if (decimals == decimals_) return;
    decimals_ = decimals;
    if (rowCount() > 0)
        emit dataChanged(index(0, FirstScoreColumn), index(rowCount() - 1, lastScoreColumn()));
}

HeadSummaryFilter::HeadSummaryFilter(QObject* parent) : QSortFilterProxyModel(parent) {
    setSortRole(HeadSummaryModel::SortRole);
}

void HeadSummaryFilter::setOnlyHighlighted(bool on) {
    if (on == onlyHighlighted_) return;
    onlyHighlighted_ = on;
    invalidateFilter();
}

bool HeadSummaryFilter::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
    if (!onlyHighlighted_) return true;
    return sourceModel()
        ->index(sourceRow, 0, sourceParent)
        .data(HeadSummaryModel::HighlightRole)
        .toBool();
}

}  // namespace ae::plot
