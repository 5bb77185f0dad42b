#include "ui/files/autosave.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLockFile>
#include <QMessageBox>
#include <QPushButton>
#include <QStandardPaths>
#include <QTimer>
#include <QUndoStack>
#include <algorithm>

#include "document/attention_document.h"
#include "io/formats/result_export.h"
#include "io/scene/scene_file.h"

namespace ae::ui {
namespace {

const char* const kFormat = "attention-explorer/autosave";
constexpr int kVersion = 1;
const char* const kSuffix = ".autosave.json";

QString lockPathFor(const QString& autosaveFile) {
    QString lock = autosaveFile;
    lock.chop(int(qstrlen(".json")));
    return lock + QStringLiteral(".lock");
}

// Held until released: a live window's file must never look abandoned, however long it runs,
// so only a dead owner (QLockFile checks the pid, host and boot) makes a lock stale.
std::shared_ptr<QLockFile> tryLockFor(const QString& autosaveFile) {
    auto lock = std::make_shared<QLockFile>(lockPathFor(autosaveFile));
    lock->setStaleLockTime(0);
    if (!lock->tryLock(0)) return nullptr;
    return lock;
}

// A name no other window of this or an earlier process has used: the pid alone may repeat
// after a reboot, while an orphan of that pid is still waiting to be restored.
QString newSessionFile(const QString& directory) {
    static int windowsInThisProcess = 0;
    const QString stamp =
        QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMddHHmmsszzz"));
    QString file;
    do {
        file = QDir(directory).filePath(QStringLiteral("%1-%2-%3%4")
                                            .arg(QCoreApplication::applicationPid())
                                            .arg(stamp)
                                            .arg(++windowsInThisProcess)
                                            .arg(QLatin1String(kSuffix)));
    } while (QFileInfo::exists(file) || QFileInfo::exists(lockPathFor(file)));
    return file;
}

QString setAside(const QString& file) {
    QString target = file + QStringLiteral(".corrupt");
    for (int n = 2; QFileInfo::exists(target); ++n)
        target = file + QStringLiteral(".corrupt%1").arg(n);
    return QFile::rename(file, target) ? target : QString();
}

}  // namespace

QString defaultAutosaveDirectory() {
    const QString forTests = qEnvironmentVariable("AE_AUTOSAVE_DIR");
    if (!forTests.isEmpty()) return forTests;
    return QDir(QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation))
        .filePath(QStringLiteral("autosave"));
}

QByteArray autosaveJson(const QByteArray& sceneJson, const QString& originalFile,
                        const QDateTime& savedAt, qint64 pid) {
    const QJsonObject header{
        {QStringLiteral("format"), QLatin1String(kFormat)},
        {QStringLiteral("version"), kVersion},
        {QStringLiteral("original_file"), originalFile},
        {QStringLiteral("saved_at"), savedAt.toUTC().toString(Qt::ISODateWithMs)},
        {QStringLiteral("pid"), pid}};
    // The scene goes in as the very bytes Save writes, not re-encoded through QJsonObject.
    QByteArray json = QJsonDocument(header).toJson(QJsonDocument::Compact);
    json.chop(1);  // the closing brace
    json += ",\"scene\":" + sceneJson.trimmed() + "}\n";
    return json;
}

AutosaveContents parseAutosave(const QByteArray& json) {
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(json, &error);
    if (error.error != QJsonParseError::NoError) {
        throw SceneError("", QStringLiteral("not JSON: %1 at byte %2")
                                 .arg(error.errorString())
                                 .arg(error.offset)
                                 .toStdString());
    }
    if (!document.isObject()) throw SceneError("", "not a JSON object");
    const QJsonObject object = document.object();
    if (object.value(QStringLiteral("format")).toString() != QLatin1String(kFormat))
        throw SceneError("format", std::string("expected \"") + kFormat + "\"");
    if (object.value(QStringLiteral("version")).toInt() != kVersion)
        throw SceneError("version", "expected 1");
    if (!object.value(QStringLiteral("scene")).isObject())
        throw SceneError("scene", "missing or not an object");
    AutosaveContents contents;
    contents.originalFile = object.value(QStringLiteral("original_file")).toString();
    contents.savedAt = QDateTime::fromString(object.value(QStringLiteral("saved_at")).toString(),
                                             Qt::ISODateWithMs);
    contents.pid = object.value(QStringLiteral("pid")).toInteger();
    try {
        const QJsonObject scene = object.value(QStringLiteral("scene")).toObject();
        contents.sceneJson = QJsonDocument(scene).toJson(QJsonDocument::Compact);
        contents.takesNumbersFromModel = io::takesNumbersFromModel(contents.sceneJson);
        if (contents.takesNumbersFromModel) {
            // Read once the model is open; the question shows the title.
            contents.scene.title = scene.value(QStringLiteral("title")).toString().toStdString();
            contents.scene.viewJson = QJsonDocument(scene.value(QStringLiteral("view")).toObject())
                                          .toJson(QJsonDocument::Compact)
                                          .toStdString();
        } else {
            contents.scene = io::parseScene(contents.sceneJson);
        }
    } catch (const SceneError& e) {
        throw SceneError(e.path().empty() ? "scene" : "scene." + e.path(), e.problem());
    }
    return contents;
}

