#include "ui/window/main_window.h"
#include "ui/window/workbench_panel.h"

#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QInputDialog>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPointer>
#include <QProgressBar>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabBar>
#include <QTabWidget>
#include <QToolBar>
#include <QUndoStack>
#include <algorithm>

#include "document/attention_document.h"
#include "document/model_session.h"
#include "document/translation_session.h"
#include "io/scene/scene_file.h"
#include "plot/heatmap_controller.h"
#include "plot/heatmap_grid.h"
#include "plot/model_view.h"
#include "ui/classroom/classroom.h"
#include "ui/classroom/walkthrough_panel.h"
#include "ui/editors/controls_panel.h"
#include "ui/editors/tokens_editor.h"
#include "ui/editors/weights_editor.h"
#include "ui/files/autosave.h"
#include "ui/files/file_actions.h"
#include "ui/screen_fit.h"
#include "ui/setting.h"
#include "ui/training/model_training_page.h"
#include "ui/training/training_panel.h"
#include "ui/window/document_maps.h"
#include "ui/window/model_panel.h"
#include "ui/window/model_status_text.h"
#include "ui/window/presentation_mode.h"
#include "ui/window/stale_click_guard.h"
#include "ui/window/translation_panel.h"
#include "ui/window/translation_view.h"

namespace ae::ui {
namespace {

const Setting<QByteArray> kGeometry{"window/geometry", {}};
const Setting<QByteArray> kDockState{"window/state", {}};
const Setting<QString> kColourMap{"view/colourMap", QStringLiteral("viridis")};
const Setting<bool> kSharedRange{"view/sharedRange", false};
const Setting<bool> kShowValues{"view/showValues", true};
const Setting<QString> kLastScene{"scene/lastFile", {}};
const Setting<bool> kOneHeadView{"view/oneHead", false};
// The stage by its key: an index would move when a stage is added (the capped scores were).
const Setting<QString> kStage{"view/stage-key", QStringLiteral("weights")};
// The memory a model's run may keep before it keeps only what the model view draws, in GiB; 0:
// half of physical memory (document::defaultMapBudget).
const Setting<double> kMapBudgetGiB{"model/mapBudgetGiB", 0.0};
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

double mapBudgetSetting() {
    const double gib = kMapBudgetGiB.read();
    return gib > 0 ? gib * kGiB : document::defaultMapBudget();
}

const char* const kDefaultPreset = "default";

// Where each dock sits on a first start (and after View › Reset layout). Docks in one group
// share a place as tabs, the first one in front.
struct DockPlace {
    const char* name;
    Qt::DockWidgetArea area;
    bool shown;
};
const DockPlace kDefaultDocks[] = {
    {"modelDock", Qt::TopDockWidgetArea, false},
    {"controlsDock", Qt::LeftDockWidgetArea, true},
    {"tokensDock", Qt::LeftDockWidgetArea, true},
    {"weightsDock", Qt::LeftDockWidgetArea, true},
    {"trainingDock", Qt::RightDockWidgetArea, false},
    {"trainingModelDock", Qt::RightDockWidgetArea, false},
    {"walkthroughDock", Qt::RightDockWidgetArea, false},
    {"neuronDock", Qt::BottomDockWidgetArea, false},
    {"pinDock", Qt::BottomDockWidgetArea, false},
};
const std::initializer_list<const char*> kTabGroups[] = {
    {"tokensDock", "weightsDock"},
    {"walkthroughDock", "trainingDock"},
    {"neuronDock", "pinDock"},
};
// A dock asks for its contents' width up to this, then scrolls: the left column, the right one
// and the maps still fit side by side on 1024 pixels.
constexpr int kWidestDockMinimum = 310;

}  // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      document_(new document::AttentionDocument(this)),
      grid_(new plot::HeatmapGrid(this)),
      controls_(new ControlsPanel(document_, this)),
      session_(new document::ModelSession(document_, this)),
      fileActions_(new FileActions(
          {this, document_, grid_, [this] { return viewState(); },
           [this](const QString& file, QString* error) { return openSceneFile(file, error); },
           [this](const QString& name) { openPreset(name); },
           [this](const QString& folder) { session_->open(folder); },
           [this]() -> const plot::ModelView* {
               return centre_ && centralWidget() == centre_ &&
                              centre_->currentWidget() == modelView_
                          ? modelView_
                          : nullptr;
           },
           [this](const Scene& scene) { return session_->modelLayerOf(scene); }})),
      autosave_(new Autosave(document_,
                             {[this] { return fileActions_->sceneJsonForSaving(); },
                              [this](const QJsonObject& view) { applyViewState(view); },
                              [this](const QByteArray& json, const QString& originalFile) {
                                  session_->openSavedLayer(json, originalFile, true);
                              }},
                             this)) {
    auto* maps = new DocumentMaps(document_, grid_);
    connect(maps, &DocumentMaps::statusMessage, this,
            [this](const QString& text) { statusBar()->showMessage(text, 6000); });
    setWindowTitle(tr("Attention Explorer"));
    session_->setMapBudget(mapBudgetSetting());
    createModelViews();
    createActions();
    createDocks();
    createStatusBar();
    classroom_ = new Classroom(this, document_, grid_, headSpin_);
    // Like File › Open preset: unsaved changes are asked about first.
    connect(classroom_, &Classroom::presetRequested, fileActions_, &FileActions::openPreset);
    connect(classroom_, &Classroom::modelRequested, fileActions_, &FileActions::openModel);
    connect(classroom_, &Classroom::workbenchPresetRequested, this,
            &MainWindow::askWorkbenchPreset);
    // The walkthrough's trained-model tour opens its built-in model and shows the model view.
    WalkthroughPanel* walkthrough = classroom_->walkthrough();
    walkthrough->setModelSession(session_);
    connect(walkthrough, &WalkthroughPanel::modelRequested, fileActions_, &FileActions::openModel);
    connect(walkthrough, &WalkthroughPanel::compositionRequested, this, [this] {
        if (centralWidget() == centre_)
            centre_->setCurrentWidget(
                centre_->findChild<QWidget*>(QStringLiteral("workbenchScroll")));
        workbench_->runComposition('k');
    });
    connect(walkthrough, &WalkthroughPanel::modelViewRequested, this, [this] {
        if (centralWidget() == centre_) centre_->setCurrentWidget(modelView_);
    });
    connect(classroom_->presentation(), &PresentationMode::activeChanged, modelView_,
            &plot::ModelView::setPresentation);
    connect(classroom_->presentation(), &PresentationMode::activeChanged, translationView_,
            &TranslationView::setPresentation);
    // The training dock's model view too: a teacher shows a head forming on the projector.
    if (auto* training = findChild<TrainingPanel*>()) {
        connect(classroom_->presentation(), &PresentationMode::activeChanged,
                training->modelPage()->modelView(), &plot::ModelView::setPresentation);
    }
    for (QDockWidget* dock : findChildren<QDockWidget*>()) {
        // The training panel fits as it is (356x359), and test_training_panel reaches it as the
        // dock's widget.
        if (dock->objectName() != QLatin1String("trainingDock"))
            makeDockScrollable(dock, kWidestDockMinimum);
    }
    resetLayout();
    qApp->installEventFilter(new DialogScreenFit(this));
    readSettings();
    connect(document_, &document::AttentionDocument::structureChanged, this,
            &MainWindow::updateHeadChoices);
    connect(document_, &document::AttentionDocument::fileNameChanged, this,
            &MainWindow::updateHeadChoices);
    connect(document_, &document::AttentionDocument::resultsChanged, this,
            &MainWindow::updateStatus);
    connect(grid_, &plot::HeatmapGrid::statusMessage, this,
            [this](const QString& text) { statusBar()->showMessage(text, 6000); });
    connect(controls_, &ControlsPanel::messageRequested, this,
            [this](const QString& text) { statusBar()->showMessage(text, 8000); });
    connect(document_, &document::AttentionDocument::modifiedChanged, this,
            &MainWindow::setWindowModified);
    connect(fileActions_, &FileActions::statusMessage, this, &MainWindow::showStatusMessage);
    connect(fileActions_, &FileActions::problem, this, &MainWindow::showProblem);
    connect(autosave_, &Autosave::failed, this, &MainWindow::showStatusMessage);
    connect(autosave_, &Autosave::problemsFound, this, &MainWindow::showProblem);
}

MainWindow::~MainWindow() {
    // The autosave goes first: the undo stack clears itself when the document is destroyed, which
    // would look like a return to the saved state and delete the copy of unsaved work. A window
    // destroyed without closing (the application ending any other way) leaves its copy.
    delete autosave_;
}

void MainWindow::createActions() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    fileActions_->addOpenActions(file);
    fileActions_->addModelActions(file);
    QMenu* presets = file->addMenu(tr("Open &preset"));
    for (const io::PresetInfo& preset : io::presets()) {
        QAction* a = presets->addAction(preset.name + QStringLiteral(" — ") + preset.description);
        connect(a, &QAction::triggered, this,
                [this, name = preset.name] { fileActions_->openPreset(name); });
    }
    fileActions_->addSaveAndExportActions(file);
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    QAction* undo = document_->undoStack()->createUndoAction(this, tr("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    QAction* redo = document_->undoStack()->createRedoAction(this, tr("&Redo"));
    redo->setShortcut(QKeySequence::Redo);
    edit->addAction(undo);
    edit->addAction(redo);
    edit->addSeparator();
    fileActions_->addCopyActions(edit);
    edit->addSeparator();
    maskEdit_ = edit->addAction(tr("Edit &mask by clicking cells"));
    maskEdit_->setObjectName(QStringLiteral("maskEditAction"));
    maskEdit_->setCheckable(true);
    maskEdit_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_M));
    maskEdit_->setToolTip(tr("Click a score or weight cell to hide or show that query–key pair"));
    connect(maskEdit_, &QAction::toggled, grid_, &plot::HeatmapGrid::setMaskEditMode);

