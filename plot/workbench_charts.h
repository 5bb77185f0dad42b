#pragma once
// The workbench's small charts beside its maps (plot/effect_map.h): lines across the layers (the
// logit lens's target probabilities), bars that add up (direct logit attribution's parts and
// their sum) and a histogram with a reference line (composition scores against random weights).

#include <QStringList>
#include <utility>
#include <vector>

#include "plot/chart.h"

namespace ae::plot {

class LineChart : public Chart {
    Q_OBJECT
public:
    explicit LineChart(QWidget* parent = nullptr);
    // One line a series, named, over the points 0..n−1 labelled `xLabels`.
    void setLines(const QString& title, const QStringList& xLabels, const QString& yLabel,
                  const std::vector<std::pair<QString, std::vector<double>>>& series);
    void clear();
    int lineCount() const;
    double pointValue(int line, int point) const;  // tests
};

class BarChart : public Chart {
    Q_OBJECT
public:
    explicit BarChart(QWidget* parent = nullptr);
    // One bar a category; `highlighted` bars (indices) are drawn in the accent colour.
    void setBars(const QString& title, const QStringList& categories,
                 const std::vector<double>& values, const QString& yLabel,
                 const std::vector<int>& highlighted = {});
    // A dashed vertical line at `x` (in bar positions, 0 the first) with a label.
    void markVertical(double x, const QString& label);
    void clear();
    int barCount() const { return static_cast<int>(values_.size()); }
    double barValue(int bar) const { return values_.at(static_cast<std::size_t>(bar)); }
    QStringList categories() const { return categories_; }

private:
    std::vector<double> values_;
    QStringList categories_;
};

}  // namespace ae::plot
