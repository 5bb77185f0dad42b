// No lost work: the autosave copy of a modified scene (when it is written, what it holds, when it
// goes away), the restore offer after a crash, corrupt autosaves, and a process killed in the
// middle of an atomic save. The app itself SIGKILLed: tests/cli/test_app_process.

#include <signal.h>
#include <unistd.h>

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLockFile>
#include <QMessageBox>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>
#include <QUndoStack>
#include <QtTest>
#include <memory>

#include "document/attention_document.h"
#include "io/formats/result_export.h"
#include "io/scene/scene_file.h"
#include "ui/files/autosave.h"
#include "ui/files/file_actions.h"
#include "ui/window/main_window.h"

using namespace ae;
using namespace ae::ui;
using namespace ae::document;

namespace {

QByteArray readAll(const QString& fileName) {
    QFile file(fileName);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

bool writeAll(const QString& fileName, const QByteArray& bytes) {
    QFile file(fileName);
    return file.open(QIODevice::WriteOnly) && file.write(bytes) == bytes.size();
}

QStringList autosaveFiles(const QString& directory) {
    return QDir(directory).entryList({QStringLiteral("*.autosave.json")}, QDir::Files);
}

// The files process `pid` has open (Linux /proc), e.g. QSaveFile's temporary file: each one's
// path and its size now.
QList<QPair<QString, qint64>> openFiles(qint64 pid) {
    QList<QPair<QString, qint64>> targets;
    const QDir fds(QStringLiteral("/proc/%1/fd").arg(pid));
    for (const QString& fd :
         fds.entryList(QDir::AllEntries | QDir::System | QDir::NoDotAndDotDot)) {
        char target[4096];
        const ssize_t length =
            ::readlink(QFile::encodeName(fds.filePath(fd)).constData(), target, sizeof target - 1);
        if (length > 0)
            targets.append({QFile::decodeName(QByteArray(target, int(length))),
                            QFileInfo(fds.filePath(fd)).size()});
    }
    return targets;
}

// Whether /proc says the process is stopped (state T), as it is soon after SIGSTOP.
bool isStopped(qint64 pid) {
    const QByteArray stat = readAll(QStringLiteral("/proc/%1/stat").arg(pid));
    const qsizetype nameEnd = stat.lastIndexOf(')');
    return nameEnd > 0 && stat.mid(nameEnd + 1).trimmed().startsWith('T');
}

}  // namespace

class TestAutosave : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void init();
    void cleanup();
    void idleSecondAfterAnEditWritesTheSceneAsSaveWould();
    void editsRestartTheIdleTimer();
    void periodicWritesOnlyWhatChanged();
    void unchangedDocumentWritesNothing();
    void cleanSaveRemovesTheFile();
    void undoToTheSavedStateRemovesTheFile();
    void openingAnotherSceneRemovesTheFile();
    void closeWithDiscardRemovesTheFile();
    void liveWindowsAreNotOffered();
    void restoreOpensTheSceneUnsavedUnderItsFileName();
    void laterKeepsAndDiscardDeletes();
    void corruptAutosavesAreSetAsideWithAMessage();
    void killDuringSaveKeepsTheOldFile();

private:
    std::unique_ptr<MainWindow> newWindow();
    MainWindow* window() const { return window_.get(); }
    std::unique_ptr<MainWindow> window_;
    std::unique_ptr<QTemporaryDir> dir_;
    QString autosaveDir_;
};

void TestAutosave::initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
}

void TestAutosave::init() {
    QSettings().clear();
    dir_ = std::make_unique<QTemporaryDir>();
    QVERIFY(dir_->isValid());
    autosaveDir_ = dir_->filePath(QStringLiteral("autosave"));
    // The windows of this test, and the processes it starts, autosave here.
    qputenv("AE_AUTOSAVE_DIR", QFile::encodeName(autosaveDir_));
    window_ = newWindow();
}

std::unique_ptr<MainWindow> TestAutosave::newWindow() {
    auto window = std::make_unique<MainWindow>();
    window->resize(1000, 700);
    window->openPreset(QStringLiteral("default"));
    // Nothing is left to a timer unless a test asks for it.
    window->autosave()->setTiming({3600 * 1000, 3600 * 1000});
    return window;
}

void TestAutosave::cleanup() {
    if (window_) window_->document()->markSaved();
    window_.reset();
    dir_.reset();
}

