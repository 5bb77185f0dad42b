#pragma once
// What presentation mode (ui/window/presentation_mode.h) does to every plot under a widget, maps
// and charts alike: their fonts, which a plot copies once when it is made and so never follow
// the application font, and the high-contrast look of their axes.

class QWidget;

namespace ae::plot {

// Scales the fonts of every plot under `root` to `factor` times their size at scale 1, and
// redraws them. Each plot remembers the factor its fonts were made at, so a plot made while
// scaled is never scaled twice; one never scaled was made at `previous`. With `highContrast` the
// bold tick labels are made again from the new fonts.
void scalePlotFonts(QWidget* root, double previous, double factor, bool highContrast);
// Black, thicker axes and black labels on every plot under `root` (or the normal ones back), and
// redraws them: grey hairlines vanish on a washed-out projector.
void setPlotsHighContrast(QWidget* root, bool on);
// Whether `widget` is a plot: its fonts are scaled by scalePlotFonts, not by their owner.
bool isPlot(const QWidget* widget);

}  // namespace ae::plot
