#pragma once
// The charts of the rotary positions view (ui/classroom/rotary_view.h): one frequency pair of q
// and k as arrows in a plane, every pair's share of q·k as bars, q·k over the distance for two
// starting positions, and each pair's wavelength. They draw what they are given; the view says
// what it is.

#include <QColor>
#include <QPointF>
#include <QString>
#include <QVector>
#include <optional>
#include <vector>

#include "plot/chart.h"

class QCPBars;
class QCPCurve;
class QCPItemLine;
class QCPItemStraightLine;
class QCPItemText;
class QCPTextElement;

namespace ae::plot {

// Okabe–Ito blue and vermillion: apart for every kind of colour vision, and on a projector. The
// query's arrows and the first curve, the key's arrows and the second curve.
inline const QColor kRotaryQueryColour(0, 114, 178);
inline const QColor kRotaryKeyColour(213, 94, 0);

// One pair (columns i and i + d/2) of a query and a key: each as an arrow before turning (dashed)
// and turned (solid) on the circle of its length, with equal units on both axes, whatever the
// shape of the plot: a turn must look like a turn.
class RotaryPairChart : public Chart {
    Q_OBJECT
public:
    explicit RotaryPairChart(QWidget* parent = nullptr);

    void setTitle(const QString& title);
    // Redrawn.
    void showArrows(QPointF queryBefore, QPointF keyBefore, QPointF query, QPointF key);
    // Where the turned arrows end, read back from the plot.
    QPointF drawnQueryTip() const;
    QPointF drawnKeyTip() const;
    // The q and k beside the tips are sized from the application font, which presentation mode
    // scales; the plot's own fonts it scales itself. Call on a font change.
    void updateLabelFonts();

private:
    void keepSquare();

    QCPTextElement* title_;
    QCPCurve* queryCircle_;
    QCPCurve* keyCircle_;
    QCPItemLine* queryGhost_;  // before rotation (position 0)
    QCPItemLine* keyGhost_;
    QCPItemLine* query_;
    QCPItemLine* key_;
    QCPItemText* queryLabel_;
    QCPItemText* keyLabel_;
    double radius_ = 1.0;  // what the axes must show around the origin
};

// Every pair's share of q·k, one bar per pair; the pairs drawn large dark, the rest grey.
class PairSharesChart : public Chart {
    Q_OBJECT
public:
    explicit PairSharesChart(QWidget* parent = nullptr);

    void setTitle(const QString& title);
    // Bar i is shares[i]; pairs firstShown … firstShown + shownCount − 1 are dark. The y axis is
    // symmetric about 0. Redrawn.
    void showShares(const std::vector<double>& shares, int firstShown, int shownCount);

private:
    QCPTextElement* title_;
    QCPBars* shown_;
    QCPBars* others_;
};

// q·k over the distance m − n from −maxDistance to maxDistance, for two starts: the first curve
// solid, the second dashed, and a dotted line with a ring where the slider's distance is.
class DistanceCurvesChart : public Chart {
    Q_OBJECT
public:
    explicit DistanceCurvesChart(int maxDistance, QWidget* parent = nullptr);

    void setTitle(const QString& title);
    // One value of each curve per distance in `distances`; the y axis fits both. Redrawn.
    void showCurves(const QVector<double>& distances, const std::vector<double>& first,
                    const std::vector<double>& second);
    // The line at `distance`, and the ring on the first curve there. Redrawn.
    void markDistance(int distance);
    // The (distance, q·k) points of a curve (0: the first, 1: the second), read from the plot.
    QVector<QPointF> drawnCurve(int curve) const;

private:
    int maxDistance_;
    QCPTextElement* title_;
    QCPItemStraightLine* marker_;
};

// Llama 3's scaling leaves wavelengths below `shortest` and stretches those above `longest`.
struct WavelengthLimits {
    double shortest = 0;
    double longest = 0;
    QString shortestText, longestText;
};

// Each pair's wavelength (tokens per full turn) on a log axis: before the scaling (grey) and with
// it (blue), and Llama 3's two limits as dashed lines when given.
class WavelengthChart : public Chart {
    Q_OBJECT
public:
    explicit WavelengthChart(QWidget* parent = nullptr);

    void setTitle(const QString& title);
    // One value per pair in each. Redrawn.
    void showWavelengths(const std::vector<double>& original, const std::vector<double>& scaled,
                         const std::optional<WavelengthLimits>& limits);
    // The (pair, wavelength) points of a curve (0: original, 1: with the scaling).
    QVector<QPointF> drawnCurve(int curve) const;
    // The limits' labels are sized from the application font: call on a font change.
    void updateLabelFonts();

private:
    QCPTextElement* title_;
    QCPItemStraightLine* shortLimit_;
    QCPItemStraightLine* longLimit_;
    QCPItemText* shortLimitLabel_;
    QCPItemText* longLimitLabel_;
};

}  // namespace ae::plot
