#include "bench/model_window_benchmark.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>

#include "document/attention_document.h"
#include "document/model_session.h"
#include "plot/head_grid.h"
#include "plot/model_view.h"
#include "ui/window/main_window.h"

namespace ae::ui {

std::vector<cli::LatencyFigures> measureModelWindowLatency(const QString& folder, int length,
                                                           int samples, int width, int height) {
    MainWindow window;
    window.resize(width, height);
    window.show();
    document::ModelSession* session = window.modelSession();
    plot::ModelView* view = window.modelView();
    document::AttentionDocument* document = window.document();
    std::vector<long long> ids(static_cast<std::size_t>(length));
    for (int i = 0; i < length; ++i)
        ids[static_cast<std::size_t>(i)] = (7 * i + 3) % 50000;
    session->open(folder, {}, ids);
    session->waitUntilIdle();
    if (!session->isOpen() || !session->currentRun())
        throw std::invalid_argument("bench --ui --model: " + folder.toStdString() + ": " +
                                    session->problemText().toStdString());
    QCoreApplication::processEvents();

    // The change is on screen when the session has nothing under way, the document's engine has
    // its result, the events it posted have run, and the grid of every head has been painted
    // (repaint() paints at once; it is counted in the figure). The induction scores follow on
    // the worker (a pass on the text repeated): their own figure, from the same change.
    double followUpMs = 0;
    auto timeChange = [&](const std::function<void()>& change) {
        QElapsedTimer timer;
        timer.start();
        change();
        for (int settle = 0; settle < 2; ++settle) {
            document->waitForResults();
            session->waitUntilIdle(false);
            QCoreApplication::processEvents(QEventLoop::AllEvents);
        }
        view->grid()->repaint();
        const double shownMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
        session->waitUntilIdle(true);
        QCoreApplication::processEvents(QEventLoop::AllEvents);
        view->grid()->repaint();
        followUpMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
        return shownMs;
    };
    std::vector<cli::LatencyFigures> figures;
    auto measure = [&](const QString& name, const QString& followUpName,
                       const std::function<void(int)>& change) {
        timeChange([&] { change(-1); });  // warm-up
        std::vector<double> times, followUps;
        for (int i = 0; i < samples; ++i) {
            times.push_back(timeChange([&] { change(i); }));
            followUps.push_back(followUpMs);
        }
        figures.push_back(
            {length, name, samples, cli::percentile(times, 0.5), cli::percentile(times, 0.95)});
        if (!followUpName.isEmpty()) {
            figures.push_back({length, followUpName, samples, cli::percentile(followUps, 0.5),
                               cli::percentile(followUps, 0.95)});
        }
    };
    // A text edit: one token replaced, so every layer and head runs again.
    measure("model text edit", "model text edit with induction", [&](int i) {
        std::vector<long long> edited = ids;
        edited[static_cast<std::size_t>(length / 2)] = 1000 + (i + 1) % 2;
        session->setIds(edited);
    });
    // A what-if in layer 6: one step of the explorer's scaling slider on the open layer.
    timeChange([&] { session->openHead(6, 0); });
    if (session->layer() != 6)
        throw std::invalid_argument("bench --ui --model: layer 6 did not open: " +
                                    session->problemText().toStdString());
    measure("model what-if layer 6", {}, [&](int i) {
        document->setScale({ScaleKind::Divisor, 8.0 * std::pow(10.0, ((i + 1) % 2) / 100.0)});
    });
    return figures;
}

}  // namespace ae::ui
