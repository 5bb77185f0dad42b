// RotaryView's charts: made once (buildPlots), then given new numbers on every redraw (the draw
// functions), and read back for the tests.

#include <QLabel>
#include <QSlider>
#include <algorithm>
#include <cmath>

#include "core/scene_error.h"
#include "document/attention_document.h"
#include "plot/rotary_charts.h"
#include "ui/classroom/rotary_view.h"

namespace ae::ui {
namespace {

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

}  // namespace

void RotaryView::buildPlots() {
    for (int s = 0; s < kLargePairs; ++s) {
        auto* chart = new plot::RotaryPairChart(this);
        chart->widget()->setObjectName(QStringLiteral("rotaryPairPlot%1").arg(s));
        chart->widget()->setMinimumSize(150, 150);
        pairCharts_[s] = chart;
    }

    shares_ = new plot::PairSharesChart(this);
    shares_->widget()->setObjectName(QStringLiteral("rotarySharesPlot"));
    shares_->widget()->setMinimumSize(150, 150);

    const auto curvesChart = [this](const QString& name) {
        auto* chart = new plot::DistanceCurvesChart(kDistanceRange, this);
        chart->widget()->setObjectName(name);
        chart->widget()->setMinimumSize(200, 180);
        return chart;
    };
    rotaryCurves_ = curvesChart(QStringLiteral("rotaryCurvePlot"));
    sinusoidalCurves_ = curvesChart(QStringLiteral("rotarySinusoidalPlot"));

    frequencies_ = new plot::WavelengthChart(this);
    frequencies_->widget()->setObjectName(QStringLiteral("rotaryFrequencyPlot"));
    frequencies_->widget()->setMinimumSize(200, 180);
}

void RotaryView::drawPositions() {
    if (!study_) return;
    const TokenPositions at = positions();
    distanceValue_->setText(QStringLiteral("%1").arg(distance_->value()));
    startValue_->setText(tr("m = %1, n = %2").arg(at.query).arg(at.key));
    const std::vector<RotatedPair> pairs = study_->rotatedPairs(at);
    const std::vector<RotatedPair> unturned = study_->rotatedPairs({0, 0});
    const std::vector<double> wavelengths = study_->wavelengths();
    const int count = study_->pairCount();
    const int first = firstShownPair();
    const int half = count;
    for (int s = 0; s < kLargePairs; ++s) {
        plot::RotaryPairChart* chart = pairCharts_[s];
        const int i = first + s;
        chart->widget()->setVisible(i < count);
        if (i >= count) continue;
        const RotatedPair& p = pairs[static_cast<size_t>(i)];
        const RotatedPair& u = unturned[static_cast<size_t>(i)];
        chart->setTitle(tr("pair %1 · turn %2\nshare %3")
                            .arg(i)
                            .arg(tokensText(wavelengths[static_cast<size_t>(i)]))
                            .arg(signedText(p.dot())));
        chart->showArrows({u.queryX, u.queryY}, {u.keyX, u.keyY}, {p.queryX, p.queryY},
                          {p.keyX, p.keyY});
    }

    std::vector<double> shares;
    for (int i = 0; i < count; ++i)
        shares.push_back(pairs[static_cast<size_t>(i)].dot());
    const double score = study_->rotaryScore(at);
    const int still = study_->headDim() - study_->turnedDims();
    shares_->setTitle(still > 0 ? tr("all shares\nsum q·k %1\n(%2 from %3 unturned)")
                                      .arg(signedText(score), signedText(study_->unturnedShare()))
                                      .arg(still)
                                : tr("all shares\nsum q·k %1").arg(signedText(score)));
    shares_->showShares(shares, first, kLargePairs);

    QString caption =
        tr("%1: columns i and i + %3 of the head's %2 turn together, θ_i per position; "
           "“turn”: tokens per full turn. Solid: at m and n; dashed: before turning.")
            .arg(count == 1 ? tr("1 pair") : tr("%1 pairs").arg(count))
            .arg(study_->headDim())
            .arg(half);
    // Partial rotation (Phi-3, GPT-NeoX): the columns after the turned ones keep their angle.
    if (still > 1) {
        caption += tr(" Partial rotary: only columns 0–%1 turn; columns %2–%3 never do, so "
                      "their share of q·k is the same at every distance.")
                       .arg(study_->turnedDims() - 1)
                       .arg(study_->turnedDims())
                       .arg(study_->headDim() - 1);
    }
    pairsCaption_->setText(caption);

    const double divisor = document_->scene().divisor();
    QString sinusoidal;
    if (sinusoidalStart_ == start_->value()) {
        const size_t index = static_cast<size_t>(distance_->value() + kDistanceRange);
        sinusoidal =
            tr(" Sinusoidal positions added instead: %1.").arg(signedText(sinusoidal_[index]));
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
    for (plot::DistanceCurvesChart* chart : {rotaryCurves_, sinusoidalCurves_})
        chart->markDistance(distance_->value());
}

void RotaryView::drawCurves() {
    if (!study_) return;
    const int s = start_->value(), later = s + kSecondStartGap;
    const auto near = positionsOverDistances(-kDistanceRange, kDistanceRange, s);
    const auto far = positionsOverDistances(-kDistanceRange, kDistanceRange, later);
    if (sinusoidalStart_ != s) {
        std::vector<TokenPositions> both = near;
        both.insert(both.end(), far.begin(), far.end());
        try {
            sinusoidal_ = study_->sinusoidalScores(both);
            sinusoidalStart_ = s;
        } catch (const SceneError&) {
            sinusoidal_.assign(both.size(), 0.0);
            sinusoidalStart_ = -1;
        }
    }
    const std::vector<double> rotaryNear = study_->rotaryScores(near);
    const std::vector<double> rotaryFar = study_->rotaryScores(far);
    const auto n = near.size();
    const std::vector<double> sinusoidalNear(sinusoidal_.begin(),
                                             sinusoidal_.begin() + static_cast<long>(n));
    const std::vector<double> sinusoidalFar(sinusoidal_.begin() + static_cast<long>(n),
                                            sinusoidal_.end());
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
    rotaryCurves_->showCurves(x, rotaryNear, rotaryFar);
    sinusoidalCurves_->showCurves(x, sinusoidalNear, sinusoidalFar);
    rotaryCurves_->setTitle(tr("Rotary: the starts agree\ngap between them ≤ %1")
                                .arg(QString::number(rotaryGap_, 'g', 2)));
    sinusoidalCurves_->setTitle(tr("Sinusoidal: starts differ\nadded to x · gap up to %1")
                                    .arg(QString::number(sinusoidalGap_, 'g', 2)));
    legend_->setText(tr("<span style='color:%1'><b>━━ from position %2</b></span>&nbsp;&nbsp;"
                        "<span style='color:%3'><b>╍╍ both %4 later</b></span>&nbsp;&nbsp;"
                        "● the slider's distance. Left: one curve. Middle: two.")
                         .arg(plot::kRotaryQueryColour.name())
                         .arg(s)
                         .arg(plot::kRotaryKeyColour.name())
                         .arg(kSecondStartGap));
    drawCurveMarkers();
    drawPositions();
}

void RotaryView::drawFrequencies() {
    if (!study_) return;
    const RopeParameters rope = study_->parameters();
    std::optional<plot::WavelengthLimits> limits;
    if (rope.scaling == RopeScaling::Llama3) {
        limits = plot::WavelengthLimits();
        limits->shortest = rope.originalMaxPositions / rope.highFrequencyFactor;
        limits->longest = rope.originalMaxPositions / rope.lowFrequencyFactor;
        limits->shortestText = tr("kept below %1").arg(tokensText(limits->shortest));
        limits->longestText =
            tr("%1× slower above %2").arg(rope.factor).arg(tokensText(limits->longest));
    }
    QString scaling = tr("no scaling: blue = grey");
    if (rope.scaling == RopeScaling::Linear) {
        scaling = tr("blue: linear ×%1 · grey: none").arg(rope.factor);
    } else if (rope.scaling == RopeScaling::Llama3) {
        scaling = tr("blue: llama3 ×%1 · grey: none").arg(rope.factor);
    }
    frequencies_->setTitle(
        tr("Wavelengths, θ = %1\n%2").arg(QString::number(rope.theta, 'g', 8), scaling));
    frequencies_->showWavelengths(study_->unscaledWavelengths(), study_->wavelengths(), limits);
}

QPointF RotaryView::drawnQueryTip(int slot) const {
    return pairCharts_[slot]->drawnQueryTip();
}

QPointF RotaryView::drawnKeyTip(int slot) const {
    return pairCharts_[slot]->drawnKeyTip();
}

QString RotaryView::readout() const {
    return readout_->text();
}

}  // namespace ae::ui
