#pragma once
// The explorer's main window: the heatmap grid in the middle, the controls and the editors in
// docks, Edit › Undo/Redo from the document's stack, view options in the View menu and the
// scene's shape in the status bar. Window state and view options persist in QSettings.

#include <QMainWindow>
#include <functional>
#include <optional>

#include "document/workbench_session.h"

class QAction;
class QActionGroup;
class QComboBox;
class QDockWidget;
class QJsonObject;
class QLabel;
class QProgressBar;
class QMenu;
class QSpinBox;
class QTabWidget;
class QToolBar;

namespace ae::document {
class AttentionDocument;
class ModelSession;
class TranslationSession;
}  // namespace ae::document

namespace ae::plot {
class HeatmapGrid;
class ModelView;
}  // namespace ae::plot

namespace ae::ui {

class Autosave;
class Classroom;
class ControlsPanel;
class FileActions;
class ModelPanel;
class TranslationPanel;
class TranslationView;
class WorkbenchPanel;
class StaleClickGuard;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    document::AttentionDocument* document() const { return document_; }
    plot::HeatmapGrid* grid() const { return grid_; }
    ControlsPanel* controls() const { return controls_; }
    QAction* maskEditAction() const { return maskEdit_; }
    // Gallery, walkthrough, neuron view, comparisons, presentation mode (ui/classroom.h).
    Classroom* classroom() const { return classroom_; }
    // A whole model (issue 16): the session, its input panel (a dock) and the model view (the
    // Model tab beside the explorer's maps; both shown once a model is open).
    document::ModelSession* modelSession() const { return session_; }
    ModelPanel* modelPanel() const { return modelPanel_; }
    plot::ModelView* modelView() const { return modelView_; }
    WorkbenchPanel* workbench() const { return workbench_; }
    // An encoder–decoder model (T5, BART, Marian): its session, its input (a dock) and the
    // Translation tab, which take the Model tab's and the Workbench's place while it is open.
    document::TranslationSession* translationSession() const { return translation_; }
    TranslationPanel* translationPanel() const { return translationPanel_; }
    TranslationView* translationView() const { return translationView_; }
    StaleClickGuard* clickGuard() const { return clickGuard_; }
    // While a model is open, the middle of the window: the explorer's maps (tab 0) and the model
    // view (tab 1). Without a model the maps alone are the middle.
    QTabWidget* centralTabs() const { return centre_; }

    // These two replace the scene and empty Undo without asking (start-up, tests); a user's
    // action goes through FileActions::open / openPreset, which ask about unsaved changes first.
    //
    // Opens a scene file; on failure returns false with *error = "field.path: problem" and
    // keeps the current scene.
    bool openSceneFile(const QString& fileName, QString* error = nullptr);
    // Throws SceneError for an unknown name (the built-in ones always load).
    void openPreset(const QString& name);
    // Opens workbench experiment `name` (document/workbench_presets.h): its model on its text,
    // then the Workbench tab set up and run once the model has run. A preset on the user's
    // GPT-2 small takes `folder`, else looks in the recent models and the hub cache; when it
    // finds none it returns false with *why saying in one line how to get it. Unsaved changes
    // are asked about first (false, no *why, when the user cancels).
    bool openWorkbenchPreset(const QString& name, const QString& folder = {},
                             QString* why = nullptr);
    // The gallery's way: when the model is not found, says how to get it and offers a folder.
    void askWorkbenchPreset(const QString& name);
    // The last scene file if it still loads, else the default preset.
    void openStartupScene();
    // A problem worth telling but not worth blocking for (a start-up file that did not load).
    void showProblem(const QString& text);
    // A transient note in the status bar (editor refusals, head-count adjustments).
    void showStatusMessage(const QString& text);
    // The scene file's `view` object: mode, stage, head, query, colour map, panels
    // (ui/window_view.cpp).
    QJsonObject viewState() const;
    void applyViewState(const QJsonObject& view);
    FileActions* fileActions() const { return fileActions_; }
    // Keeps unsaved work, and offers what a crashed session left (Autosave::offerRestore).
    Autosave* autosave() const { return autosave_; }
    // View › Reset layout: every dock back in its first-start place (docked, tabbed and shown or
    // hidden as on a first start), the toolbar shown, and the window inside its screen.
    void resetLayout();
    // Brings the window's normal geometry inside the available area of its screen (restored
    // settings may come from a larger screen, or from a window that grew).
    void fitToScreen();

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    void createActions();
    void createDocks();
    void createStatusBar();
    void readSettings();
    void updateStatus();
    void updateHeadChoices();
    void createModelViews();
    // The tabs (Explorer, Model) and the model panel, or the explorer alone.
    void showModelLayout();
    void showTranslationLayout();
    // The tabs in the middle, with the one-stack model's tabs or the translation's.
    void showTabs(bool translation);
    void createTranslationViews();
    // A head chosen in the model view or the Translation tab: `openHead` puts its layer in the
    // document, then the Explorer tab comes to the front.
    void openInExplorer(const std::function<void()>& openHead);
    void showSceneLayout();
    void showModelResults();
    void showMapMode();  // the status bar's word on how the run keeps its maps
    void showOpenHead(int layer, int head);
    void showRequestedTab();
    bool explorerRequested() const;  // a saved view asks for the Explorer tab
    void applyPendingWorkbench();    // a workbench preset's settings, once its model has run

    document::AttentionDocument* document_;
    plot::HeatmapGrid* grid_;
    ControlsPanel* controls_;
    document::ModelSession* session_;
    FileActions* fileActions_;
    Autosave* autosave_;
    QToolBar* toolBar_ = nullptr;
    QDockWidget* controlsDock_ = nullptr;
    QDockWidget* tokensDock_ = nullptr;
    QDockWidget* weightsDock_ = nullptr;
    QMenu* viewMenu_ = nullptr;
    QActionGroup* colourGroup_ = nullptr;
    QAction* sharedRange_ = nullptr;
    QAction* showValues_ = nullptr;
    QAction* valueWeighted_ = nullptr;  // the weights value-weighted (plot::GridView)
    QAction* allHeads_ = nullptr;
    QAction* allStages_ = nullptr;
    QAction* maskEdit_ = nullptr;
    QComboBox* stageCombo_ = nullptr;
    QSpinBox* headSpin_ = nullptr;
    QLabel* stats_ = nullptr;
    QLabel* kvCache_ = nullptr;
    QLabel* mapMode_ = nullptr;
    QProgressBar* computeProgress_ = nullptr;
    QLabel* maskMode_ = nullptr;
    Classroom* classroom_ = nullptr;
    ModelPanel* modelPanel_ = nullptr;
    plot::ModelView* modelView_ = nullptr;
    WorkbenchPanel* workbench_ = nullptr;
    // A workbench preset being opened: its settings wait for its model's run on `text`.
    struct PendingWorkbench {
        QString text;
        document::WorkbenchSettings settings;
    };
    std::optional<PendingWorkbench> pendingWorkbench_;
    StaleClickGuard* clickGuard_ = nullptr;
    QDockWidget* modelDock_ = nullptr;
    document::TranslationSession* translation_ = nullptr;
    TranslationPanel* translationPanel_ = nullptr;
    TranslationView* translationView_ = nullptr;
    QDockWidget* translationDock_ = nullptr;
    QTabWidget* centre_ = nullptr;
    // A model being opened is shown (ModelSession::passStarting) and has not opened yet.
    bool openingShown_ = false;
    QString requestedTab_;  // a saved view's tab, shown once its model is open
};

}  // namespace ae::ui
