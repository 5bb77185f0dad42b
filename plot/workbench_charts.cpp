#include "plot/workbench_charts.h"

#include <qcustomplot.h>
#include <algorithm>
#include <cmath>

namespace ae::plot {

namespace {

void setTitle(QCustomPlot* plot, const QString& title) {
    if (plot->plotLayout()->rowCount() < 2 ||
        !qobject_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0))) {
        plot->plotLayout()->insertRow(0);
        plot->plotLayout()->addElement(
            0, 0, new QCPTextElement(plot, title, QFont("sans", 9, QFont::Bold)));
    }
    static_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0))->setText(title);
}

void labelTicks(QCPAxis* axis, const QStringList& labels) {
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    const int count = static_cast<int>(labels.size());
    const int step = std::max(1, count / 16 + (count % 16 ? 1 : 0));
    for (int i = 0; i < count; i += step)
        ticker->addTick(i, labels[i]);
    axis->setTicker(ticker);
}

// Colour-blind-safe (Okabe and Ito) line colours.
const QColor kLineColours[] = {QColor(0, 114, 178), QColor(213, 94, 0), QColor(0, 158, 115),
                               QColor(204, 121, 167)};

}  // namespace

LineChart::LineChart(QWidget* parent) : Chart(parent) {
    plot_->legend->setVisible(true);
    plot_->legend->setFont(QFont("sans", 8));
}

void LineChart::clear() {
    plot_->clearGraphs();
    replot();
}

void LineChart::setLines(const QString& title, const QStringList& xLabels, const QString& yLabel,
                         const std::vector<std::pair<QString, std::vector<double>>>& series) {
    setTitle(plot_, title);
    plot_->clearGraphs();
    double low = 0, high = 0;
    for (std::size_t s = 0; s < series.size(); ++s) {
        QCPGraph* graph = plot_->addGraph();
        graph->setName(series[s].first);
        QPen pen(kLineColours[s % 4]);
        pen.setWidthF(2);
        graph->setPen(pen);
        graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
        const auto& values = series[s].second;
        for (std::size_t i = 0; i < values.size(); ++i) {
            graph->addData(static_cast<double>(i), values[i]);
            if (std::isfinite(values[i])) {
                low = std::min(low, values[i]);
                high = std::max(high, values[i]);
            }
        }
    }
    labelTicks(plot_->xAxis, xLabels);
    plot_->xAxis->setRange(-0.3, std::max<double>(xLabels.size() - 0.7, 0.7));
    const double pad = 0.05 * std::max(high - low, 1e-9);
    plot_->yAxis->setRange(low - pad, high + pad);
    plot_->yAxis->setLabel(yLabel);
    replot();
}

int LineChart::lineCount() const {
    return plot_->graphCount();
}

double LineChart::pointValue(int line, int point) const {
    return (plot_->graph(line)->data()->begin() + point)->value;
}

BarChart::BarChart(QWidget* parent) : Chart(parent) {}

void BarChart::clear() {
    plot_->clearPlottables();
    plot_->clearItems();
    values_.clear();
    categories_.clear();
    replot();
}

void BarChart::setBars(const QString& title, const QStringList& categories,
                       const std::vector<double>& values, const QString& yLabel,
                       const std::vector<int>& highlighted) {
    setTitle(plot_, title);
    plot_->clearPlottables();
    plot_->clearItems();
    values_ = values;
    categories_ = categories;
    auto* plain = new QCPBars(plot_->xAxis, plot_->yAxis);
    auto* accent = new QCPBars(plot_->xAxis, plot_->yAxis);
    plain->setBrush(QColor(86, 180, 233));
    plain->setPen(QPen(QColor(0, 114, 178)));
    accent->setBrush(QColor(230, 159, 0));
    accent->setPen(QPen(QColor(213, 94, 0)));
    double low = 0, high = 0;
    for (std::size_t i = 0; i < values.size(); ++i) {
        const bool marked = std::find(highlighted.begin(), highlighted.end(),
                                      static_cast<int>(i)) != highlighted.end();
        (marked ? accent : plain)->addData(static_cast<double>(i), values[i]);
        if (std::isfinite(values[i])) {
            low = std::min(low, values[i]);
            high = std::max(high, values[i]);
        }
    }
    labelTicks(plot_->xAxis, categories);
    plot_->xAxis->setTickLabelRotation(categories.size() > 8 ? 60 : 0);
    plot_->xAxis->setRange(-0.6, static_cast<double>(values.size()) - 0.4);
    const double pad = 0.08 * std::max(high - low, 1e-9);
    plot_->yAxis->setRange(low - pad, high + pad);
    plot_->yAxis->setLabel(yLabel);
    replot();
}

void BarChart::markVertical(double x, const QString& label) {
    auto* line = new QCPItemStraightLine(plot_);
    line->point1->setCoords(x, 0);
    line->point2->setCoords(x, 1);
    QPen pen(Qt::black);
    pen.setStyle(Qt::DashLine);
    pen.setWidthF(1.5);
    line->setPen(pen);
    auto* text = new QCPItemText(plot_);
    text->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    text->position->setCoords(x, 0.05);
    text->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
    text->setText(QStringLiteral(" ") + label);
    text->setFont(QFont("sans", 8));
    replot();
}

}  // namespace ae::plot
