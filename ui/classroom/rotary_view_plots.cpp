// RotaryView's plots: made once (buildPlots), then moved on every redraw (the draw functions),
// and read back for the tests.

#include <QApplication>
#include <QLabel>
#include <QSlider>
#include <QSpinBox>
#include <algorithm>
#include <cmath>

#include "core/scene_error.h"
#include "document/attention_document.h"
#include "qcustomplot.h"
#include "ui/classroom/rotary_view.h"
#include "ui/classroom/rotary_view_items.h"

namespace ae::ui {
namespace {

// Okabe–Ito blue and vermillion: apart for every kind of colour vision, and on a projector.
const QColor kQueryColour(0, 114, 178);
const QColor kKeyColour(213, 94, 0);
const QColor kFaint(150, 150, 150);
// Reading the figures of a plot, a projector's worth of them.
const char* const kRadiusProperty = "aeRadius";

// Short enough for a plot's title on a projector: 6.3, 230, 35.5k, 945k, 1.2M.
QString tokensText(double wavelength) {
    if (wavelength < 10) return QString::number(wavelength, 'f', 1);
    if (wavelength < 1e4) return QString::number(wavelength, 'f', 0);
    if (wavelength < 1e6) return QString::number(wavelength / 1e3, 'g', 3) + QLatin1Char('k');
    if (wavelength < 1e9) return QString::number(wavelength / 1e6, 'g', 3) + QLatin1Char('M');
    return QString::number(wavelength, 'g', 2);
}

QString signedText(double value) {
    return (value >= 0 ? QStringLiteral("+") : QString()) + QString::number(value, 'g', 3);
}

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

// Equal units on both axes, whatever the shape of the plot: a turn must look like a turn.
void keepSquare(QCustomPlot* plot) {
    const QRect rect = plot->axisRect()->rect();
    const double r = plot->property(kRadiusProperty).toDouble();
    if (rect.width() <= 0 || rect.height() <= 0 || r <= 0) return;
    const double w = rect.width(), h = rect.height();
    plot->xAxis->setRange(-r * std::max(1.0, w / h), r * std::max(1.0, w / h));
    plot->yAxis->setRange(-r * std::max(1.0, h / w), r * std::max(1.0, h / w));
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

}  // namespace

void RotaryView::buildPlots() {
    for (int s = 0; s < kLargePairs; ++s) {
        auto* plot = new QCustomPlot(this);
        plot->setObjectName(QStringLiteral("rotaryPairPlot%1").arg(s));
        plot->setMinimumSize(150, 150);
        Items::Pair& p = items_->pairs[s];
        p.title = addTitle(plot, 1.0);
        for (QCPAxis* axis : {plot->xAxis, plot->yAxis}) {
            axis->setTickLabels(false);
            axis->grid()->setZeroLinePen(QPen(QColor(120, 120, 120), 1));
        }
        p.queryCircle = new QCPCurve(plot->xAxis, plot->yAxis);
        p.keyCircle = new QCPCurve(plot->xAxis, plot->yAxis);
        p.queryCircle->setPen(QPen(kQueryColour.lighter(160), 1, Qt::DotLine));
        p.keyCircle->setPen(QPen(kKeyColour.lighter(150), 1, Qt::DotLine));
        p.queryGhost = arrow(plot, kQueryColour.lighter(170), 1.5, Qt::DashLine);
        p.keyGhost = arrow(plot, kKeyColour.lighter(160), 1.5, Qt::DashLine);
        p.query = arrow(plot, kQueryColour, 3.5, Qt::SolidLine);
        p.key = arrow(plot, kKeyColour, 3.5, Qt::SolidLine);
        p.queryLabel = tipLabel(plot, QStringLiteral("q"), kQueryColour);
        p.keyLabel = tipLabel(plot, QStringLiteral("k"), kKeyColour);
        plot->setProperty(kRadiusProperty, 1.0);
        connect(plot, &QCustomPlot::afterLayout, plot, [plot] { keepSquare(plot); });
        pairPlots_[s] = plot;
    }

    shares_ = new QCustomPlot(this);
    shares_->setObjectName(QStringLiteral("rotarySharesPlot"));
    shares_->setMinimumSize(150, 150);
    items_->sharesTitle = addTitle(shares_, 1.0);
    items_->otherShares = new QCPBars(shares_->xAxis, shares_->yAxis);
    items_->otherShares->setBrush(QColor(170, 170, 170));
    items_->otherShares->setPen(Qt::NoPen);
    items_->shownShares = new QCPBars(shares_->xAxis, shares_->yAxis);
    items_->shownShares->setBrush(QColor(60, 60, 60));
    items_->shownShares->setPen(Qt::NoPen);
    shares_->xAxis->setLabel(tr("pair"));
    setPairTicks(shares_->xAxis);
    shares_->yAxis->grid()->setZeroLinePen(QPen(QColor(60, 60, 60), 1));

    const auto curvePlot = [this](const QString& name, QCPTextElement** title,
                                  QCPItemStraightLine** marker) {
        auto* plot = new QCustomPlot(this);
        plot->setObjectName(name);
        plot->setMinimumSize(200, 180);
        *title = addTitle(plot, 1.05);
        QCPGraph* first = plot->addGraph();
        first->setPen(QPen(kQueryColour, 4));
        QCPGraph* second = plot->addGraph();
        second->setPen(QPen(kKeyColour, 3, Qt::DashLine));
        QCPGraph* here = plot->addGraph();
        here->setLineStyle(QCPGraph::lsNone);
        here->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, Qt::black, Qt::white, 11));
        *marker = new QCPItemStraightLine(plot);
        (*marker)->setPen(QPen(QColor(90, 90, 90), 1, Qt::DotLine));
        plot->xAxis->setLabel(tr("distance m − n"));
        plot->yAxis->setLabel(tr("q·k"));
        plot->xAxis->setRange(-kDistanceRange - 1, kDistanceRange + 1);
        plot->yAxis->grid()->setZeroLinePen(QPen(QColor(120, 120, 120), 1));
        return plot;
    };
    rotaryCurves_ =
        curvePlot(QStringLiteral("rotaryCurvePlot"), &items_->rotaryTitle, &items_->rotaryMarker);
    sinusoidalCurves_ = curvePlot(QStringLiteral("rotarySinusoidalPlot"), &items_->sinusoidalTitle,
                                  &items_->sinusoidalMarker);

