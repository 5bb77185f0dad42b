#pragma once
// Colour maps built from colour stops (QCustomPlot 2.1 has neither viridis nor cividis):
// sequential ones for the weights (0..1), a diverging one for signed matrices, read around 0.

#include "qcustomplot.h"

namespace ae::ui {

enum class SequentialMap { Viridis, Cividis };

QCPColorGradient sequentialGradient(SequentialMap map);
// ColorBrewer RdBu: negative red, 0 white, positive blue. Meant for a range symmetric about 0.
QCPColorGradient divergingGradient();
// The entropy strip: white (a focused row, 0 bits) to light slate (uniform attention),
// light throughout so its numbers stay dark on light.
QCPColorGradient entropyGradient();

}  // namespace ae::ui
