#pragma once
// `attention-explorer bench`: the engine's speed, and through a measurement the caller passes in,
// the window's. The engine half needs only core/; the window half lives in window_benchmark.* and
// the dispatcher (app/command_line.cpp) hands it over, so this code never links the widgets.
#include <QString>
#include <QStringList>
#include <functional>
#include <vector>

namespace ae::cli {

// One figure of the window's latency: a change of one kind at one length.
struct LatencyFigures {
    int length = 0;
    QString change;
    int samples = 0;
    double p50Ms = 0, p95Ms = 0;
};

// The value below which a share `p` (0 to 1) of `values` lies: the window benchmarks' p50 and p95.
double percentile(std::vector<double> values, double p);

// Measures the window at `length` tokens, `samples` changes per figure.
using WindowLatencyMeasure = std::function<std::vector<LatencyFigures>(int length, int samples)>;
// Measures the window with the model in `folder` open, at `length` tokens.
using ModelWindowLatencyMeasure =
    std::function<std::vector<LatencyFigures>(const QString& folder, int length, int samples)>;

// Medians of the engine's full pass and of each cached change, one JSON line per size, then the
// machine's float matrix-product speed; with --ui, the window's latency through `measureWindow`
// (and with --ui --model, through `measureModelWindow` on the model bench --model writes).
// Throws std::invalid_argument for bad arguments.
int benchCommand(const QStringList& arguments, const WindowLatencyMeasure& measureWindow,
                 const ModelWindowLatencyMeasure& measureModelWindow = {});

}  // namespace ae::cli
