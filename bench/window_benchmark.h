#pragma once
// Window latency, measured offscreen: the time from a parameter change to the finished repaint of
// every visible map, for the changes a person makes most (a scaling step, a mask toggle, one
// embedding edit).
#include <vector>

#include "bench/benchmark.h"

namespace ae::ui {

// A BERT-shaped layer (d_model 768, 12 heads, biases, output) over `length` tokens, all 12
// weight maps plus their mean visible in a `width` x `height` grid. Needs a QApplication.
std::vector<cli::LatencyFigures> measureWindowLatency(int length, int samples, int width,
                                                      int height);

}  // namespace ae::ui
