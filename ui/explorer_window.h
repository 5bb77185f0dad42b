#pragma once
#include <QString>

namespace ae::ui {
// Opens the explorer window on `sceneFile`, or on the default scene when it is empty, and runs the
// event loop. Needs a QApplication.
int runExplorerWindow(const QString& sceneFile);
}  // namespace ae::ui
