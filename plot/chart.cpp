#include "plot/chart.h"

#include "qcustomplot.h"

namespace ae::plot {

Chart::Chart(QWidget* parent) : plot_(new QCustomPlot(parent)) {
    setParent(plot_);
}

QWidget* Chart::widget() const {
    return plot_;
}

void Chart::replot() {
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace ae::plot
