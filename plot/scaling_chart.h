#pragma once
// Why divide by √d_k: the scaling study (core/scaling_study.h) over d_k in three panels side by
// side: the variance of the scores, the mean largest weight and the mean row entropy, each
// without the scaling (red, dashed) and with it (blue).

#include <QPointF>
#include <QVector>
#include <vector>

#include "core/scaling_study.h"
#include "plot/chart.h"

namespace ae::plot {

class ScalingChart : public Chart {
    Q_OBJECT
public:
    // The study's points, computed on `tokens` tokens (the entropy of uniform attention over
    // them is drawn as a guide).
    ScalingChart(const std::vector<ScalingPoint>& points, int tokens, QWidget* parent = nullptr);

    // The (d_k, value) points drawn for one curve (0: raw variance, 1: scaled variance), read
    // from the plot.
    QVector<QPointF> drawnCurve(int curve) const;
};

}  // namespace ae::plot