void TestAutosave::idleSecondAfterAnEditWritesTheSceneAsSaveWould() {
    Autosave* autosave = window()->autosave();
    QCOMPARE(autosave->directory(), autosaveDir_);
    autosave->setTiming({50, 3600 * 1000});
    window()->document()->setHeads(2);
    QVERIFY(autosave->idleTimer()->isActive());
    QVERIFY(autosave->idleTimer()->isSingleShot());
    QVERIFY(!QFileInfo::exists(autosave->filePath()));  // only the timer writes
    QTRY_VERIFY(QFileInfo::exists(autosave->filePath()));
    QCOMPARE(autosave->writeCount(), 1);
    QVERIFY(QFileInfo::exists(autosave->filePath().chopped(5) + QStringLiteral(".lock")));

    const AutosaveContents contents = parseAutosave(readAll(autosave->filePath()));
    QCOMPARE(io::sceneToJson(contents.scene),
             io::sceneToJson(window()->fileActions()->sceneForSaving()));
    QCOMPARE(contents.scene.heads, 2);
    QVERIFY(!contents.scene.viewJson.empty());   // the window's view, as Save writes it
    QCOMPARE(contents.originalFile, QString());  // a preset: untitled
    QCOMPARE(contents.pid, QCoreApplication::applicationPid());
    QVERIFY(qAbs(contents.savedAt.secsTo(QDateTime::currentDateTimeUtc())) < 3600);
    // The file is what Save writes, wrapped: the scene part has the same bytes.
    const QJsonObject wrapper = QJsonDocument::fromJson(readAll(autosave->filePath())).object();
    QCOMPARE(wrapper.value("format").toString(), QStringLiteral("attention-explorer/autosave"));
    QCOMPARE(wrapper.value("scene").toObject(),
             QJsonDocument::fromJson(io::sceneToJson(window()->fileActions()->sceneForSaving()))
                 .object());
}

void TestAutosave::editsRestartTheIdleTimer() {
    Autosave* autosave = window()->autosave();
    QCOMPARE(autosave->idleTimer()->timerType(), Qt::PreciseTimer);
    window()->document()->setHeads(2);
    QTest::qWait(20);
    const int remainingBeforeEdit = autosave->idleTimer()->remainingTime();
    window()->document()->setHeads(1);
    // Started again from the full interval by the second edit: the write waits for quiet.
    QVERIFY(autosave->idleTimer()->remainingTime() > remainingBeforeEdit);
    QVERIFY(autosave->periodicTimer()->isActive());
    QCOMPARE(autosave->writeCount(), 0);
}

void TestAutosave::periodicWritesOnlyWhatChanged() {
    Autosave* autosave = window()->autosave();
    autosave->setTiming({3600 * 1000, 40});
    QVERIFY(!autosave->periodicTimer()->isActive());
    window()->document()->setHeads(2);
    QVERIFY(autosave->periodicTimer()->isActive());
    QTRY_COMPARE(autosave->writeCount(), 1);
    QCOMPARE(parseAutosave(readAll(autosave->filePath())).scene.heads, 2);
    window()->document()->setHeads(1);
    QTRY_COMPARE(autosave->writeCount(), 2);
    QCOMPARE(parseAutosave(readAll(autosave->filePath())).scene.heads, 1);
    // The timer keeps running while modified, but nothing changed: no more writes.
    QSignalSpy ticks(autosave->periodicTimer(), &QTimer::timeout);
    QTRY_VERIFY(ticks.count() >= 3);
    QCOMPARE(autosave->writeCount(), 2);
    QVERIFY(!autosave->writeIfChanged());
}

void TestAutosave::unchangedDocumentWritesNothing() {
    Autosave* autosave = window()->autosave();
    QVERIFY(!autosave->idleTimer()->isActive());
    QVERIFY(!autosave->periodicTimer()->isActive());
    QVERIFY(!autosave->writeIfChanged());
    // A view change is not an edit of the scene.
    window()->applyViewState(QJsonObject{{"stage", "scores"}});
    QVERIFY(!autosave->writeIfChanged());
    QCOMPARE(autosave->writeCount(), 0);
    QVERIFY(!QDir(autosaveDir_).exists() || autosaveFiles(autosaveDir_).isEmpty());
}