    frequencies_ = new QCustomPlot(this);
    frequencies_->setObjectName(QStringLiteral("rotaryFrequencyPlot"));
    frequencies_->setMinimumSize(200, 180);
    items_->frequencyTitle = addTitle(frequencies_, 1.05);
    QCPGraph* original = frequencies_->addGraph();
    original->setPen(QPen(kFaint, 2));
    original->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, kFaint, 7));
    original->setName(tr("θ alone"));
    QCPGraph* scaled = frequencies_->addGraph();
    scaled->setPen(QPen(kQueryColour, 3));
    scaled->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssSquare, kQueryColour, kQueryColour, 7));
    scaled->setName(tr("with the scaling"));
    frequencies_->xAxis->setLabel(tr("pair i"));
    setPairTicks(frequencies_->xAxis);
    frequencies_->yAxis->setLabel(tr("tokens per turn"));
    setLogTicks(frequencies_->yAxis);
    for (QCPItemStraightLine** limit : {&items_->shortLimit, &items_->longLimit}) {
        *limit = new QCPItemStraightLine(frequencies_);
        (*limit)->setPen(QPen(QColor(90, 90, 90), 1.5, Qt::DashLine));
    }
    items_->shortLimitLabel = new QCPItemText(frequencies_);
    items_->longLimitLabel = new QCPItemText(frequencies_);
    items_->shortLimitLabel->setPositionAlignment(Qt::AlignRight | Qt::AlignTop);
    items_->longLimitLabel->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
    for (QCPItemText* label : {items_->shortLimitLabel, items_->longLimitLabel}) {
        label->setColor(QColor(60, 60, 60));
        label->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
    }
    styleItemsText();
}

