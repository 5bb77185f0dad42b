#pragma once
// The File and Edit menu entries that move scenes, images and matrices in and out of the window:
// open, save (atomic, with the window's view), recent files, dropped files, unsaved-changes
// prompts, image and matrix exports, imports, and copies to the clipboard.

#include <QObject>
#include <QStringList>
#include <functional>
#include <optional>

#include "document/attention_document.h"
#include "plot/stage.h"
#include "ui/files/export_dialog.h"

class QJsonObject;
class QMenu;
class QWidget;

namespace ae::plot {
class HeatmapGrid;
class ModelView;
}  // namespace ae::plot

namespace ae::ui {

enum class MatrixExportFormat { Csv, Npy, ResultJson };

// The answer to "NAME has unsaved changes. Save them?".
enum class UnsavedChoice { Save, Discard, Cancel };
// Asks it about the scene named `sceneName`; tests answer in place of the message box.
using UnsavedQuestion = std::function<UnsavedChoice(const QString& sceneName)>;

class FileActions : public QObject {
    Q_OBJECT
public:
    // What FileActions needs from the window it serves, without knowing that window.
    struct Window {
        QWidget* widget = nullptr;  // owns FileActions, parents its dialogs, takes dropped files
        document::AttentionDocument* document = nullptr;
        const plot::HeatmapGrid* grid = nullptr;  // the maps that exports and copies start from
        std::function<QJsonObject()> viewState;   // the `view` object Save writes
        // Replace the scene and empty Undo without asking, as MainWindow::openSceneFile and
        // MainWindow::openPreset do (the view, the last-scene setting).
        std::function<bool(const QString& fileName, QString* error)> openSceneFile;
        std::function<void(const QString& presetName)> openPreset;
        // Opens a model folder (in the background; ModelSession::open) without asking.
        std::function<void(const QString& folder)> openModel;
        // The model view when it is the view in front (a model is open and its tab shown), else
        // null: Export image and Export every head then work on the model.
        std::function<const plot::ModelView*()> modelViewInFront;
        // The layer as its model gives it, for a scene made from a model's layer (Save then
        // writes only the what-ifs: ModelSession::modelLayerOf); nothing for any other scene.
        std::function<std::shared_ptr<const Scene>(const Scene&)> modelLayerOf;
    };
    // Also accepts .json files dropped onto the window.
    explicit FileActions(Window window);

    void addOpenActions(QMenu* file);           // Open…, Open recent
    void addModelActions(QMenu* file);          // Open model…, Open built-in model, Recent models
    void addSaveAndExportActions(QMenu* file);  // Save, Save As, Import, Export…
    void addCopyActions(QMenu* edit);           // Copy image, Copy as LaTeX

    // Every path that puts a new scene in the window and clears Undo (Open, Open recent, a
    // dropped file, Open preset, the examples gallery, and any later one such as opening a model)
    // goes through maybeSave() first: with unsaved changes the user chooses Save, Discard or
    // Cancel, and Cancel leaves the scene and its undo history untouched. Imports and training
    // are undo steps instead, so they take nothing away and do not ask.
    //
    // Opens a scene file after asking about unsaved changes; a file that does not load leaves the
    // scene as it was and shows `FILE: field.path: problem`.
    bool open(const QString& fileName);
    // Opens a built-in scene (io::presets) after asking about unsaved changes.
    bool openPreset(const QString& name);
    // Opens a Hugging Face model folder after asking about unsaved changes (the model's layer 0
    // replaces the scene once it has run; a refusal is shown and keeps the scene). `folder` may
    // be builtin:NAME, a model shipped with the app (io/model/builtin_models.h).
    bool openModel(const QString& folder);
    // Recent models, newest first; a folder (or builtin:NAME) is remembered once it opened.
    QStringList recentModels() const;
    void rememberModel(const QString& folder);
    // Save, Save As. False when cancelled or failed (the failure is shown).
    bool save();
    bool saveAs();
    // The document's scene with the window's view, written atomically; on success the document
    // takes the name and is clean. A model's folder is written relative to the file when it is
    // near it (withFolderRelativeTo). On failure *error is `FILE: cannot write: reason` and the old
    // file is untouched.
    bool saveTo(const QString& fileName, QString* error = nullptr);
    // The scene as Save writes it: `view` holds the window's view (other keys kept).
    Scene sceneForSaving() const;
    // The file Save writes: the document's scene with viewJsonForSaving(), without the model's
    // numbers when it is a model's layer (io::sceneToJson(scene, layer)). Autosave calls it
    // every few seconds on this thread, so it copies neither the scene nor the layer.
    QByteArray sceneJsonForSaving() const;
    // True when there is nothing unsaved, or the user chose Save (and it worked) or Discard.
    bool maybeSave();
    // Replaces the message box maybeSave() shows (an empty function brings it back).
    void setUnsavedQuestion(UnsavedQuestion ask) { askUnsaved_ = std::move(ask); }
    QStringList recentFiles() const;

    // Reads a matrix (.npy or CSV) and, for embeddings, optional tokens (one per line), and
    // replaces the scene through the document (one undo step). False with *error for unreadable
    // files and shapes that do not fit.
    bool importEmbeddings(const QString& matrixFile, const QString& tokenFile = {},
                          QString* error = nullptr);
    bool importWeight(document::WeightMatrix which, const QString& matrixFile,
                      QString* error = nullptr);

    // Computes the scene in double (as `export` does) and writes the stage's matrices (every
    // head's), or every matrix: CSV or NPY into a directory, or the result JSON into a file.
    // Returns the files written. Throws io::WriteError, or SceneError when it cannot compute.
    static QStringList exportMatrices(const Scene& scene, std::optional<Stage> stage,
                                      MatrixExportFormat format, const QString& target);
    // A bmatrix of `stage` for `head`, computed in double.
    static QString latexForStage(const Scene& scene, Stage stage, int head, int decimals);

signals:
    // A transient note for the status bar (an export or a copy done).
    void statusMessage(const QString& text);
    // A failure worth telling but not worth blocking for (a file that did not load or save).
    void problem(const QString& text);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    std::string viewJsonForSaving() const;
    std::shared_ptr<const Scene> modelLayer() const;
    void openDialog();
    void rememberRecent(const QString& fileName);
    void fillRecentMenu();
    void openModelDialog();
    void fillRecentModelsMenu();
    // One entry per built-in model (its about.json title), filled each time it opens.
    void fillBuiltInModelsMenu();
    // One entry per model in the Hugging Face cache (io/model/hub_cache.h), listed from the
    // headers each time it opens: name, family, dtype and size; one that cannot open is
    // disabled and says why.
    void fillHubCacheMenu();
    void importEmbeddingsDialog(bool withTokens);
    void importWeightDialog(document::WeightMatrix which);
    void exportMatricesDialog();
    void exportDialog(ExportDialog::Mode mode);

public:
    // What Export image (Image) and Export every head (EveryHead) do now: the same on the maps,
    // ModelImage and ModelEveryHead when the model view is in front. A sweep is the maps' alone.
    ExportDialog::Mode exportModeFor(ExportDialog::Mode asked) const;

private:
    void copyImage();
    void copyLatexDialog();
    void fail(const QString& text);
    document::AttentionDocument* document() const { return window_.document; }

    Window window_;
    QMenu* recentMenu_ = nullptr;
    QMenu* recentModelsMenu_ = nullptr;
    QMenu* builtInModelsMenu_ = nullptr;
    QMenu* hubCacheMenu_ = nullptr;
    UnsavedQuestion askUnsaved_;
};

}  // namespace ae::ui