    QMenu* view = viewMenu_ = menuBar()->addMenu(tr("&View"));
    auto* modes = new QActionGroup(this);
    allHeads_ = view->addAction(tr("One stage, &all heads"));
    allHeads_->setObjectName(QStringLiteral("viewAllHeadsAction"));
    allStages_ = view->addAction(tr("One head, all &stages"));
    allStages_->setObjectName(QStringLiteral("viewAllStagesAction"));
    for (QAction* a : {allHeads_, allStages_}) {
        a->setCheckable(true);
        modes->addAction(a);
    }
    allHeads_->setChecked(true);
    connect(allHeads_, &QAction::toggled, this, [this](bool on) {
        grid_->setViewMode(on ? plot::ViewMode::AllHeads : plot::ViewMode::AllStages);
        stageCombo_->setEnabled(on);
        headSpin_->setEnabled(!on);
        kOneHeadView.write(!on);
    });
    view->addSeparator();
    QMenu* colours = view->addMenu(tr("&Colour map for weights"));
    colourGroup_ = new QActionGroup(this);
    for (const QString& name : plot::colorMapNames()) {
        QAction* a = colours->addAction(name);
        a->setCheckable(true);
        a->setData(name);
        colourGroup_->addAction(a);
        connect(a, &QAction::triggered, this, [this, name] {
            grid_->setWeightsMap(plot::colorMapFromName(name).value_or(plot::ColorMap::Viridis));
            kColourMap.write(name);
        });
    }
    sharedRange_ = view->addAction(tr("&Shared colour range across heads"));
    sharedRange_->setCheckable(true);
    sharedRange_->setToolTip(
        tr("Signed maps: one range for all heads of a stage, so heads compare"));
    connect(sharedRange_, &QAction::toggled, this, [this](bool on) {
        grid_->setSharedRange(on);
        kSharedRange.write(on);
    });
    QMenu* pooling = view->addMenu(tr("Large maps: &pooling"));
    pooling->setToolTip(tr("A map with more cells than pixels shows one cell per pixel"));
    auto* poolingGroup = new QActionGroup(this);
    for (const auto& [label, mode] :
         {std::pair{tr("&Max (keeps peaks)"), plot::Pooling::Max},
          std::pair{tr("M&ean (keeps averages)"), plot::Pooling::Mean}}) {
        QAction* a = pooling->addAction(label);
        a->setCheckable(true);
        a->setChecked(mode == plot::Pooling::Max);
        poolingGroup->addAction(a);
        connect(a, &QAction::triggered, this, [this, mode = mode] { grid_->setPooling(mode); });
    }
    showValues_ = view->addAction(tr("&Numbers in cells"));
    showValues_->setCheckable(true);
    connect(showValues_, &QAction::toggled, this, [this](bool on) {
        grid_->setShowValues(on);
        kShowValues.write(on);
    });
    valueWeighted_ = view->addAction(tr("&Value-weighted weights"));
    valueWeighted_->setObjectName(QStringLiteral("valueWeightedAction"));
    valueWeighted_->setCheckable(true);
    valueWeighted_->setToolTip(
        tr("Draw each weight as the share of what the head moves that comes from that key: "
           "α·‖v·W_O‖, normalised per row (Kobayashi et al. 2020)"));
    connect(valueWeighted_, &QAction::toggled, grid_, &plot::HeatmapGrid::setValueWeighted);
    connect(grid_, &plot::HeatmapGrid::valueWeightedChanged, valueWeighted_, &QAction::setChecked);
    QAction* mapMemory = view->addAction(tr("Memory for a model's &maps…"));
    mapMemory->setObjectName(QStringLiteral("mapMemoryAction"));
    mapMemory->setToolTip(
        tr("A run needing more keeps only each head's summary and small map, and recomputes "
           "a layer's full maps when a view asks"));
    connect(mapMemory, &QAction::triggered, this, [this] {
        bool ok = false;
        const double physical = physicalMemoryBytes() / kGiB;
        const double gib = QInputDialog::getDouble(
            this, tr("Memory for a model's maps"),
            tr("A run of a model keeps every head's maps when it needs at most this much "
               "memory (GiB; this machine has %1 GiB):")
                .arg(physical, 0, 'f', 1),
            session_->mapBudget() / kGiB, 0.1, std::max(0.1, physical), 1, &ok);
        if (!ok) return;
        kMapBudgetGiB.write(gib);
        session_->setMapBudget(gib * kGiB);
    });
    view->addSeparator();

