#include "ui/editors/matrix_table.h"

#include <QColor>
#include <QFontDatabase>
#include <QFontMetrics>
#include <QHeaderView>
#include <QLocale>
#include <QTableView>
#include <QVariant>
#include <algorithm>
#include <cmath>
#include <limits>

namespace ae::ui {

QString formatNumber(double value, int decimals) {
    if (std::abs(value) >= 1e6) return QString::number(value, 'e', decimals);
    // -0.000 reads as a sign error on a slide: show a plain zero.
    const QString text = QString::number(value, 'f', decimals);
    const QString negativeZero = QStringLiteral("-0.") + QString(decimals, QLatin1Char('0'));
    return text == negativeZero ? text.mid(1) : text;
}

QString fullPrecision(double value) {
    return QString::number(value, 'g', 17);
}

bool parseNumber(const QVariant& input, double* value, QString* error) {
    auto refuse = [error](const QString& reason) {
        if (error) *error = reason;
        return false;
    };
    double v = 0.0;
    bool ok = false;
    QString text;
    if (input.typeId() == QMetaType::Double || input.typeId() == QMetaType::Float ||
        input.typeId() == QMetaType::Int || input.typeId() == QMetaType::LongLong) {
        v = input.toDouble(&ok);
        text = fullPrecision(v);
    } else {
        text = input.toString().trimmed();
        if (text.isEmpty()) return refuse(QObject::tr("An empty cell is not a number"));
        v = QLocale::c().toDouble(text, &ok);
        if (!ok) {
            bool localOk = false;
            const double local = QLocale().toDouble(text, &localOk);
            if (localOk) {
                v = local;
                ok = true;
            }
        }
        // Out of range: Qt returns +-inf (overflow) or 0 (underflow) and reports failure.
        if (!ok && std::isinf(v)) {
            return refuse(QObject::tr("“%1” is too large to be a number here").arg(text));
        }
    }
    if (!ok) return refuse(QObject::tr("“%1” is not a number").arg(text));
    if (std::isnan(v)) return refuse(QObject::tr("“%1” is not a number (NaN)").arg(text));
    if (std::isinf(v)) {
        return refuse(QObject::tr("“%1” is infinite, not a finite number").arg(text));
    }
    // The window's engine computes in float: beyond its range a value would turn into inf there.
    if (std::abs(v) > std::numeric_limits<float>::max()) {
        return refuse(QObject::tr("“%1” is too large: the window computes in float (up to about "
                                  "±3.4e38)")
                          .arg(text));
    }
    *value = v;
    return true;
}

void configureNumberView(QTableView* view, int decimals) {
    QFont font = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    font.setPointSizeF(view->parentWidget() ? view->parentWidget()->font().pointSizeF()
                                            : view->font().pointSizeF());
    view->setFont(font);
    const QFontMetrics metrics(font);
    // The widest usual number: a sign, two digits and the decimals; larger ones get a tooltip.
    const QString widest = QStringLiteral("-00.") + QString(decimals, QLatin1Char('0'));
    view->horizontalHeader()->setDefaultSectionSize(metrics.horizontalAdvance(widest) +
                                                    2 * metrics.averageCharWidth());
    view->horizontalHeader()->setMinimumSectionSize(
        metrics.horizontalAdvance(QStringLiteral("000")));
    view->verticalHeader()->setDefaultSectionSize(metrics.height() + 6);
    view->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    view->setWordWrap(false);
    view->setTextElideMode(Qt::ElideRight);
}

void fitColumnsToLastLabel(QTableView* view) {
    const QAbstractItemModel* model = view->model();
    if (!model || model->columnCount() == 0) return;
    QHeaderView* header = view->horizontalHeader();
    const QString label = model->headerData(model->columnCount() - 1, Qt::Horizontal).toString();
    const QFontMetrics metrics(header->font());
    const int needed = metrics.horizontalAdvance(label) + 2 * metrics.averageCharWidth();
    if (needed > header->defaultSectionSize()) header->setDefaultSectionSize(needed);
}

std::vector<CellBlock> changedBlocks(const MatrixD& before, const MatrixD& after) {
    std::vector<CellBlock> blocks;
    const int rows = static_cast<int>(after.rows()), cols = static_cast<int>(after.cols());
    for (int r = 0; r < rows; ++r) {
        int first = -1, last = -1;
        for (int c = 0; c < cols; ++c) {
            if (before(r, c) != after(r, c)) {
                if (first < 0) first = c;
                last = c;
            }
        }
        if (first >= 0) blocks.push_back({r, r, first, last});
    }
    // Hundreds of row signals cost more than repainting the visible part of the table once.
    constexpr std::size_t kMaxBlocks = 32;
    if (blocks.size() > kMaxBlocks) {
        CellBlock all{blocks.front().firstRow, blocks.back().lastRow, cols, -1};
        for (const CellBlock& b : blocks) {
            all.firstColumn = std::min(all.firstColumn, b.firstColumn);
            all.lastColumn = std::max(all.lastColumn, b.lastColumn);
        }
        blocks = {all};
    }
    return blocks;
}

MatrixTableModel::MatrixTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void MatrixTableModel::setValues(const MatrixD& values, const QStringList& rowLabels,
                                 const QStringList& columnLabels) {
    if (values.rows() != values_.rows() || values.cols() != values_.cols()) {
        beginResetModel();
        values_ = values;
        rowLabels_ = rowLabels;
        columnLabels_ = columnLabels;
        endResetModel();
        return;
    }
    const std::vector<CellBlock> blocks = changedBlocks(values_, values);
    if (!blocks.empty()) values_ = values;
    for (const CellBlock& b : blocks) {
        emit dataChanged(index(b.firstRow, b.firstColumn), index(b.lastRow, b.lastColumn),
                         {Qt::DisplayRole, Qt::EditRole, Qt::ToolTipRole});
    }
    if (rowLabels != rowLabels_) {
        rowLabels_ = rowLabels;
        if (rowCount() > 0) emit headerDataChanged(Qt::Vertical, 0, rowCount() - 1);
    }
    if (columnLabels != columnLabels_) {
        columnLabels_ = columnLabels;
        if (columnCount() > 0) emit headerDataChanged(Qt::Horizontal, 0, columnCount() - 1);
    }
}

void MatrixTableModel::setDecimals(int decimals) {
    if (decimals == decimals_) return;
    decimals_ = decimals;
    if (rowCount() > 0 && columnCount() > 0) {
        emit dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1), {Qt::DisplayRole});
    }
}

int MatrixTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(values_.rows());
}

int MatrixTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(values_.cols());
}

QVariant MatrixTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid()) return {};
    const double v = values_(index.row(), index.column());
    switch (role) {
        case Qt::DisplayRole:
            return formatNumber(v, decimals_);
        case Qt::EditRole:
            return fullPrecision(v);
        case Qt::ToolTipRole: {
            const QString where =
                tr("%1row %2, column %3")
                    .arg(toolTipPrefix_.isEmpty() ? QString() : toolTipPrefix_ + QLatin1Char(' '))
                    .arg(headerData(index.row(), Qt::Vertical).toString())
                    .arg(headerData(index.column(), Qt::Horizontal).toString());
            return QStringLiteral("%1\n%2").arg(where, fullPrecision(v));
        }
        case Qt::TextAlignmentRole:
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        case Qt::BackgroundRole: {
            const int section = bandOrientation_ == Qt::Horizontal ? index.column() : index.row();
            const int head = headOf(bandOrientation_, section);
            if (head % 2 == 1) return headTint();
            return {};
        }
        default:
            return {};
    }
}

bool MatrixTableModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (!index.isValid() || role != Qt::EditRole || !setter_) return false;
    double number = 0.0;
    QString error;
    if (!parseNumber(value, &number, &error)) {
        emit messageRequested(error);
        return false;
    }
    // The setter may come back through setValues() (the document signals the change at once).
    if (!setter_(index.row(), index.column(), number, &error)) {
        emit messageRequested(error);
        return false;
    }
    emit valueAccepted();
    return true;
}

Qt::ItemFlags MatrixTableModel::flags(const QModelIndex& index) const {
    Qt::ItemFlags f = QAbstractTableModel::flags(index);
    if (index.isValid() && setter_) f |= Qt::ItemIsEditable;
    return f;
}

void MatrixTableModel::setHeadBands(Qt::Orientation orientation, int bandSize, int bands) {
    if (bands < 2) bandSize = 0;
    if (orientation == bandOrientation_ && bandSize == bandSize_ && bands == bands_) return;
    bandOrientation_ = orientation;
    bandSize_ = bandSize;
    bands_ = bandSize > 0 ? bands : 0;
    if (rowCount() > 0 && columnCount() > 0) {
        emit dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1),
                         {Qt::BackgroundRole});
    }
}

int MatrixTableModel::headOf(Qt::Orientation orientation, int section) const {
    if (orientation != bandOrientation_ || bandSize_ <= 0 || section < 0) return -1;
    const int head = section / bandSize_;
    return head < bands_ ? head : -1;
}

QColor MatrixTableModel::headTint() {
    // Light enough for dark digits, visible on a projector; translucent so a selection shows.
    return QColor(70, 130, 180, 60);
}

QVariant MatrixTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (role != Qt::DisplayRole) return QAbstractTableModel::headerData(section, orientation, role);
    const QStringList& labels = orientation == Qt::Horizontal ? columnLabels_ : rowLabels_;
    return section < labels.size() ? labels[section] : QString::number(section);
}

}  // namespace ae::ui
