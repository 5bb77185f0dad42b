#pragma once
// Tables of numbers shared by the tokens and weights editors: how a number is shown (fixed width,
// a few decimals, readable on a projector) and read back (full precision, with a reason when the
// text is refused), and a matrix model that updates its views cell by cell.

#include <QAbstractTableModel>
#include <QStringList>
#include <functional>
#include <vector>

#include "core/scene.h"

class QColor;
class QTableView;
class QVariant;

namespace ae::ui {

// `decimals` fixed places, so a column of numbers lines up in a fixed-width font; scientific
// notation from 1e6 on, where fixed notation would be wider than the column.
QString formatNumber(double value, int decimals);
// Enough digits to read back the same double: what the cell editor and the tooltip show.
QString fullPrecision(double value);
// A typed cell: a number in the C locale ("0.5") or the user's ("0,5"), or a double variant.
// Refuses, with a one-line reason, text that is not a number, NaN, infinities, and values beyond
// float ("1e400", "1e39"), which would reach the window's float engine as inf.
bool parseNumber(const QVariant& input, double* value, QString* error);

// Sets up a table of numbers: fixed-width font at the view's size, columns as wide as the widest
// formatted number, so the view never measures every cell of a large matrix.
void configureNumberView(QTableView* view, int decimals);
// Widens the columns of a view set up by configureNumberView, if needed, so that the model's
// last column label ("h11 · 767", the widest of a head-labelled table) is not elided.
void fitColumnsToLastLabel(QTableView* view);

// A matrix of numbers. The owner pushes new values with setValues(): a new shape or new labels
// reset or relabel the model, new values only emit dataChanged for the cells that changed, so views
// keep their scroll position, selection and any open cell editor. Edits go to the setter, which
// applies them (through the document) or refuses them with a reason; a refusal is reported with
// messageRequested() and the old value stays.
class MatrixTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    // Applies value at (row, column), or returns false with *error set.
    using Setter = std::function<bool(int row, int column, double value, QString* error)>;

    explicit MatrixTableModel(QObject* parent = nullptr);

    void setSetter(Setter setter) { setter_ = std::move(setter); }
    // rows x cols values; labels default to 0, 1, 2... when a list is shorter than needed.
    void setValues(const MatrixD& values, const QStringList& rowLabels = {},
                   const QStringList& columnLabels = {});
    const MatrixD& values() const { return values_; }
    void setDecimals(int decimals);
    // Extra text for the tooltip of a cell, e.g. "W_Q row 2 (d_model), column 0 (d_proj)".
    void setToolTipPrefix(const QString& prefix) { toolTipPrefix_ = prefix; }
    // Head bands: columns (or rows) 0 .. bandSize·bands − 1 belong to `bands` heads of bandSize
    // sections each; every other head's cells are tinted, so a table of W_Q shows where one
    // head's columns end. bandSize 0 (the default) or a single band: no tint.
    void setHeadBands(Qt::Orientation orientation, int bandSize, int bands);
    // The head of a column (Horizontal) or row (Vertical), or -1 outside the bands.
    int headOf(Qt::Orientation orientation, int section) const;
    // The tint of the odd heads' cells (the even heads keep the view's background).
    static QColor headTint();

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

signals:
    void messageRequested(const QString& message);
    // A value was accepted (the editors clear an old refusal message then).
    void valueAccepted();

private:
    MatrixD values_;
    QStringList rowLabels_, columnLabels_;
    Setter setter_;
    QString toolTipPrefix_;
    int decimals_ = 3;
    Qt::Orientation bandOrientation_ = Qt::Horizontal;
    int bandSize_ = 0;
    int bands_ = 0;
};

// The blocks where `before` and `after` (same shape) differ, for dataChanged: one per row span
// of changed cells, or a single block over every changed row when many rows changed (a re-roll).
struct CellBlock {
    int firstRow, lastRow, firstColumn, lastColumn;
};
std::vector<CellBlock> changedBlocks(const MatrixD& before, const MatrixD& after);

}  // namespace ae::ui
