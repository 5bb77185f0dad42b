#include "plot/rotary_charts.h"

#include <QApplication>
#include <algorithm>
#include <cmath>

#include "qcustomplot.h"

namespace ae::plot {
namespace {

const QColor kFaint(150, 150, 150);

QFont scaledFont(double factor, bool bold) {
    QFont font = QApplication::font();
    font.setPointSizeF(font.pointSizeF() * factor);
    font.setBold(bold);
    return font;
}

QCPTextElement* addTitle(QCustomPlot* plot, double factor) {
    plot->plotLayout()->insertRow(0);
    auto* title = new QCPTextElement(plot, QString(), scaledFont(factor, true));
    plot->plotLayout()->addElement(0, 0, title);
    return title;
}

QCPItemLine* arrow(QCustomPlot* plot, const QColor& colour, double width, Qt::PenStyle style) {
    auto* line = new QCPItemLine(plot);
    line->setPen(QPen(colour, width, style, Qt::RoundCap));
    line->setHead(QCPLineEnding(QCPLineEnding::esSpikeArrow, 4 * width, 5 * width));
    line->start->setCoords(0, 0);
    line->end->setCoords(0, 0);
    return line;
}

QCPItemText* tipLabel(QCustomPlot* plot, const QString& text, const QColor& colour) {
    auto* label = new QCPItemText(plot);
    label->setText(text);
    label->setColor(colour);
    label->setPositionAlignment(Qt::AlignCenter);
    return label;
}

// A circle of radius r as a parametric curve.
void setCircle(QCPCurve* curve, double r) {
    QVector<double> t, x, y;
    for (int k = 0; k <= 96; ++k) {
        const double a = 2 * M_PI * k / 96;
        t << k;
        x << r * std::cos(a);
        y << r * std::sin(a);
    }
    curve->setData(t, x, y);
}

// Pairs are whole numbers: ticks on integers only (every 1, 2, 5, 10 … as room allows).
void setPairTicks(QCPAxis* axis) {
    QSharedPointer<QCPAxisTickerFixed> ticker(new QCPAxisTickerFixed);
    ticker->setTickStep(1.0);
    ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    axis->setTicker(ticker);
}

void setLogTicks(QCPAxis* axis) {
    axis->setScaleType(QCPAxis::stLogarithmic);
    QSharedPointer<QCPAxisTickerLog> ticker(new QCPAxisTickerLog);
    ticker->setLogBase(10);
    axis->setTicker(ticker);
    axis->setNumberFormat(QStringLiteral("gb"));
}

QVector<QPointF> graphPoints(const QCustomPlot* plot, int graph) {
    QVector<QPointF> points;
    if (graph < 0 || graph >= plot->graphCount()) return points;
    for (const QCPGraphData& point : *plot->graph(graph)->data())
        points << QPointF(point.key, point.value);
    return points;
}

}  // namespace

// --- one pair ----------------------------------------------------------------------------------

RotaryPairChart::RotaryPairChart(QWidget* parent) : Chart(parent) {
    title_ = addTitle(plot_, 1.0);
    for (QCPAxis* axis : {plot_->xAxis, plot_->yAxis}) {
        axis->setTickLabels(false);
        axis->grid()->setZeroLinePen(QPen(QColor(120, 120, 120), 1));
    }
    queryCircle_ = new QCPCurve(plot_->xAxis, plot_->yAxis);
    keyCircle_ = new QCPCurve(plot_->xAxis, plot_->yAxis);
    queryCircle_->setPen(QPen(kRotaryQueryColour.lighter(160), 1, Qt::DotLine));
    keyCircle_->setPen(QPen(kRotaryKeyColour.lighter(150), 1, Qt::DotLine));
    queryGhost_ = arrow(plot_, kRotaryQueryColour.lighter(170), 1.5, Qt::DashLine);
    keyGhost_ = arrow(plot_, kRotaryKeyColour.lighter(160), 1.5, Qt::DashLine);
    query_ = arrow(plot_, kRotaryQueryColour, 3.5, Qt::SolidLine);
    key_ = arrow(plot_, kRotaryKeyColour, 3.5, Qt::SolidLine);
    queryLabel_ = tipLabel(plot_, QStringLiteral("q"), kRotaryQueryColour);
    keyLabel_ = tipLabel(plot_, QStringLiteral("k"), kRotaryKeyColour);
    connect(plot_, &QCustomPlot::afterLayout, this, &RotaryPairChart::keepSquare);
    updateLabelFonts();
}

void RotaryPairChart::setTitle(const QString& title) {
    title_->setText(title);
}

void RotaryPairChart::showArrows(QPointF queryBefore, QPointF keyBefore, QPointF query,
                                 QPointF key) {
    const double queryLength = std::hypot(query.x(), query.y());
    const double keyLength = std::hypot(key.x(), key.y());
    radius_ = std::max({queryLength, keyLength, 1e-12}) * 1.45;
    setCircle(queryCircle_, queryLength);
    setCircle(keyCircle_, keyLength);
    queryGhost_->end->setCoords(queryBefore.x(), queryBefore.y());
    keyGhost_->end->setCoords(keyBefore.x(), keyBefore.y());
    query_->end->setCoords(query.x(), query.y());
    key_->end->setCoords(key.x(), key.y());
    // Each letter just beyond its tip, along its arrow.
    const auto labelAt = [this](QCPItemText* label, QPointF tip) {
        const double length = std::hypot(tip.x(), tip.y());
        const double scale = length > 0 ? (length + 0.14 * radius_) / length : 0;
        label->position->setCoords(tip.x() * scale, tip.y() * scale);
    };
    labelAt(queryLabel_, query);
    labelAt(keyLabel_, key);
    replot();
}

QPointF RotaryPairChart::drawnQueryTip() const {
    return query_->end->coords();
}

QPointF RotaryPairChart::drawnKeyTip() const {
    return key_->end->coords();
}

void RotaryPairChart::updateLabelFonts() {
    const QFont tip = scaledFont(1.3, true);
    queryLabel_->setFont(tip);
    keyLabel_->setFont(tip);
}

void RotaryPairChart::keepSquare() {
    const QRect rect = plot_->axisRect()->rect();
    const double r = radius_;
    if (rect.width() <= 0 || rect.height() <= 0 || r <= 0) return;
    const double w = rect.width(), h = rect.height();
    plot_->xAxis->setRange(-r * std::max(1.0, w / h), r * std::max(1.0, w / h));
    plot_->yAxis->setRange(-r * std::max(1.0, h / w), r * std::max(1.0, h / w));
}

// --- every pair's share ------------------------------------------------------------------------

PairSharesChart::PairSharesChart(QWidget* parent) : Chart(parent) {
    title_ = addTitle(plot_, 1.0);
    others_ = new QCPBars(plot_->xAxis, plot_->yAxis);
    others_->setBrush(QColor(170, 170, 170));
    others_->setPen(Qt::NoPen);
    shown_ = new QCPBars(plot_->xAxis, plot_->yAxis);
    shown_->setBrush(QColor(60, 60, 60));
    shown_->setPen(Qt::NoPen);
    plot_->xAxis->setLabel(tr("pair"));
    setPairTicks(plot_->xAxis);
    plot_->yAxis->grid()->setZeroLinePen(QPen(QColor(60, 60, 60), 1));
}

void PairSharesChart::setTitle(const QString& title) {
    title_->setText(title);
}

void PairSharesChart::showShares(const std::vector<double>& shares, int firstShown,
                                 int shownCount) {
    QVector<double> shownKeys, shownValues, otherKeys, otherValues;
    double largest = 1e-12;
    const int count = static_cast<int>(shares.size());
    for (int i = 0; i < count; ++i) {
        const double share = shares[static_cast<size_t>(i)];
        largest = std::max(largest, std::abs(share));
        const bool shown = i >= firstShown && i < firstShown + shownCount;
        (shown ? shownKeys : otherKeys) << i;
        (shown ? shownValues : otherValues) << share;
    }
    shown_->setData(shownKeys, shownValues);
    others_->setData(otherKeys, otherValues);
    plot_->xAxis->setRange(-0.7, count - 0.3);
    plot_->yAxis->setRange(-largest * 1.1, largest * 1.1);
    replot();
}

// --- q·k over the distance ---------------------------------------------------------------------

DistanceCurvesChart::DistanceCurvesChart(int maxDistance, QWidget* parent)
    : Chart(parent), maxDistance_(maxDistance) {
    title_ = addTitle(plot_, 1.05);
    QCPGraph* first = plot_->addGraph();
    first->setPen(QPen(kRotaryQueryColour, 4));
    QCPGraph* second = plot_->addGraph();
    second->setPen(QPen(kRotaryKeyColour, 3, Qt::DashLine));
    QCPGraph* here = plot_->addGraph();
    here->setLineStyle(QCPGraph::lsNone);
    here->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, Qt::black, Qt::white, 11));
    marker_ = new QCPItemStraightLine(plot_);
    marker_->setPen(QPen(QColor(90, 90, 90), 1, Qt::DotLine));
    plot_->xAxis->setLabel(tr("distance m − n"));
    plot_->yAxis->setLabel(tr("q·k"));
    plot_->xAxis->setRange(-maxDistance - 1, maxDistance + 1);
    plot_->yAxis->grid()->setZeroLinePen(QPen(QColor(120, 120, 120), 1));
}

