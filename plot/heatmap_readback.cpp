// What a heatmap draws, read back from the plot's own state (the colour map's cells and range,
// the axes' tickers and fonts, the layout): the controller's answer to "what does a reader see?",
// so that tests check the picture rather than what the controller was told.

#include <QWidget>

#include "plot/heatmap_controller.h"
#include "qcustomplot.h"

namespace ae::plot {
namespace {

// The coordinates one cell of a colour map covers: its data range spreads `size` cell centres
// from lower to upper; a single cell covers the whole range (as QCPColorMap::draw paints it).
QCPRange cellSpan(const QCPRange& range, int size, int index) {
    if (size <= 1) return range;
    const double step = range.size() / (size - 1);
    const double centre = range.lower + index * step;
    return QCPRange(centre - step / 2.0, centre + step / 2.0);
}

QStringList tickerLabels(const QCPAxis* axis) {
    const QSharedPointer<QCPAxisTickerText> ticker =
        axis->ticker().dynamicCast<QCPAxisTickerText>();
    if (!ticker) return {};
    const QMap<double, QString>& ticks = ticker->ticks();
    return QStringList(ticks.begin(), ticks.end());
}

}  // namespace

std::map<const QObject*, double> axisTickLabelSizes(const QWidget* root) {
    std::map<const QObject*, double> sizes;
    for (const QCustomPlot* plot : root->findChildren<QCustomPlot*>()) {
        for (QCPAxisRect* rect : plot->axisRects()) {
            for (QCPAxis* axis : rect->axes())
                sizes[axis] = axis->tickLabelFont().pointSizeF();
        }
    }
    return sizes;
}

void HeatmapController::replotNow() {
    plot_->replot();
}

QWidget* HeatmapController::widget() const {
    return plot_;
}

QImage HeatmapController::renderImage(int width, int height) {
    return plot_->toPixmap(width, height).toImage();
}

int HeatmapController::shownRows() const {
    return map_->data()->valueSize();
}

int HeatmapController::shownColumns() const {
    return map_->data()->keySize();
}

double HeatmapController::shownCellValue(int shownRow, int shownColumn) const {
    return map_->data()->cell(shownColumn, shownRow);
}

double HeatmapController::cellValue(int row, int column) const {
    return shownCellValue(row / rowsPerCell_, column / columnsPerCell_);
}

QColor HeatmapController::cellColor(int row, int column) const {
    QCPColorGradient gradient = map_->gradient();  // its color() is not const
    return QColor::fromRgb(gradient.color(cellValue(row, column), map_->dataRange()));
}

ValueRange HeatmapController::colorRange() const {
    const QCPRange range = map_->dataRange();
    return {range.lower, range.upper};
}

QRectF HeatmapController::drawnCellRect(int row, int column) const {
    const QCPColorMapData* data = map_->data();
    const QCPRange keys = cellSpan(data->keyRange(), data->keySize(), column / columnsPerCell_);
    const QCPRange values = cellSpan(data->valueRange(), data->valueSize(), row / rowsPerCell_);
    const QCPAxis* x = map_->keyAxis();
    const QCPAxis* y = map_->valueAxis();
    return QRectF(QPointF(x->coordToPixel(keys.lower), y->coordToPixel(values.lower)),
                  QPointF(x->coordToPixel(keys.upper), y->coordToPixel(values.upper)))
        .normalized();
}

QRect HeatmapController::cellArea() const {
    return rect_->rect();
}

bool HeatmapController::rowsReadDown() const {
    return map_->valueAxis()->rangeReversed();
}

bool HeatmapController::cellsBlended() const {
    return map_->interpolate();
}

QStringList HeatmapController::shownRowLabels() const {
    return tickerLabels(map_->valueAxis());
}

QStringList HeatmapController::shownColumnLabels() const {
    return tickerLabels(map_->keyAxis());
}

bool HeatmapController::columnLabelsUpright() const {
    return map_->keyAxis()->tickLabelRotation() != 0;
}

QFont HeatmapController::rowLabelFont() const {
    return map_->valueAxis()->tickLabelFont();
}

QFont HeatmapController::columnLabelFont() const {
    return map_->keyAxis()->tickLabelFont();
}

QStringList HeatmapController::colorBarLabels() const {
    const QVector<QString> labels = scale_->axis()->tickVectorLabels();
    return QStringList(labels.begin(), labels.end());
}

bool HeatmapController::colorBarDrawn() const {
    return scale_->realVisibility();
}

bool HeatmapController::entropyStripDrawn() const {
    return entropyMap_->realVisibility();
}

bool HeatmapController::entropyStripHasRoom() const {
    return entropyMap_->keyAxis()->axisRect()->layout() != nullptr;
}

std::vector<double> HeatmapController::entropyValues() const {
    QCPColorMapData* data = entropyMap_->data();
    std::vector<double> values(static_cast<size_t>(data->valueSize()));
    for (int i = 0; i < data->valueSize(); ++i)
        values[static_cast<size_t>(i)] = data->cell(0, i);
    return values;
}

}  // namespace ae::plot
