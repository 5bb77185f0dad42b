#include "plot/training_charts.h"

#include <algorithm>
#include <iterator>
#include <numeric>
#include <vector>

#include "qcustomplot.h"

namespace ae::plot {
namespace {

// Tableau's ten colours: distinct on a projector, and none too pale on white.
const QColor kHeadColours[] = {QColor(0x4E, 0x79, 0xA7), QColor(0xF2, 0x8E, 0x2B),
                               QColor(0xE1, 0x57, 0x59), QColor(0x76, 0xB7, 0xB2),
                               QColor(0x59, 0xA1, 0x4F), QColor(0xB0, 0x7A, 0xA1),
                               QColor(0x9C, 0x75, 0x5F), QColor(0xED, 0xC9, 0x48),
                               QColor(0xFF, 0x9D, 0xA7), QColor(0x4B, 0x4B, 0x4B)};
const QColor kUnlabelledHead(0xC8, 0xC8, 0xC8);

}  // namespace

LossChart::LossChart(QWidget* parent) : Chart(parent) {
    plot_->addGraph();
    plot_->xAxis->setLabel(tr("step"));
    plot_->yAxis->setLabel(tr("loss"));
    plot_->yAxis->setScaleType(QCPAxis::stLogarithmic);
    plot_->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
}

void LossChart::clear() {
    plot_->graph(0)->data()->clear();
    replot();
}

void LossChart::addLoss(int step, double loss) {
    plot_->graph(0)->addData(step, loss);
}

int LossChart::pointCount() const {
    return plot_->graph(0)->dataCount();
}

void LossChart::fitToPoints() {
    plot_->rescaleAxes();
    replot();
}

HeadScoreChart::HeadScoreChart(const QString& scoreName, QWidget* parent) : Chart(parent) {
    plot_->xAxis->setLabel(tr("step"));
    plot_->xAxis->ticker()->setTickCount(4);  // "1250 1500" run together in a narrow dock
    plot_->yAxis->setLabel(scoreName);
    plot_->yAxis->setRange(0, 1);
    plot_->legend->setVisible(true);
    plot_->axisRect()->insetLayout()->take(plot_->legend);
    plot_->plotLayout()->addElement(0, 1, plot_->legend);
    plot_->plotLayout()->setColumnStretchFactor(1, 0.001);
    plot_->legend->setBorderPen(Qt::NoPen);
    plot_->legend->setRowSpacing(0);
}

void HeadScoreChart::setHeads(const QStringList& names) {
    plot_->clearGraphs();
    for (const QString& name : names) {
        QCPGraph* graph = plot_->addGraph();
        graph->setName(name);
    }
    plot_->xAxis->setRange(0, 1);
    replot();
}

int HeadScoreChart::headCount() const {
    return plot_->graphCount();
}

void HeadScoreChart::addScore(int head, int step, double score) {
    plot_->graph(head)->addData(step, score);
}

void HeadScoreChart::highlightHighest(int labelled) {
    const int count = plot_->graphCount();
    std::vector<int> order(static_cast<std::size_t>(count));
    std::iota(order.begin(), order.end(), 0);
    const auto latest = [this](int i) {
        const auto data = plot_->graph(i)->data();
        return data->isEmpty() ? 0.0 : (data->constEnd() - 1)->value;
    };
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return latest(a) > latest(b); });
    plot_->legend->clearItems();
    for (int rank = 0; rank < count; ++rank) {
        QCPGraph* graph = plot_->graph(order[static_cast<std::size_t>(rank)]);
        if (rank < labelled) {
            const int index = order[static_cast<std::size_t>(rank)];
            graph->setPen(QPen(kHeadColours[index % std::size(kHeadColours)], 2.5));
            graph->addToLegend();
        } else {
            graph->setPen(QPen(kUnlabelledHead, 1.0));
        }
    }
    // Coloured lines on top of the grey ones.
    for (int rank = labelled - 1; rank >= 0; --rank)
        plot_->graph(order[static_cast<std::size_t>(rank)])->setLayer(QStringLiteral("main"));
    for (int rank = labelled; rank < count; ++rank)
        plot_->graph(order[static_cast<std::size_t>(rank)])->setLayer(QStringLiteral("grid"));
}

void HeadScoreChart::showSteps(int lastStep) {
    plot_->xAxis->setRange(0, std::max(1, lastStep));
    replot();
}

}  // namespace ae::plot
