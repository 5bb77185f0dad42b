#include "plot/effect_map.h"

#include <qcustomplot.h>
#include <algorithm>
#include <cmath>

#include "io/formats/result_export.h"
#include "plot/color_maps.h"

namespace ae::plot {

namespace {

// Cell texts are drawn only while they can be read: at most this many cells.
constexpr int kMostTextCells = 600;

}  // namespace

EffectMap::EffectMap(const QString& title, QWidget* parent, Scale scale, const QString& colourLabel)
    : Chart(parent), kind_(scale), title_(title) {
    plot_->plotLayout()->insertRow(0);
    titleElement_ = new QCPTextElement(plot_, title, QFont("sans", 9, QFont::Bold));
    plot_->plotLayout()->addElement(0, 0, titleElement_);
    map_ = new QCPColorMap(plot_->xAxis, plot_->yAxis);
    scale_ = new QCPColorScale(plot_);
    plot_->plotLayout()->addElement(1, 1, scale_);
    scale_->setType(QCPAxis::atRight);
    scale_->setBarWidth(10);
    scale_->axis()->setLabel(colourLabel);
    map_->setColorScale(scale_);
    map_->setGradient(scale == Scale::Diverging ? divergingGradient()
                                                : colorGradient(ColorMap::Viridis));
    map_->setInterpolate(false);
    auto* margins = new QCPMarginGroup(plot_);
    plot_->axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, margins);
    scale_->setMarginGroup(QCP::msBottom | QCP::msTop, margins);
    plot_->yAxis->setRangeReversed(true);
    plot_->installEventFilter(this);
    connect(plot_, &QCustomPlot::mousePress, this, [this](QMouseEvent* event) {
        if (rows_ == 0 || event->button() != Qt::LeftButton) return;
        if (!plot_->axisRect()->rect().contains(event->pos())) return;
        const int column =
            static_cast<int>(std::lround(plot_->xAxis->pixelToCoord(event->pos().x())));
        const int row = static_cast<int>(std::lround(plot_->yAxis->pixelToCoord(event->pos().y())));
        if (row >= 0 && row < rows_ && column >= 0 && column < columns_)
            emit cellClicked(row, column);
    });
}

void EffectMap::setTitle(const QString& title) {
    title_ = title;
    titleElement_->setText(title);
    replot();
}

void EffectMap::setColourScaleShown(bool shown) {
    scale_->setVisible(shown);
    if (!shown && plot_->plotLayout()->hasElement(1, 1)) plot_->plotLayout()->take(scale_);
    plot_->plotLayout()->simplify();
    replot();
}

void EffectMap::setAxisNames(const QString& columns, const QString& rows) {
    plot_->xAxis->setLabel(columns);
    plot_->yAxis->setLabel(rows);
    replot();
}

void EffectMap::clear() {
    rows_ = columns_ = 0;
    texts_.clear();
    map_->data()->clear();
    plot_->clearItems();
    replot();
}

void EffectMap::setValues(const MatrixD& values, const QStringList& rowLabels,
                          const QStringList& columnLabels) {
    std::vector<std::vector<double>> rows(static_cast<std::size_t>(values.rows()));
    for (Eigen::Index r = 0; r < values.rows(); ++r)
        rows[static_cast<std::size_t>(r)].assign(values.row(r).data(),
                                                 values.row(r).data() + values.cols());
    setValues(rows, rowLabels, columnLabels);
}

void EffectMap::setValues(const std::vector<std::vector<double>>& values,
                          const QStringList& rowLabels, const QStringList& columnLabels,
                          const std::vector<std::vector<QString>>& texts) {
    rows_ = static_cast<int>(values.size());
    columns_ = rows_ ? static_cast<int>(values.front().size()) : 0;
    double largest = freeRange_ ? 0.0 : 1.0;
    for (const auto& row : values)
        for (double v : row)
            if (std::isfinite(v)) largest = std::max(largest, std::abs(v));
    range_ = largest > 0 ? largest : 1.0;
    map_->data()->setSize(std::max(columns_, 1), std::max(rows_, 1));
    map_->data()->setRange(QCPRange(0, std::max(columns_ - 1, 0)),
                           QCPRange(0, std::max(rows_ - 1, 0)));
    for (int r = 0; r < rows_; ++r)
        for (int c = 0; c < columns_; ++c)
            map_->data()->setCell(c, r,
                                  values[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)]);
    const double low = kind_ == Scale::Diverging ? -range_ : 0.0;
    map_->setDataRange(QCPRange(low, range_));
    if (kind_ == Scale::Diverging && scale_->axis()->label().isEmpty())
        scale_->axis()->setTicker(patchingTicks(-range_, range_));
    rowLabels_ = rowLabels;
    columnLabels_ = columnLabels;
    placeTicks();
    texts_ = texts;
    plot_->clearItems();
    if (!texts.empty() && rows_ * columns_ <= kMostTextCells) {
        const ColorMap colours = kind_ == Scale::Diverging ? ColorMap::RdBu : ColorMap::Viridis;
        for (int r = 0; r < rows_ && r < static_cast<int>(texts.size()); ++r) {
            const auto& line = texts[static_cast<std::size_t>(r)];
            for (int c = 0; c < columns_ && c < static_cast<int>(line.size()); ++c) {
                auto* item = new QCPItemText(plot_);
                item->position->setCoords(c, r);
                item->setText(line[static_cast<std::size_t>(c)]);
                item->setFont(QFont("sans", 8));
                item->setClipToAxisRect(true);
                // Dark text on light cells, light on dark, by the cell's own colour.
                const QColor fill = gradientColor(colours, value(r, c), low, range_);
                item->setColor(fill.lightnessF() > 0.55 ? Qt::black : Qt::white);
            }
        }
    }
    replot();
}

