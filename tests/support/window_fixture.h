#pragma once
// Shared by the main window's tests (test_window, test_window_screen): the window each test
// starts from and the wait for its queued work.

#include <QApplication>
#include <QCoreApplication>
#include <QFont>
#include <QSettings>
#include <QStandardPaths>
#include <QtTest>
#include <memory>

#include "plot/heatmap_controller.h"
#include "plot/heatmap_grid.h"
#include "ui/window/main_window.h"

namespace ae::test {

// Once per test executable: test-mode settings and the UI font.
inline void startWindowTests() {
    QStandardPaths::setTestModeEnabled(true);
    QApplication::setFont(QFont(QStringLiteral("DejaVu Sans"), 9));
}

// A first start: no settings (a test that opens the walkthrough, which switches the view to one
// head, or moves the window must not leave that to the next), the default scene at 1400x900,
// shown (the caller waits for it to be exposed).
inline std::unique_ptr<ui::MainWindow> firstStartWindow() {
    QSettings().clear();
    auto window = std::make_unique<ui::MainWindow>();
    window->resize(1400, 900);
    window->openPreset(QStringLiteral("default"));
    window->show();
    return window;
}

// Queued work runs and every map paints now, so that the axes know their pixels.
inline void settleWindow(ui::MainWindow& window) {
    QCoreApplication::processEvents();
    QTest::qWait(20);
    for (const plot::HeatmapTile& t : window.grid()->tiles())
        t.controller->replotNow();
}

}  // namespace ae::test
