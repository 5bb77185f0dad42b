#pragma once
// No lost work: while a window's scene has unsaved changes, a copy of it (the same scene JSON as
// File › Save, view included) is written atomically to an autosave file, one second after the
// last edit and every 30 s. A clean save, a clean close (or Discard) and a return to the saved
// state remove it. Each file has a QLockFile held by its live window; a file whose lock is free
// or stale (its process died: a crash, SIGKILL, a power cut) is offered for restore at the next
// start, before anything else.

#include <QDateTime>
#include <QObject>
#include <QString>
#include <QStringList>
#include <functional>
#include <memory>
#include <vector>

#include "core/scene.h"

class QLockFile;
class QTimer;

namespace ae::ui {

class MainWindow;

// Where autosave files go: QStandardPaths::AppLocalDataLocation/autosave, or $AE_AUTOSAVE_DIR
// when set (test-only: lets a test and the processes it starts share a throw-away directory).
QString defaultAutosaveDirectory();

struct AutosaveTiming {
    int idleMs = 1000;     // after the last edit
    int periodMs = 30000;  // while there are changes not yet autosaved
};

// What an autosave file holds: format "attention-explorer/autosave", version 1, the scene file
// the window had (empty for an untitled scene), when and by which process it was written, and the
// scene as File › Save writes it.
struct AutosaveContents {
    QString originalFile;
    QDateTime savedAt;  // UTC
    qint64 pid = 0;
    Scene scene;  // with its view (scene.viewJson)
};
QByteArray autosaveJson(const QByteArray& sceneJson, const QString& originalFile,
                        const QDateTime& savedAt, qint64 pid);
// Throws SceneError with a one-line reason (not JSON, wrong format, the scene's own problem).
AutosaveContents parseAutosave(const QByteArray& json);

// An autosave file left by a process that is gone. It stays locked by this process while it
// exists, so two windows starting at once never offer the same file.
struct OrphanedAutosave {
    QString file;
    AutosaveContents contents;
    std::shared_ptr<QLockFile> lock;
};

struct AutosaveScan {
    std::vector<OrphanedAutosave> orphans;  // newest first
    // One line per unreadable file, which is renamed FILE.corrupt (kept, never offered again):
    // `Autosave FILE could not be read (reason); kept as FILE.corrupt`.
    QStringList problems;
};
// Finds the autosave files in `directory` whose lock is free or stale. Never throws.
AutosaveScan scanForOrphanedAutosaves(const QString& directory);

enum class RestoreChoice {
    Restore,  // open it as an unsaved scene; the file stays until the scene is saved
    Discard,  // delete it
    Later,    // keep it for the next start
};
using RestoreQuestion = std::function<RestoreChoice(const OrphanedAutosave&)>;
// The question the window asks: which scene, when it was saved, Restore / Discard / Later.
RestoreChoice askAboutAutosave(QWidget* parent, const OrphanedAutosave& orphan);

class Autosave : public QObject {
    Q_OBJECT
public:
    explicit Autosave(MainWindow* window, const QString& directory = defaultAutosaveDirectory(),
                      AutosaveTiming timing = {});
    ~Autosave() override;

    QString directory() const { return directory_; }
    // This window's autosave file; it exists only while there are unsaved changes.
    QString filePath() const { return filePath_; }
    void setTiming(AutosaveTiming timing);
    const QTimer* idleTimer() const { return idleTimer_; }
    const QTimer* periodicTimer() const { return periodicTimer_; }

    // Writes the autosave file if the scene has unsaved changes that are not in it yet. Returns
    // true when it wrote; on failure the reason is lastError() and failed() is emitted.
    bool writeIfChanged();
    // Deletes the autosave file and releases its lock (clean save, clean close, Discard).
    void removeFile();
    // Continues in a restored orphan's file (and lock), whose contents are the scene now open.
    void adopt(OrphanedAutosave orphan);
    QString lastError() const { return lastError_; }
    int writeCount() const { return writeCount_; }

signals:
    void written(const QString& file);
    void failed(const QString& message);

private:
    void documentEdited();
    void modifiedChanged(bool modified);
    bool documentModified() const;

    MainWindow* window_;
    QString directory_;
    QString filePath_;
    std::shared_ptr<QLockFile> lock_;
    QTimer* idleTimer_;
    QTimer* periodicTimer_;
    bool changedSinceWrite_ = false;
    QString lastError_;
    int writeCount_ = 0;
};

}  // namespace ae::ui