AutosaveScan scanForOrphanedAutosaves(const QString& directory) {
    AutosaveScan scan;
    const QFileInfoList files =
        QDir(directory).entryInfoList({QStringLiteral("*") + QLatin1String(kSuffix)}, QDir::Files);
    for (const QFileInfo& info : files) {
        const QString file = info.absoluteFilePath();
        std::shared_ptr<QLockFile> lock = tryLockFor(file);
        if (!lock) continue;  // a live window's
        // Its window may have removed it between the listing and the lock.
        if (!QFileInfo::exists(file)) continue;
        try {
            QFile reader(file);
            if (!reader.open(QIODevice::ReadOnly))
                throw SceneError("", "cannot open: " + reader.errorString().toStdString());
            OrphanedAutosave orphan{file, parseAutosave(reader.readAll()), lock};
            scan.orphans.push_back(std::move(orphan));
        } catch (const std::exception& e) {
            const QString aside = setAside(file);
            scan.problems << (aside.isEmpty()
                                  ? QCoreApplication::translate(
                                        "Autosave", "Autosave %1 could not be read (%2)")
                                        .arg(file, QString::fromStdString(e.what()))
                                  : QCoreApplication::translate(
                                        "Autosave",
                                        "Autosave %1 could not be read (%2); kept as %3")
                                        .arg(file, QString::fromStdString(e.what()), aside));
        }
    }
    std::sort(scan.orphans.begin(), scan.orphans.end(),
              [](const OrphanedAutosave& a, const OrphanedAutosave& b) {
                  return a.contents.savedAt > b.contents.savedAt;
              });
    return scan;
}

RestoreChoice askAboutAutosave(QWidget* parent, const OrphanedAutosave& orphan) {
    const AutosaveContents& contents = orphan.contents;
    const QString name = contents.originalFile.isEmpty()
                             ? QCoreApplication::translate("Autosave", "an untitled scene")
                             : QFileInfo(contents.originalFile).fileName();
    QMessageBox box(QMessageBox::Question,
                    QCoreApplication::translate("Autosave", "Restore unsaved work?"),
                    QCoreApplication::translate(
                        "Autosave", "Attention Explorer stopped without saving the changes to %1.")
                        .arg(name),
                    QMessageBox::NoButton, parent);
    box.setObjectName(QStringLiteral("autosaveRestoreBox"));
    box.setInformativeText(
        QCoreApplication::translate("Autosave",
                                    "A copy was saved automatically at %1.\n\n"
                                    "Restore opens it with the changes still unsaved%2. Discard "
                                    "deletes the copy. Later keeps "
                                    "it for the next start.")
            .arg(
                contents.savedAt.toLocalTime().toString(QStringLiteral("yyyy-MM-dd\u00a0HH:mm:ss")),
                contents.originalFile.isEmpty()
                    ? QString()
                    : QCoreApplication::translate("Autosave", "; Save then writes to %1")
                          .arg(contents.originalFile)));
    QPushButton* restore =
        box.addButton(QCoreApplication::translate("Autosave", "&Restore"), QMessageBox::AcceptRole);
    QPushButton* discard = box.addButton(QCoreApplication::translate("Autosave", "&Discard"),
                                         QMessageBox::DestructiveRole);
    QPushButton* later =
        box.addButton(QCoreApplication::translate("Autosave", "&Later"), QMessageBox::RejectRole);
    box.setDefaultButton(restore);
    box.setEscapeButton(later);
    box.exec();
    if (box.clickedButton() == restore) return RestoreChoice::Restore;
    if (box.clickedButton() == discard) return RestoreChoice::Discard;
    return RestoreChoice::Later;
}

