#pragma once
// Shared by the window's classroom tests (test_classroom, test_presentation): the window each test
// starts from and the wait for its queued work.

#include <QApplication>
#include <QCoreApplication>
#include <QFont>
#include <QSettings>
#include <QStandardPaths>
#include <QtTest>
#include <memory>

#include "ui/window/main_window.h"

namespace ae::test {

// Queued layout and compute work runs: two event passes around a short wait.
inline void settleClassroom() {
    QCoreApplication::processEvents();
    QTest::qWait(30);
    QCoreApplication::processEvents();
}

// Once per test executable: test-mode settings, the UI font, no saved presentation scale.
inline void startClassroomTests() {
    QStandardPaths::setTestModeEnabled(true);
    QApplication::setFont(QFont(QStringLiteral("DejaVu Sans"), 9));
    QSettings().remove(QStringLiteral("presentation/fontScale"));
}

// The window each test starts from: fresh settings (the docks' sizes, the view and the stage a
// test left would shape the next one's window, even in the next run), the default scene at
// 1500x950, shown (the caller waits for it to be exposed and makes it active).
inline std::unique_ptr<ui::MainWindow> classroomWindow() {
    QSettings().clear();
    auto window = std::make_unique<ui::MainWindow>();
    window->resize(1500, 950);
    window->openPreset(QStringLiteral("default"));
    window->show();
    return window;
}

inline void forgetPresentationScale() {
    QSettings().remove(QStringLiteral("presentation/fontScale"));
}

}  // namespace ae::test
