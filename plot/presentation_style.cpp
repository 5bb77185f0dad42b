#include "plot/presentation_style.h"

#include <set>

#include "qcustomplot.h"

namespace ae::plot {
namespace {

const char* const kPlotScaleProperty = "aeFontScale";

QFont scaled(QFont font, double ratio) {
    font.setPointSizeF(font.pointSizeF() * ratio);
    return font;
}

// Every element the plot owns, in its layout or not: presentation mode takes the maps' own colour
// bars out of their layouts (one bar serves the grid), and a bar scaled only while in a layout
// kept its large labels after presentation mode.
void scaleFonts(QCustomPlot* plot, double ratio) {
    std::set<QCPAxis*> axes;  // a colour bar's axis is also its private axis rect's
    for (QCPTextElement* text : plot->findChildren<QCPTextElement*>())
        text->setFont(scaled(text->font(), ratio));
    for (QCPAxisRect* rect : plot->findChildren<QCPAxisRect*>()) {
        for (QCPAxis* axis : rect->axes())
            axes.insert(axis);
    }
    for (QCPColorScale* bar : plot->findChildren<QCPColorScale*>())
        axes.insert(bar->axis());
    for (QCPLegend* legend : plot->findChildren<QCPLegend*>())
        legend->setFont(scaled(legend->font(), ratio));
    for (QCPAxis* axis : axes) {
        axis->setTickLabelFont(scaled(axis->tickLabelFont(), ratio));
        axis->setLabelFont(scaled(axis->labelFont(), ratio));
    }
}

void contrast(QCustomPlot* plot, bool on) {
    const QPen pen(QColor(0, 0, 0), on ? 2.0 : 0.0);
    const QColor label = on ? QColor(0, 0, 0) : QColor(90, 90, 90);
    for (QCPAxisRect* rect : plot->axisRects()) {
        for (QCPAxis* axis : rect->axes()) {
            axis->setBasePen(pen);
            axis->setTickPen(pen);
            axis->setLabelColor(label);
            axis->setTickLabelColor(QColor(0, 0, 0));
            QFont font = axis->tickLabelFont();
            font.setBold(on);
            axis->setTickLabelFont(font);
        }
    }
}

}  // namespace

void scalePlotFonts(QWidget* root, double previous, double factor, bool highContrast) {
    const QList<QCustomPlot*> plots = root->findChildren<QCustomPlot*>();
    for (QCustomPlot* plot : plots) {
        const QVariant made = plot->property(kPlotScaleProperty);
        const double from = made.isValid() ? made.toDouble() : previous;
        scaleFonts(plot, factor / from);
        plot->setProperty(kPlotScaleProperty, factor);
    }
    for (QCustomPlot* plot : plots) {
        if (highContrast) contrast(plot, true);
        plot->replot(QCustomPlot::rpQueuedReplot);
    }
}

void setPlotsHighContrast(QWidget* root, bool on) {
    for (QCustomPlot* plot : root->findChildren<QCustomPlot*>()) {
        contrast(plot, on);
        plot->replot(QCustomPlot::rpQueuedReplot);
    }
}

bool isPlot(const QWidget* widget) {
    return qobject_cast<const QCustomPlot*>(widget) != nullptr;
}

}  // namespace ae::plot