// Labels along an axis as many as fit the plot's present size: every n-th, and the bottom ones
// turned upright when they would not fit side by side. Again on every resize.
void EffectMap::placeTicks(QSize size) const {
    if (size.isEmpty()) size = plot_->size();
    const QFontMetrics metrics(plot_->xAxis->tickLabelFont());
    const auto ticks = [&](QCPAxis* axis, const QStringList& labels, int count, bool across) {
        int total = 0;
        for (int i = 0; i < count; ++i)
            total +=
                metrics.horizontalAdvance(i < labels.size() ? labels[i] : QString::number(i)) + 8;
        const double room = std::max(40.0, 0.6 * (across ? size.width() : size.height()));
        const bool upright = across && total > room;
        if (across) axis->setTickLabelRotation(upright ? 90 : 0);
        const double each =
            across && !upright ? total / std::max(count, 1) : metrics.height() + 2.0;
        const int step = std::max(1, static_cast<int>(std::ceil(count * each / room)));
        QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
        for (int i = 0; i < count; i += step)
            ticker->addTick(i, i < labels.size() ? labels[i] : QString::number(i));
        axis->setTicker(ticker);
        axis->setRange(-0.5, count - 0.5);
    };
    ticks(plot_->xAxis, columnLabels_, columns_, true);
    ticks(plot_->yAxis, rowLabels_, rows_, false);
}

bool EffectMap::eventFilter(QObject* watched, QEvent* event) {
    if (watched == plot_ && event->type() == QEvent::Resize && rows_ > 0) {
        placeTicks();
        replot();
    }
    return Chart::eventFilter(watched, event);
}

double EffectMap::value(int row, int column) const {
    return map_->data()->cell(column, row);
}

MatrixD EffectMap::values() const {
    MatrixD m(rows_, columns_);
    for (int r = 0; r < rows_; ++r)
        for (int c = 0; c < columns_; ++c)
            m(r, c) = value(r, c);
    return m;
}

QString EffectMap::text(int row, int column) const {
    if (row < 0 || row >= static_cast<int>(texts_.size())) return {};
    const auto& line = texts_[static_cast<std::size_t>(row)];
    return column >= 0 && column < static_cast<int>(line.size())
               ? line[static_cast<std::size_t>(column)]
               : QString();
}

QByteArray EffectMap::image(ImageFormat format, QSize size, double scale) const {
    ImageOptions options;
    options.size = size;
    options.scale = scale;
    return image(format, options);
}

QSharedPointer<QCPAxisTicker> EffectMap::patchingTicks(double low, double high) {
    // A patching map's scale: its ends, 0, and 1 as the clean answer restored.
    QSharedPointer<QCPAxisTickerText> marks(new QCPAxisTickerText);
    marks->addTick(low, QString::number(low, 'g', 2));
    if (low < 0 && high > 0) marks->addTick(0, QStringLiteral("0"));
    if (low < 1 && high > 1) marks->addTick(1, tr("1 = clean"));
    if (high > 1.2 || high < 1) marks->addTick(high, QString::number(high, 'g', 2));
    return marks;
}

QByteArray EffectMap::image(ImageFormat format, const ImageOptions& options) const {
    const FigureStyle& style = options.style;
    // The figure's title, colour-bar label and range, for this paint only: the window's map keeps
    // its own (QCustomPlot lays itself out at the image's size for the paint, too).
    const QString title = style.title.value_or(title_);
    const QString label = scale_->axis()->label();
    const QCPRange range = map_->dataRange();
    const QSharedPointer<QCPAxisTicker> ticker = scale_->axis()->ticker();
    titleElement_->setText(title);
    titleElement_->setVisible(!title.isEmpty());
    if (!style.colorBarLabel.isEmpty()) scale_->axis()->setLabel(style.colorBarLabel);
    if (style.range.kind == ColorRange::Kind::Fixed) {
        map_->setDataRange(QCPRange(style.range.low, style.range.high));
        // The ticks follow the figure's range: a patching map keeps its "1 = clean".
        const bool patching = kind_ == Scale::Diverging && label.isEmpty();
        scale_->axis()->setTicker(patching ? patchingTicks(style.range.low, style.range.high)
                                           : QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    }
    const QSize size = options.size.isEmpty() ? QSize(640, 480) : options.size;
    // Labels as many as fit the image, which may be larger or smaller than the window's map.
    placeTicks(size);
    settleAtSize(plot_, size);
    const auto restore = [&] {
        placeTicks();
        titleElement_->setText(title_);
        titleElement_->setVisible(true);
        scale_->axis()->setLabel(label);
        map_->setDataRange(range);
        scale_->axis()->setTicker(ticker);
        plot_->replot(QCustomPlot::rpQueuedReplot);
    };
    QByteArray bytes;
    try {
        bytes = paintedImage(
            format, size, options.scale, title,
            [this, size](QCPPainter& painter) {
                plot_->toPainter(&painter, size.width(), size.height());
            },
            options.printWidthInches);
    } catch (...) {
        restore();
        throw;
    }
    restore();
    return bytes;
}

}  // namespace ae::plot
