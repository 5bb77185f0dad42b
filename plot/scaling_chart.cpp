#include "plot/scaling_chart.h"

#include <cmath>

#include "qcustomplot.h"

namespace ae::plot {

ScalingChart::ScalingChart(const std::vector<ScalingPoint>& points, int tokens, QWidget* parent)
    : Chart(parent) {
    QCPLayoutGrid* layout = plot_->plotLayout();
    layout->insertRow(0);
    QCPAxisRect* rects[3] = {plot_->axisRect(), new QCPAxisRect(plot_), new QCPAxisRect(plot_)};
    layout->addElement(1, 1, rects[1]);
    layout->addElement(1, 2, rects[2]);
    const QString titles[3] = {tr("variance of the scores"), tr("mean largest weight"),
                               tr("mean row entropy (bits)")};
    QFont titleFont = plot_->font();
    titleFont.setBold(true);
    for (int c = 0; c < 3; ++c) {
        layout->addElement(0, c, new QCPTextElement(plot_, titles[c], titleFont));
        QCPAxis* x = rects[c]->axis(QCPAxis::atBottom);
        x->setScaleType(QCPAxis::stLogarithmic);
        QSharedPointer<QCPAxisTickerLog> ticker(new QCPAxisTickerLog);
        ticker->setLogBase(4);
        ticker->setSubTickCount(1);
        x->setTicker(ticker);
        x->setNumberFormat(QStringLiteral("f"));
        x->setNumberPrecision(0);
        x->setRange(0.8, 1300);
        x->setLabel(QStringLiteral("d_k"));
    }
    QCPAxis* varianceAxis = rects[0]->axis(QCPAxis::atLeft);
    varianceAxis->setScaleType(QCPAxis::stLogarithmic);
    QSharedPointer<QCPAxisTickerLog> varianceTicker(new QCPAxisTickerLog);
    varianceTicker->setLogBase(10);
    varianceAxis->setTicker(varianceTicker);
    varianceAxis->setNumberFormat(QStringLiteral("gb"));
    varianceAxis->setRange(0.3, 3000);
    rects[1]->axis(QCPAxis::atLeft)->setRange(0, 1.05);
    const double uniformBits = std::log2(static_cast<double>(tokens));
    rects[2]->axis(QCPAxis::atLeft)->setRange(0, uniformBits * 1.1);

    QVector<double> x, rawVar, scaledVar, rawMax, scaledMax, rawH, scaledH, reference, uniform;
    for (const ScalingPoint& p : points) {
        x << p.dk;
        rawVar << p.rawVariance;
        scaledVar << p.scaledVariance;
        rawMax << p.rawMaxWeight;
        scaledMax << p.scaledMaxWeight;
        rawH << p.rawEntropy / std::log(2.0);  // the study counts nats; the window shows bits
        scaledH << p.scaledEntropy / std::log(2.0);
        reference << p.dk;
        uniform << uniformBits;
    }
    const QPen raw(QColor(178, 24, 43), 3, Qt::DashLine);
    const QPen scaled(QColor(33, 102, 172), 3);
    const QPen guide(QColor(120, 120, 120), 1.5, Qt::DotLine);
    auto add = [&](QCPAxisRect* rect, const QVector<double>& y, const QPen& pen,
                   const QString& name, bool legend) {
        QCPGraph* g = plot_->addGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
        g->setData(x, y);
        g->setPen(pen);
        g->setName(name);
        if (pen.style() != Qt::DotLine)
            g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, pen.color(), 6));
        if (!legend) g->removeFromLegend();
    };
    add(rects[0], rawVar, raw, tr("q·k, not scaled"), true);
    add(rects[0], scaledVar, scaled, tr("q·k / √d_k"), true);
    add(rects[0], reference, guide, tr("d_k (for reference)"), true);
    add(rects[1], rawMax, raw, QString(), false);
    add(rects[1], scaledMax, scaled, QString(), false);
    add(rects[2], rawH, raw, QString(), false);
    add(rects[2], scaledH, scaled, QString(), false);
    add(rects[2], uniform, guide, QString(), false);
    plot_->legend->setVisible(true);
    rects[0]->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
}

QVector<QPointF> ScalingChart::drawnCurve(int curve) const {
    QVector<QPointF> points;
    if (curve < 0 || curve >= plot_->graphCount()) return points;
    for (const QCPGraphData& point : *plot_->graph(curve)->data())
        points << QPointF(point.key, point.value);
    return points;
}

}  // namespace ae::plot
