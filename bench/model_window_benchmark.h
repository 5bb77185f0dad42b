#pragma once
// `bench --ui --model`: the window's latency on a whole model (issue 16), offscreen. The
// GPT-2-small-shaped model of `bench --model` is opened in a real MainWindow with every one of
// its 144 heads visible in the model view, and each figure is the time from a change to the
// finished repaint of the view: a text edit (the whole model runs again), and a what-if in
// layer 6 (the explorer's scale, so layers 6 to 11 are redone).
#include <QString>
#include <vector>

#include "bench/benchmark.h"

namespace ae::ui {

// Needs a QApplication. `folder` holds the model (cli::ensureModelBenchFolder writes it).
std::vector<cli::LatencyFigures> measureModelWindowLatency(const QString& folder, int length,
                                                           int samples, int width, int height);

}  // namespace ae::ui
