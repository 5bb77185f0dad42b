// A heatmap's words: its title, the axes' titles and token labels (thinned or turned upright so
// that they never overlap), the colour bar's labels, and the room all of them take around the
// cells.

#include <algorithm>
#include <cmath>

#include "plot/cell_overlay.h"
#include "plot/heatmap_controller.h"
#include "qcustomplot.h"

namespace ae::plot {
namespace {

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

void HeatmapController::setTitle(const QString& title) {
    title_->setText(title);
}

QString HeatmapController::title() const {
    return title_->text();
}

void HeatmapController::setTitleColor(const QColor& color) {
    title_->setTextColor(color);
}

QColor HeatmapController::titleColor() const {
    return title_->textColor();
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
    double cellWidth = rect_->width() / std::max<double>(1.0, columnLabels_.size());
    if (squareCells_ && !rowLabels_.isEmpty() && !columnLabels_.isEmpty()) {
        // Square cells: the side they would have with the labels lying down, whatever they do
        // now. Upright labels take height, which shrinks square cells, which keeps the labels
        // upright: judged from the cells as they are, a map settled on either layout, and which
        // one depended on the sizes it went through (maps beside each other came out unlike).
        const QMargins pad = row_->margins();
        const double width = rect_->width() + pad.left() + pad.right();
        double height = rect_->height() + pad.top() + pad.bottom();
        if (columnsUpright_) height += std::max(0, widestColumnLabel_ - lineHeight);
        cellWidth = std::min(width / columnLabels_.size(), height / rowLabels_.size());
    }
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
        replot();
    }
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

QSize HeatmapController::measuredChrome() const {
    const QRect inner = rect_->rect();
    const QMargins pad = row_->margins();
    if (!plot_->isVisible() || inner.width() <= 0 || inner.height() <= 0 ||
        plot_->width() <= inner.width())
        return {};
    return QSize(plot_->width() - inner.width() - pad.left() - pad.right(),
                 plot_->height() - inner.height() - pad.top() - pad.bottom());
}

QSize HeatmapController::chromeSize() const {
    // As measured right after the last layout: between a resize and the layout that follows it,
    // the plot's size and its cells' rect disagree (chromes of -150 pixels were read there, and
    // the grid swung between one and two columns).
    if (!lastChrome_.isEmpty()) return lastChrome_;  // (a default QSize is empty too)
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

}  // namespace ae::plot
