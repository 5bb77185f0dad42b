// A child process for test_autosave's kill-during-save test. It saves a large scene (every
// matrix explicit, tens of megabytes) to FILE again and again through io::writeFileAtomically,
// the writer behind File › Save and the autosave, alternating two versions so that every save
// changes the file: odd saves have the title "version A", even saves "version B". After each
// completed save it prints `saved N` and flushes, so the test always knows which complete
// version the file must hold when it kills this process in the middle of the next save.
//
// Usage: helper_save_loop FILE

#include <QCoreApplication>
#include <QStringList>
#include <cstdio>

#include "io/formats/result_export.h"
#include "io/scene/scene_file.h"

namespace {

// The two versions, as test_autosave builds them too.
QByteArray largeSceneVersion(const char* title) {
    ae::Scene scene = ae::io::loadPreset(QStringLiteral("bert-base"));
    scene.init.reset();  // written explicitly: 768x768 projections, about 2.4 million numbers
    scene.title = title;
    return ae::io::sceneToJson(scene);
}

}  // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    const QStringList arguments = QCoreApplication::arguments();
    if (arguments.size() != 2) {
        std::fputs("usage: helper_save_loop FILE\n", stderr);
        return 2;
    }
    const QByteArray versions[2] = {largeSceneVersion("version A"), largeSceneVersion("version B")};
    std::printf("ready %lld\n", static_cast<long long>(versions[0].size()));
    std::fflush(stdout);
    try {
        for (long long save = 1;; ++save) {
            ae::io::writeFileAtomically(arguments[1], versions[(save - 1) % 2]);
            std::printf("saved %lld\n", save);
            std::fflush(stdout);
        }
    } catch (const ae::io::WriteError& error) {
        std::fprintf(stderr, "%s\n", error.what());
        return 1;
    }
}