    QToolBar* bar = toolBar_ = addToolBar(tr("View"));
    bar->setObjectName(QStringLiteral("viewToolBar"));
    bar->addAction(allHeads_);
    bar->addAction(allStages_);
    bar->addSeparator();
    bar->addWidget(new QLabel(tr(" Stage ")));
    stageCombo_ = new QComboBox(bar);
    stageCombo_->setObjectName(QStringLiteral("stageCombo"));
    for (int s = 0; s < kStageCount; ++s)
        stageCombo_->addItem(plot::stageName(static_cast<Stage>(s)), s);
    stageCombo_->setCurrentIndex(static_cast<int>(Stage::Weights));
    connect(stageCombo_, &QComboBox::currentIndexChanged, this, [this](int index) {
        grid_->setStage(static_cast<Stage>(index));
        kStage.write(QString::fromLatin1(stageInfo(static_cast<Stage>(index)).key));
    });
    bar->addWidget(stageCombo_);
    bar->addWidget(new QLabel(tr("  Head ")));
    headSpin_ = new QSpinBox(bar);
    headSpin_->setObjectName(QStringLiteral("headSpin"));
    headSpin_->setEnabled(false);
    connect(headSpin_, &QSpinBox::valueChanged, grid_, &plot::HeatmapGrid::setHead);
    bar->addWidget(headSpin_);
    bar->addSeparator();
    bar->addAction(showValues_);
    bar->addAction(valueWeighted_);
    bar->addAction(maskEdit_);
    view->addAction(bar->toggleViewAction());
}

