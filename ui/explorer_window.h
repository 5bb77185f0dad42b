#pragma once
#include <QString>

namespace ae::ui {
// Opens the explorer window on `sceneFile`, or on the last scene file (else the default scene)
// when it is empty, and runs the event loop. Needs a QApplication. A file that does not load is
// reported on stderr as `FILE: problem` and in the window, which opens the default scene instead.
int runExplorerWindow(const QString& sceneFile);
}  // namespace ae::ui