void DistanceCurvesChart::setTitle(const QString& title) {
    title_->setText(title);
}

void DistanceCurvesChart::showCurves(const QVector<double>& distances,
                                     const std::vector<double>& first,
                                     const std::vector<double>& second) {
    plot_->graph(0)->setData(distances, QVector<double>(first.begin(), first.end()), true);
    plot_->graph(1)->setData(distances, QVector<double>(second.begin(), second.end()), true);
    double low = 0, high = 0;
    for (const auto* v : {&first, &second}) {
        for (double y : *v) {
            low = std::min(low, y);
            high = std::max(high, y);
        }
    }
    const double pad = std::max(1e-9, (high - low) * 0.08);
    plot_->yAxis->setRange(low - pad, high + pad);
    replot();
}

void DistanceCurvesChart::markDistance(int distance) {
    marker_->point1->setCoords(distance, 0);
    marker_->point2->setCoords(distance, 1);
    const QVector<QPointF> first = drawnCurve(0);
    const int index = distance + maxDistance_;
    if (index >= 0 && index < first.size())
        plot_->graph(2)->setData(QVector<double>{double(distance)},
                                 QVector<double>{first[index].y()});
    replot();
}

QVector<QPointF> DistanceCurvesChart::drawnCurve(int curve) const {
    return curve == 0 || curve == 1 ? graphPoints(plot_, curve) : QVector<QPointF>();
}

