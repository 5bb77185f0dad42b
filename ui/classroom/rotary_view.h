#pragma once
// Explain › Why rotary positions? (F10): rotary positions (RoPE, as in Llama, Qwen, Mistral) seen
// on one query and one key of the current scene. Every number comes from core/rotary_study.h,
// which turns the engine's own vectors with ops::rotateHalf; the charts of plot/rotary_charts.h
// draw them, and this view says what they show.
//   - each frequency pair (columns i and i + d/2) of q and k as two arrows in a plane, turned by
//     their positions; the first pairs large, every pair's share of q·k as bars;
//   - q·k against the distance m − n for two starting positions: rotary (the curves coincide)
//     beside sinusoidal positions added to the tokens (they do not);
//   - the wavelength of each pair, original and scaled (θ, linear or llama3), on a log axis.
// The scene is never changed: θ and the scaling here are a what-if.

#include <QDialog>
#include <QPointF>
#include <QVector>
#include <memory>
#include <optional>
#include <vector>

#include "core/rotary_study.h"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSlider;
class QSpinBox;

namespace ae::document {
class AttentionDocument;
}  // namespace ae::document

namespace ae::plot {
class DistanceCurvesChart;
class PairSharesChart;
class RotaryPairChart;
class WavelengthChart;
}  // namespace ae::plot

namespace ae::ui {

class RefreshWhenShown;

class RotaryView : public QDialog {
    Q_OBJECT
public:
    explicit RotaryView(document::AttentionDocument* document, QWidget* parent = nullptr);
    ~RotaryView() override;

    static constexpr int kLargePairs = 4;       // pairs drawn large, from firstShownPair()
    static constexpr int kDistanceRange = 64;   // distances −64 … 64 on the curves and slider
    static constexpr int kSecondStartGap = 50;  // the second curve starts this much later
    static constexpr int kLatestStart = 2000;   // the "move both" slider's end

    // The numbers drawn (null when the scene cannot give them: see problem()).
    const RotaryStudy* study() const { return study_.get(); }
    QString problem() const { return problem_; }
    int head() const { return head_; }
    int queryToken() const { return queryRow_; }
    int keyToken() const { return keyRow_; }
    // The query's and the key's positions, from the distance and "move both" sliders.
    TokenPositions positions() const;
    int firstShownPair() const;
    // The rotary parameters the controls give (the scene's until one is moved).
    RopeParameters parameters() const;

    QSlider* distanceSlider() const { return distance_; }
    QSlider* startSlider() const { return start_; }
    QSlider* thetaSlider() const { return theta_; }
    QComboBox* scalingChoice() const { return scaling_; }
    QDoubleSpinBox* factorSpin() const { return factor_; }
    QSpinBox* originalPositionsSpin() const { return original_; }
    QComboBox* queryChoice() const { return queryChoice_; }
    QComboBox* keyChoice() const { return keyChoice_; }
    plot::RotaryPairChart* pairChart(int slot) const { return pairCharts_[slot]; }
    plot::PairSharesChart* sharesChart() const { return shares_; }
    // The curves' drawnCurve(0) starts at the slider's start, drawnCurve(1) kSecondStartGap
    // later; the wavelengths' drawnCurve(0) is the original, drawnCurve(1) with the scaling.
    plot::DistanceCurvesChart* rotaryCurveChart() const { return rotaryCurves_; }
    plot::DistanceCurvesChart* sinusoidalCurveChart() const { return sinusoidalCurves_; }
    plot::WavelengthChart* frequencyChart() const { return frequencies_; }

    // The tips of pair chart `slot`'s q and k arrows, read back from the chart.
    QPointF drawnQueryTip(int slot) const;
    QPointF drawnKeyTip(int slot) const;
    // Largest difference between the two starts' curves: rotary and sinusoidal added.
    double rotaryGap() const { return rotaryGap_; }
    double sinusoidalGap() const { return sinusoidalGap_; }
    QString readout() const;

public slots:
    void setHead(int head);
    // The query token (the window's selected row); the key stays unless it is out of range.
    void setQuery(int row);
    void setTokens(int queryRow, int keyRow);
    // Back to the scene's θ and scaling (or the defaults when it has none).
    void resetParameters();
    void refresh();

protected:
    void changeEvent(QEvent* event) override;  // presentation mode's larger text

private:
    void buildControls();
    void buildPlots();
    void onParametersEdited();
    void setControlsFrom(const RopeParameters& rope);
    void drawPositions();     // pairs, shares and the readout
    void drawCurves();        // both curve plots (then the markers and positions)
    void drawCurveMarkers();  // where the distance slider is, on both curves
    void drawFrequencies();   // the wavelength plot

    document::AttentionDocument* document_;
    RefreshWhenShown* refresher_;
    std::unique_ptr<RotaryStudy> study_;
    QString problem_;
    int head_ = 0, queryRow_ = -1, keyRow_ = 0;
    bool slidersFromTokens_ = true;  // the next refresh puts the sliders at the tokens' rows
    bool controlsSet_ = false;
    bool curvesPending_ = false;                 // a drag of "move both" has queued drawCurves()
    std::optional<RopeParameters> sceneRotary_;  // the scene's, when the controls were set
    double thetaValue_ = 10000.0;                // exact: the slider only shows it to its step

    QWidget* choices_;
    QWidget* sliders_;
    QWidget* pairsHeader_;
    QWidget* frequencyControls_;
    QWidget* content_;
    QLabel* problemLabel_;
    QLabel* pairsCaption_;

    QSpinBox* headSpin_;
    QComboBox* queryChoice_;
    QComboBox* keyChoice_;
    QLabel* sourceNote_;  // where θ and the scaling come from
    QSlider* distance_;
    QLabel* distanceValue_;
    QSlider* start_;
    QLabel* startValue_;
    QSpinBox* firstPair_;
    QSlider* theta_;
    QLabel* thetaValueLabel_;
    QComboBox* scaling_;
    QDoubleSpinBox* factor_;
    QDoubleSpinBox* lowFactor_;
    QDoubleSpinBox* highFactor_;
    QSpinBox* original_;
    QLabel* legend_;
    QLabel* readout_;
    plot::RotaryPairChart* pairCharts_[kLargePairs];
    plot::PairSharesChart* shares_;
    plot::DistanceCurvesChart* rotaryCurves_;
    plot::DistanceCurvesChart* sinusoidalCurves_;
    plot::WavelengthChart* frequencies_;
    double rotaryGap_ = 0, sinusoidalGap_ = 0;
    // The sinusoidal curves depend on the start only (not on θ): kept until it changes.
    int sinusoidalStart_ = -1;
    std::vector<double> sinusoidal_;
};

}  // namespace ae::ui