void MainWindow::createModelViews() {
    // Without a model the maps are the middle, as they always were. With one, the middle becomes
    // two tabs: the maps (Explorer) and the model view (Model).
    setCentralWidget(grid_);
    centre_ = new QTabWidget(this);
    centre_->setObjectName(QStringLiteral("centralTabs"));
    centre_->setDocumentMode(true);
    centre_->hide();
    clickGuard_ = new StaleClickGuard(this);
    modelView_ = new plot::ModelView(centre_);
    modelView_->setObjectName(QStringLiteral("modelView"));
    centre_->addTab(modelView_, tr("Model"));
    // In a scroll area: the tab never widens the window (every dock must fit 1024 pixels).
    workbench_ = new WorkbenchPanel(session_);
    auto* workbenchScroll = new QScrollArea(centre_);
    workbenchScroll->setObjectName(QStringLiteral("workbenchScroll"));
    workbenchScroll->setWidgetResizable(true);
    workbenchScroll->setFrameShape(QFrame::NoFrame);
    workbenchScroll->setWidget(workbench_);
    centre_->addTab(workbenchScroll, tr("Workbench"));
    connect(workbench_, &WorkbenchPanel::explorerRequested, this,
            [this] { centre_->setCurrentWidget(grid_); });

    modelPanel_ = new ModelPanel(session_);
    modelDock_ = new QDockWidget(tr("Model input"), this);
    modelDock_->setObjectName(QStringLiteral("modelDock"));
    modelDock_->setWidget(modelPanel_);
    addDockWidget(Qt::TopDockWidgetArea, modelDock_);
    modelDock_->hide();

    connect(session_, &document::ModelSession::opened, this, [this] {
        openingShown_ = false;
        showModelLayout();
        showRequestedTab();  // the model view, unless a saved view asks for the explorer
        fileActions_->rememberModel(session_->location());
        showStatusMessage(tr("Opened %1").arg(session_->folder()));
    });
    connect(session_, &document::ModelSession::closed, this, [this] {
        // An encoder–decoder model's scene replaced the one-stack model's layer: its tabs stay.
        if (!translation_->isOpen()) showSceneLayout();
        modelView_->setData({});
    });
    // A model being opened is shown from its headers, before its values are read and its first
    // pass has run (a big one's take minutes): the Model tab's frames fill layer by layer, under
    // the model panel's progress and Cancel.
    connect(session_, &document::ModelSession::passStarting, this,
            [this](int layers, int heads, int tokens) {
                openingShown_ = true;
                showModelLayout();
                if (!explorerRequested()) centre_->setCurrentWidget(modelView_);
                modelView_->startLayerByLayer(layers, heads, tokens);
            });
    // An opening refused or cancelled after that (it never said opened()): the window goes back
    // to what is open. A pass that did deliver is left alone: its results follow.
    connect(session_, &document::ModelSession::busyChanged, this, [this](bool busy) {
        if (busy || !openingShown_) return;
        openingShown_ = false;
        if (!session_->isOpen()) {
            if (!translation_->isOpen()) showSceneLayout();
            modelView_->setData({});
        } else {
            showModelResults();
        }
    });
    connect(session_, &document::ModelSession::resultsChanged, this, &MainWindow::showModelResults);
    connect(modelView_, &plot::ModelView::valueWeightedToggled, session_,
            &document::ModelSession::setValueWeighted);
    connect(session_, &document::ModelSession::resultsChanged, this,
            &MainWindow::applyPendingWorkbench);
    connect(session_, &document::ModelSession::busyChanged, this,
            &MainWindow::applyPendingWorkbench);
    connect(session_, &document::ModelSession::openRefused, this,
            [this] { pendingWorkbench_.reset(); });
    connect(session_, &document::ModelSession::layerDigestReady, modelView_,
            &plot::ModelView::showLayerDigest);
    connect(session_, &document::ModelSession::openHeadChanged, this, &MainWindow::showOpenHead);
    connect(session_, &document::ModelSession::problem, this, &MainWindow::showStatusMessage);
    connect(session_, &document::ModelSession::openRefused, this, &MainWindow::showProblem);
    connect(session_, &document::ModelSession::savedLayerOpened, this,
            [this](const QJsonObject& view) { applyViewState(view); });
    connect(modelView_, &plot::ModelView::headActivated, this, [this](int layer, int head) {
        openInExplorer([&] { session_->openHead(layer, head); });
    });
    connect(modelView_, &plot::ModelView::positionSelected, session_,
            &document::ModelSession::setSelectedPosition);
    createTranslationViews();
    connect(modelView_, &plot::ModelView::summariesNeeded, session_,
            &document::ModelSession::measureInduction);
}

