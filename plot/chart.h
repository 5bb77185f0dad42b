#pragma once
// A chart: one QCustomPlot that the rest of the window fills by name (series, titles, axis ranges,
// markers) and places as a plain widget. The plotting library stays inside plot/: a view outside
// it holds a chart and its widget(), never the plot.

#include <QObject>

class QCustomPlot;
class QWidget;

namespace ae::plot {

class Chart : public QObject {
    Q_OBJECT
public:
    // Creates the plot as a child of `parent`; the chart is the plot's child and dies with it.
    explicit Chart(QWidget* parent = nullptr);

    // The plot as a widget: for layouts, sizes, names and visibility.
    QWidget* widget() const;
    // The plot itself, for tests that read what it holds.
    QCustomPlot* plot() const { return plot_; }
    // Queued: a burst of changes paints once.
    void replot();

protected:
    QCustomPlot* plot_;
};

}  // namespace ae::plot