// --- wavelengths -------------------------------------------------------------------------------

WavelengthChart::WavelengthChart(QWidget* parent) : Chart(parent) {
    title_ = addTitle(plot_, 1.05);
    QCPGraph* original = plot_->addGraph();
    original->setPen(QPen(kFaint, 2));
    original->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, kFaint, 7));
    original->setName(tr("θ alone"));
    QCPGraph* scaled = plot_->addGraph();
    scaled->setPen(QPen(kRotaryQueryColour, 3));
    scaled->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssSquare, kRotaryQueryColour, kRotaryQueryColour, 7));
    scaled->setName(tr("with the scaling"));
    plot_->xAxis->setLabel(tr("pair i"));
    setPairTicks(plot_->xAxis);
    plot_->yAxis->setLabel(tr("tokens per turn"));
    setLogTicks(plot_->yAxis);
    for (QCPItemStraightLine** limit : {&shortLimit_, &longLimit_}) {
        *limit = new QCPItemStraightLine(plot_);
        (*limit)->setPen(QPen(QColor(90, 90, 90), 1.5, Qt::DashLine));
    }
    shortLimitLabel_ = new QCPItemText(plot_);
    longLimitLabel_ = new QCPItemText(plot_);
    shortLimitLabel_->setPositionAlignment(Qt::AlignRight | Qt::AlignTop);
    longLimitLabel_->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
    for (QCPItemText* label : {shortLimitLabel_, longLimitLabel_}) {
        label->setColor(QColor(60, 60, 60));
        label->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
    }
    updateLabelFonts();
}

void WavelengthChart::setTitle(const QString& title) {
    title_->setText(title);
}

void WavelengthChart::showWavelengths(const std::vector<double>& original,
                                      const std::vector<double>& scaled,
                                      const std::optional<WavelengthLimits>& limits) {
    QVector<double> x, a, b;
    double low = original.front(), high = original.front();
    for (size_t i = 0; i < original.size(); ++i) {
        x << double(i);
        a << original[i];
        b << scaled[i];
        low = std::min({low, original[i], scaled[i]});
        high = std::max({high, original[i], scaled[i]});
    }
    plot_->graph(0)->setData(x, a, true);
    plot_->graph(1)->setData(x, b, true);
    if (limits) {
        low = std::min(low, limits->shortest);
        high = std::max(high, limits->longest);
    }
    plot_->yAxis->setRange(low / 2, high * 3);
    plot_->xAxis->setRange(-0.5, static_cast<double>(original.size()) - 0.5);
    for (QCPAbstractItem* item : std::initializer_list<QCPAbstractItem*>{
             shortLimit_, longLimit_, shortLimitLabel_, longLimitLabel_})
        item->setVisible(limits.has_value());
    if (limits) {
        shortLimit_->point1->setCoords(0, limits->shortest);
        shortLimit_->point2->setCoords(1, limits->shortest);
        longLimit_->point1->setCoords(0, limits->longest);
        longLimit_->point2->setCoords(1, limits->longest);
        shortLimitLabel_->position->setCoords(0.98, limits->shortest);
        longLimitLabel_->position->setCoords(0.98, limits->longest);
        shortLimitLabel_->setText(limits->shortestText);
        longLimitLabel_->setText(limits->longestText);
    }
    replot();
}

QVector<QPointF> WavelengthChart::drawnCurve(int curve) const {
    return graphPoints(plot_, curve);
}

void WavelengthChart::updateLabelFonts() {
    const QFont limit = scaledFont(0.85, false);
    shortLimitLabel_->setFont(limit);
    longLimitLabel_->setFont(limit);
}

}  // namespace ae::plot
