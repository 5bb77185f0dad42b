#include "ui/training/training_panel.h"

#include <QComboBox>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QMainWindow>
#include <QMenu>
#include <QMetaObject>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QStackedWidget>
#include <QStatusBar>
#include <QUndoStack>
#include <QVBoxLayout>

#include "document/attention_document.h"
#include "io/formats/result_export.h"
#include "io/scene/scene_file.h"
#include "plot/model_view.h"
#include "plot/training_charts.h"
#include "ui/training/model_training_page.h"
#include "ui/training/training_worker.h"

namespace ae::ui {
namespace {
// The window trains at a constant rate (no step budget to decay over), and the CLI's 0.05 then
// keeps kicking Adam out of the minimum: on journey / previous-token, steps 5000-20000 peak at a
// loss of 0.26 with 0.05 but 0.008 with 0.01, which still reaches the pattern within ~1000 steps.
constexpr double kWindowLearningRate = 0.01;
}  // namespace

TrainingPanel::TrainingPanel(document::AttentionDocument* document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      worker_(new TrainingWorker),
      play_(new QPushButton(tr("Play"))),
      pause_(new QPushButton(tr("Pause"))),
      step_(new QPushButton(tr("Step"))),
      reset_(new QPushButton(tr("Reset"))),
      save_(new QPushButton(tr("Save trained scene…"))),
      learningRate_(new QDoubleSpinBox),
      seed_(new QSpinBox),
      task_(new QComboBox),
      stepsPerSecond_(new QSpinBox),
      taskNote_(new QLabel),
      status_(new QLabel),
      lossChart_(new plot::LossChart),
      mode_(new QComboBox),
      pages_(new QStackedWidget),
      modelPage_(new ModelTrainingPage) {
    for (auto [button, name] : {std::pair{play_, "play"},
                                {pause_, "pause"},
                                {step_, "step"},
                                {reset_, "reset"},
                                {save_, "save"}}) {
        button->setObjectName(QLatin1String(name));
    }
    learningRate_->setObjectName(QStringLiteral("learningRate"));
    learningRate_->setDecimals(4);
    learningRate_->setRange(0.0001, 1.0);
    learningRate_->setSingleStep(0.005);
    learningRate_->setValue(kWindowLearningRate);
    seed_->setObjectName(QStringLiteral("seed"));
    seed_->setRange(0, 1'000'000);
    seed_->setValue(1);
    task_->setObjectName(QStringLiteral("task"));
    for (const auto& [task, name] : kTrainingTasks)
        task_->addItem(QString::fromLatin1(name), static_cast<int>(task));
    stepsPerSecond_->setObjectName(QStringLiteral("stepsPerSecond"));
    stepsPerSecond_->setRange(0, 1000);
    stepsPerSecond_->setValue(0);
    stepsPerSecond_->setSpecialValueText(tr("as fast as possible"));
    stepsPerSecond_->setSuffix(tr(" steps/s"));
    stepsPerSecond_->setToolTip(
        tr("At most this many Adam steps a second, so a class can watch the maps change (2–5 "
           "is easy to follow). Can be changed while training runs."));
    taskNote_->setObjectName(QStringLiteral("taskNote"));
    taskNote_->setWordWrap(true);
    taskNote_->setText(
        tr("<b>match replaces the tokens</b> (and their embeddings) with a generated sequence "
           "of repeating letters. <b>Reset</b> brings your own tokens back."));
    status_->setWordWrap(true);
    status_->setText(tr("Press Play to train the layer on the task."));

    lossChart_->widget()->setMinimumHeight(160);

    auto* form = new QFormLayout;
    form->addRow(tr("Task"), task_);
    form->addRow(tr("Learning rate"), learningRate_);
    form->addRow(tr("Seed"), seed_);
    form->addRow(tr("Speed"), stepsPerSecond_);
    auto* buttons = new QHBoxLayout;
    for (QPushButton* b : {play_, pause_, step_, reset_})
        buttons->addWidget(b);
    auto* layerPage = new QWidget;
    auto* layerLayout = new QVBoxLayout(layerPage);
    layerLayout->setContentsMargins(0, 0, 0, 0);
    layerLayout->addLayout(form);
    layerLayout->addWidget(taskNote_);
    layerLayout->addLayout(buttons);
    layerLayout->addWidget(status_);
    layerLayout->addWidget(lossChart_->widget(), 1);
    layerLayout->addWidget(save_);
    pages_->addWidget(layerPage);
    // The model page is taller than a 768-pixel screen leaves a dock: it scrolls there.
    auto* modelScroll = new QScrollArea;
    modelScroll->setWidget(modelPage_);
    modelScroll->setWidgetResizable(true);
    modelScroll->setFrameShape(QFrame::NoFrame);
    modelScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    pages_->addWidget(modelScroll);
    mode_->setObjectName(QStringLiteral("mode"));
    mode_->addItem(tr("One layer (the scene)"), static_cast<int>(Mode::Layer));
    mode_->addItem(tr("Model (layers of heads)"), static_cast<int>(Mode::Model));
    mode_->setToolTip(
        tr("One layer trains the scene in the explorer. Model trains a small "
           "model of several layers on its own and shows how its heads learn."));
    auto* modeRow = new QFormLayout;
    modeRow->addRow(tr("Mode"), mode_);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(modeRow);
    layout->addWidget(pages_, 1);
    connect(mode_, &QComboBox::currentIndexChanged, pages_, &QStackedWidget::setCurrentIndex);
    connect(modelPage_, &ModelTrainingPage::runningChanged, this, &TrainingPanel::updateButtons);
    connect(modelPage_, &ModelTrainingPage::messageRequested, this,
            &TrainingPanel::messageRequested);
    connect(modelPage_, &ModelTrainingPage::openModelRequested, this,
            &TrainingPanel::openModelRequested);

    connect(play_, &QPushButton::clicked, this, &TrainingPanel::play);
    connect(pause_, &QPushButton::clicked, this, &TrainingPanel::pause);
    connect(step_, &QPushButton::clicked, this, &TrainingPanel::step);
    connect(reset_, &QPushButton::clicked, this, &TrainingPanel::reset);
    connect(save_, &QPushButton::clicked, this, &TrainingPanel::saveDialog);
    // New options mean a new trainer, from the scene the document holds then.
    connect(task_, &QComboBox::currentIndexChanged, this, &TrainingPanel::invalidateTrainer);
    connect(learningRate_, &QDoubleSpinBox::valueChanged, this, &TrainingPanel::invalidateTrainer);
    connect(seed_, &QSpinBox::valueChanged, this, &TrainingPanel::invalidateTrainer);
    connect(stepsPerSecond_, &QSpinBox::valueChanged, this,
            [this](int rate) { worker_->setStepsPerSecond(rate); });
    const auto showTaskNote = [this] {
        taskNote_->setVisible(task_->currentData().toInt() ==
                              static_cast<int>(TrainingTask::Match));
    };
    connect(task_, &QComboBox::currentIndexChanged, this, showTaskNote);
    showTaskNote();
    // Any change to the scene that is not a snapshot (an edit, an undo, another file) also means
    // the trainer's parameters are stale.
    connect(document_, &document::AttentionDocument::resultsChanged, this, [this] {
        if (!applying_ && !running_) invalidateTrainer();
    });
    // Another scene came in (Open, a preset, an example: the changes that empty Undo). The run
    // belongs to the old scene: it stops, its snapshots are dropped, and Reset has no start to go
    // back to, so nothing of the old scene is written into the new one.
    connect(document_, &document::AttentionDocument::fileNameChanged, this, [this] {
        if (applying_ || document_->undoStack()->count() > 0) return;
        running_ = false;
        worker_->requestStop();
        ++generation_;
        configured_ = false;
        runStart_.reset();
        trainStart_.reset();
        stepCount_ = 0;
        lossChart_->clear();
        updateButtons();
    });

    worker_->moveToThread(&thread_);
    connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
    connect(worker_, &TrainingWorker::snapshotReady, this, &TrainingPanel::applySnapshot);
    connect(worker_, &TrainingWorker::failed, this, &TrainingPanel::showFailure);
    connect(worker_, &TrainingWorker::noteReady, this, [this](const QString& note) {
        if (!note.isEmpty()) emit messageRequested(note);
    });
    thread_.start();
    updateButtons();
}

TrainingPanel::~TrainingPanel() {
    // The running chunk sees the flag within one step; quit() then ends the thread's event loop
    // before the next chunk, and the worker is deleted on that thread (finished → deleteLater).
    worker_->requestStop();
    thread_.quit();
    thread_.wait();
}

int TrainingPanel::lossPointCount() const {
    return lossChart_->pointCount();
}

void TrainingPanel::invalidateTrainer() {
    configured_ = false;
}

void TrainingPanel::ensureTrainer() {
    if (configured_) return;
    ++generation_;
    trainStart_ = document_->scene();
    // Tokens training put there (match) are not the teacher's: keep the scene from before them.
    if (!teacherScene_ || trainStart_->tokens != trainedTokens_) teacherScene_ = trainStart_;
    stepCount_ = 0;
    lossChart_->clear();
    QMetaObject::invokeMethod(
        worker_,
        [worker = worker_, scene = *trainStart_, task = task_->currentData().toInt(),
         rate = learningRate_->value(), seed = static_cast<qulonglong>(seed_->value()),
         generation = generation_] { worker->configure(scene, task, rate, seed, generation); });
    configured_ = true;
}

void TrainingPanel::play() {
    if (running_) return;
    ensureTrainer();
    if (!runStart_) {
        runStart_ = document_->scene();
        runStartStep_ = stepCount_;
    }
    running_ = true;
    QMetaObject::invokeMethod(worker_, &TrainingWorker::run);
    updateButtons();
}

void TrainingPanel::pause() {
    if (!running_) return;
    running_ = false;
    worker_->requestStop();  // its last, stopped snapshot commits the run (applySnapshot)
    updateButtons();
}

void TrainingPanel::step() {
    if (running_) return;
    ensureTrainer();
    if (!runStart_) {
        runStart_ = document_->scene();
        runStartStep_ = stepCount_;
    }
    QMetaObject::invokeMethod(worker_, &TrainingWorker::stepOnce);
}

void TrainingPanel::reset() {
    running_ = false;
    worker_->requestStop();
    // Snapshots still on their way belong to the old generation and are dropped.
    ++generation_;
    configured_ = false;
    runStart_.reset();
    stepCount_ = 0;
    lossChart_->clear();
    // The scene this trainer started from; if training had already replaced the tokens then
    // (match, then new options), the teacher's scene from before that.
    const bool tokensRestored =
        trainStart_ && teacherScene_ && trainStart_->tokens != teacherScene_->tokens;
    const std::optional<Scene>& target = tokensRestored ? teacherScene_ : trainStart_;
    if (target) {
        applying_ = true;
        document_->replaceScene(*target, tr("Reset training"));
        applying_ = false;
    }
    status_->setText(tokensRestored ? tr("Reset to your scene, with your tokens.")
                                    : tr("Reset to the scene training started from."));
    updateButtons();
}

void TrainingPanel::applySnapshot(const std::shared_ptr<const TrainingSnapshot>& snapshot) {
    worker_->snapshotTaken();
    if (snapshot->generation != generation_) return;
    applying_ = true;
    document_->setSceneWithoutUndo(snapshot->scene);
    applying_ = false;
    trainedTokens_ = snapshot->scene.tokens;

    const int first = snapshot->step - static_cast<int>(snapshot->losses.size());
    for (std::size_t i = 0; i < snapshot->losses.size(); ++i)
        lossChart_->addLoss(first + static_cast<int>(i) + 1, snapshot->losses[i]);
    stepCount_ = snapshot->step;
    if (!snapshot->losses.empty()) {
        lossChart_->fitToPoints();
        status_->setText(
            tr("Step %1, loss %2").arg(stepCount_).arg(snapshot->losses.back(), 0, 'g', 4));
    }
    if (snapshot->stopped && !running_) commitRun();
    updateButtons();
}

void TrainingPanel::commitRun() {
    if (!runStart_) return;
    // The snapshots were applied without undo; record the whole run as one step, from the scene
    // before it to the one now shown.
    const Scene trained = document_->scene();
    applying_ = true;
    document_->setSceneWithoutUndo(*runStart_);
    QString error;
    if (!document_->replaceScene(
            trained, tr("Training: steps %1–%2").arg(runStartStep_).arg(stepCount_), &error)) {
        document_->setSceneWithoutUndo(trained);
        showFailure(error);
    }
    applying_ = false;
    runStart_.reset();
}

void TrainingPanel::showFailure(const QString& message) {
    running_ = false;
    configured_ = false;
    status_->setText(message);
    emit messageRequested(tr("Training: %1").arg(message));
    updateButtons();
}

TrainingPanel::Mode TrainingPanel::mode() const {
    return static_cast<Mode>(mode_->currentData().toInt());
}

void TrainingPanel::setMode(Mode mode) {
    mode_->setCurrentIndex(mode_->findData(static_cast<int>(mode)));
}

void TrainingPanel::updateButtons() {
    // One trainer at a time: the mode changes between runs.
    mode_->setEnabled(!running_ && !modelPage_->isRunning());
    play_->setEnabled(!running_);
    pause_->setEnabled(running_);
    step_->setEnabled(!running_);
    // Options belong to one trainer: change them between runs, not during one.
    for (QWidget* w : std::initializer_list<QWidget*>{task_, learningRate_, seed_})
        w->setEnabled(!running_);
}

bool TrainingPanel::saveTrainedScene(const QString& fileName, QString* error) {
    try {
        io::writeFileAtomically(fileName, io::sceneToJson(document_->scene()));
    } catch (const io::WriteError& e) {
        if (error) *error = QString::fromUtf8(e.what());
        return false;
    }
    return true;
}

void TrainingPanel::saveDialog() {
    const QString fileName = QFileDialog::getSaveFileName(this, tr("Save trained scene"),
                                                          QStringLiteral("trained.scene.json"),
                                                          tr("Scenes (*.scene.json *.json)"));
    if (fileName.isEmpty()) return;
    QString error;
    if (saveTrainedScene(fileName, &error))
        emit messageRequested(tr("Saved %1").arg(fileName));
    else
        emit messageRequested(error);
}

TrainingPanel* addTrainingDock(QMainWindow* window, document::AttentionDocument* document,
                               QMenu* menu) {
    auto* panel = new TrainingPanel(document);
    auto* dock = new QDockWidget(QObject::tr("Training"), window);
    dock->setObjectName(QStringLiteral("trainingDock"));
    dock->setWidget(panel);
    window->addDockWidget(Qt::RightDockWidgetArea, dock);
    dock->hide();
    QAction* toggle = dock->toggleViewAction();
    toggle->setText(QObject::tr("&Training panel"));
    menu->addAction(toggle);
    QObject::connect(
        panel, &TrainingPanel::messageRequested, window,
        [window](const QString& text) { window->statusBar()->showMessage(text, 8000); });

    // The Model mode's model view: a dock of its own beside the panel, shown when a model starts
    // training (the panel is too narrow for a grid of heads).
    auto* viewDock = new QDockWidget(QObject::tr("Model in training"), window);
    viewDock->setObjectName(QStringLiteral("trainingModelDock"));
    viewDock->setWidget(panel->modelPage()->modelView());
    window->addDockWidget(Qt::RightDockWidgetArea, viewDock, Qt::Horizontal);
    viewDock->hide();
    QAction* viewToggle = viewDock->toggleViewAction();
    viewToggle->setText(QObject::tr("&Model in training"));
    menu->addAction(viewToggle);
    QObject::connect(panel->modelPage(), &ModelTrainingPage::trainingStarted, viewDock,
                     [window, dock, viewDock] {
                         if (!dock->isVisible() || viewDock->isVisible()) return;
                         // Beside the panel's column (a restored or reset layout may have put it
                         // elsewhere), unless the user floated it. Not splitDockWidget: the panel
                         // is tabbed with the walkthrough, and splitting a tabbed dock loses both.
                         if (!viewDock->isFloating())
                             window->addDockWidget(Qt::RightDockWidgetArea, viewDock,
                                                   Qt::Horizontal);
                         viewDock->show();
                         viewDock->raise();
                     });
    return panel;
}

}  // namespace ae::ui