Autosave::Autosave(document::AttentionDocument* document, AutosaveView view, QWidget* window,
                   const QString& directory, AutosaveTiming timing)
    : QObject(window),
      document_(document),
      view_(std::move(view)),
      window_(window),
      directory_(directory),
      filePath_(newSessionFile(directory)),
      idleTimer_(new QTimer(this)),
      periodicTimer_(new QTimer(this)) {
    idleTimer_->setSingleShot(true);
    idleTimer_->setTimerType(Qt::PreciseTimer);  // a second of quiet, not 0.95 of one
    setTiming(timing);
    connect(idleTimer_, &QTimer::timeout, this, &Autosave::writeIfChanged);
    connect(periodicTimer_, &QTimer::timeout, this, &Autosave::writeIfChanged);
    // Every edit (a merged slider step too) recomputes; undo and redo move the index.
    connect(document_, &document::AttentionDocument::resultsChanged, this,
            &Autosave::documentEdited);
    connect(document_->undoStack(), &QUndoStack::indexChanged, this, &Autosave::documentEdited);
    connect(document_, &document::AttentionDocument::modifiedChanged, this,
            &Autosave::modifiedChanged);
}

// The file stays (it is unsaved work) and the lock goes: the next start offers it.
Autosave::~Autosave() = default;

void Autosave::setTiming(AutosaveTiming timing) {
    idleTimer_->setInterval(timing.idleMs);
    periodicTimer_->setInterval(timing.periodMs);
}

bool Autosave::documentModified() const {
    return document_->isModified();
}

void Autosave::documentEdited() {
    if (!documentModified()) return;
    changedSinceWrite_ = true;
    idleTimer_->start();  // restarts: the write waits for a second without edits
    if (!periodicTimer_->isActive()) periodicTimer_->start();
}

void Autosave::modifiedChanged(bool modified) {
    if (!modified) {
        removeFile();
        periodicTimer_->stop();
    } else if (!periodicTimer_->isActive()) {
        periodicTimer_->start();
    }
}

bool Autosave::writeIfChanged() {
    idleTimer_->stop();
    if (!documentModified() || !changedSinceWrite_) return false;
    auto fail = [this](const QString& reason) {
        lastError_ = QCoreApplication::translate("Autosave", "Autosave failed: %1").arg(reason);
        emit failed(lastError_);
        return false;
    };
    if (!QDir().mkpath(directory_))
        return fail(QStringLiteral("%1: cannot create the directory").arg(directory_));
    if (!lock_) {
        lock_ = tryLockFor(filePath_);
        if (!lock_) return fail(QStringLiteral("%1: cannot lock").arg(lockPathFor(filePath_)));
    }
    const QString original = document_->fileName();
    try {
        const QByteArray scene = view_.sceneJsonForSaving();
        io::writeFileAtomically(
            filePath_,
            autosaveJson(scene,
                         original.isEmpty() ? original : QFileInfo(original).absoluteFilePath(),
                         QDateTime::currentDateTimeUtc(), QCoreApplication::applicationPid()));
    } catch (const std::exception& e) {
        return fail(QString::fromStdString(e.what()));
    }
    changedSinceWrite_ = false;
    lastError_.clear();
    ++writeCount_;
    emit written(filePath_);
    return true;
}

void Autosave::removeFile() {
    idleTimer_->stop();
    changedSinceWrite_ = false;
    if (QFileInfo::exists(filePath_)) QFile::remove(filePath_);
    lock_.reset();  // QLockFile's destructor unlocks: deletes the lock file
}

void Autosave::adopt(OrphanedAutosave orphan) {
    removeFile();
    filePath_ = orphan.file;
    lock_ = std::move(orphan.lock);
    changedSinceWrite_ = false;
    if (documentModified()) periodicTimer_->start();
}

bool Autosave::offerRestore(const RestoreQuestion& ask) {
    AutosaveScan scan = scanForOrphanedAutosaves(directory_);
    if (!scan.problems.isEmpty()) emit problemsFound(scan.problems.join(QLatin1Char('\n')));
    for (OrphanedAutosave& orphan : scan.orphans) {
        const RestoreChoice choice = ask ? ask(orphan) : askAboutAutosave(window_, orphan);
        if (choice == RestoreChoice::Restore) {
            restore(std::move(orphan));
            return true;
        }
        if (choice == RestoreChoice::Discard) QFile::remove(orphan.file);
    }
    return false;  // the scan's locks are released here: Later leaves the files for next time
}

void Autosave::restore(OrphanedAutosave orphan) {
    const AutosaveContents& contents = orphan.contents;
    if (contents.takesNumbersFromModel) {
        if (view_.openWithModel) view_.openWithModel(contents.sceneJson, contents.originalFile);
        adopt(std::move(orphan));
        return;
    }
    document_->resetScene(contents.scene, contents.originalFile);
    if (!contents.scene.viewJson.empty())
        view_.apply(
            QJsonDocument::fromJson(QByteArray::fromStdString(contents.scene.viewJson)).object());
    // Unsaved until the user saves: no undo step leads back to a clean state.
    document_->markUnsaved();
    adopt(std::move(orphan));
}

}  // namespace ae::ui
