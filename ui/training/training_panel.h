#pragma once
// The training dock: Play, Pause, Step and Reset for the Trainer of
// core/training/attention_training.h, with its learning rate, seed and task, a loss curve that
// grows as it trains, and "Save trained scene…". The trainer runs in a TrainingWorker on its own
// thread; its snapshots reach the document as they come, so the heatmaps move while the weights
// learn.
//
// How snapshots reach the document: while running, each snapshot goes through
// AttentionDocument::setSceneWithoutUndo(), which is not undoable: twenty undo steps a second would
// bury every real edit, and resetScene() would also wipe the history and the file name. When a run
// stops (Pause, Step, Reset), the whole run becomes one undo step ("Training: steps 0–250"), from
// the scene before the run to the one after, so Ctrl+Z takes a class back to before training.
//
// The Mode choice at the top switches to the Model page (model_training_page.h): a small model of
// several layers trained on a toy task, with its loss, its heads' scores over the steps and a
// model view of it. That mode never touches the document.

#include <QThread>
#include <QWidget>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/scene.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QMainWindow;
class QMenu;
class QPushButton;
class QSpinBox;
class QStackedWidget;

namespace ae::document {
class AttentionDocument;
}  // namespace ae::document

namespace ae::plot {
class LossChart;
}  // namespace ae::plot

namespace ae::ui {

class ModelTrainingPage;
class TrainingWorker;
struct TrainingSnapshot;

class TrainingPanel : public QWidget {
    Q_OBJECT
public:
    enum class Mode { Layer, Model };

    explicit TrainingPanel(document::AttentionDocument* document, QWidget* parent = nullptr);
    // Stops the worker and waits for its thread: safe while training runs.
    ~TrainingPanel() override;

    void play();
    void pause();
    void step();
    void reset();
    // Writes the document's scene; returns false with *error on failure.
    bool saveTrainedScene(const QString& fileName, QString* error = nullptr);

    bool isRunning() const { return running_; }
    int stepCount() const { return stepCount_; }
    // Points on the loss curve (one per step since the last reset).
    int lossPointCount() const;
    plot::LossChart* lossChart() const { return lossChart_; }
    // The trainer's side, for tests that check what the controls set on it.
    TrainingWorker* worker() const { return worker_; }

    // One layer (the document's scene) or a whole small model (the Model page).
    Mode mode() const;
    void setMode(Mode mode);
    ModelTrainingPage* modelPage() const { return modelPage_; }

signals:
    void messageRequested(const QString& text);
    // A model folder the Model page saved and the user wants open (File › Open model does it).
    void openModelRequested(const QString& folder);

private:
    void ensureTrainer();
    void applySnapshot(const std::shared_ptr<const TrainingSnapshot>& snapshot);
    void commitRun();
    void showFailure(const QString& message);
    void invalidateTrainer();
    void updateButtons();
    void saveDialog();

    document::AttentionDocument* document_;
    QThread thread_;
    TrainingWorker* worker_;  // lives in thread_, deleted when it finishes
    QPushButton *play_, *pause_, *step_, *reset_, *save_;
    QDoubleSpinBox* learningRate_;
    QSpinBox* seed_;
    QComboBox* task_;
    QSpinBox* stepsPerSecond_;
    QLabel* taskNote_;  // what the chosen task does to the scene (match replaces the tokens)
    QLabel* status_;
    plot::LossChart* lossChart_;
    QComboBox* mode_;
    QStackedWidget* pages_;
    ModelTrainingPage* modelPage_;

    bool configured_ = false;  // the worker has a trainer for the current options
    bool running_ = false;
    bool applying_ = false;  // the document change is ours, not the user's
    int stepCount_ = 0;
    int runStartStep_ = 0;
    int generation_ = 0;               // of the trainer snapshots are accepted from
    std::optional<Scene> runStart_;    // the document's scene when the current run began
    std::optional<Scene> trainStart_;  // the scene the trainer was configured from
    // The teacher's scene from before training replaced its tokens (match does), and the tokens
    // training last showed: a trainer configured from those still has the teacher's scene
    // behind it, and Reset goes back to it.
    std::optional<Scene> teacherScene_;
    std::vector<std::string> trainedTokens_;
};

// Adds the panel in a dock on the right of `window` (hidden until chosen), its toggle to `menu`,
// and its messages to the status bar. The one call MainWindow makes.
TrainingPanel* addTrainingDock(QMainWindow* window, document::AttentionDocument* document,
                               QMenu* menu);

}  // namespace ae::ui
