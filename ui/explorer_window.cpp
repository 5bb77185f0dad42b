#include "ui/explorer_window.h"

#include <QApplication>
#include <QFileInfo>
#include <cstdio>

#include "document/attention_document.h"
#include "document/model_session.h"
#include "io/model/builtin_models.h"
#include "ui/classroom/classroom.h"
#include "ui/files/autosave.h"
#include "ui/window/main_window.h"

namespace ae::ui {

int runExplorerWindow(const QString& sceneFile) {
    MainWindow window;
    // Unsaved work from a crashed or killed session comes first, before any scene or the
    // gallery: restoring it replaces the scene this start would have opened.
    const bool restored = window.autosave()->offerRestore();
    // A scene that does not load still opens the window, on the default scene, with the problem
    // shown (and printed as `FILE: problem` for whoever started it from a terminal).
    QString problem;
    if (!restored && sceneFile.isEmpty()) {
        window.openStartupScene();
    } else if (!restored && (QFileInfo(sceneFile).isDir() || io::isBuiltInArgument(sceneFile))) {
        // A model folder or builtin:NAME: it opens in the background over the default scene (a
        // refusal is shown).
        window.openPreset(QStringLiteral("default"));
        window.modelSession()->open(sceneFile);
    } else if (!restored && !window.openSceneFile(sceneFile, &problem)) {
        problem = sceneFile + QStringLiteral(": ") + problem;
        std::fprintf(stderr, "%s\n", problem.toLocal8Bit().constData());
        window.openPreset(QStringLiteral("default"));
    }
    window.show();
    // The gallery greets a first start with nothing asked for; a scene or a model named on the
    // command line is what the user came for.
    if (!restored && sceneFile.isEmpty()) window.classroom()->showGalleryOnFirstStart();
    // Test-only (tests/test_autosave.cpp): one real edit once the window runs, so a test can
    // kill a process that holds unsaved changes. AE_TEST_EDIT_HEADS=N sets the head count to N.
    if (qEnvironmentVariableIsSet("AE_TEST_EDIT_HEADS"))
        window.document()->setHeads(qEnvironmentVariableIntValue("AE_TEST_EDIT_HEADS"));
    if (!problem.isEmpty()) {
        window.showProblem(
            QCoreApplication::translate("ExplorerWindow",
                                        "Could not open %1\nShowing the default scene instead.")
                .arg(problem));
    }
    return QApplication::exec();
}

}  // namespace ae::ui