void MainWindow::createTranslationViews() {
    translation_ = new document::TranslationSession(document_, this);
    translationView_ = new TranslationView(translation_, centre_);
    translationView_->setObjectName(QStringLiteral("translationView"));
    translationView_->hide();  // a tab of its own while an encoder–decoder model is open
    translationPanel_ = new TranslationPanel(translation_);
    translationDock_ = new QDockWidget(tr("Translation input"), this);
    translationDock_->setObjectName(QStringLiteral("translationDock"));
    translationDock_->setWidget(translationPanel_);
    addDockWidget(Qt::TopDockWidgetArea, translationDock_);
    translationDock_->hide();
    // The model session reads every folder opened, and hands an encoder–decoder one over.
    connect(session_, &document::ModelSession::encoderDecoderOpened, translation_,
            &document::TranslationSession::start);
    connect(translation_, &document::TranslationSession::opened, this, [this] {
        showTranslationLayout();
        centre_->setCurrentWidget(translationView_);
        fileActions_->rememberModel(translation_->location());
        showStatusMessage(tr("Opened %1").arg(translation_->folder()));
    });
    connect(translation_, &document::TranslationSession::closed, this, [this] {
        if (session_->isOpen())
            showModelLayout();
        else
            showSceneLayout();
    });
    connect(translation_, &document::TranslationSession::problem, this,
            &MainWindow::showStatusMessage);
    connect(translation_, &document::TranslationSession::openHeadChanged, this,
            &MainWindow::showOpenHead);
    connect(translationView_, &TranslationView::headActivated, this,
            [this](model::AttentionKind kind, int layer, int head) {
                openInExplorer([&] { translation_->openHead(kind, layer, head); });
            });
}

void MainWindow::openInExplorer(const std::function<void()>& openHead) {
    QElapsedTimer preparing;
    preparing.start();
    openHead();
    if (centralWidget() == centre_) centre_->setCurrentWidget(grid_);
    // Clicks made while the layer was prepared were aimed at the view the head was chosen in, not
    // at the maps now under the pointer.
    clickGuard_->dropClicksDuring(preparing.elapsed());
}

void MainWindow::showModelLayout() {
    showTabs(false);
}

void MainWindow::showTranslationLayout() {
    showTabs(true);
}

void MainWindow::showTabs(bool translation) {
    if (centralWidget() == grid_) {
        takeCentralWidget();
        centre_->insertTab(0, grid_, tr("Explorer"));
        setCentralWidget(centre_);
        centre_->show();
    }
    // A hidden page still widens the tabs to its minimum: the tabs not in use are taken out.
    auto* workbenchScroll = centre_->findChild<QWidget*>(QStringLiteral("workbenchScroll"));
    const auto place = [this](QWidget* page, const QString& name, bool shown) {
        const int at = centre_->indexOf(page);
        if (shown && at < 0) centre_->addTab(page, name);
        if (!shown && at >= 0) centre_->removeTab(at);
    };
    place(modelView_, tr("Model"), !translation);
    place(workbenchScroll, tr("Workbench"), !translation);
    place(translationView_, tr("Translation"), translation);
    modelDock_->setVisible(!translation);
    translationDock_->setVisible(translation);
}

void MainWindow::showSceneLayout() {
    if (centralWidget() == centre_) {
        takeCentralWidget();  // the tabs stay this window's, hidden, for the next model
        centre_->setParent(this);
        centre_->hide();
        centre_->removeTab(centre_->indexOf(grid_));
        setCentralWidget(grid_);
        grid_->show();
    }
    modelDock_->hide();
    translationDock_->hide();
}