void TestAutosave::cleanSaveRemovesTheFile() {
    Autosave* autosave = window()->autosave();
    window()->document()->setHeads(2);
    QVERIFY(autosave->writeIfChanged());
    QVERIFY(QFileInfo::exists(autosave->filePath()));
    const QString saved = dir_->filePath(QStringLiteral("saved.json"));
    QString error;
    QVERIFY2(window()->fileActions()->saveTo(saved, &error), qPrintable(error));
    QVERIFY(!QFileInfo::exists(autosave->filePath()));
    QCOMPARE(QDir(autosaveDir_).entryList(QDir::Files), QStringList());  // the lock too
    QVERIFY(!autosave->periodicTimer()->isActive());
    QCOMPARE(io::loadSceneFile(saved).heads, 2);
    // The next edit autosaves again, now under the saved file's name.
    window()->document()->setHeads(1);
    QVERIFY(autosave->writeIfChanged());
    QCOMPARE(parseAutosave(readAll(autosave->filePath())).originalFile,
             QFileInfo(saved).absoluteFilePath());
}

void TestAutosave::undoToTheSavedStateRemovesTheFile() {
    Autosave* autosave = window()->autosave();
    window()->document()->setHeads(2);
    QVERIFY(autosave->writeIfChanged());
    window()->document()->undoStack()->undo();
    QVERIFY(!window()->document()->isModified());
    QVERIFY(!QFileInfo::exists(autosave->filePath()));
    QVERIFY(!autosave->writeIfChanged());
    window()->document()->undoStack()->redo();  // modified again: written again
    QVERIFY(autosave->writeIfChanged());
    QVERIFY(QFileInfo::exists(autosave->filePath()));
}

void TestAutosave::openingAnotherSceneRemovesTheFile() {
    Autosave* autosave = window()->autosave();
    window()->document()->setHeads(2);
    QVERIFY(autosave->writeIfChanged());
    window()->openPreset(QStringLiteral("journey"));  // the user chose Discard
    QVERIFY(!QFileInfo::exists(autosave->filePath()));
}

void TestAutosave::closeWithDiscardRemovesTheFile() {
    Autosave* autosave = window()->autosave();
    window()->show();
    window()->document()->setHeads(2);
    QVERIFY(autosave->writeIfChanged());
    bool answered = false;
    QTimer::singleShot(0, this, [&answered] {
        auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
        if (!box || !box->button(QMessageBox::Discard)) return;
        box->button(QMessageBox::Discard)->click();
        answered = true;
    });
    QVERIFY(window()->close());
    QVERIFY(answered);
    QVERIFY(window()->document()->isModified());  // discarded, not saved
    QVERIFY(!QFileInfo::exists(autosave->filePath()));
    QCOMPARE(autosaveFiles(autosaveDir_), QStringList());
}

void TestAutosave::liveWindowsAreNotOffered() {
    window()->document()->setHeads(2);
    QVERIFY(window()->autosave()->writeIfChanged());
    const QString file = window()->autosave()->filePath();
    // Another window (same process, so the pid is alive) sees a live lock.
    std::unique_ptr<MainWindow> other = newWindow();
    int asked = 0;
    QVERIFY(!other->autosave()->offerRestore([&asked](const OrphanedAutosave&) {
        ++asked;
        return RestoreChoice::Restore;
    }));
    QCOMPARE(asked, 0);
    QVERIFY(QFileInfo::exists(file));
    // A window that goes away without closing (as in a crash) leaves its file, lock released.
    window_.reset();
    QVERIFY(QFileInfo::exists(file));
    const AutosaveScan scan = scanForOrphanedAutosaves(autosaveDir_);
    QCOMPARE(scan.orphans.size(), size_t(1));
    QCOMPARE(scan.orphans.front().file, QFileInfo(file).absoluteFilePath());
    QCOMPARE(scan.orphans.front().contents.scene.heads, 2);
    QVERIFY(scan.problems.isEmpty());
    // While one scan holds it, another finds nothing: never offered twice at once.
    QCOMPARE(scanForOrphanedAutosaves(autosaveDir_).orphans.size(), size_t(0));
}

