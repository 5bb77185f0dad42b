#include "plot/effect_map.h"

#include <qcustomplot.h>
#include <algorithm>
#include <cmath>

#include "plot/color_maps.h"

namespace ae::plot {

EffectMap::EffectMap(const QString& title, QWidget* parent) : Chart(parent) {
    plot_->plotLayout()->insertRow(0);
    plot_->plotLayout()->addElement(
        0, 0, new QCPTextElement(plot_, title, QFont("sans", 10, QFont::Bold)));
    map_ = new QCPColorMap(plot_->xAxis, plot_->yAxis);
    scale_ = new QCPColorScale(plot_);
    plot_->plotLayout()->addElement(1, 1, scale_);
    scale_->setType(QCPAxis::atRight);
    scale_->axis()->setLabel(tr("1 = clean answer restored"));
    map_->setColorScale(scale_);
    map_->setGradient(divergingGradient());
    map_->setInterpolate(false);
    auto* margins = new QCPMarginGroup(plot_);
    plot_->axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, margins);
    scale_->setMarginGroup(QCP::msBottom | QCP::msTop, margins);
    plot_->yAxis->setRangeReversed(true);
}

void EffectMap::clear() {
    rows_ = columns_ = 0;
    map_->data()->clear();
    replot();
}

void EffectMap::setValues(const std::vector<std::vector<double>>& values,
                          const QStringList& rowLabels, const QStringList& columnLabels) {
    rows_ = static_cast<int>(values.size());
    columns_ = rows_ ? static_cast<int>(values.front().size()) : 0;
    double largest = 1.0;
    for (const auto& row : values)
        for (double v : row)
            if (std::isfinite(v)) largest = std::max(largest, std::abs(v));
    range_ = largest;
    map_->data()->setSize(std::max(columns_, 1), std::max(rows_, 1));
    map_->data()->setRange(QCPRange(0, std::max(columns_ - 1, 0)),
                           QCPRange(0, std::max(rows_ - 1, 0)));
    for (int r = 0; r < rows_; ++r)
        for (int c = 0; c < columns_; ++c)
            map_->data()->setCell(c, r,
                                  values[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)]);
    map_->setDataRange(QCPRange(-range_, range_));
    const auto ticks = [](QCPAxis* axis, const QStringList& labels, int count) {
        QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
        // At most about 16 labels along an axis: every n-th.
        const int step = std::max(1, count / 16 + (count % 16 ? 1 : 0));
        for (int i = 0; i < count; i += step)
            ticker->addTick(i, i < labels.size() ? labels[i] : QString::number(i));
        axis->setTicker(ticker);
        axis->setRange(-0.5, count - 0.5);
    };
    ticks(plot_->xAxis, columnLabels, columns_);
    ticks(plot_->yAxis, rowLabels, rows_);
    replot();
}

double EffectMap::value(int row, int column) const {
    return map_->data()->cell(column, row);
}

}  // namespace ae::plot
