#pragma once
// What a heatmap draws over its colours (plot/ only; HeatmapController owns one per map): the
// hatching or veil over masked cells, the numbers, the selected row, the lines between heads and
// the keyboard's cell; and the frame round a plot that has keyboard focus.

#include <QImage>
#include <QPoint>
#include <QString>
#include <algorithm>

#include "core/attention_engine.h"
#include "qcustomplot.h"

namespace ae::plot {

// Numbers shrink to this share of the text size before a map stops showing them.
inline constexpr double kSmallestNumberScale = 0.85;

// Same shape and the same cells; a byte comparison, which runs far faster than Eigen's
// element-wise == on bools.
inline bool sameCells(const BoolMatrix& a, const BoolMatrix& b) {
    return a.rows() == b.rows() && a.cols() == b.cols() &&
           std::equal(a.data(), a.data() + a.size(), b.data());
}

// Drawn above a colour map, clipped to its axis rect: hatching over masked cells (their colour
// still shows the real value underneath; the hatching leaves each number's box clear, so masked
// numbers stay readable), numbers in cells that are large enough, all in one format per map, an
// outline around the selected query row and lines between heads of a concatenation.
class CellOverlay : public QCPLayerable {
public:
    explicit CellOverlay(QCPColorMap* map)
        : QCPLayerable(map->parentPlot(), QStringLiteral("overlay")), map_(map) {}

    void setGradient(const QCPColorGradient& gradient) { gradient_ = gradient; }
    // Every result sets the mask again; the veil is rebuilt only when the mask itself changed.
    // `outsideWindow`: empty, or the cells a sliding window hides (slidingWindowCells), hatched
    // the other way so the window reads as its own part of the mask.
    void setAllowed(const BoolMatrix& allowed, const BoolMatrix& outsideWindow = {}) {
        if (!sameCells(outsideWindow, outsideWindow_)) outsideWindow_ = outsideWindow;
        if (sameCells(allowed, allowed_)) return;
        allowed_ = allowed;
        hidesCells_ = allowed_.size() > 0 && !allowed_.all();
        veil_ = QImage();
    }
    const BoolMatrix& allowed() const { return allowed_; }
    void setShowValues(bool show) { showValues_ = show; }
    void setDecimals(int decimals) { decimals_ = decimals; }
    // The text of a shown cell (map coordinates), in the format decided for the whole map.
    QString valueText(int cellRow, int cellColumn) const {
        return formatValue(map_->data()->cell(cellColumn, cellRow), numberFormat());
    }
    // Any value as this map writes it (for measuring before the cells are filled).
    QString formatted(double value) const { return formatValue(value, numberFormat()); }
    bool hidesCells() const { return hidesCells_; }
    bool numbersDrawn() const { return numbersDrawn_; }
    void setSelectedRow(int row) { selectedRow_ = row; }
    // The keyboard's cell; (-1, -1) hides the ring.
    void setCursor(QPoint cell) { cursor_ = cell; }
    void setGroupWidth(int width) { groupWidth_ = width; }
    // The matrix's own shape, and how many of its cells one shown cell pools (1: none).
    void setShape(int rows, int columns, int rowsPerCell, int columnsPerCell) {
        if (rows != rows_ || columns != columns_) veil_ = QImage();
        rows_ = rows;
        columns_ = columns;
        rowsPerCell_ = rowsPerCell;
        columnsPerCell_ = columnsPerCell;
    }
    // The entropy strip keeps the base size, so it never outshouts the map beside it.
    void setTextMayGrow(bool grow) { textMayGrow_ = grow; }

protected:
    QRect clipRect() const override { return map_->keyAxis()->axisRect()->rect(); }
    void applyDefaultAntialiasingHint(QCPPainter* painter) const override {
        applyAntialiasingHint(painter, true, QCP::aeOther);
    }
    void draw(QCPPainter* painter) override;

private:
    QRectF cellRect(int row, int column) const {
        const QCPAxis* x = map_->keyAxis();
        const QCPAxis* y = map_->valueAxis();
        return QRectF(QPointF(x->coordToPixel(column - 0.5), y->coordToPixel(row - 0.5)),
                      QPointF(x->coordToPixel(column + 0.5), y->coordToPixel(row + 0.5)))
            .normalized();
    }
    // Dark marks on light cells, light marks on dark ones.
    bool isLight(double value) {
        const QColor c = QColor::fromRgb(gradient_.color(value, map_->dataRange()));
        return 0.299 * c.red() + 0.587 * c.green() + 0.114 * c.blue() > 150.0;
    }
    // `keepClear`: a number's box the hatching leaves out (empty: none). `window`: lines falling
    // to the right (a sliding window's cells) instead of rising.
    void drawHatch(QCPPainter* painter, const QRectF& r, bool light, const QRectF& keepClear,
                   bool window = false);
    // Cells too small to hatch, or pooled: one veil pixel per cell, drawn as a single image.
    void drawVeil(QCPPainter* painter);
    bool pooled() const { return rowsPerCell_ > 1 || columnsPerCell_ > 1; }
    // One format for every number of the map, from its largest |value| unless decimals_ is set.
    struct NumberFormat {
        char letter = 'f';
        int decimals = 2;
    };
    NumberFormat numberFormat() const;
    static QString formatValue(double v, NumberFormat format);
    // The shown value of a matrix cell (its pool's value when pooled).
    double shownValue(int row, int column) const {
        return map_->data()->cell(column / columnsPerCell_, row / rowsPerCell_);
    }

    QCPColorMap* map_;
    QCPColorGradient gradient_;
    BoolMatrix allowed_;
    BoolMatrix outsideWindow_;  // empty, or allowed_'s shape
    bool hidesCells_ = false;   // some cell of allowed_ is false
    bool showValues_ = false;
    int decimals_ = -1;  // -1: from the map's values
    int selectedRow_ = -1;
    int groupWidth_ = 0;
    bool textMayGrow_ = true;
    bool numbersDrawn_ = false;
    QPoint cursor_{-1, -1};
    int rows_ = 0, columns_ = 0;
    int rowsPerCell_ = 1, columnsPerCell_ = 1;
    QImage veil_;  // built once per mask, not per paint
};

// A thick blue frame round the whole plot while it has keyboard focus: the grid's many maps
// must show at a glance which one the arrow keys move in, also on a projector.
class FocusFrame : public QCPLayerable {
public:
    explicit FocusFrame(QCustomPlot* plot) : QCPLayerable(plot, QStringLiteral("overlay")) {}

protected:
    QRect clipRect() const override { return mParentPlot->viewport(); }
    void applyDefaultAntialiasingHint(QCPPainter* painter) const override {
        applyAntialiasingHint(painter, false, QCP::aeOther);
    }
    void draw(QCPPainter* painter) override {
        if (!mParentPlot->hasFocus()) return;
        painter->setBrush(Qt::NoBrush);
        painter->setPen(
            QPen(QColor(21, 101, 192), 5.0, Qt::SolidLine, Qt::SquareCap, Qt::MiterJoin));
        painter->drawRect(QRectF(mParentPlot->viewport()).adjusted(2.5, 2.5, -2.5, -2.5));
    }
};

}  // namespace ae::plot
