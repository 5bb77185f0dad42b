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

class QJsonObject;
class QLockFile;
class QTimer;
class QWidget;

namespace ae::document {
class AttentionDocument;
}  // namespace ae::document

namespace ae::ui {

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
    Scene scene;  // with its view (scene.viewJson); only those two when takesNumbersFromModel
    // A scene made from a model's layer is kept without the model's numbers
    // (io::takesNumbersFromModel): restoring it opens the model first.
    bool takesNumbersFromModel = false;
    QByteArray sceneJson;
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

// What an autosave needs from the window whose work it keeps, without knowing that window.
struct AutosaveView {
    // The scene's file as File › Save writes it: the document's scene, with the window's view,
    // without a model's numbers when it is a model's layer.
    std::function<QByteArray()> sceneJsonForSaving;
    // Shows a restored scene's `view` object.
    std::function<void(const QJsonObject& view)> apply;
    // Restores a scene that takes its numbers from its model (ModelSession::openSavedLayer),
    // unsaved, with `originalFile` as its file.
    std::function<void(const QByteArray& sceneJson, const QString& originalFile)> openWithModel;
};

class Autosave : public QObject {
    Q_OBJECT
public:
    // Keeps `document`'s unsaved work; `window` owns it and is the parent of its dialogs.
    Autosave(document::AttentionDocument* document, AutosaveView view, QWidget* window,
             const QString& directory = defaultAutosaveDirectory(), AutosaveTiming timing = {});
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

    // Looks for autosave files left by processes that are gone (scanForOrphanedAutosaves) and
    // asks about each, newest first (`ask` replaces the dialog in tests). Unreadable ones are set
    // aside and reported by problemsFound. Returns true when one was restored: it is then the
    // open scene, unsaved, with its original file name; the others wait for the next start.
    bool offerRestore(const RestoreQuestion& ask = {});
    // Opens an orphan's scene and view as modified (Save writes to its original file) and
    // continues autosaving into its file, which stays until the scene is saved.
    void restore(OrphanedAutosave orphan);

signals:
    void written(const QString& file);
    void failed(const QString& message);
    // One line per autosave file that could not be read (AutosaveScan::problems).
    void problemsFound(const QString& text);

private:
    void documentEdited();
    void modifiedChanged(bool modified);
    bool documentModified() const;

    document::AttentionDocument* document_;
    AutosaveView view_;
    QWidget* window_;
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
