// The app as a process: a window with unsaved changes, SIGKILLed, leaves its autosave behind,
// and the next start's own restore path offers it and restores the killed window's scene.

#include <signal.h>

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QLockFile>
#include <QProcess>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>
#include <memory>

#include "document/attention_document.h"
#include "io/scene/scene_file.h"
#include "ui/files/autosave.h"
#include "ui/window/main_window.h"

using namespace ae;
using namespace ae::ui;
using namespace ae::document;

namespace {

bool writeAll(const QString& fileName, const QByteArray& bytes) {
    QFile file(fileName);
    return file.open(QIODevice::WriteOnly) && file.write(bytes) == bytes.size();
}

QStringList autosaveFiles(const QString& directory) {
    return QDir(directory).entryList({QStringLiteral("*.autosave.json")}, QDir::Files);
}

// The scene without its view: windows in different processes may differ in view details.
QByteArray sceneOnly(Scene scene) {
    scene.viewJson.clear();
    return io::sceneToJson(scene);
}

}  // namespace

class TestAppProcess : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void init();
    void cleanup();
    void killedProcessIsOfferedOnTheNextStart();

private:
    std::unique_ptr<MainWindow> newWindow();
    MainWindow* window() const { return window_.get(); }
    std::unique_ptr<MainWindow> window_;
    std::unique_ptr<QTemporaryDir> dir_;
    QString autosaveDir_;
};

void TestAppProcess::initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY2(QFile::exists(QStringLiteral(AE_BINARY)), AE_BINARY);
}

void TestAppProcess::init() {
    QSettings().clear();
    dir_ = std::make_unique<QTemporaryDir>();
    QVERIFY(dir_->isValid());
    autosaveDir_ = dir_->filePath(QStringLiteral("autosave"));
    // The windows of this test, and the processes it starts, autosave here.
    qputenv("AE_AUTOSAVE_DIR", QFile::encodeName(autosaveDir_));
}

std::unique_ptr<MainWindow> TestAppProcess::newWindow() {
    auto window = std::make_unique<MainWindow>();
    window->resize(1000, 700);
    window->openPreset(QStringLiteral("default"));
    // Nothing is left to a timer unless a test asks for it.
    window->autosave()->setTiming({3600 * 1000, 3600 * 1000});
    return window;
}

void TestAppProcess::cleanup() {
    if (window_) window_->document()->markSaved();
    window_.reset();
    dir_.reset();
}

void TestAppProcess::killedProcessIsOfferedOnTheNextStart() {
    // A real window with unsaved changes, killed without a chance to clean up.
    const QString sceneFile = dir_->filePath(QStringLiteral("scene.json"));
    QVERIFY(writeAll(sceneFile, io::presetJson(QStringLiteral("default"))));
    QCOMPARE(io::loadSceneFile(sceneFile).heads, 4);
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    environment.insert(QStringLiteral("AE_AUTOSAVE_DIR"), autosaveDir_);
    environment.insert(QStringLiteral("XDG_CONFIG_HOME"), dir_->filePath(QStringLiteral("config")));
    environment.insert(QStringLiteral("XDG_DATA_HOME"), dir_->filePath(QStringLiteral("data")));
    environment.insert(QStringLiteral("AE_TEST_EDIT_HEADS"), QStringLiteral("2"));
    QProcess app;
    app.setProcessEnvironment(environment);
    app.start(QStringLiteral(AE_BINARY), {sceneFile});
    QVERIFY(app.waitForStarted());
    // One idle second after the edit (generous margin for a loaded machine).
    QTRY_COMPARE_WITH_TIMEOUT(autosaveFiles(autosaveDir_).size(), 1, 60000);
    const QString file = QDir(autosaveDir_).filePath(autosaveFiles(autosaveDir_).constFirst());
    QVERIFY(app.state() == QProcess::Running);
    const qint64 killedPid = app.processId();
    QVERIFY(::kill(pid_t(killedPid), SIGKILL) == 0);
    QVERIFY(app.waitForFinished(30000));
    QCOMPARE(app.exitStatus(), QProcess::CrashExit);
    // Its lock is still there, naming a process that no longer exists.
    QLockFile lock(file.chopped(5) + QStringLiteral(".lock"));
    qint64 lockPid = 0;
    QVERIFY(lock.getLockInfo(&lockPid, nullptr, nullptr));
    QCOMPARE(lockPid, killedPid);

    // The next start: the window's own restore path, on the same directory.
    window_ = newWindow();
    QString offeredName;
    QVERIFY(window()->autosave()->offerRestore([&offeredName](const OrphanedAutosave& orphan) {
        offeredName = orphan.contents.originalFile;
        return RestoreChoice::Restore;
    }));
    QCOMPARE(offeredName, QFileInfo(sceneFile).absoluteFilePath());
    // The restored scene is the killed window's: its file, with the edit applied.
    AttentionDocument expected;
    expected.resetScene(io::loadSceneFile(sceneFile), sceneFile);
    expected.setHeads(2);
    QCOMPARE(sceneOnly(window()->document()->scene()), sceneOnly(expected.scene()));
    QVERIFY(sceneOnly(window()->document()->scene()) != sceneOnly(io::loadSceneFile(sceneFile)));
    QVERIFY(window()->document()->isModified());
    QCOMPARE(window()->document()->fileName(), QFileInfo(sceneFile).absoluteFilePath());
}

QTEST_MAIN(TestAppProcess)
#include "test_app_process.moc"
