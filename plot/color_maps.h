#pragma once
// Colour maps built from colour stops (QCustomPlot 2.1 has neither viridis nor cividis):
// sequential ones for the weights (0..1), a diverging one for signed matrices, read around 0.

#include <QStringList>
#include <optional>

#include "qcustomplot.h"

namespace ae::ui {

enum class ColorMap { Viridis, Cividis, Magma, Gray, RdBu };

QCPColorGradient colorGradient(ColorMap map);
// The names used on the command line, in scene files' `view` and in settings.
QString colorMapName(ColorMap map);
std::optional<ColorMap> colorMapFromName(const QString& name);
QStringList colorMapNames();

// ColorBrewer RdBu: negative red, 0 white, positive blue. Meant for a range symmetric about 0.
inline QCPColorGradient divergingGradient() {
    return colorGradient(ColorMap::RdBu);
}
// The entropy strip: white (a focused row, 0 bits) to light slate (uniform attention),
// light throughout so its numbers stay dark on light.
QCPColorGradient entropyGradient();

}  // namespace ae::ui
