#include "explorer_window.h"

#include <QApplication>
#include <cstdio>

#include "classroom.h"
#include "main_window.h"

namespace ae::ui {

int runExplorerWindow(const QString& sceneFile) {
    MainWindow window;
    // A scene that does not load still opens the window, on the default scene, with the problem
    // shown (and printed as `FILE: problem` for whoever started it from a terminal).
    QString problem;
    if (sceneFile.isEmpty()) {
        window.openStartupScene();
    } else if (!window.openSceneFile(sceneFile, &problem)) {
        problem = sceneFile + QStringLiteral(": ") + problem;
        std::fprintf(stderr, "%s\n", problem.toLocal8Bit().constData());
        window.openPreset(QStringLiteral("default"));
    }
    window.show();
    window.classroom()->showGalleryOnFirstStart();
    if (!problem.isEmpty()) {
        window.showProblem(
            QCoreApplication::translate("ExplorerWindow",
                                        "Could not open %1\nShowing the default scene instead.")
                .arg(problem));
    }
    return QApplication::exec();
}

}  // namespace ae::ui
