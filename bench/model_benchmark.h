#pragma once
// `attention-explorer bench --model`: the whole-model forward pass (core/model/model.h) on a
// model in a real checkpoint's shape (GPT-2 small unless --shape names another) with random
// weights, opened through the real model-folder reader.

#include <QJsonObject>
#include <QString>
#include <QStringList>
#include <vector>

namespace ae::cli {

// Writes the model once to `cacheFolder` (reused while its config and file size match), then
// prints one JSON line per length: the median full pass, the open time, the peak resident memory
// of that run and what it should be near (the weights plus the kept maps); then the GFLOP of a
// pass at each length and the same-run SGEMM rate. Throws std::invalid_argument for bad input.
// A shape other than the first adds its name to each length's line ("shape").
int modelBenchmark(const std::vector<int>& sizes, int reps, const QString& cacheFolder,
                   const QString& shape = QStringLiteral("gpt2-small"));

// `bench --workbench`: a per-head activation patching sweep (head outputs and patterns, 2·L·H
// patched runs, core/model/workbench.h) on the GPT-2-small shape at each length, against the
// naive way, one full rerun per patched run (2·L·H times the median of `reps` full runs, timed in
// the same process): one JSON line per length, then the same-run SGEMM rate.
int workbenchBenchmark(const std::vector<int>& sizes, int reps, const QString& cacheFolder);

// The shapes --shape takes: gpt2-small (the default), qwen2.5-0.5b, pythia-410m.
QStringList modelBenchShapes();

// Writes the model of shape `shape` to `cacheFolder` unless a complete one is there; prints a
// JSON line when it writes. Throws std::invalid_argument when it cannot, or for an unknown shape.
void ensureModelBenchFolder(const QString& cacheFolder,
                            const QString& shape = QStringLiteral("gpt2-small"));

// The folder bench --model uses for `shape` unless --cache-dir says otherwise:
// $XDG_CACHE_HOME (or ~/.cache)/attention-explorer/bench-SHAPE.
QString defaultModelBenchFolder(const QString& shape = QStringLiteral("gpt2-small"));

// The machine's float matrix-product speed, as `bench` quotes it: a 2048³ product on every core,
// median of reps, through Eigen (sgemm_eigen_gflops) and through OpenBLAS (sgemm_blas_gflops, when
// the build has it); sgemm_gflops is the better of the two, against which every "% of SGEMM" is
// measured; `products` names what the engine multiplies with.
QJsonObject sgemmRates(int reps);

}  // namespace ae::cli
