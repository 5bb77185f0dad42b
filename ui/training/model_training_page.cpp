#include "ui/training/model_training_page.h"

#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QMetaObject>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>

#include "core/model/model_analysis.h"
#include "io/formats/result_export.h"
#include "io/model/model_writer.h"
#include "plot/model_view.h"
#include "plot/training_charts.h"
#include "ui/training/model_training_worker.h"

namespace ae::ui {
namespace {

QString headLabel(int layer, int head) {
    return QStringLiteral("L%1 H%2").arg(layer).arg(head);
}

// The ids are bytes (the trainer's vocabulary, and the byte-level tokenizer the saved folder
// gets): printable ones as themselves, the rest by number.
QString byteLabel(long long id) {
    if (id == ' ') return QStringLiteral("␣");
    if (id > 32 && id < 127) return QString(QChar(static_cast<char16_t>(id)));
    return QStringLiteral("#%1").arg(id);
}

}  // namespace

ModelTrainingPage::ModelTrainingPage(QWidget* parent)
    : QWidget(parent),
      worker_(new ModelTrainingWorker),
      view_(new plot::ModelView),
      play_(new QPushButton(tr("Play"))),
      pause_(new QPushButton(tr("Pause"))),
      step_(new QPushButton(tr("Step"))),
      reset_(new QPushButton(tr("Reset"))),
      save_(new QPushButton(tr("Save model and open it…"))),
      layers_(new QSpinBox),
      heads_(new QSpinBox),
      hidden_(new QSpinBox),
      seed_(new QSpinBox),
      stepsPerSecond_(new QSpinBox),
      previousTokenEvery_(new QSpinBox),
      positions_(new QComboBox),
      task_(new QComboBox),
      learningRate_(new QDoubleSpinBox),
      status_(new QLabel),
      lossChart_(new plot::LossChart),
      previousTokenChart_(new plot::HeadScoreChart(tr("previous-token"))),
      inductionChart_(new plot::HeadScoreChart(tr("induction"))) {
    for (auto [button, name] : {std::pair{play_, "modelPlay"},
                                {pause_, "modelPause"},
                                {step_, "modelStep"},
                                {reset_, "modelReset"},
                                {save_, "modelSave"}}) {
        button->setObjectName(QLatin1String(name));
    }
    view_->setObjectName(QStringLiteral("trainingModelView"));
    const model::ModelTrainingOptions defaults;
    layers_->setObjectName(QStringLiteral("modelLayers"));
    layers_->setRange(1, 8);
    layers_->setValue(defaults.layers);
    heads_->setObjectName(QStringLiteral("modelHeads"));
    heads_->setRange(1, 16);
    heads_->setValue(defaults.heads);
    hidden_->setObjectName(QStringLiteral("modelHidden"));
    hidden_->setRange(8, 256);
    hidden_->setSingleStep(8);
    hidden_->setValue(defaults.hidden);
    hidden_->setToolTip(tr("Width d of the residual stream; the heads share it (d / heads each)"));
    positions_->setObjectName(QStringLiteral("modelPositions"));
    // The family table's trainable rows, by their positions: "rotary (llama)".
    for (const model::FamilyRow* row : model::trainableFamilies()) {
        const bool rotary = row->architecture.positions == model::PositionKind::Rotary;
        positions_->addItem(
            tr("%1 (%2)").arg(rotary ? tr("rotary") : tr("learned"), QLatin1String(row->modelType)),
            QString::fromLatin1(row->modelType));
    }
    positions_->setCurrentIndex(positions_->findData(QString::fromStdString(defaults.family)));
    task_->setObjectName(QStringLiteral("modelTask"));
    for (const auto& [task, name] : model::kModelTasks)
        task_->addItem(QString::fromLatin1(name), static_cast<int>(task));
    task_->setToolTip(
        tr("induction: random tokens, then the same again; the second copy is predictable only "
           "by finding where the current token came before and copying what followed it"));
    learningRate_->setObjectName(QStringLiteral("modelLearningRate"));
    learningRate_->setDecimals(4);
    learningRate_->setRange(0.0001, 0.1);
    learningRate_->setSingleStep(0.0005);
    learningRate_->setValue(defaults.learningRate);
    seed_->setObjectName(QStringLiteral("modelSeed"));
    seed_->setRange(0, 1'000'000);
    seed_->setValue(static_cast<int>(defaults.seed));
    // docs/training.md, "Whole models": induction alone splits the previous-token role between
    // layer-0 heads; a previous-token batch every 4th step makes one head do it, and the induction
    // head that reads it forms cleanly (4 of 4 seeds measured).
    previousTokenEvery_->setObjectName(QStringLiteral("modelPreviousTokenEvery"));
    previousTokenEvery_->setRange(0, 100);
    previousTokenEvery_->setValue(4);
    previousTokenEvery_->setSpecialValueText(tr("never"));
    previousTokenEvery_->setPrefix(tr("every "));
    previousTokenEvery_->setSuffix(tr(" steps"));
    previousTokenEvery_->setToolTip(
        tr("Every k-th step trains on previous-token sequences instead of the task's: one "
           "layer-0 head then copies the previous token for every token, and an induction head "
           "forms on it"));
    stepsPerSecond_->setObjectName(QStringLiteral("modelStepsPerSecond"));
    stepsPerSecond_->setRange(0, 1000);
    stepsPerSecond_->setValue(0);
    stepsPerSecond_->setSpecialValueText(tr("as fast as possible"));
    stepsPerSecond_->setSuffix(tr(" steps/s"));
    status_->setObjectName(QStringLiteral("modelStatus"));
    status_->setWordWrap(true);
    status_->setText(
        tr("Press Play to train a small model on the task. Watch the induction "
           "scores: the jump is an induction head forming."));

    lossChart_->widget()->setMinimumHeight(95);
    for (plot::HeadScoreChart* chart : {previousTokenChart_, inductionChart_})
        chart->widget()->setMinimumHeight(122);
    previousTokenChart_->widget()->setObjectName(QStringLiteral("previousTokenPlot"));
    inductionChart_->widget()->setObjectName(QStringLiteral("inductionPlot"));
    lossChart_->widget()->setObjectName(QStringLiteral("modelLossPlot"));

    auto* form = new QFormLayout;
    auto* shape = new QHBoxLayout;
    shape->addWidget(layers_);
    shape->addWidget(new QLabel(tr("heads")));
    shape->addWidget(heads_);
    shape->addWidget(new QLabel(tr("d")));
    shape->addWidget(hidden_);
    form->addRow(tr("Layers"), shape);
    form->addRow(tr("Positions"), positions_);
    form->addRow(tr("Task"), task_);
    form->addRow(tr("Previous-token"), previousTokenEvery_);
    auto* rateAndSeed = new QHBoxLayout;
    rateAndSeed->addWidget(learningRate_);
    rateAndSeed->addWidget(new QLabel(tr("seed")));
    rateAndSeed->addWidget(seed_);
    form->addRow(tr("Learning rate"), rateAndSeed);
    form->addRow(tr("Speed"), stepsPerSecond_);
    auto* buttons = new QHBoxLayout;
    for (QPushButton* b : {play_, pause_, step_, reset_})
        buttons->addWidget(b);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(form);
    layout->addLayout(buttons);
    layout->addWidget(status_);
    layout->addWidget(lossChart_->widget(), 2);
    layout->addWidget(previousTokenChart_->widget(), 3);
    layout->addWidget(inductionChart_->widget(), 3);
    layout->addWidget(save_);

    connect(play_, &QPushButton::clicked, this, &ModelTrainingPage::play);
    connect(pause_, &QPushButton::clicked, this, &ModelTrainingPage::pause);
    connect(step_, &QPushButton::clicked, this, &ModelTrainingPage::step);
    connect(reset_, &QPushButton::clicked, this, &ModelTrainingPage::reset);
    connect(save_, &QPushButton::clicked, this, &ModelTrainingPage::saveDialog);
    for (QSpinBox* s : {layers_, heads_, hidden_, seed_, previousTokenEvery_})
        connect(s, &QSpinBox::valueChanged, this, &ModelTrainingPage::invalidateTrainer);
    for (QComboBox* c : {positions_, task_})
        connect(c, &QComboBox::currentIndexChanged, this, &ModelTrainingPage::invalidateTrainer);
    connect(learningRate_, &QDoubleSpinBox::valueChanged, this,
            &ModelTrainingPage::invalidateTrainer);
    connect(stepsPerSecond_, &QSpinBox::valueChanged, this,
            [this](int rate) { worker_->setStepsPerSecond(rate); });
    connect(view_, &plot::ModelView::positionSelected, this, &ModelTrainingPage::showModel);
    connect(view_, &plot::ModelView::headActivated, this, [this](int layer, int head) {
        emit messageRequested(tr("To open %1 in the explorer, pause and save the model: it opens "
                                 "like any checkpoint.")
                                  .arg(headLabel(layer, head)));
    });

    worker_->moveToThread(&thread_);
    connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
    connect(worker_, &ModelTrainingWorker::snapshotReady, this, &ModelTrainingPage::applySnapshot);
    connect(worker_, &ModelTrainingWorker::failed, this, &ModelTrainingPage::showFailure);
    thread_.start();
    updateButtons();
}

ModelTrainingPage::~ModelTrainingPage() {
    worker_->requestStop();
    thread_.quit();
    thread_.wait();
    // A view no dock took is still ours.
    if (view_ && !view_->parent()) delete view_;
}

int ModelTrainingPage::lossPointCount() const {
    return lossChart_->pointCount();
}

model::ModelTrainingOptions ModelTrainingPage::options() const {
    model::ModelTrainingOptions o;
    o.family = positions_->currentData().toString().toStdString();
    o.layers = layers_->value();
    o.heads = heads_->value();
    o.hidden = hidden_->value();
    o.task = static_cast<model::ModelTask>(task_->currentData().toInt());
    o.seed = static_cast<std::uint64_t>(seed_->value());
    o.learningRate = learningRate_->value();
    o.previousTokenEvery = previousTokenEvery_->value();
    o.totalSteps = 0;  // no budget in the window: the rate stays constant while the class watches
    return o;
}

void ModelTrainingPage::invalidateTrainer() {
    configured_ = false;
}

void ModelTrainingPage::clearPlots(int layers, int heads) {
    QStringList names;
    for (int l = 0; l < layers; ++l) {
        for (int h = 0; h < heads; ++h)
            names << headLabel(l, h);
    }
    for (plot::HeadScoreChart* chart : {previousTokenChart_, inductionChart_})
        chart->setHeads(names);
    lossChart_->clear();
}

void ModelTrainingPage::ensureTrainer() {
    if (configured_) return;
    const model::ModelTrainingOptions o = options();
    const std::string problem = model::checkTrainingOptions(o);
    if (!problem.empty()) {
        showFailure(QString::fromStdString(problem));
        return;
    }
    ++generation_;
    stepCount_ = 0;
    last_.reset();
    clearPlots(o.layers, o.heads);
    QMetaObject::invokeMethod(worker_, [worker = worker_, o, generation = generation_] {
        worker->configure(o, generation);
    });
    configured_ = true;
}

void ModelTrainingPage::play() {
    if (running_) return;
    ensureTrainer();
    if (!configured_) return;
    running_ = true;
    QMetaObject::invokeMethod(worker_, &ModelTrainingWorker::run);
    updateButtons();
    emit trainingStarted();
}

void ModelTrainingPage::pause() {
    if (!running_) return;
    running_ = false;
    worker_->requestStop();
    updateButtons();
}

void ModelTrainingPage::step() {
    if (running_) return;
    ensureTrainer();
    if (!configured_) return;
    QMetaObject::invokeMethod(worker_, &ModelTrainingWorker::stepOnce);
    emit trainingStarted();
}

void ModelTrainingPage::reset() {
    running_ = false;
    worker_->requestStop();
    // Snapshots still on their way belong to the old generation and are dropped.
    configured_ = false;
    ensureTrainer();
    status_->setText(tr("Reset: a new model from seed %1.").arg(seed_->value()));
    updateButtons();
}

void ModelTrainingPage::applySnapshot(
    const std::shared_ptr<const ModelTrainingSnapshot>& snapshot) {
    worker_->snapshotTaken();
    if (snapshot->generation != generation_) return;
    last_ = snapshot;
    const int first = snapshot->step - static_cast<int>(snapshot->losses.size());
    for (std::size_t i = 0; i < snapshot->losses.size(); ++i)
        lossChart_->addLoss(first + static_cast<int>(i) + 1, snapshot->losses[i]);
    stepCount_ = snapshot->step;
    const int count = static_cast<int>(snapshot->summaries.size());
    for (int i = 0; i < count && i < previousTokenChart_->headCount(); ++i) {
        const model::HeadSummary& s = snapshot->summaries[static_cast<std::size_t>(i)];
        previousTokenChart_->addScore(i, snapshot->step, s.previousToken);
        inductionChart_->addScore(i, snapshot->step, s.induction);
    }
    for (plot::HeadScoreChart* chart : {previousTokenChart_, inductionChart_}) {
        const int heads = chart->headCount();
        chart->highlightHighest(heads < kAllLabelledBelow ? heads : kLabelledHeads);
        chart->showSteps(stepCount_);
    }
    if (lossPointCount() > 0) lossChart_->fitToPoints();
    if (count > 0) {
        const auto best = std::max_element(
            snapshot->summaries.begin(), snapshot->summaries.end(),
            [](const auto& a, const auto& b) { return a.induction < b.induction; });
        QString text = tr("Step %1").arg(stepCount_);
        if (!snapshot->losses.empty())
            text += tr(", loss %1").arg(snapshot->losses.back(), 0, 'f', 3);
        text += tr(". Best induction head %1: %2")
                    .arg(headLabel(best->layer, best->head))
                    .arg(best->induction, 0, 'f', 2);
        status_->setText(text);
    }
    showModel();
    updateButtons();
}

void ModelTrainingPage::showModel() {
    if (!last_ || !view_) return;
    plot::ModelViewData data;
    data.run = last_->run;
    for (long long id : last_->run->tokens)
        data.tokens << byteLabel(id);
    data.tokenText = byteLabel;
    data.summaries = last_->summaries;
    // Measured on the probe, the training's text repeated twice.
    data.induction = model::InductionState::Measured;
    const int tokens = static_cast<int>(last_->run->tokens.size());
    int position = view_->selectedPosition();
    if (position < 0 || position >= tokens) position = tokens - 1;
    data.position = position;
    try {
        data.predictions = model::topPredictions(*last_->run, position, 10);
    } catch (const model::ModelError&) {
        data.predictions.clear();  // not a position of this run: the view picks the last token
    }
    // No what-if here: basePredictions stays empty, so no before → after column repeats each
    // probability.
    view_->setData(std::move(data));
}

void ModelTrainingPage::showFailure(const QString& message) {
    running_ = false;
    configured_ = false;
    status_->setText(message);
    emit messageRequested(tr("Training: %1").arg(message));
    updateButtons();
}

void ModelTrainingPage::updateButtons() {
    play_->setEnabled(!running_);
    pause_->setEnabled(running_);
    step_->setEnabled(!running_);
    save_->setEnabled(!running_ && last_ && last_->step > 0);
    for (QWidget* w : std::initializer_list<QWidget*>{layers_, heads_, hidden_, positions_, task_,
                                                      learningRate_, seed_, previousTokenEvery_})
        w->setEnabled(!running_);
    emit runningChanged(running_);
}

bool ModelTrainingPage::saveModel(const QString& folder, QString* error) {
    if (!last_) {
        if (error) *error = tr("Nothing trained yet: press Play or Step first.");
        return false;
    }
    try {
        io::writeModelFolder(folder, last_->model->model, DType::F64);
        io::writeByteTokenizer(folder, last_->options.vocab);
    } catch (const io::WriteError& e) {
        if (error) *error = QString::fromUtf8(e.what());
        return false;
    }
    return true;
}

void ModelTrainingPage::saveDialog() {
    if (!last_) return;
    const QString suggested =
        QStringLiteral("trained-%1-L%2H%3-step%4")
            .arg(QString::fromLatin1(model::modelTaskName(last_->options.task)))
            .arg(last_->options.layers)
            .arg(last_->options.heads)
            .arg(last_->step);
    const QString folder = QFileDialog::getSaveFileName(
        this, tr("Save the trained model as a folder"), QDir::home().filePath(suggested), QString(),
        nullptr, QFileDialog::ShowDirsOnly);
    if (folder.isEmpty()) return;
    QString error;
    if (!saveModel(folder, &error)) {
        emit messageRequested(error);
        return;
    }
    emit messageRequested(tr("Saved %1").arg(folder));
    emit openModelRequested(folder);
}

}  // namespace ae::ui
