#pragma once
// `attention-explorer bench --model`: the whole-model forward pass (core/model/model.h) on a
// GPT-2-small-shaped model with random weights, opened through the real model-folder reader.

#include <QString>
#include <vector>

namespace ae::cli {

// Writes the model once to `cacheFolder` (reused while its config and file size match), then
// prints one JSON line per length: the median full pass, the open time, the peak resident memory
// of that run and what it should be near (the weights plus the kept maps); then the GFLOP of a
// pass at each length and the same-run SGEMM rate. Throws std::invalid_argument for bad input.
int modelBenchmark(const std::vector<int>& sizes, int reps, const QString& cacheFolder);

// Writes the GPT-2-small-shaped model to `cacheFolder` unless a complete one is there; prints a
// JSON line when it writes. Throws std::invalid_argument when it cannot.
void ensureModelBenchFolder(const QString& cacheFolder);

// The folder bench --model uses unless --cache-dir says otherwise:
// $XDG_CACHE_HOME (or ~/.cache)/attention-explorer/bench-gpt2-small.
QString defaultModelBenchFolder();

// The matrix-product speed `bench` quotes: a 2048³ float product on every core, median of reps.
double sgemmGflops(int reps);

}  // namespace ae::cli