void RotaryView::styleItemsText() {
    // Items are not scaled by presentation mode: their fonts follow the application's here.
    const QFont tip = scaledFont(1.3, true);
    for (Items::Pair& p : items_->pairs) {
        p.queryLabel->setFont(tip);
        p.keyLabel->setFont(tip);
    }
    const QFont limit = scaledFont(0.85, false);
    items_->shortLimitLabel->setFont(limit);
    items_->longLimitLabel->setFont(limit);
}

void RotaryView::drawPositions() {
    if (!study_) return;
    const TokenPositions at = positions();
    distanceValue_->setText(QStringLiteral("%1").arg(distance_->value()));
    startValue_->setText(tr("m = %1, n = %2").arg(at.query).arg(at.key));
    const std::vector<RotatedPair> pairs = study_->rotatedPairs(at);
    const std::vector<RotatedPair> unturned = study_->rotatedPairs({0, 0});
    const std::vector<double> theta = study_->inverseFrequencies();
    const std::vector<double> wavelengths = study_->wavelengths();
    const int count = study_->pairCount();
    const int first = firstShownPair();
    const int half = study_->headDim() / 2;
    for (int s = 0; s < kLargePairs; ++s) {
        QCustomPlot* plot = pairPlots_[s];
        const int i = first + s;
        plot->setVisible(i < count);
        if (i >= count) continue;
        const RotatedPair& p = pairs[static_cast<size_t>(i)];
        const RotatedPair& u = unturned[static_cast<size_t>(i)];
        Items::Pair& items = items_->pairs[s];
        const double queryLength = std::hypot(p.queryX, p.queryY);
        const double keyLength = std::hypot(p.keyX, p.keyY);
        const double radius = std::max({queryLength, keyLength, 1e-12}) * 1.45;
        plot->setProperty(kRadiusProperty, radius);
        setCircle(items.queryCircle, queryLength);
        setCircle(items.keyCircle, keyLength);
        items.queryGhost->end->setCoords(u.queryX, u.queryY);
        items.keyGhost->end->setCoords(u.keyX, u.keyY);
        items.query->end->setCoords(p.queryX, p.queryY);
        items.key->end->setCoords(p.keyX, p.keyY);
        const auto labelAt = [radius](QCPItemText* label, double x, double y) {
            const double length = std::hypot(x, y);
            const double scale = length > 0 ? (length + 0.14 * radius) / length : 0;
            label->position->setCoords(x * scale, y * scale);
        };
        labelAt(items.queryLabel, p.queryX, p.queryY);
        labelAt(items.keyLabel, p.keyX, p.keyY);
        items.title->setText(tr("pair %1 · turn %2\nshare %3")
                                 .arg(i)
                                 .arg(tokensText(wavelengths[static_cast<size_t>(i)]))
                                 .arg(signedText(p.dot())));
        plot->replot(QCustomPlot::rpQueuedReplot);
    }

    QVector<double> shownKeys, shownValues, otherKeys, otherValues;
    double largest = 1e-12;
    for (int i = 0; i < count; ++i) {
        const double share = pairs[static_cast<size_t>(i)].dot();
        largest = std::max(largest, std::abs(share));
        const bool shown = i >= first && i < first + kLargePairs;
        (shown ? shownKeys : otherKeys) << i;
        (shown ? shownValues : otherValues) << share;
    }
    items_->shownShares->setData(shownKeys, shownValues);
    items_->otherShares->setData(otherKeys, otherValues);
    shares_->xAxis->setRange(-0.7, count - 0.3);
    shares_->yAxis->setRange(-largest * 1.1, largest * 1.1);
    const double score = study_->rotaryScore(at);
    items_->sharesTitle->setText(tr("all shares\nsum q·k %1").arg(signedText(score)));
    shares_->replot(QCustomPlot::rpQueuedReplot);

    pairsCaption_->setText(
        tr("%1: columns i and i + %3 of the head's %2 turn together, θ_i per position; "
           "“turn”: tokens per full turn. Solid: at m and n; dashed: before turning.")
            .arg(count == 1 ? tr("1 pair") : tr("%1 pairs").arg(count))
            .arg(study_->headDim())
            .arg(half));

    const double divisor = document_->scene().divisor();
    QString sinusoidal;
    if (items_->sinusoidalStart == start_->value()) {
        const size_t index = static_cast<size_t>(distance_->value() + kDistanceRange);
        sinusoidal = tr(" Sinusoidal positions added instead: %1.")
                         .arg(signedText(items_->sinusoidal[index]));
    }
    readout_->setText(
        tr("<b>q·k = %1</b> (÷ %2 = %3) with the query at m = %4, the key at n = %5. Move "
           "both: q·k stays, as q and k turn together.%6")
            .arg(signedText(score), QString::number(divisor, 'g', 4), signedText(score / divisor))
            .arg(at.query)
            .arg(at.key)
            .arg(sinusoidal));
}