void MainWindow::showModelResults() {
    plot::ModelViewData data;
    data.run = session_->currentRun();
    data.valueWeighted = session_->valueWeightedDigests();
    if (data.run) {
        for (long long id : data.run->tokens)
            data.tokens << session_->tokenLabel(id);
    }
    data.tokenText = [session = QPointer<document::ModelSession>(session_)](long long id) {
        return session ? session->tokenLabel(id) : QString::number(id);
    };
    const document::RunAnalysis& analysis = session_->analysis();
    data.summaries = analysis.summaries;
    // The sink column, once the run's values are weighed (document::valueWeightedDigests).
    const std::vector<double> sinks = session_->sinkNorms();
    if (data.run && sinks.size() == data.summaries.size())
        for (model::HeadSummary& s : data.summaries)
            s.sinkNorm = sinks[static_cast<std::size_t>(s.layer * data.run->config.heads + s.head)];
    data.induction = analysis.induction;
    data.inductionNote = analysis.inductionNote;
    data.position = analysis.position;
    data.predictions = analysis.predictions;
    data.basePredictions = analysis.basePredictions;
    data.changedHeads = session_->changedHeads(0.01);
    // The boundary of the input shown, when the run is of that input.
    if (data.run && data.run->tokens == session_->ids()) data.pairStart = session_->pairStart();
    if (data.run && document::keepsOnlyDigests(*data.run)) {
        data.layerWeights = [session = QPointer<document::ModelSession>(session_),
                             run = data.run](int layer) {
            if (!session || !session->model()) return std::vector<model::Matrix<float>>();
            return model::recomputedLayerMaps(*session->model(), *run, layer).weights;
        };
    }
    if (session_->layer() >= 0) {
        data.openHead = std::pair{session_->layer(), session_->head()};
        // A head switched off keeps its weights, but it is the first head the what-if changed.
        for (int h : document_->scene().ablation.heads) {
            const std::pair<int, int> off{session_->layer(), h};
            if (std::find(data.changedHeads.begin(), data.changedHeads.end(), off) ==
                data.changedHeads.end())
                data.changedHeads.push_back(off);
        }
    }
    showMapMode();
    modelView_->setData(std::move(data));
}

void MainWindow::showMapMode() {
    const std::shared_ptr<const document::ModelSession::Run> run = session_->currentRun();
    mapMode_->setVisible(run && session_->model());
    if (!run || !session_->model()) return;
    const double needed =
        model::runMemory(*session_->model(), static_cast<long long>(run->tokens.size()),
                         sizeof(float), -1, true)
            .total();
    const bool planned = document::keepsOnlyDigests(*run);
    mapMode_->setText(mapMemoryStatus(planned, needed, session_->mapBudget(), true));
    mapMode_->setToolTip(mapMemoryStatus(planned, needed, session_->mapBudget(), false));
}

void MainWindow::showOpenHead(int layer, int head) {
    if (layer < 0) return;
    // The opened head, all its stages; the head spin box still picks another.
    headSpin_->setRange(0, document_->scene().heads - 1);
    allStages_->setChecked(true);
    headSpin_->setValue(head);
    grid_->setHead(head);
    showModelResults();
}

void MainWindow::createDocks() {
    controlsDock_ = new QDockWidget(tr("Controls"), this);
    controlsDock_->setObjectName(QStringLiteral("controlsDock"));
    controlsDock_->setWidget(controls_);
    controlsDock_->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    addDockWidget(Qt::LeftDockWidgetArea, controlsDock_);

    auto* tokensEditor = new TokensEditor(document_);
    auto* weightsEditor = new WeightsEditor(document_);
    // Refusals and notes from the editors also reach the status bar, where the eye goes.
    connect(tokensEditor, &TokensEditor::messageRequested, this, &MainWindow::showStatusMessage);
    connect(weightsEditor, &WeightsEditor::messageRequested, this, &MainWindow::showStatusMessage);
    tokensDock_ = new QDockWidget(tr("Tokens and embeddings"), this);
    tokensDock_->setObjectName(QStringLiteral("tokensDock"));
    tokensDock_->setWidget(tokensEditor);
    weightsDock_ = new QDockWidget(tr("Weights"), this);
    weightsDock_->setObjectName(QStringLiteral("weightsDock"));
    weightsDock_->setWidget(weightsEditor);
    addDockWidget(Qt::LeftDockWidgetArea, tokensDock_);
    addDockWidget(Qt::LeftDockWidgetArea, weightsDock_);

    for (QDockWidget* dock : {controlsDock_, tokensDock_, weightsDock_, modelDock_}) {
        viewMenu_->addAction(dock->toggleViewAction());
    }
    TrainingPanel* training = addTrainingDock(this, document_, viewMenu_);
    // A model the training dock saved opens as File › Open model opens one.
    connect(training, &TrainingPanel::openModelRequested, fileActions_, &FileActions::openModel);
    QAction* reset = viewMenu_->addAction(tr("Reset &layout"), this, &MainWindow::resetLayout);
    reset->setObjectName(QStringLiteral("resetLayoutAction"));
    reset->setToolTip(tr("Every panel back in its first-start place, and the window on screen"));
}

