#include "plot/head_summary_table.h"

#include <QFont>

#include <QColor>
#include <cmath>
#include <limits>

namespace ae::ui {

QString headScoreName(HeadScore score) {
    switch (score) {
        case HeadScore::Entropy:
            return QObject::tr("Entropy");
        case HeadScore::FirstToken:
            return QObject::tr("First token");
        case HeadScore::PreviousToken:
            return QObject::tr("Previous token");
        case HeadScore::Self:
            return QObject::tr("Self");
        case HeadScore::Induction:
            return QObject::tr("Induction");
    }
    return {};
}

QString headScoreShortName(HeadScore score) {
    switch (score) {
        case HeadScore::Entropy:
            return QObject::tr("Ent.");
        case HeadScore::FirstToken:
            return QObject::tr("First");
        case HeadScore::PreviousToken:
            return QObject::tr("Prev.");
        case HeadScore::Self:
            return QObject::tr("Self");
        case HeadScore::Induction:
            return QObject::tr("Ind.");
    }
    return {};
}

double headScore(const ae::model::HeadSummary& s, HeadScore score) {
    switch (score) {
        case HeadScore::Entropy:
            return s.entropy;
        case HeadScore::FirstToken:
            return s.firstToken;
        case HeadScore::PreviousToken:
            return s.previousToken;
        case HeadScore::Self:
            return s.self;
        case HeadScore::Induction:
            return s.induction;
    }
    return std::numeric_limits<double>::quiet_NaN();
}

std::set<std::pair<int, int>> headsAbove(const std::vector<ae::model::HeadSummary>& summaries,
                                         HeadScore score, double threshold) {
    std::set<std::pair<int, int>> heads;
    for (const auto& s : summaries) {
        const double value = headScore(s, score);
        if (!std::isnan(value) && value > threshold) heads.insert({s.layer, s.head});
    }
    return heads;
}

void HeadSummaryModel::setSummaries(const std::vector<ae::model::HeadSummary>& summaries) {
    // The same heads with new scores (a what-if, induction measured): the table keeps its
    // selection and scroll position and only re-sorts.
    if (summaries.size() == summaries_.size() && !summaries_.empty()) {
        summaries_ = summaries;
        emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
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
    if (!summaries_.empty())
        emit dataChanged(index(0, InductionColumn), index(rowCount() - 1, InductionColumn));
}

void HeadSummaryModel::setHighlighted(const std::set<std::pair<int, int>>& heads) {
    if (heads == highlighted_) return;
    highlighted_ = heads;
    if (!summaries_.empty()) {
        emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1),
                         {Qt::BackgroundRole, HighlightRole});
    }
}

int HeadSummaryModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(summaries_.size());
}

int HeadSummaryModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant HeadSummaryModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const auto& s = summaries_[static_cast<size_t>(index.row())];
    const bool highlighted = highlighted_.count({s.layer, s.head}) > 0;
    if (role == HighlightRole) return highlighted;
    if (role == Qt::BackgroundRole)
        return highlighted ? QVariant(QColor(0xCC, 0xE3, 0xF2)) : QVariant();
    const bool stale =
        index.column() == InductionColumn && induction_ == ae::model::InductionState::Stale;
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
            value = headScore(s, static_cast<HeadScore>(index.column() - EntropyColumn));
    }
    if (role == SortRole)
        return std::isnan(value) ? -std::numeric_limits<double>::infinity() : value;
    if (role == Qt::DisplayRole) {
        if (index.column() <= HeadColumn) return static_cast<int>(value);
        return std::isnan(value) ? QStringLiteral("–") : QString::number(value, 'f', decimals_);
    }
    if (role == Qt::ToolTipRole && index.column() == InductionColumn) {
        using ae::model::InductionState;
        switch (induction_) {
            case InductionState::Measured:
                return tr("Induction score on this text repeated twice");
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
        const auto score = static_cast<HeadScore>(section - EntropyColumn);
        if (shortHeaders_) return headScoreShortName(score);
        // Two lines: seven columns fit beside the grid on a wide screen.
        return headScoreName(score).replace(QLatin1Char(' '), QLatin1Char('\n'));
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
            case LayerColumn:
                return tr("Layer");
            case HeadColumn:
                return tr("Head");
            case EntropyColumn:
                return tr("Mean over queries of the weights' entropy (nats): low is focused");
            case FirstTokenColumn:
                return tr("Mean weight on the first token (BOS for decoders)");
            case PreviousTokenColumn:
                return tr("Mean weight on the token just before");
            case SelfColumn:
                return tr("Mean weight of each token on itself");
            case InductionColumn:
                return tr(
                    "On the text repeated twice: weight on the token after the earlier "
                    "copy of the current one");
            default:
                break;
        }
    }
    return {};
}

void HeadSummaryModel::setShortHeaders(bool on) {
    if (on == shortHeaders_) return;
    shortHeaders_ = on;
    emit headerDataChanged(Qt::Horizontal, EntropyColumn, InductionColumn);
}

void HeadSummaryModel::setDecimals(int decimals) {
    if (decimals == decimals_) return;
    decimals_ = decimals;
    if (rowCount() > 0)
        emit dataChanged(index(0, EntropyColumn), index(rowCount() - 1, InductionColumn));
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

}  // namespace ae::ui