void RotaryView::drawCurveMarkers() {
    const int d = distance_->value();
    const size_t index = static_cast<size_t>(d + kDistanceRange);
    for (QCustomPlot* plot : {rotaryCurves_, sinusoidalCurves_}) {
        QCPItemStraightLine* marker =
            plot == rotaryCurves_ ? items_->rotaryMarker : items_->sinusoidalMarker;
        marker->point1->setCoords(d, 0);
        marker->point2->setCoords(d, 1);
        QVector<QPointF> first = drawnGraph(plot, 0);
        if (static_cast<int>(index) < first.size())
            plot->graph(2)->setData(QVector<double>{double(d)},
                                    QVector<double>{first[static_cast<int>(index)].y()});
        plot->replot(QCustomPlot::rpQueuedReplot);
    }
}

void RotaryView::drawCurves() {
    if (!study_) return;
    const int s = start_->value(), later = s + kSecondStartGap;
    const auto near = positionsOverDistances(-kDistanceRange, kDistanceRange, s);
    const auto far = positionsOverDistances(-kDistanceRange, kDistanceRange, later);
    if (items_->sinusoidalStart != s) {
        std::vector<TokenPositions> both = near;
        both.insert(both.end(), far.begin(), far.end());
        try {
            items_->sinusoidal = study_->sinusoidalScores(both);
            items_->sinusoidalStart = s;
        } catch (const SceneError&) {
            items_->sinusoidal.assign(both.size(), 0.0);
            items_->sinusoidalStart = -1;
        }
    }
    const std::vector<double> rotaryNear = study_->rotaryScores(near);
    const std::vector<double> rotaryFar = study_->rotaryScores(far);
    const auto n = near.size();
    const std::vector<double> sinusoidalNear(items_->sinusoidal.begin(),
                                             items_->sinusoidal.begin() + static_cast<long>(n));
    const std::vector<double> sinusoidalFar(items_->sinusoidal.begin() + static_cast<long>(n),
                                            items_->sinusoidal.end());
    QVector<double> x;
    for (int d = -kDistanceRange; d <= kDistanceRange; ++d)
        x << d;
    const auto gapOf = [](const std::vector<double>& a, const std::vector<double>& b) {
        double gap = 0;
        for (size_t k = 0; k < a.size() && k < b.size(); ++k)
            gap = std::max(gap, std::abs(a[k] - b[k]));
        return gap;
    };
    rotaryGap_ = gapOf(rotaryNear, rotaryFar);
    sinusoidalGap_ = gapOf(sinusoidalNear, sinusoidalFar);
    const auto draw = [&x](QCustomPlot* plot, const std::vector<double>& a,
                           const std::vector<double>& b) {
        plot->graph(0)->setData(x, QVector<double>(a.begin(), a.end()), true);
        plot->graph(1)->setData(x, QVector<double>(b.begin(), b.end()), true);
        double low = 0, high = 0;
        for (const auto* v : {&a, &b}) {
            for (double y : *v) {
                low = std::min(low, y);
                high = std::max(high, y);
            }
        }
        const double pad = std::max(1e-9, (high - low) * 0.08);
        plot->yAxis->setRange(low - pad, high + pad);
    };
    draw(rotaryCurves_, rotaryNear, rotaryFar);
    draw(sinusoidalCurves_, sinusoidalNear, sinusoidalFar);
    items_->rotaryTitle->setText(tr("Rotary: the starts agree\ngap between them ≤ %1")
                                     .arg(QString::number(rotaryGap_, 'g', 2)));
    items_->sinusoidalTitle->setText(tr("Sinusoidal: starts differ\nadded to x · gap up to %1")
                                         .arg(QString::number(sinusoidalGap_, 'g', 2)));
    legend_->setText(tr("<span style='color:%1'><b>━━ from position %2</b></span>&nbsp;&nbsp;"
                        "<span style='color:%3'><b>╍╍ both %4 later</b></span>&nbsp;&nbsp;"
                        "● the slider's distance. Left: one curve. Middle: two.")
                         .arg(kQueryColour.name())
                         .arg(s)
                         .arg(kKeyColour.name())
                         .arg(kSecondStartGap));
    drawCurveMarkers();
    drawPositions();
}

