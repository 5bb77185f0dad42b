#pragma once
// Colour maps built from colour stops (QCustomPlot 2.1 has neither viridis nor cividis):
// sequential ones for the weights (0..1), a diverging one for signed matrices, read around 0.

#include <QColor>
#include <QStringList>
#include <optional>
#include <vector>

class QCPColorGradient;

namespace ae::plot {

enum class ColorMap { Viridis, Cividis, Magma, Gray, RdBu };

QCPColorGradient colorGradient(ColorMap map);
// The names used on the command line, in scene files' `view` and in settings.
QString colorMapName(ColorMap map);
std::optional<ColorMap> colorMapFromName(const QString& name);
QStringList colorMapNames();

// ColorBrewer RdBu: negative red, 0 white, positive blue. Meant for a range symmetric about 0.
QCPColorGradient divergingGradient();
// The entropy strip: white (a focused row, 0 bits) to light slate (uniform attention),
// light throughout so its numbers stay dark on light.
QCPColorGradient entropyGradient();

// The colour `map` gives `value` on the range low..high, as a heatmap paints it.
QColor gradientColor(ColorMap map, double value, double low, double high);
// The same for many values, from one gradient: it builds its table of colours once.
std::vector<QColor> gradientColors(ColorMap map, const std::vector<double>& values, double low,
                                   double high);

}  // namespace ae::plot
