#pragma once
// The training dock's Model mode (issue 17, "Watch a model learn"): a small model of several
// layers of heads (core/training/model_training.h) trained on a toy task, as TensorFlow Playground
// lets a class watch an MLP learn. The page shows the loss falling and, per head, its
// previous-token and induction scores on a fixed probe sequence (random ids repeated twice, as
// `heads
// --induction-random` measures): the step at which an induction head forms shows as a jump of
// one line. A ModelView of the model on the probe sequence (modelView(), placed by
// addTrainingDock) is redrawn with every snapshot. When training stops, the model can be saved as
// a model folder and opened like any checkpoint.
//
// The trainer runs in a ModelTrainingWorker on its own thread; every snapshot carries a copy of
// the weights and what the view and the plots show, computed there, so the window only draws.

#include <QPointer>
#include <QThread>
#include <QWidget>
#include <memory>
#include <vector>

#include "core/training/model_training.h"
#include "plot/model_view.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSpinBox;

namespace ae::plot {
class HeadScoreChart;
class LossChart;
}  // namespace ae::plot

namespace ae::ui {

class ModelTrainingWorker;
struct ModelTrainingSnapshot;

class ModelTrainingPage : public QWidget {
    Q_OBJECT
public:
    // Heads of at most this many lines are all labelled in the score plots; with more, only the
    // kLabelledHeads highest (at the latest step) are coloured and in the legend.
    static constexpr int kAllLabelledBelow = 8;
    static constexpr int kLabelledHeads = 4;

    explicit ModelTrainingPage(QWidget* parent = nullptr);
    // Stops the worker and waits for its thread: safe while training runs.
    ~ModelTrainingPage() override;

    void play();
    void pause();
    void step();
    // A new trainer with the same options: step 0, empty plots.
    void reset();
    // Writes the last snapshot's model as a model folder (config.json, model.safetensors in F64,
    // a byte-level tokenizer); returns false with *error on failure or when nothing has trained.
    bool saveModel(const QString& folder, QString* error = nullptr);

    // The options the controls describe.
    model::ModelTrainingOptions options() const;
    bool isRunning() const { return running_; }
    int stepCount() const { return stepCount_; }
    int lossPointCount() const;
    // The last snapshot applied (null before the first).
    std::shared_ptr<const ModelTrainingSnapshot> lastSnapshot() const { return last_; }
    plot::LossChart* lossChart() const { return lossChart_; }
    // One line per head (line l·heads + h, named "L1 H2"), x the step.
    plot::HeadScoreChart* previousTokenChart() const { return previousTokenChart_; }
    plot::HeadScoreChart* inductionChart() const { return inductionChart_; }
    // The model in training on the probe sequence. Owned by the page until a dock takes it.
    plot::ModelView* modelView() const { return view_; }
    ModelTrainingWorker* worker() const { return worker_; }

signals:
    void messageRequested(const QString& text);
    void runningChanged(bool running);
    // Play was pressed: the model view is worth showing.
    void trainingStarted();
    // A saved model folder the user asked to open (MainWindow opens it as File › Open model).
    void openModelRequested(const QString& folder);

private:
    void ensureTrainer();
    void applySnapshot(const std::shared_ptr<const ModelTrainingSnapshot>& snapshot);
    void showModel();
    void clearPlots(int layers, int heads);
    void showFailure(const QString& message);
    void invalidateTrainer();
    void updateButtons();
    void saveDialog();

    QThread thread_;
    ModelTrainingWorker* worker_;  // lives in thread_, deleted when it finishes
    QPointer<plot::ModelView> view_;
    QPushButton *play_, *pause_, *step_, *reset_, *save_;
    QSpinBox *layers_, *heads_, *hidden_, *seed_, *stepsPerSecond_, *previousTokenEvery_;
    QComboBox *positions_, *task_;
    QDoubleSpinBox* learningRate_;
    QLabel* status_;
    plot::LossChart* lossChart_;
    plot::HeadScoreChart *previousTokenChart_, *inductionChart_;

    bool configured_ = false;
    bool running_ = false;
    int stepCount_ = 0;
    int generation_ = 0;
    std::shared_ptr<const ModelTrainingSnapshot> last_;
};

}  // namespace ae::ui
