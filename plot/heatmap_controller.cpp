#include "plot/heatmap_controller.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "plot/cell_overlay.h"
#include "plot/color_maps.h"
#include "qcustomplot.h"

namespace ae::plot {
namespace {

double finiteValue(float v) {
    if (std::isnan(v)) return 0.0;
    return std::clamp(static_cast<double>(v), -static_cast<double>(FLT_MAX),
                      static_cast<double>(FLT_MAX));
}

}  // namespace

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
    // (arrangeLayout puts the strip and the bar in the group while they are in the layout.)
    margins_ = new QCPMarginGroup(plot_);
    rect_->setMarginGroup(QCP::msTop | QCP::msBottom, margins_);

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
    connect(plot_, &QCustomPlot::afterReplot, this, &HeatmapController::replotted);
    // The axis rect's size is known only after layout: re-pool if it changed how many cells fit.
    connect(plot_, &QCustomPlot::afterLayout, this, [this] { showMatrix(false); });
    connect(plot_, &QCustomPlot::afterLayout, this, &HeatmapController::squareUp);
    connect(plot_, &QCustomPlot::afterLayout, this, [this] {
        const QSize chrome = measuredChrome();
        if (chrome.isEmpty() || chrome == lastChrome_) return;
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
    // Only what is laid out shares the margins: a bar taken out kept its last margins in the
    // group, and they widened the map's (a map shown after a view with bars came out shorter).
    entropyRect_->setMarginGroup(QCP::msTop | QCP::msBottom, entropyShown_ ? margins_ : nullptr);
    scale_->setMarginGroup(QCP::msTop | QCP::msBottom, scaleShown_ ? margins_ : nullptr);
    scale_->setVisible(scaleShown_);
    entropyRect_->setVisible(entropyShown_);
    entropyMap_->setVisible(entropyShown_);
    entropyOverlay_->setVisible(entropyShown_);
    row_->setColumnStretchFactor(0, 1.0);
    for (int c = 1; c < row_->columnCount(); ++c)
        row_->setColumnStretchFactor(c, 0.01);
}

void HeatmapController::setGradient(const QCPColorGradient& gradient) {
    scale_->setGradient(gradient);  // the scale owns the map's gradient once attached
    overlay_->setGradient(gradient);
}

void HeatmapController::setGradient(ColorMap map) {
    setGradient(colorGradient(map));
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
    const PoolShape shape = poolShape(rows_, columns_, height, width);
    if (!newValues && shape.columnsPerCell == columnsPerCell_ && shape.rowsPerCell == rowsPerCell_)
        return;
    columnsPerCell_ = shape.columnsPerCell;
    rowsPerCell_ = shape.rowsPerCell;
    const int shownColumns = shape.shownColumns;
    const int shownRows = shape.shownRows;
    QCPColorMapData* data = map_->data();
    if (data->keySize() != shownColumns || data->valueSize() != shownRows) {
        data->setSize(shownColumns, shownRows);
    }
    data->setRange(shownRange(columns_, shownColumns, columnsPerCell_),
                   shownRange(rows_, shownRows, rowsPerCell_));
    overlay_->setShape(rows_, columns_, rowsPerCell_, columnsPerCell_);
    if (columnsPerCell_ == 1 && rowsPerCell_ == 1) {
        for (int i = 0; i < rows_; ++i) {
            for (int j = 0; j < columns_; ++j)
                data->setCell(j, i, finiteValue(full_(i, j)));
        }
        return;
    }
    const EngineF::ConstBlock matrix(full_);
    for (int b = 0; b < shownRows; ++b) {
        for (int a = 0; a < shownColumns; ++a)
            data->setCell(a, b, finiteValue(pooledValue(matrix, shape, b, a, pooling_)));
    }
}

void HeatmapController::setDataRange(double low, double high) {
    map_->setDataRange(QCPRange(low, high));
}

void HeatmapController::setAllowed(const BoolMatrix& allowed, const BoolMatrix& outsideWindow) {
    overlay_->setAllowed(allowed, outsideWindow);
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

void HeatmapController::restartLayout() {
    row_->setMargins(QMargins());
    squarePasses_ = 0;
    relayouts_ = 0;
    rowStep_ = columnStep_ = 0;  // new tick lists, upright or not, from this size
    replot();
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
    if (inner.width() <= 0 || inner.height() <= 0) {
        // Padding made for a larger plot leaves no room (the map drawn inside out, its labels
        // mirrored): start again from none.
        if (!pad.isNull()) {
            ++squarePasses_;
            row_->setMargins(QMargins());
            replot();
        }
        return;
    }
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
    replot();
}

void HeatmapController::setColorScaleShown(bool shown) {
    if (shown == scaleShown_) return;
    scaleShown_ = shown;
    arrangeLayout();
    replot();
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
    // A map out of sight (the Explorer tab behind the Model tab, a closed dock) is drawn when it
    // is next painted or shown, not on every change: with a model open, redrawing the labels of a
    // dozen hidden maps took ~50 ms of every edit.
    if (!plot_->isVisible()) {
        drawWhenPainted_ = true;
        return;
    }
    drawWhenPainted_ = false;
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
            case QEvent::Paint:
                // Also a render() of a map never shown (an export): its buffers are drawn first.
                if (drawWhenPainted_) {
                    drawWhenPainted_ = false;
                    plot_->replot(QCustomPlot::rpQueuedRefresh);
                }
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

}  // namespace ae::plot