void MainWindow::resetLayout() {
    // The layout is the normal window's: presentation mode ends first, or leaving it later would
    // bring back the panels it had hidden, over the reset.
    if (classroom_ && classroom_->presentation()->isActive())
        classroom_->presentation()->setActive(false);
    for (const DockPlace& place : kDefaultDocks) {
        auto* dock = findChild<QDockWidget*>(QLatin1String(place.name));
        if (!dock) continue;
        dock->setFloating(false);
        addDockWidget(place.area, dock);
        // The model's input shows whenever a model is open.
        dock->setVisible(place.shown || (dock == modelDock_ && session_ && session_->isOpen()));
    }
    for (const auto& group : kTabGroups) {
        QDockWidget* first = findChild<QDockWidget*>(QLatin1String(*group.begin()));
        for (const char* name : group) {
            QDockWidget* other = findChild<QDockWidget*>(QLatin1String(name));
            if (first && other && other != first) tabifyDockWidget(first, other);
        }
        if (first) first->raise();
    }
    removeToolBar(toolBar_);
    addToolBar(Qt::TopToolBarArea, toolBar_);
    toolBar_->show();
    // The maps get most of the width: the left column takes 30% of the window, no less than its
    // panels need and no more than the editors would like.
    const int leftColumn = std::clamp(
        width() * 3 / 10, controlsDock_->minimumSizeHint().width(),
        std::max(controlsDock_->minimumSizeHint().width(), tokensDock_->sizeHint().width()));
    resizeDocks({controlsDock_}, {leftColumn}, Qt::Horizontal);
    fitToScreen();
}

void MainWindow::fitToScreen() {
    if (!isMaximized() && !isFullScreen()) fitWindowToScreen(this);
}

void MainWindow::showStatusMessage(const QString& text) {
    statusBar()->showMessage(text, 8000);
}

void MainWindow::createStatusBar() {
    maskMode_ = new QLabel(tr(" MASK EDIT: click a score or weight cell "));
    maskMode_->setObjectName(QStringLiteral("maskModeLabel"));
    maskMode_->setStyleSheet(QStringLiteral(
        "QLabel { background: #e65100; color: white; font-weight: bold; border-radius: 3px; }"));
    maskMode_->hide();
    stats_ = new QLabel;
    stats_->setObjectName(QStringLiteral("statsLabel"));
    // The line grows with the scene (L_q and L_k, wide numbers); on a narrow screen its end is
    // cut (the whole line is in the tooltip) rather than the window growing wider than the screen.
    stats_->setMinimumWidth(stats_->fontMetrics().averageCharWidth() * 24);
    // A background compute past the progress delay: how far it is, under the maps that still
    // show the last results.
    computeProgress_ = new QProgressBar;
    computeProgress_->setObjectName(QStringLiteral("computeProgress"));
    computeProgress_->setRange(0, 1000);
    computeProgress_->setMaximumWidth(260);
    computeProgress_->hide();
    statusBar()->addPermanentWidget(maskMode_);
    statusBar()->addPermanentWidget(computeProgress_);
    // What the layer's K and V cost a decoder per token (issue 17): the kv heads slider moves it.
    kvCache_ = new QLabel;
    kvCache_->setObjectName(QStringLiteral("kvCacheLabel"));
    kvCache_->setMinimumWidth(stats_->fontMetrics().averageCharWidth() * 24);
    statusBar()->addPermanentWidget(kvCache_);
    // Whether the model's run keeps every map or recomputes a layer's when asked.
    mapMode_ = new QLabel;
    mapMode_->setObjectName(QStringLiteral("mapModeLabel"));
    mapMode_->hide();
    statusBar()->addPermanentWidget(mapMode_);
    statusBar()->addPermanentWidget(stats_);
    connect(maskEdit_, &QAction::toggled, maskMode_, &QWidget::setVisible);
    connect(document_, &document::AttentionDocument::progressChanged, this,
            [this](double fraction, const QString& stage) {
                computeProgress_->setValue(static_cast<int>(fraction * 1000.0));
                computeProgress_->setFormat(tr("Computing %1… %p%").arg(stage));
                computeProgress_->show();
            });
    connect(document_, &document::AttentionDocument::computingChanged, this,
            [this](bool computing) {
                if (!computing) computeProgress_->hide();
            });
    connect(document_, &document::AttentionDocument::editRefused, this,
            &MainWindow::showStatusMessage);
}

