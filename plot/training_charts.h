#pragma once
// The training dock's charts: the loss falling step by step, and a score of every head of a small
// model over the steps (previous-token, induction), where a head forming shows as one line
// jumping.

#include <QStringList>

#include "plot/chart.h"

namespace ae::plot {

// The loss against the step, on a log axis: the loss spans decades, and its fall is what a class
// watches.
class LossChart : public Chart {
    Q_OBJECT
public:
    explicit LossChart(QWidget* parent = nullptr);

    // No points; redrawn.
    void clear();
    // Not redrawn: add a snapshot's losses, then fitToPoints().
    void addLoss(int step, double loss);
    int pointCount() const;
    // Both axes to the points; redrawn.
    void fitToPoints();
};

// One line per head (x the step, y a score from 0 to 1), with the legend beside the plot rather
// than over it: the lines rise into every corner as heads form.
class HeadScoreChart : public Chart {
    Q_OBJECT
public:
    HeadScoreChart(const QString& scoreName, QWidget* parent = nullptr);

    // One empty line per name, in order, over the steps 0 to 1; redrawn.
    void setHeads(const QStringList& names);
    int headCount() const;
    // Not redrawn: add a snapshot's scores, then highlightHighest() and showSteps().
    void addScore(int head, int step, double score);
    // The `labelled` heads highest at their latest point get a colour each and the legend, and
    // are drawn over the rest, which are thin and grey.
    void highlightHighest(int labelled);
    // The x axis from step 0 to `lastStep` (at least 1); redrawn.
    void showSteps(int lastStep);
};

}  // namespace ae::plot
