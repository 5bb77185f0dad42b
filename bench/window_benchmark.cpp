#include "bench/window_benchmark.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QWidget>
#include <algorithm>
#include <functional>

#include "core/init_draw.h"
#include "document/attention_document.h"
#include "plot/heatmap_controller.h"
#include "plot/heatmap_grid.h"
#include "ui/window/document_maps.h"

namespace ae::ui {
namespace {

Scene bertShapedScene(int length) {
    InitSpec spec;
    spec.seed = 2026;
    spec.std = 0.05;
    spec.dModel = 768;
    spec.output = true;
    spec.bias = true;
    Scene scene = drawnScene(spec, length, 12);
    scene.positional.kind = PositionalKind::Sinusoidal;
    return scene;
}

}  // namespace

std::vector<cli::LatencyFigures> measureWindowLatency(int length, int samples, int width,
                                                      int height) {
    // From the sizes alone, before the scene is drawn (positions add no matrix; the window's two
    // undo copies are the embeddings and weights, the same numbers twice more).
    const double sceneNumbers = length * 768.0 + 4.0 * 768 * 768 + 4.0 * 768;
    checkFitsInMemory(selfAttentionEngineBytes(length, 768, 768, 12, 768, sizeof(float)) +
                          2.0 * sceneNumbers * sizeof(double),
                      "two float engines, shown and computing, and three copies of the scene");
    document::AttentionDocument document;
    plot::HeatmapGrid grid;
    DocumentMaps gridFollowsDocument(&document, &grid);
    grid.resize(width, height);
    grid.show();
    document.resetScene(bertShapedScene(length));
    document.waitForResults();
    QCoreApplication::processEvents();

    // Counts finished replots of every visible map since the change.
    std::vector<plot::HeatmapController*> maps;
    for (const plot::HeatmapTile& tile : grid.tiles()) {
        if (tile.controller->widget()->isVisible()) maps.push_back(tile.controller);
    }
    int pending = 0;
    for (plot::HeatmapController* map : maps) {
        QObject::connect(map, &plot::HeatmapController::replotted, map, [&pending] { --pending; });
    }
    auto timeChange = [&](const std::function<void()>& change) {
        QElapsedTimer timer;
        timer.start();
        pending = static_cast<int>(maps.size());
        change();
        // A large scene computes on the worker thread: its result arrives through the event loop.
        document.waitForResults();
        // Queued replots and the paint events they post run in the event loop; the change is on
        // screen when every map has replotted and nothing is left to paint.
        while (pending > 0)
            QCoreApplication::processEvents(QEventLoop::AllEvents);
        QCoreApplication::processEvents(QEventLoop::AllEvents);
        return static_cast<double>(timer.nsecsElapsed()) / 1e6;
    };

    std::vector<cli::LatencyFigures> figures;
    auto measure = [&](const QString& name, const std::function<void(int)>& change) {
        timeChange([&] { change(-1); });  // warm-up
        std::vector<double> times;
        for (int i = 0; i < samples; ++i)
            times.push_back(timeChange([&] { change(i); }));
        figures.push_back(
            {length, name, samples, cli::percentile(times, 0.5), cli::percentile(times, 0.95)});
    };
    // One step of the scaling slider: 100 steps per decade, as the slider has.
    measure("scale", [&](int i) {
        document.setScale({ScaleKind::Divisor, 8.0 * std::pow(10.0, ((i + 1) % 2) / 100.0)});
    });
    measure("mask", [&](int i) {
        Mask mask = document.scene().mask;
        mask.causal = i % 2 == 0;
        document.setMask(mask);
    });
    measure("edit", [&](int i) {
        document.setEmbeddingValue(Stream::Query, length / 2, 0, 0.01 * (i % 7));
    });
    return figures;
}

}  // namespace ae::ui