void MainWindow::readSettings() {
    const QByteArray geometry = kGeometry.read();
    if (geometry.isEmpty() || !restoreGeometry(geometry)) {
        const QScreen* screen = QGuiApplication::primaryScreen();
        resize(screen ? screen->availableSize() * 0.9 : QSize(1400, 900));
    }
    // No saved layout: the first-start one, sized for this window.
    if (!restoreState(kDockState.read())) resetLayout();
    fitToScreen();
    for (QAction* a : colourGroup_->actions()) {
        if (a->data().toString() == kColourMap.read()) a->trigger();
    }
    if (!colourGroup_->checkedAction()) colourGroup_->actions().constFirst()->trigger();
    sharedRange_->setChecked(kSharedRange.read());
    showValues_->setChecked(kShowValues.read());
    grid_->setSharedRange(sharedRange_->isChecked());
    stageCombo_->setCurrentIndex(
        static_cast<int>(stageWithKey(kStage.read().toStdString()).value_or(Stage::Weights)));
    (kOneHeadView.read() ? allStages_ : allHeads_)->setChecked(true);
    grid_->setShowValues(showValues_->isChecked());
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (!fileActions_->maybeSave()) {
        event->ignore();
        return;
    }
    // Saved, or the user chose Discard: nothing left to restore.
    autosave_->removeFile();
    kGeometry.write(saveGeometry());
    kDockState.write(saveState());
    event->accept();
}

void MainWindow::updateHeadChoices() {
    const int heads = document_->scene().heads;
    headSpin_->setRange(0, heads - 1);
    const QString title = QString::fromStdString(document_->scene().title);
    const QString file = QFileInfo(document_->fileName()).fileName();
    setWindowTitle(tr("%1[*] — Attention Explorer")
                       .arg(file.isEmpty() ? (title.isEmpty() ? tr("untitled") : title) : file));
}

void MainWindow::updateStatus() {
    const Scene& scene = document_->scene();
    QString lengths = scene.hasSource
                          ? tr("L_q %1 · L_k %2").arg(scene.queryCount()).arg(scene.keyCount())
                          : tr("L %1").arg(scene.queryCount());
    stats_->setText(
        tr("%1 · d_model %2 · d_proj %3 · heads %4 · d_head %5 · divisor %6 · computed in %7 ms ")
            .arg(lengths)
            .arg(scene.dModel())
            .arg(scene.dProj())
            .arg(scene.heads)
            .arg(scene.dHead())
            .arg(QString::number(scene.divisor(), 'g', 4))
            .arg(QString::number(document_->lastComputeMilliseconds(), 'f', 2)));
    stats_->setToolTip(stats_->text());
    kvCache_->setText(keyValueCacheStatus(scene, session_->model(), session_->folder(), true));
    controls_->setLayerFeatures(layerFeatureLines(scene, session_->model(), session_->layer()));
    kvCache_->setToolTip(
        tr("%1.\nKeys and values a decoder keeps per token: 2 (K and V) × kv heads × d_head "
           "numbers a layer; a loaded model's figure is for all its layers, its kv heads and "
           "dtype")
            .arg(keyValueCacheStatus(scene, session_->model(), session_->folder())));
}

bool MainWindow::openSceneFile(const QString& fileName, QString* error) {
    try {
        QFile file(fileName);
        if (file.open(QIODevice::ReadOnly)) {
            const QByteArray json = file.readAll();
            if (io::takesNumbersFromModel(json)) {
                // A model's layer saved without the model's numbers: the model opens first (in
                // the background), then the file is read against its layer.
                session_->openSavedLayer(json, QFileInfo(fileName).absoluteFilePath());
                kLastScene.write(QFileInfo(fileName).absoluteFilePath());
                return true;
            }
        }
        Scene scene = io::loadSceneFile(fileName);
        // A model's folder saved relative to the file is found from where the file is now.
        scene.viewJson = document::withFolderResolvedFrom(scene.viewJson, fileName);
        document_->resetScene(scene, fileName);
        if (!scene.viewJson.empty())
            applyViewState(
                QJsonDocument::fromJson(QByteArray::fromStdString(scene.viewJson)).object());
    } catch (const SceneError& e) {
        if (error) *error = QString::fromStdString(e.what());
        return false;
    }
    kLastScene.write(QFileInfo(fileName).absoluteFilePath());
    return true;
}

void MainWindow::openPreset(const QString& name) {
    document_->resetScene(io::loadPreset(name));
    setWindowModified(false);
    kLastScene.write(QString());
}

void MainWindow::openStartupScene() {
    const QString last = kLastScene.read();
    if (!last.isEmpty() && openSceneFile(last)) return;
    openPreset(QString::fromLatin1(kDefaultPreset));
}

void MainWindow::showProblem(const QString& text) {
    auto* box = new QMessageBox(QMessageBox::Warning, tr("Attention Explorer"), text,
                                QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setModal(false);
    box->show();
    statusBar()->showMessage(text, 15000);
}

}  // namespace ae::ui