void RotaryView::drawFrequencies() {
    if (!study_) return;
    const std::vector<double> original = study_->unscaledWavelengths();
    const std::vector<double> scaled = study_->wavelengths();
    QVector<double> x, a, b;
    double low = original.front(), high = original.front();
    for (size_t i = 0; i < original.size(); ++i) {
        x << double(i);
        a << original[i];
        b << scaled[i];
        low = std::min({low, original[i], scaled[i]});
        high = std::max({high, original[i], scaled[i]});
    }
    frequencies_->graph(0)->setData(x, a, true);
    frequencies_->graph(1)->setData(x, b, true);
    const RopeParameters rope = study_->parameters();
    const bool llama3 = rope.scaling == RopeScaling::Llama3;
    const double shortest = rope.originalMaxPositions / rope.highFrequencyFactor;
    const double longest = rope.originalMaxPositions / rope.lowFrequencyFactor;
    if (llama3) {
        low = std::min(low, shortest);
        high = std::max(high, longest);
    }
    frequencies_->yAxis->setRange(low / 2, high * 3);
    frequencies_->xAxis->setRange(-0.5, static_cast<double>(original.size()) - 0.5);
    items_->shortLimit->setVisible(llama3);
    items_->longLimit->setVisible(llama3);
    items_->shortLimitLabel->setVisible(llama3);
    items_->longLimitLabel->setVisible(llama3);
    if (llama3) {
        items_->shortLimit->point1->setCoords(0, shortest);
        items_->shortLimit->point2->setCoords(1, shortest);
        items_->longLimit->point1->setCoords(0, longest);
        items_->longLimit->point2->setCoords(1, longest);
        items_->shortLimitLabel->position->setCoords(0.98, shortest);
        items_->longLimitLabel->position->setCoords(0.98, longest);
        items_->shortLimitLabel->setText(tr("kept below %1").arg(tokensText(shortest)));
        items_->longLimitLabel->setText(
            tr("%1× slower above %2").arg(rope.factor).arg(tokensText(longest)));
    }
    QString scaling = tr("no scaling: blue = grey");
    if (rope.scaling == RopeScaling::Linear) {
        scaling = tr("blue: linear ×%1 · grey: none").arg(rope.factor);
    } else if (rope.scaling == RopeScaling::Llama3) {
        scaling = tr("blue: llama3 ×%1 · grey: none").arg(rope.factor);
    }
    items_->frequencyTitle->setText(
        tr("Wavelengths, θ = %1\n%2").arg(QString::number(rope.theta, 'g', 8), scaling));
    frequencies_->replot(QCustomPlot::rpQueuedReplot);
}

QPointF RotaryView::drawnQueryTip(int slot) const {
    const QPointF p = items_->pairs[slot].query->end->coords();
    return p;
}

QPointF RotaryView::drawnKeyTip(int slot) const {
    return items_->pairs[slot].key->end->coords();
}

QVector<QPointF> RotaryView::drawnGraph(const QCustomPlot* plot, int graph) {
    QVector<QPointF> points;
    if (graph < 0 || graph >= plot->graphCount()) return points;
    for (const QCPGraphData& point : *plot->graph(graph)->data())
        points << QPointF(point.key, point.value);
    return points;
}

QString RotaryView::readout() const {
    return readout_->text();
}

}  // namespace ae::ui
