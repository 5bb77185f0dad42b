#include "bench/benchmark.h"

#include <QCommandLineParser>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <vector>

#include "bench/model_benchmark.h"
#include "core/attention_engine.h"
#include "core/gemm.h"
#include "core/init_draw.h"
#include "core/parallel_product.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace ae::cli {
namespace {

double medianMilliseconds(int reps, const std::function<void()>& work) {
    work();  // warm-up: first-touch allocations are not what is measured
    std::vector<double> times;
    for (int r = 0; r < reps; ++r) {
        const auto start = std::chrono::steady_clock::now();
        work();
        times.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count());
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

// The same layer as the NumPy peer: X ~ N(0,1), W ~ N(0,1)/sqrt(d), no biases, an output
// projection.
Scene benchmarkScene(int length, int d, int heads) {
    InitSpec spec;
    spec.seed = 0;
    spec.std = 1.0;
    spec.output = true;
    SplitMix64 rng(spec.seed);
    Scene scene;
    for (int i = 0; i < length; ++i)
        scene.tokens.push_back("t" + std::to_string(i));
    scene.embeddings = drawMatrix(rng, spec, length, d);
    spec.std = 1.0 / std::sqrt(static_cast<double>(d));
    scene.projections = drawProjections(rng, spec, d);
    scene.heads = heads;
    return scene;
}

QByteArray jsonLine(const QJsonObject& object) {
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

}  // namespace

double percentile(std::vector<double> values, double p) {
    std::sort(values.begin(), values.end());
    const size_t index = std::min(values.size() - 1, static_cast<size_t>(p * values.size()));
    return values[index];
}

QJsonObject sgemmRates(int reps) {
    const int n = 2048;
    using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const Matrix a = Matrix::Random(n, n), b = Matrix::Random(n, n);
    Matrix c(n, n);
    const double multiplyAdds = double(n) * n * n;
    auto gflops = [&](double ms) {
        return std::round(2.0 * multiplyAdds / (ms * 1e6) * 10.0) / 10.0;
    };
    // Eigen's own product, one block of rows per core, as the engine ran its products before
    // OpenBLAS.
    const double eigen = gflops(medianMilliseconds(reps, [&] {
#pragma omp parallel
        {
#ifdef _OPENMP
            const int thread = omp_get_thread_num(), threads = omp_get_num_threads();
#else
            const int thread = 0, threads = 1;
#endif
            const int begin = n * thread / threads, end = n * (thread + 1) / threads;
            c.middleRows(begin, end - begin).noalias() = a.middleRows(begin, end - begin) * b;
        }
    }));
    QJsonObject rates{{"sgemm_eigen_gflops", eigen},
                      {"products", QString::fromStdString(gemm::description())}};
    double best = eigen;
    if (gemm::usesBlas()) {
        // One call with OpenBLAS's own threads, as NumPy makes it: the machine's best rate.
        const double blas = gflops(medianMilliseconds(reps, [&] {
            gemm::multiply<float>(n, n, n, gemm::operand(a), gemm::operand(b), c.data(), n, false);
        }));
        rates["sgemm_blas_gflops"] = blas;
        best = std::max(best, blas);
    }
    rates["sgemm_gflops"] = best;
    return rates;
}

int benchCommand(const QStringList& arguments, const WindowLatencyMeasure& measureWindow,
                 const ModelWindowLatencyMeasure& measureModelWindow) {
    QCommandLineParser parser;
    parser.setApplicationDescription("Benchmark the engine (float) against nothing but itself.");
    parser.addHelpOption();
    parser.addOption({"sizes", "Sequence lengths L, comma-separated.", "list", "64,512,2048"});
    parser.addOption({"d", "Model width d.", "d", "768"});
    parser.addOption({"heads", "Number of heads.", "n", "12"});
    parser.addOption({"reps", "Timed repetitions per figure (median).", "n", "7"});
    parser.addOption({"ui", "Measure the window instead: change-to-repaint latency, offscreen."});
    parser.addOption(
        {"n", "With --ui: changes measured per figure (at least 50; 30 with --model).", "n", "60"});
    parser.addOption({"model",
                      "Measure a whole model instead (random weights in a real checkpoint's "
                      "shape, written once to the cache folder): the forward pass keeping every "
                      "head."});
    parser.addOption({"workbench",
                      "Time a per-head activation patching sweep (outputs and patterns) on the "
                      "GPT-2-small-shaped model of --model, against one full rerun per patch."});
    parser.addOption(
        {"shape", "With --model: the checkpoint's shape, " + modelBenchShapes().join(", ") + ".",
         "name", QStringLiteral("gpt2-small")});
    parser.addOption({"cache-dir",
                      "With --model: where the model is written and reused (default: "
                      "bench-SHAPE in the cache folder).",
                      "dir"});
    if (!parser.parse(arguments))
        throw std::invalid_argument("bench: " + parser.errorText().toStdString());
    if (parser.isSet("help")) {
        std::fputs(parser.helpText().toLocal8Bit().constData(), stdout);
        return 0;
    }
    auto positive = [&](const QString& text, const char* what) {
        bool good = false;
        const int value = text.toInt(&good);
        if (!good || value < 1)
            throw std::invalid_argument(std::string("bench: --") + what +
                                        ": expected a positive integer, got " + text.toStdString());
        return value;
    };
    const int d = positive(parser.value("d"), "d");
    const int heads = positive(parser.value("heads"), "heads");
    const int reps = positive(parser.value("reps"), "reps");
    if (d % heads != 0) throw std::invalid_argument("bench: --heads must divide --d");
    std::vector<int> sizes;
    for (const QString& s : parser.value("sizes").split(','))
        sizes.push_back(positive(s, "sizes"));

    const QString modelFolder = parser.isSet("cache-dir")
                                    ? parser.value("cache-dir")
                                    : defaultModelBenchFolder(parser.value("shape"));
    if (parser.isSet("shape") && !parser.isSet("model"))
        throw std::invalid_argument("bench: --shape is for --model");
    if (parser.isSet("workbench")) {
        if (parser.isSet("ui") || parser.isSet("shape"))
            throw std::invalid_argument("bench: --workbench takes --sizes, --reps and --cache-dir");
        return workbenchBenchmark(parser.isSet("sizes") ? sizes : std::vector<int>{16, 64},
                                  parser.isSet("reps") ? reps : 5, modelFolder);
    }
    if (parser.isSet("model") && !parser.isSet("ui")) {
        std::vector<int> modelSizes{128, 512, 1024};
        if (parser.isSet("sizes")) modelSizes = sizes;
        const int modelReps = parser.isSet("reps") ? reps : 5;
        return modelBenchmark(modelSizes, modelReps, modelFolder, parser.value("shape"));
    }
    if (parser.isSet("ui")) {
        const int samples = positive(parser.value("n"), "n");
        const int fewest = parser.isSet("model") ? 30 : 50;
        if (samples < fewest)
            throw std::invalid_argument("bench: --n: at least " + std::to_string(fewest) +
                                        " changes per figure");
        const bool model = parser.isSet("model");
        if (model && !measureModelWindow)
            throw std::invalid_argument("bench: --ui --model needs the window");
        if (model && parser.isSet("shape"))
            throw std::invalid_argument("bench: --ui --model measures gpt2-small only");
        if (model) ensureModelBenchFolder(modelFolder);
        const QString uiSizes = parser.isSet("sizes") ? parser.value("sizes")
                                : model               ? QStringLiteral("128")
                                                      : QStringLiteral("128,512");
        for (const QString& s : uiSizes.split(',')) {
            const int length = positive(s, "sizes");
            const std::vector<LatencyFigures> measured =
                model ? measureModelWindow(modelFolder, length, samples)
                      : measureWindow(length, samples);
            for (const LatencyFigures& f : measured) {
                const QJsonObject line{{"L", f.length},
                                       {"change", f.change},
                                       {"n", f.samples},
                                       {"p50_ms", std::round(f.p50Ms * 1000.0) / 1000.0},
                                       {"p95_ms", std::round(f.p95Ms * 1000.0) / 1000.0}};
                std::printf("%s\n", jsonLine(line).constData());
                std::fflush(stdout);
            }
        }
        return 0;
    }
    // Every size is checked before the first is measured, from the sizes alone: nothing is drawn
    // or timed for a list that ends in a size this machine cannot hold.
    for (int length : sizes) {
        try {
            checkFitsInMemory(selfAttentionEngineBytes(length, d, d, heads, d, sizeof(float)),
                              "the layer in float");
        } catch (const SceneError& error) {
            throw std::invalid_argument("bench: --sizes " + std::to_string(length) + ": " +
                                        error.what());
        }
    }
    for (int length : sizes) {
        const Scene scene = benchmarkScene(length, d, heads);
        AttentionEngine<float> engine(scene);
        engine.compute();
        QJsonObject line{{"L", length}, {"d", d}, {"heads", heads}};
        line["full_ms"] = medianMilliseconds(reps, [&] {
            engine.invalidateAll();
            engine.compute();
        });
        int step = 0;
        line["rescale_ms"] = medianMilliseconds(reps, [&] {
            engine.setScale({ScaleKind::Divisor, 1.5 + 0.1 * (++step % 2)});
            engine.compute();
        });
        line["mask_ms"] = medianMilliseconds(reps, [&] {
            Mask mask;
            mask.causal = (++step % 2) == 0;
            engine.setMask(mask);
            engine.compute();
        });
        const int otherHeads = heads % 2 == 0 ? heads / 2 : 1;
        line["heads_ms"] = medianMilliseconds(reps, [&] {
            engine.setHeads((++step % 2) ? otherHeads : heads);
            engine.compute();
        });
        engine.setHeads(heads);
        engine.compute();
        line["edit_ms"] = medianMilliseconds(reps, [&] {
            engine.setEmbeddingValue(Stream::Query, length / 2, 0, 0.25 * (++step % 4));
            engine.compute();
        });
        for (const char* key : {"full_ms", "rescale_ms", "mask_ms", "heads_ms", "edit_ms"}) {
            line[key] = std::round(line[key].toDouble() * 1000.0) / 1000.0;
        }
        std::printf("%s\n", jsonLine(line).constData());
        std::fflush(stdout);
    }
    std::printf("%s\n", jsonLine(sgemmRates(reps)).constData());
    return 0;
}

}  // namespace ae::cli
