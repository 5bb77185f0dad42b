#pragma once
// Window latency, measured offscreen: the time from a parameter change to the finished repaint of
// every visible map, for the changes a person makes most (a scaling step, a mask toggle, one
// embedding edit).
#include <QString>
#include <vector>

namespace ae::ui {

struct LatencyFigures {
    int length = 0;
    QString change;
    int samples = 0;
    double p50Ms = 0, p95Ms = 0;
};

// A BERT-shaped layer (d_model 768, 12 heads, biases, output) over `length` tokens, all 12
// weight maps plus their mean visible in a `width` x `height` grid. Needs a QApplication.
std::vector<LatencyFigures> measureWindowLatency(int length, int samples, int width, int height);

}  // namespace ae::ui
