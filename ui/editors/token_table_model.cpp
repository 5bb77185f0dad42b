#include "ui/editors/token_table_model.h"

#include <QColor>

#include "core/scene_edit.h"
#include "ui/editors/matrix_table.h"

namespace ae::ui {

TokenTableModel::TokenTableModel(document::AttentionDocument* document, Stream stream,
                                 QObject* parent)
    : QAbstractTableModel(parent), document_(document), stream_(stream) {
    refresh();
}

void TokenTableModel::refresh() {
    const Scene& scene = document_->scene();
    const bool present = stream_ == Stream::Query || scene.hasSource;
    // References, not copies: this runs on every result change, also for long sequences.
    static const std::vector<std::string> kNoTokens;
    static const MatrixD kNoValues;
    const std::vector<std::string>& tokens = present ? streamTokens(scene, stream_) : kNoTokens;
    const MatrixD& values = present ? streamEmbeddings(scene, stream_) : kNoValues;
    const bool showPadding = present && keyStream(scene) == stream_;
    const std::vector<bool> padding = showPadding ? scene.mask.padding : std::vector<bool>{};

    if (tokens.size() != tokens_.size() || values.cols() != values_.cols() ||
        showPadding != showPadding_) {
        beginResetModel();
        tokens_ = tokens;
        values_ = values;
        padding_ = padding;
        showPadding_ = showPadding;
        endResetModel();
        return;
    }
    const int rows = static_cast<int>(tokens.size());
    for (int r = 0; r < rows; ++r) {
        if (tokens[r] != tokens_[r]) {
            tokens_[r] = tokens[r];
            emit dataChanged(index(r, kTextColumn), index(r, kTextColumn));
            emit headerDataChanged(Qt::Vertical, r, r);
        }
    }
    if (showPadding_) {
        const std::vector<bool> before = padding_;
        padding_ = padding;
        for (int r = 0; r < rows; ++r) {
            const bool was = r < static_cast<int>(before.size()) && before[r];
            if (was != paddedAt(r)) {
                emit dataChanged(index(r, 0), index(r, columnCount() - 1));
            }
        }
    }
    const std::vector<CellBlock> blocks = changedBlocks(values_, values);
    if (!blocks.empty()) values_ = values;
    const int offset = firstValueColumn();
    for (const CellBlock& b : blocks) {
        emit dataChanged(index(b.firstRow, offset + b.firstColumn),
                         index(b.lastRow, offset + b.lastColumn),
                         {Qt::DisplayRole, Qt::EditRole, Qt::ToolTipRole});
    }
}

void TokenTableModel::setDecimals(int decimals) {
    if (decimals == decimals_) return;
    decimals_ = decimals;
    if (rowCount() > 0) {
        emit dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1), {Qt::DisplayRole});
    }
}

int TokenTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(tokens_.size());
}

int TokenTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : firstValueColumn() + static_cast<int>(values_.cols());
}

QVariant TokenTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid()) return {};
    const int row = index.row(), column = index.column();
    const QString token = QString::fromStdString(tokens_[row]);
    if (column == kTextColumn) {
        switch (role) {
            case Qt::DisplayRole:
            case Qt::EditRole:
                return token;
            case Qt::ToolTipRole:
                return tr("Token %1: “%2” (edit to rename)").arg(row).arg(token);
            case Qt::ForegroundRole:
                if (paddedAt(row)) return QVariant::fromValue(QColor(Qt::gray));
                return {};
            default:
                return {};
        }
    }
    if (column == paddingColumn()) {
        switch (role) {
            case Qt::CheckStateRole:
                return paddedAt(row) ? Qt::Checked : Qt::Unchecked;
            case Qt::ToolTipRole:
                return paddedAt(row) ? tr("“%1” is padding: no query attends to it").arg(token)
                                     : tr("Check to mark “%1” as padding (hidden from every query)")
                                           .arg(token);
            default:
                return {};
        }
    }
    const int dim = column - firstValueColumn();
    const double v = values_(row, dim);
    switch (role) {
        case Qt::DisplayRole:
            return formatNumber(v, decimals_);
        case Qt::EditRole:
            return fullPrecision(v);
        case Qt::ToolTipRole:
            return tr("“%1”, dimension %2\n%3").arg(token).arg(dim).arg(fullPrecision(v));
        case Qt::TextAlignmentRole:
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        case Qt::ForegroundRole:
            if (paddedAt(row)) return QVariant::fromValue(QColor(Qt::gray));
            return {};
        default:
            return {};
    }
}

bool TokenTableModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (!index.isValid()) return false;
    const int row = index.row(), column = index.column();
    const Scene& scene = document_->scene();
    // The document may have changed under an open editor; never write outside the scene.
    const bool present = stream_ == Stream::Query || scene.hasSource;
    if (!present || row >= static_cast<int>(streamTokens(scene, stream_).size())) return false;

    if (column == kTextColumn && role == Qt::EditRole) {
        const QString text = value.toString().trimmed();
        if (text.isEmpty()) {
            emit messageRequested(
                tr("A token needs some text; kept “%1”").arg(QString::fromStdString(tokens_[row])));
            return false;
        }
        if (text.toStdString() == streamTokens(scene, stream_)[row]) return true;
        Scene next = scene;
        renameToken(next, stream_, row, text.toStdString());
        QString error;
        if (!document_->replaceScene(next, tr("Rename token to “%1”").arg(text), &error)) {
            emit messageRequested(error);
            return false;
        }
        emit editAccepted();
        return true;
    }
    if (column == paddingColumn() && role == Qt::CheckStateRole) {
        const bool padded = value.toInt() == Qt::Checked;
        Scene next = scene;
        setPadding(next, row, padded);
        // A mask edit: no structural change, so no view is rebuilt.
        document_->setMask(next.mask);
        if (!document_->errorText().isEmpty()) {
            emit messageRequested(document_->errorText());
        } else {
            emit editAccepted();
        }
        return true;
    }
    if (column >= firstValueColumn() && role == Qt::EditRole) {
        const int dim = column - firstValueColumn();
        if (dim >= scene.dModel()) return false;
        double number = 0.0;
        QString error;
        if (!parseNumber(value, &number, &error)) {
            emit messageRequested(error);
            return false;
        }
        if (!document_->setEmbeddingValue(stream_, row, dim, number, &error)) {
            emit messageRequested(error);
            return false;
        }
        emit editAccepted();
        return true;
    }
    return false;
}

Qt::ItemFlags TokenTableModel::flags(const QModelIndex& index) const {
    Qt::ItemFlags f = QAbstractTableModel::flags(index);
    if (!index.isValid()) return f;
    if (index.column() == paddingColumn())
        return (f | Qt::ItemIsUserCheckable) & ~Qt::ItemIsEditable;
    return f | Qt::ItemIsEditable;
}

QVariant TokenTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation == Qt::Vertical) {
        if (role == Qt::DisplayRole) return QString::number(section);
        return {};
    }
    if (role == Qt::DisplayRole) {
        if (section == kTextColumn) return tr("token");
        if (section == paddingColumn()) return tr("pad");
        return QString::number(section - firstValueColumn());
    }
    if (role == Qt::ToolTipRole) {
        if (section == kTextColumn) return tr("The token's text; edit a cell to rename it");
        if (section == paddingColumn()) {
            return tr("Padding (mask.padding): a padded key is hidden from every query");
        }
        return tr("Embedding dimension %1 of d_model").arg(section - firstValueColumn());
    }
    return {};
}

}  // namespace ae::ui