void TestAutosave::restoreOpensTheSceneUnsavedUnderItsFileName() {
    const QString sceneFile = dir_->filePath(QStringLiteral("journey.json"));
    QVERIFY(writeAll(sceneFile, io::presetJson(QStringLiteral("journey"))));
    QVERIFY(window()->openSceneFile(sceneFile));
    window()->document()->setScale({ScaleKind::Divisor, 0.5});
    window()->applyViewState(QJsonObject{{"stage", "scores"}});
    QVERIFY(window()->autosave()->writeIfChanged());
    const QByteArray edited = io::sceneToJson(window()->fileActions()->sceneForSaving());
    const QString file = window()->autosave()->filePath();
    window_.reset();  // gone without closing

    window_ = newWindow();
    QString offeredName;
    QVERIFY(window()->autosave()->offerRestore([&offeredName](const OrphanedAutosave& orphan) {
        offeredName = orphan.contents.originalFile;
        return RestoreChoice::Restore;
    }));
    QCOMPARE(offeredName, QFileInfo(sceneFile).absoluteFilePath());
    AttentionDocument* document = window()->document();
    QCOMPARE(io::sceneToJson(window()->fileActions()->sceneForSaving()), edited);
    QCOMPARE(document->scene().scale.divisor, 0.5);
    QCOMPARE(document->fileName(), QFileInfo(sceneFile).absoluteFilePath());
    QVERIFY(document->isModified());
    QVERIFY(window()->isWindowModified());
    // The copy stays, now this window's, until the scene is saved; Save writes the original file.
    QCOMPARE(window()->autosave()->filePath(), QFileInfo(file).absoluteFilePath());
    QVERIFY(QFileInfo::exists(file));
    QCOMPARE(scanForOrphanedAutosaves(autosaveDir_).orphans.size(), size_t(0));
    QVERIFY(!window()->autosave()->writeIfChanged());  // nothing new since the copy
    document->setScale({ScaleKind::Divisor, 2.0});
    QVERIFY(window()->autosave()->writeIfChanged());
    QVERIFY(window()->fileActions()->save());
    QVERIFY(!QFileInfo::exists(file));
    QCOMPARE(autosaveFiles(autosaveDir_), QStringList());
    const Scene saved = io::loadSceneFile(sceneFile);
    QCOMPARE(saved.scale.divisor, 2.0);
    QCOMPARE(saved.viewJson, window()->fileActions()->sceneForSaving().viewJson);
}

void TestAutosave::laterKeepsAndDiscardDeletes() {
    // Two windows that never close: two orphans.
    QStringList files;
    for (int heads : {2, 1}) {
        std::unique_ptr<MainWindow> lost = newWindow();
        lost->document()->setHeads(heads);
        QVERIFY(lost->autosave()->writeIfChanged());
        files << QFileInfo(lost->autosave()->filePath()).absoluteFilePath();
        QTest::qWait(5);  // distinct save times: newest first
    }
    QList<int> offeredHeads;
    QVERIFY(!window()->autosave()->offerRestore([&offeredHeads](const OrphanedAutosave& orphan) {
        offeredHeads << orphan.contents.scene.heads;
        return RestoreChoice::Later;
    }));
    QCOMPARE(offeredHeads, QList<int>({1, 2}));
    QCOMPARE(autosaveFiles(autosaveDir_).size(), 2);
    QVERIFY(!window()->document()->isModified());  // nothing restored
    offeredHeads.clear();
    QVERIFY(!window()->autosave()->offerRestore([&offeredHeads](const OrphanedAutosave& orphan) {
        offeredHeads << orphan.contents.scene.heads;
        return orphan.contents.scene.heads == 1 ? RestoreChoice::Discard : RestoreChoice::Later;
    }));
    QCOMPARE(offeredHeads, QList<int>({1, 2}));
    QVERIFY(!QFileInfo::exists(files[1]));
    QVERIFY(QFileInfo::exists(files[0]));
    QCOMPARE(QDir(autosaveDir_).entryList(QDir::Files),
             QStringList{QFileInfo(files[0]).fileName()});
}

void TestAutosave::corruptAutosavesAreSetAsideWithAMessage() {
    QVERIFY(QDir().mkpath(autosaveDir_));
    const QString truncated = QDir(autosaveDir_).filePath(QStringLiteral("1-a.autosave.json"));
    QVERIFY(writeAll(truncated, "{\"format\": \"attention-explorer/autosave\", \"vers"));
    const QString badScene = QDir(autosaveDir_).filePath(QStringLiteral("1-b.autosave.json"));
    QVERIFY(writeAll(badScene, autosaveJson(R"({"format": "attention-explorer/scene", "version": 1,
                                      "tokens": ["a", "b"], "init": {"seed": 1, "d_model": 8},
                                      "heads": 3})",
                                            QString(), QDateTime::currentDateTimeUtc(), 1)));
    int asked = 0;
    QVERIFY(!window()->autosave()->offerRestore([&asked](const OrphanedAutosave&) {
        ++asked;
        return RestoreChoice::Restore;
    }));
    QCOMPARE(asked, 0);
    QCOMPARE(autosaveFiles(autosaveDir_), QStringList());
    QVERIFY(QFileInfo::exists(truncated + QStringLiteral(".corrupt")));
    QVERIFY(QFileInfo::exists(badScene + QStringLiteral(".corrupt")));
    // The message names each file, why, and where it was kept.
    QWidget* box = window()->findChild<QMessageBox*>();
    QVERIFY(box);
    const QString text = static_cast<QMessageBox*>(box)->text();
    QVERIFY2(text.contains(QStringLiteral("Autosave %1 could not be read (not JSON: ")
                               .arg(QFileInfo(truncated).absoluteFilePath())),
             qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("(scene.heads: 3 does not divide the projection width "
                                          "8); kept as %1.corrupt")
                               .arg(QFileInfo(badScene).absoluteFilePath())),
             qPrintable(text));
    // Set aside once: the next start has nothing to say.
    const AutosaveScan again = scanForOrphanedAutosaves(autosaveDir_);
    QVERIFY(again.orphans.empty());
    QVERIFY(again.problems.isEmpty());
}

