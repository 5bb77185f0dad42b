#include "plot/heatmap_controller.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "plot/color_maps.h"
#include "qcustomplot.h"

namespace ae::ui {
namespace {

// Numbers shrink to this share of the text size before a map stops showing them.
constexpr double kSmallestNumberScale = 0.85;

// Same shape and the same cells; a byte comparison, which runs far faster than Eigen's
// element-wise == on bools.
bool sameCells(const BoolMatrix& a, const BoolMatrix& b) {
    return a.rows() == b.rows() && a.cols() == b.cols() &&
           std::equal(a.data(), a.data() + a.size(), b.data());
}

// One pixel per cell, a light veil over hidden ones: it lightens dark cells and greys light ones,
// whatever the value, so it need not be rebuilt when only the numbers change. Every map of a grid
// shows the same mask, so the last veil built is kept and shared (QImage is implicitly shared):
// one image per mask rather than one per map. GUI thread only, as all painting.
QImage veilImage(const BoolMatrix& allowed) {
    static BoolMatrix lastAllowed;
    static QImage lastVeil;
    if (lastVeil.isNull() || !sameCells(allowed, lastAllowed)) {
        const int rows = static_cast<int>(allowed.rows()),
                  columns = static_cast<int>(allowed.cols());
        QImage veil(columns, rows, QImage::Format_ARGB32_Premultiplied);
        const QRgb hidden = qPremultiply(qRgba(255, 255, 255, 120));
        for (int i = 0; i < rows; ++i) {
            auto* line = reinterpret_cast<QRgb*>(veil.scanLine(i));
            for (int j = 0; j < columns; ++j)
                line[j] = allowed(i, j) ? 0 : hidden;
        }
        lastAllowed = allowed;
        lastVeil = veil;
    }
    return lastVeil;
}

// The colour bar's labels with one count of decimals, the fewest that write every tick exactly:
// 0.0, 0.2 … 1.0 rather than QCustomPlot's 0, 0.2 … 1.
class SameDecimalsTicker : public QCPAxisTicker {
protected:
    QVector<QString> createLabelVector(const QVector<double>& ticks, const QLocale& locale,
                                       QChar formatChar, int precision) override {
        double largest = 0.0;
        for (double t : ticks)
            largest = std::max(largest, std::abs(t));
        if (largest >= 1e5 || ticks.isEmpty())
            return QCPAxisTicker::createLabelVector(ticks, locale, formatChar, precision);
        int decimals = 0;
        const auto exact = [&ticks](int d) {
            const double unit = std::pow(10.0, d);
            return std::all_of(ticks.begin(), ticks.end(), [unit](double t) {
                return std::abs(t * unit - std::round(t * unit)) < 1e-6 * std::max(1.0, unit);
            });
        };
        while (decimals < 6 && !exact(decimals))
            ++decimals;
        QVector<QString> labels;
        for (double t : ticks) {
            QString text = QString::number(std::abs(t) < 1e-12 ? 0.0 : t, 'f', decimals);
            labels << text;
        }
        return labels;
    }
};

}  // namespace

void useSameDecimalsTicks(QCPAxis* axis) {
    axis->setTicker(QSharedPointer<QCPAxisTicker>(new SameDecimalsTicker));
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
    void setAllowed(const BoolMatrix& allowed) {
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
    // `keepClear`: a number's box the hatching leaves out (empty: none).
    void drawHatch(QCPPainter* painter, const QRectF& r, bool light, const QRectF& keepClear);
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
    bool hidesCells_ = false;  // some cell of allowed_ is false
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

namespace {

double finiteValue(float v) {
    if (std::isnan(v)) return 0.0;
    return std::clamp(static_cast<double>(v), -static_cast<double>(FLT_MAX),
                      static_cast<double>(FLT_MAX));
}

}  // namespace

int automaticDecimals(double largest) {
    if (!(largest < 1e5)) return -1;
    if (largest >= 100.0) return 0;
    if (largest >= 10.0) return 1;
    return 2;
}

// A reader compares numbers down a column: "0" beside "0.50" reads as a different kind of value,
// so a map never mixes formats. Two decimals fit a cell and still read on a projector.
CellOverlay::NumberFormat CellOverlay::numberFormat() const {
    if (decimals_ >= 0) return {'f', decimals_};
    QCPColorMapData* data = map_->data();  // its cell() is not const
    double largest = 0.0;
    for (int b = 0; b < data->valueSize(); ++b) {
        for (int a = 0; a < data->keySize(); ++a)
            largest = std::max(largest, std::abs(data->cell(a, b)));
    }
    const int decimals = automaticDecimals(largest);
    return decimals < 0 ? NumberFormat{'e', 1} : NumberFormat{'f', decimals};
}

QString CellOverlay::formatValue(double v, NumberFormat format) {
    QString text = QString::number(v, format.letter, format.decimals);
    // -0.001 rounds to "-0.00": a sign on a zero is noise.
    if (text.startsWith(QLatin1Char('-')) && text.toDouble() == 0.0) text.remove(0, 1);
    return text;
}

void CellOverlay::drawHatch(QCPPainter* painter, const QRectF& r, bool light,
                            const QRectF& keepClear) {
    const QColor ink = light ? QColor(40, 40, 40, 200) : QColor(255, 255, 255, 210);
    if (r.width() < 6.0 || r.height() < 6.0) {
        // Too small to hatch: a veil still tells masked cells apart.
        painter->fillRect(r, light ? QColor(0, 0, 0, 60) : QColor(255, 255, 255, 90));
        return;
    }
    painter->save();
    QPainterPath hatched;
    hatched.addRect(r);
    if (!keepClear.isEmpty()) {
        QPainterPath hole;
        hole.addRect(keepClear);
        hatched = hatched.subtracted(hole);
    }
    painter->setClipPath(hatched, Qt::IntersectClip);
    painter->setPen(QPen(ink, 1.2));
    const double spacing = std::clamp(std::min(r.width(), r.height()) / 4.0, 5.0, 9.0);
    for (double t = -r.height(); t < r.width(); t += spacing) {
        painter->drawLine(QPointF(r.left() + t, r.bottom()),
                          QPointF(r.left() + t + r.height(), r.top()));
    }
    painter->setPen(QPen(ink, 1.0, Qt::DashLine));
    painter->setBrush(Qt::NoBrush);
    painter->drawRect(r.adjusted(0.5, 0.5, -0.5, -0.5));
    painter->restore();
}

void CellOverlay::drawVeil(QCPPainter* painter) {
    if (veil_.isNull()) veil_ = veilImage(allowed_);
    painter->save();
    painter->setRenderHint(QPainter::SmoothPixmapTransform, false);
    painter->drawImage(cellRect(0, 0).united(cellRect(rows_ - 1, columns_ - 1)), veil_);
    painter->restore();
}

void CellOverlay::draw(QCPPainter* painter) {
    QCPColorMapData* data = map_->data();
    const int columns = columns_;
    const int rows = rows_;
    if (rows == 0 || columns == 0 || data->keySize() == 0) return;
    const QRectF first = cellRect(0, 0);
    const bool masks = hidesCells_ && allowed_.rows() == rows && allowed_.cols() == columns;

    // Numbers are laid out first: the hatching of masked cells must leave their boxes clear.
    QFont numberFont = painter->font();
    const QFontMetricsF baseMetrics(numberFont);
    const NumberFormat format = numberFormat();
    bool numbers = false;
    // Measuring every number shapes its text: not worth it for cells shorter than a line.
    if (showValues_ && !pooled() && first.width() >= 12.0 &&
        first.height() >= baseMetrics.height() * kSmallestNumberScale) {
        // All numbers or none: a map with numbers in only some cells reads as a pattern.
        double widest = 0.0;
        for (int i = 0; i < rows; ++i) {
            for (int j = 0; j < columns; ++j) {
                widest = std::max(
                    widest, baseMetrics.horizontalAdvance(formatValue(data->cell(j, i), format)));
            }
        }
        numbers = first.width() >= widest + 4.0 && first.height() >= baseMetrics.height();
        // Large cells get larger numbers (up to 1.5x), so they still read on a projector.
        const double grow = std::min({1.5, (first.width() - 6.0) / std::max(widest, 1.0),
                                      first.height() * 0.5 / baseMetrics.height()});
        // Cells a little too small get slightly smaller numbers (down to 0.85x: 7.6 pt beside
        // the window's 9 pt labels), so a map in a paper's column or on a projector still
        // shows them.
        const double shrink = std::min((first.width() - 3.0) / std::max(widest, 1.0),
                                       first.height() / baseMetrics.height());
        if (numbers && textMayGrow_ && grow > 1.1) {
            numberFont.setPointSizeF(numberFont.pointSizeF() * grow);
        } else if (!numbers && shrink >= kSmallestNumberScale) {
            numbers = true;
            numberFont.setPointSizeF(numberFont.pointSizeF() * shrink);
        }
    }
    numbersDrawn_ = numbers;
    const QFontMetricsF metrics(numberFont);
    const auto numberBox = [&](int i, int j) {
        const QRectF cell = cellRect(i, j);
        const QRectF text =
            metrics.boundingRect(cell, Qt::AlignCenter, formatValue(data->cell(j, i), format));
        return text.adjusted(-1.5, 0.0, 1.5, 0.0).intersected(cell);
    };

    if (masks && (pooled() || first.width() < 6.0 || first.height() < 6.0)) {
        drawVeil(painter);
    } else if (masks) {
        for (int i = 0; i < rows; ++i) {
            for (int j = 0; j < columns; ++j) {
                if (!allowed_(i, j)) {
                    drawHatch(painter, cellRect(i, j), isLight(data->cell(j, i)),
                              numbers ? numberBox(i, j) : QRectF());
                }
            }
        }
    }
    if (numbers) {
        painter->save();
        painter->setFont(numberFont);
        for (int i = 0; i < rows; ++i) {
            for (int j = 0; j < columns; ++j) {
                const double v = data->cell(j, i);
                // Masked cells keep their number: it is the value the softmax produced.
                painter->setPen(isLight(v) ? QColor(20, 20, 20) : QColor(250, 250, 250));
                painter->drawText(cellRect(i, j), Qt::AlignCenter, formatValue(v, format));
            }
        }
        painter->restore();
    }
    if (groupWidth_ > 0) {
        painter->setPen(QPen(QColor(20, 20, 20), 2.0));
        const QCPAxis* x = map_->keyAxis();
        const QRectF all = cellRect(0, 0).united(cellRect(rows - 1, columns - 1));
        for (int g = groupWidth_; g < columns; g += groupWidth_) {
            const double px = x->coordToPixel(g - 0.5);
            painter->drawLine(QPointF(px, all.top()), QPointF(px, all.bottom()));
        }
    }
    if (selectedRow_ >= 0 && selectedRow_ < rows) {
        const QRectF r = cellRect(selectedRow_, 0).united(cellRect(selectedRow_, columns - 1));
        painter->setBrush(Qt::NoBrush);
        painter->setPen(QPen(QColor(20, 20, 20), 4.0));
        painter->drawRect(r.adjusted(1, 1, -1, -1));
        painter->setPen(QPen(QColor(255, 200, 0), 2.0));
        painter->drawRect(r.adjusted(1, 1, -1, -1));
    }
    if (cursor_.x() >= 0 && cursor_.x() < columns && cursor_.y() >= 0 && cursor_.y() < rows) {
        // Black inside white: visible on every colour of every map.
        const QRectF r = cellRect(cursor_.y(), cursor_.x());
        painter->setBrush(Qt::NoBrush);
        painter->setPen(QPen(QColor(255, 255, 255), 6.0));
        painter->drawRect(r.adjusted(2, 2, -2, -2));
        painter->setPen(QPen(QColor(0, 0, 0), 3.0));
        painter->drawRect(r.adjusted(2, 2, -2, -2));
    }
}

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

HeatmapController::HeatmapController(QWidget* parent) : plot_(new QCustomPlot(parent)) {
    setParent(plot_);
    plot_->setMouseTracking(true);
    plot_->installEventFilter(this);
    plot_->plotLayout()->clear();  // built from scratch below: title, then map | strip | bar

    QFont titleFont = plot_->font();
    titleFont.setBold(true);
    title_ = new QCPTextElement(plot_, QString(), titleFont);
    plot_->plotLayout()->addElement(0, 0, title_);
    row_ = new QCPLayoutGrid;
    plot_->plotLayout()->addElement(1, 0, row_);
    row_->setColumnSpacing(4);

    rect_ = new QCPAxisRect(plot_);
    entropyRect_ = new QCPAxisRect(plot_);
    scale_ = new QCPColorScale(plot_);
    scale_->setType(QCPAxis::atRight);
    scale_->setBarWidth(10);
    useSameDecimalsTicks(scale_->axis());
    // Top and bottom margins shared, so the bar and the strip line up with the map's cells.
    auto* margins = new QCPMarginGroup(plot_);
    for (QCPLayoutElement* e :
         {static_cast<QCPLayoutElement*>(rect_), static_cast<QCPLayoutElement*>(entropyRect_),
          static_cast<QCPLayoutElement*>(scale_)}) {
        e->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
    }

    map_ = new QCPColorMap(rect_->axis(QCPAxis::atBottom), rect_->axis(QCPAxis::atLeft));
    map_->setInterpolate(false);
    map_->setColorScale(scale_);
    rowTicker_.reset(new QCPAxisTickerText);
    columnTicker_.reset(new QCPAxisTickerText);
    for (QCPAxis* axis : {map_->keyAxis(), map_->valueAxis()}) {
        axis->setTicker(axis == map_->keyAxis() ? columnTicker_ : rowTicker_);
        axis->setSubTicks(false);
        axis->grid()->setVisible(false);
        axis->setTickLength(0, 3);
    }
    map_->valueAxis()->setRangeReversed(true);
    QFont axisFont = plot_->font();
    axisFont.setPointSizeF(axisFont.pointSizeF() * 0.9);
    for (QCPAxis* axis : {map_->keyAxis(), map_->valueAxis()}) {
        axis->setLabelFont(axisFont);
        axis->setLabelColor(QColor(90, 90, 90));
        axis->setLabelPadding(2);
    }

    entropyRect_->setMinimumSize(QSize(38, 0));
    // Its left and right axes carry no labels: a fixed small gap beside them rather than an axis's
    // automatic margin, so the map keeps the width for its numbers.
    entropyRect_->setAutoMargins(QCP::msTop | QCP::msBottom);
    entropyRect_->setMargins(QMargins(4, 0, 8, 0));
    entropyRect_->setMaximumSize(QSize(38, QWIDGETSIZE_MAX));
    // A thin frame, so a 0-bit (white) entry still reads as part of the strip.
    for (QCPAxis* axis : entropyRect_->axes()) {
        axis->setVisible(true);
        axis->setTicks(false);
        axis->setTickLabels(false);
        axis->setBasePen(QPen(QColor(150, 150, 150)));
        axis->grid()->setVisible(false);
    }
    QCPAxis* entropyAxis = entropyRect_->axis(QCPAxis::atBottom);
    entropyAxis->setLabel(tr("H bits"));
    entropyAxis->setLabelPadding(2);
    entropyAxis->setRange(-0.5, 0.5);
    entropyMap_ = new QCPColorMap(entropyAxis, entropyRect_->axis(QCPAxis::atLeft));
    entropyMap_->setInterpolate(false);
    entropyMap_->setGradient(entropyGradient());
    entropyRect_->axis(QCPAxis::atLeft)->setRangeReversed(true);
    // The strip's rows follow the map's rows.
    connect(map_->valueAxis(), qOverload<const QCPRange&>(&QCPAxis::rangeChanged),
            entropyRect_->axis(QCPAxis::atLeft), qOverload<const QCPRange&>(&QCPAxis::setRange));

    overlay_ = new CellOverlay(map_);
    entropyOverlay_ = new CellOverlay(entropyMap_);
    entropyOverlay_->setGradient(entropyGradient());
    entropyOverlay_->setShowValues(true);
    entropyOverlay_->setTextMayGrow(false);
    focusFrame_ = new FocusFrame(plot_);
    plot_->setFocusPolicy(Qt::StrongFocus);
    row_->setAutoMargins(QCP::msNone);
    row_->setMargins(QMargins());

    arrangeLayout();
    connect(plot_, &QCustomPlot::afterLayout, this, &HeatmapController::updateTicks);
    // The axis rect's size is known only after layout: re-pool if it changed how many cells fit.
    connect(plot_, &QCustomPlot::afterLayout, this, [this] { showMatrix(false); });
    connect(plot_, &QCustomPlot::afterLayout, this, &HeatmapController::squareUp);
    connect(plot_, &QCustomPlot::afterLayout, this, [this] {
        const QSize chrome = chromeSize();
        if ((chrome - lastChrome_).width() == 0 && (chrome - lastChrome_).height() == 0) return;
        lastChrome_ = chrome;
        emit chromeChanged();
    });
    connect(plot_, &QCustomPlot::mouseDoubleClick, this, [this](QMouseEvent* event) {
        if (event->button() == Qt::LeftButton) emit enlargeRequested();
    });
    connect(plot_, &QCustomPlot::mouseMove, this, [this](QMouseEvent* event) {
        const std::optional<QPoint> cell = cellAt(event->position());
        const QPoint now = cell.value_or(QPoint(-1, -1));
        if (now == hovered_) return;
        hovered_ = now;
        emit cellHovered(now.y(), now.x());
    });
    connect(plot_, &QCustomPlot::mousePress, this, [this](QMouseEvent* event) {
        if (event->button() != Qt::LeftButton) return;
        if (const std::optional<QPoint> cell = cellAt(event->position())) {
            cursor_ = *cell;
            overlay_->setCursor(plot_->hasFocus() ? cursor_ : QPoint(-1, -1));
            emit cellClicked(cell->y(), cell->x());
        }
    });
}

void HeatmapController::arrangeLayout() {
    for (int i = row_->elementCount() - 1; i >= 0; --i)
        row_->takeAt(i);
    row_->simplify();
    row_->addElement(0, 0, rect_);
    if (entropyShown_) row_->addElement(0, 1, entropyRect_);
    if (scaleShown_) row_->addElement(0, entropyShown_ ? 2 : 1, scale_);
    scale_->setVisible(scaleShown_);
    entropyRect_->setVisible(entropyShown_);
    entropyMap_->setVisible(entropyShown_);
    entropyOverlay_->setVisible(entropyShown_);
    row_->setColumnStretchFactor(0, 1.0);
    for (int c = 1; c < row_->columnCount(); ++c)
        row_->setColumnStretchFactor(c, 0.01);
}

void HeatmapController::setTitle(const QString& title) {
    title_->setText(title);
}

QString HeatmapController::title() const {
    return title_->text();
}

void HeatmapController::setTitleShown(bool shown) {
    if (shown == isTitleShown()) return;
    QCPLayoutGrid* layout = plot_->plotLayout();
    if (shown) {
        layout->insertRow(0);
        layout->addElement(0, 0, title_);
    } else {
        layout->take(title_);
        layout->simplify();
    }
    title_->setVisible(shown);
}

bool HeatmapController::isTitleShown() const {
    return title_->layout() != nullptr;
}

void HeatmapController::setColorBarLabel(const QString& label) {
    scale_->axis()->setLabel(label);
}

void HeatmapController::setAxisTitles(const QString& rows, const QString& columns) {
    map_->valueAxis()->setLabel(rows);
    map_->keyAxis()->setLabel(columns);
}

void HeatmapController::setLabels(const QStringList& rows, const QStringList& columns,
                                  bool columnsAreTokens) {
    rowLabels_ = rows;
    columnLabels_ = columns;
    columnsAreTokens_ = columnsAreTokens;
    const QFontMetrics metrics(map_->keyAxis()->tickLabelFont());
    widestRowLabel_ = widestColumnLabel_ = 0;
    for (const QString& s : rows)
        widestRowLabel_ = std::max(widestRowLabel_, metrics.horizontalAdvance(s));
    for (const QString& s : columns) {
        widestColumnLabel_ = std::max(widestColumnLabel_, metrics.horizontalAdvance(s));
    }
    // Force new tick lists on the next layout.
    rowStep_ = columnStep_ = 0;
    relayouts_ = 0;
    map_->keyAxis()->setRange(-0.5, columns.size() - 0.5);
    map_->valueAxis()->setRange(-0.5, rows.size() - 0.5);
    updateTicks();
}

// Labels are thinned to every n-th so that they never overlap; the lists are rebuilt only when
// the step changes, not on every replot.
void HeatmapController::updateTicks() {
    const QFontMetrics metrics(map_->keyAxis()->tickLabelFont());
    const int lineHeight = metrics.height();
    const double cellHeight = rect_->height() / std::max<double>(1.0, rowLabels_.size());
    const double cellWidth = rect_->width() / std::max<double>(1.0, columnLabels_.size());
    const auto stepFor = [](double needed, double available) {
        return available <= 0 ? 1 : std::max(1, static_cast<int>(std::ceil(needed / available)));
    };
    const int rowStep = stepFor(lineHeight, cellHeight);
    // Token labels turn upright as soon as they would not all fit side by side (one rule for
    // both, or a cell a pixel or two short of the widest label's room drops every other one).
    const int labelRoom = widestColumnLabel_ + 8;
    const bool upright = columnsAreTokens_ && labelRoom > cellWidth;
    const int columnStep = stepFor(upright ? lineHeight : labelRoom, cellWidth);
    if (rowStep == rowStep_ && columnStep == columnStep_ && upright == columnsUpright_) return;
    rowStep_ = rowStep;
    columnStep_ = columnStep;
    columnsUpright_ = upright;
    rowTicker_->clear();
    for (int i = 0; i < rowLabels_.size(); i += rowStep)
        rowTicker_->addTick(i, rowLabels_[i]);
    columnTicker_->clear();
    for (int j = 0; j < columnLabels_.size(); j += columnStep) {
        columnTicker_->addTick(j, columnLabels_[j]);
    }
    map_->keyAxis()->setTickLabelRotation(upright ? 90 : 0);
    // New labels take their place in the next layout pass; a bounded number of passes, in case
    // two sizes keep trading places.
    if (relayouts_ < 3) {
        ++relayouts_;
        plot_->replot(QCustomPlot::rpQueuedReplot);
    }
}

void HeatmapController::setGradient(const QCPColorGradient& gradient) {
    scale_->setGradient(gradient);  // the scale owns the map's gradient once attached
    overlay_->setGradient(gradient);
}

void HeatmapController::setMatrix(const EngineF::ConstBlock& matrix) {
    full_ = matrix;
    rows_ = static_cast<int>(full_.rows());
    columns_ = static_cast<int>(full_.cols());
    showMatrix(true);
}

void HeatmapController::setPooling(Pooling pooling) {
    if (pooling == pooling_) return;
    pooling_ = pooling;
    showMatrix(true);
}

namespace {
// Coordinates of the first and last shown cell when each pools `per` matrix cells, so that the
// pooled cells cover exactly the matrix's cells -0.5 .. n-0.5 (the last pool may be partial).
QCPRange shownRange(int cells, int shown, int per) {
    if (shown == 1) return cells == 1 ? QCPRange(-0.5, 0.5) : QCPRange(-0.5, cells - 0.5);
    const double firstCentre = (per - 1) / 2.0;
    return QCPRange(firstCentre, firstCentre + static_cast<double>(shown - 1) * per);
}
}  // namespace

void HeatmapController::showMatrix(bool newValues) {
    // A map with more cells than its axis rect has pixels is pooled down to one cell per pixel:
    // never drawn cell by cell, and its peaks (max pooling) or averages (mean) stay visible.
    const int width = rect_->width(), height = rect_->height();
    const int columnsPerCell = width > 0 ? std::max(1, (columns_ + width - 1) / width) : 1;
    const int rowsPerCell = height > 0 ? std::max(1, (rows_ + height - 1) / height) : 1;
    if (!newValues && columnsPerCell == columnsPerCell_ && rowsPerCell == rowsPerCell_) return;
    columnsPerCell_ = columnsPerCell;
    rowsPerCell_ = rowsPerCell;
    const int shownColumns = (columns_ + columnsPerCell - 1) / columnsPerCell;
    const int shownRows = (rows_ + rowsPerCell - 1) / rowsPerCell;
    QCPColorMapData* data = map_->data();
    if (data->keySize() != shownColumns || data->valueSize() != shownRows) {
        data->setSize(shownColumns, shownRows);
    }
    data->setRange(shownRange(columns_, shownColumns, columnsPerCell),
                   shownRange(rows_, shownRows, rowsPerCell));
    overlay_->setShape(rows_, columns_, rowsPerCell, columnsPerCell);
    if (columnsPerCell == 1 && rowsPerCell == 1) {
        for (int i = 0; i < rows_; ++i) {
            for (int j = 0; j < columns_; ++j)
                data->setCell(j, i, finiteValue(full_(i, j)));
        }
        return;
    }
    for (int b = 0; b < shownRows; ++b) {
        const int rowCount = std::min(rowsPerCell, rows_ - b * rowsPerCell);
        for (int a = 0; a < shownColumns; ++a) {
            const int columnCount = std::min(columnsPerCell, columns_ - a * columnsPerCell);
            const auto pool =
                full_.block(b * rowsPerCell, a * columnsPerCell, rowCount, columnCount);
            const double value = pooling_ == Pooling::Max ? static_cast<double>(pool.maxCoeff())
                                                          : static_cast<double>(pool.mean());
            data->setCell(a, b, finiteValue(static_cast<float>(value)));
        }
    }
}

void HeatmapController::setDataRange(double low, double high) {
    map_->setDataRange(QCPRange(low, high));
}

void HeatmapController::setAllowed(const BoolMatrix& allowed) {
    overlay_->setAllowed(allowed);
}

void HeatmapController::setRowEntropy(const std::vector<double>& bits, double maxBits) {
    const bool shown = !bits.empty();
    if (shown != entropyShown_) {
        entropyShown_ = shown;
        arrangeLayout();
    }
    if (!shown) return;
    fitEntropyStripToFont();
    const int rows = static_cast<int>(bits.size());
    QCPColorMapData* data = entropyMap_->data();
    if (data->valueSize() != rows) {
        data->setSize(1, rows);
        data->setRange(QCPRange(-0.5, 0.5), rows > 1 ? QCPRange(0, rows - 1) : QCPRange(-0.5, 0.5));
    }
    entropyOverlay_->setShape(rows, 1, 1, 1);
    for (int i = 0; i < rows; ++i)
        data->setCell(0, i, bits[static_cast<size_t>(i)]);
    entropyMap_->setDataRange(QCPRange(0.0, std::max(maxBits, 1e-9)));
}

void HeatmapController::fitEntropyStripToFont() {
    // Wide enough for "0.00" in the current font: presentation mode scales the text.
    const int width =
        std::max(38, QFontMetrics(plot_->font()).horizontalAdvance(QStringLiteral("0.00")) + 14);
    if (entropyRect_->minimumSize().width() != width) {
        entropyRect_->setMinimumSize(QSize(width, 0));
        entropyRect_->setMaximumSize(QSize(width, QWIDGETSIZE_MAX));
    }
}

void HeatmapController::setShowValues(bool show) {
    overlay_->setShowValues(show);
}

void HeatmapController::setNumbersMayGrow(bool grow) {
    overlay_->setTextMayGrow(grow);
}

void HeatmapController::setDecimals(int decimals) {
    overlay_->setDecimals(decimals);
}

QString HeatmapController::valueText(int row, int column) const {
    return overlay_->valueText(row / rowsPerCell_, column / columnsPerCell_);
}

void HeatmapController::setSelectedRow(int row) {
    overlay_->setSelectedRow(row);
}

void HeatmapController::setColumnGroupWidth(int width) {
    overlay_->setGroupWidth(width);
}

void HeatmapController::setHighlighted(bool on) {
    highlighted_ = on;
    // Amber rather than a colour of the maps: it must not read as a value.
    plot_->setBackground(on ? QBrush(QColor(255, 224, 130)) : QBrush(Qt::white));
}

void HeatmapController::setSquareCells(bool on) {
    if (on == squareCells_) return;
    squareCells_ = on;
    squarePasses_ = 0;
    if (!on) row_->setMargins(QMargins());
    replot();
}

// After a layout: pads the map's row so that its cells come out square, then lays out once more.
// The padding goes left and right equally and below, so the title stays on top of the map.
void HeatmapController::squareUp() {
    if (!squareCells_ || rows_ == 0 || columns_ == 0 || squarePasses_ >= 3) return;
    const QMargins pad = row_->margins();
    const QRect inner = rect_->rect();
    if (inner.width() <= 0 || inner.height() <= 0) return;
    const double width = inner.width() + pad.left() + pad.right();
    const double height = inner.height() + pad.top() + pad.bottom();
    const double side = std::min(width / columns_, height / rows_);
    const int padX = std::max(0, static_cast<int>(std::floor(width - side * columns_)));
    const int padY = std::max(0, static_cast<int>(std::floor(height - side * rows_)));
    const QMargins wanted(padX / 2, 0, padX - padX / 2, padY);
    if (std::abs(wanted.left() - pad.left()) + std::abs(wanted.right() - pad.right()) +
            std::abs(wanted.bottom() - pad.bottom()) <=
        2) {
        return;
    }
    ++squarePasses_;
    row_->setMargins(wanted);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void HeatmapController::setColorScaleShown(bool shown) {
    if (shown == scaleShown_) return;
    scaleShown_ = shown;
    arrangeLayout();
    replot();
}

int HeatmapController::readableCellSide() const {
    const QFontMetricsF metrics(plot_->font());
    double widest = metrics.horizontalAdvance(QStringLiteral("-0.00"));
    // The real numbers when they are few enough to measure (a lecture's maps are).
    if (static_cast<long>(rows_) * columns_ <= 4096) {
        widest = 0.0;
        for (int i = 0; i < rows_; ++i) {
            for (int j = 0; j < columns_; ++j)
                widest =
                    std::max(widest, metrics.horizontalAdvance(overlay_->formatted(full_(i, j))));
        }
    }
    const double labelLine = QFontMetricsF(map_->keyAxis()->tickLabelFont()).height();
    return static_cast<int>(
        std::ceil(std::max({widest * kSmallestNumberScale + 5.0,
                            metrics.height() * kSmallestNumberScale + 1.0, labelLine})));
}

QSize HeatmapController::chromeSize() const {
    const QRect inner = rect_->rect();
    const QMargins pad = row_->margins();
    if (plot_->isVisible() && inner.width() > 0 && inner.height() > 0 &&
        plot_->width() > inner.width()) {
        return QSize(plot_->width() - inner.width() - pad.left() - pad.right(),
                     plot_->height() - inner.height() - pad.top() - pad.bottom());
    }
    // Before the first layout: the same parts, measured from the fonts.
    const QFontMetrics tick(map_->keyAxis()->tickLabelFont());
    const QFontMetrics label(map_->keyAxis()->labelFont());
    const QFontMetrics title(title_->font());
    int width = widestRowLabel_ + label.height() + 24;
    if (scaleShown_) width += 10 + tick.horizontalAdvance(QStringLiteral("-0.00")) + 24;
    if (entropyShown_) width += entropyRect_->minimumSize().width() + 8;
    const int height =
        title.height() * 3 / 2 + std::max(tick.height(), widestColumnLabel_) + label.height() + 20;
    return QSize(width, height);
}

bool HeatmapController::numbersDrawn() const {
    return overlay_->numbersDrawn();
}

void HeatmapController::setCursorCell(int row, int column) {
    if (rows_ == 0 || columns_ == 0) return;
    cursor_ = QPoint(std::clamp(column, 0, columns_ - 1), std::clamp(row, 0, rows_ - 1));
    overlay_->setCursor(plot_->hasFocus() ? cursor_ : QPoint(-1, -1));
    replot();
}

// Arrows move the ring, Enter or Space act as a click on its cell, Z enlarges the map.
bool HeatmapController::handleKey(QKeyEvent* event) {
    if (event->modifiers() & (Qt::ControlModifier | Qt::AltModifier | Qt::MetaModifier)) {
        return false;
    }
    if (rows_ == 0 || columns_ == 0) return false;
    const QPoint at = cursor_.x() < 0 ? QPoint(0, 0) : cursor_;
    QPoint to = at;
    switch (event->key()) {
        case Qt::Key_Left:
            to.rx() -= 1;
            break;
        case Qt::Key_Right:
            to.rx() += 1;
            break;
        case Qt::Key_Up:
            to.ry() -= 1;
            break;
        case Qt::Key_Down:
            to.ry() += 1;
            break;
        case Qt::Key_Home:
            to.rx() = 0;
            break;
        case Qt::Key_End:
            to.rx() = columns_ - 1;
            break;
        case Qt::Key_Return:
        case Qt::Key_Enter:
        case Qt::Key_Space:
            setCursorCell(at.y(), at.x());
            emit cellClicked(at.y(), at.x());
            return true;
        case Qt::Key_Z:
            emit enlargeRequested();
            return true;
        default:
            return false;
    }
    setCursorCell(to.y(), to.x());
    emit cursorMoved(cursor_.y(), cursor_.x());
    return true;
}

std::optional<QPoint> HeatmapController::cellAt(const QPointF& pixel) const {
    if (!rect_->rect().contains(pixel.toPoint())) return std::nullopt;
    // pixelToCoord gives the cell centre at an integer: round, never truncate.
    const long column = std::lround(map_->keyAxis()->pixelToCoord(pixel.x()));
    const long row = std::lround(map_->valueAxis()->pixelToCoord(pixel.y()));
    if (column < 0 || column >= columns_ || row < 0 || row >= rows_) return std::nullopt;
    return QPoint(static_cast<int>(column), static_cast<int>(row));
}

QPointF HeatmapController::cellCenter(int row, int column) const {
    return QPointF(map_->keyAxis()->coordToPixel(column), map_->valueAxis()->coordToPixel(row));
}

bool HeatmapController::isMarkedMasked(int row, int column) const {
    const BoolMatrix& allowed = overlay_->allowed();
    return row < allowed.rows() && column < allowed.cols() && !allowed(row, column);
}

bool HeatmapController::hasMaskedCells() const {
    return overlay_->hidesCells();
}

void HeatmapController::replot() {
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

bool HeatmapController::eventFilter(QObject* watched, QEvent* event) {
    if (watched == plot_) {
        switch (event->type()) {
            case QEvent::Resize:
                relayouts_ = 0;
                squarePasses_ = 0;
                break;
            case QEvent::KeyPress:
                if (handleKey(static_cast<QKeyEvent*>(event))) return true;
                break;
            case QEvent::FocusIn:
                if (cursor_.x() < 0) cursor_ = QPoint(0, 0);
                overlay_->setCursor(cursor_);
                emit focused();
                replot();
                break;
            case QEvent::FocusOut:
                overlay_->setCursor(QPoint(-1, -1));
                replot();
                break;
            case QEvent::FontChange:
                // A font scaled after the strip was sized (presentation mode) would hide its text.
                fitEntropyStripToFont();
                replot();
                break;
            case QEvent::Show:
                // QCustomPlot reads the pixel ratio only when constructed.
                plot_->setBufferDevicePixelRatio(plot_->devicePixelRatioF());
                replot();
                break;
            case QEvent::Leave:
                if (hovered_ != QPoint(-1, -1)) {
                    hovered_ = QPoint(-1, -1);
                    emit cellHovered(-1, -1);
                }
                break;
            default:
                break;
        }
    }
    return QObject::eventFilter(watched, event);
}

}  // namespace ae::ui