void TestAutosave::killDuringSaveKeepsTheOldFile() {
    // The helper saves a ~50 MB scene over and over; the test freezes it (SIGSTOP) at random
    // moments until it is caught with the save's temporary file open, then SIGKILLs it there.
    const QString file = dir_->filePath(QStringLiteral("scene.json"));
    const QByteArray original = io::presetJson(QStringLiteral("default"));
    QVERIFY(writeAll(file, original));
    auto version = [](const char* title) {
        Scene scene = io::loadPreset(QStringLiteral("bert-base"));
        scene.init.reset();
        scene.title = title;
        return io::sceneToJson(scene);
    };

    QProcess helper;
    helper.start(QStringLiteral(AE_SAVE_LOOP_HELPER), {file});
    QVERIFY(helper.waitForStarted());
    QTRY_VERIFY_WITH_TIMEOUT(helper.canReadLine(), 60000);
    const QByteArray ready = helper.readLine().trimmed();
    QVERIFY2(ready.startsWith("ready "), ready.constData());
    const qint64 sceneBytes = ready.mid(6).toLongLong();
    const pid_t pid = pid_t(helper.processId());
    long long completed = 0;
    auto readProgress = [&] {
        while (helper.canReadLine()) {
            const QByteArray line = helper.readLine().trimmed();
            if (line.startsWith("saved ")) completed = line.mid(6).toLongLong();
        }
    };
    // Caught after a first complete save, the old file is itself a large scene the helper wrote.
    QTRY_VERIFY_WITH_TIMEOUT((readProgress(), completed >= 1), 60000);
    bool caught = false;
    QStringList inFlight;
    for (int attempt = 0; attempt < 2000 && !caught; ++attempt) {
        QTest::qWait(1 + attempt % 7);
        QVERIFY(::kill(pid, SIGSTOP) == 0);
        QTRY_VERIFY(isStopped(pid));
        inFlight.clear();
        for (const auto& [path, size] : openFiles(pid))
            if (path.startsWith(dir_->path()))
                inFlight << QStringLiteral("%1 (%2 of %3 bytes written)")
                                .arg(path)
                                .arg(size)
                                .arg(sceneBytes);
        caught = !inFlight.isEmpty();
        if (caught) {
            QVERIFY(::kill(pid, SIGKILL) == 0);
        } else {
            QVERIFY(::kill(pid, SIGCONT) == 0);
        }
    }
    QVERIFY2(caught, "never caught the helper in the middle of a save");
    QVERIFY(helper.waitForFinished(30000));
    QCOMPARE(helper.exitStatus(), QProcess::CrashExit);
    readProgress();  // everything it printed before the kill
    QVERIFY(completed >= 1);
    qInfo("killed during save %lld, with %s open", completed + 1,
          qPrintable(inFlight.join(QStringLiteral(", "))));

    // The file is the last complete save, whole, and it parses.
    const QByteArray expected = version(completed % 2 == 1 ? "version A" : "version B");
    QCOMPARE(qint64(version("version A").size()), sceneBytes);
    const QByteArray onDisk = readAll(file);
    QCOMPARE(onDisk.size(), expected.size());
    QVERIFY(onDisk == expected);
    io::parseScene(onDisk);
    // Nothing but the file itself is left in the folder (the temporary file died with it).
    QCOMPARE(QDir(dir_->path()).entryList({QStringLiteral("scene.json*")}, QDir::Files),
             QStringList{QStringLiteral("scene.json")});
}

QTEST_MAIN(TestAutosave)
#include "test_autosave.moc"
