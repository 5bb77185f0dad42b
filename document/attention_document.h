#pragma once
// The document: owns the scene, the undo stack, and the computed stages.
// Widgets never change the scene directly: they call the edit methods below, each of which pushes
// an undo command. A change of sizes or tokens emits structureChanged() at once; new numbers emit
// resultsChanged().
//
// Computing (docs/architecture.md, "Computing off the GUI thread"): every edit is recorded as a
// small operation on the scene and on an engine. Work estimated at or under backgroundThreshold()
// flops is computed at once on the GUI thread, in the engine the widgets read. Larger work runs
// on one worker thread in a second engine; newer input cancels a running job and restarts it on
// the latest scene (except a job still checking a value edit, which finishes first); a finished
// result swaps the two engines. scene() always shows the latest edit; engine() the last result.

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QUndoStack>
#include <atomic>
#include <deque>
#include <functional>
#include <memory>

#include "core/attention_engine.h"

class QThread;
class QTimer;

namespace ae::ui {

enum class WeightMatrix { Query, Key, Value, Output, QueryBias, KeyBias, ValueBias, OutputBias };

class AttentionDocument : public QObject {
    Q_OBJECT
public:
    explicit AttentionDocument(QObject* parent = nullptr);
    ~AttentionDocument() override;

    // The latest scene: every edit shows here at once, also while its numbers are computed.
    const Scene& scene() const { return scene_; }
    // The last finished results (float), with the scene they belong to (engine().scene(), behind
    // scene() while a background compute runs). Valid unless errorText() is non-empty.
    const AttentionEngine<float>& engine() const { return *shown_; }
    QUndoStack* undoStack() { return &undoStack_; }
    // Why the last compute failed ("scores: overflow ..."), or empty.
    QString errorText() const { return errorText_; }
    double lastComputeMilliseconds() const { return lastComputeMs_; }
    QString fileName() const { return fileName_; }
    void setFileName(const QString& fileName);
    // Whether the scene differs from its saved state: undoing back to the saved step makes it
    // unmodified again. resetScene() starts unmodified.
    bool isModified() const { return !undoStack_.isClean(); }
    // After a save: the current step is the saved one.
    void markSaved() { undoStack_.setClean(); }
    // Unsaved with no undo step leading back to a saved state (a restored autosave).
    void markUnsaved() { undoStack_.resetClean(); }

    // Replaces everything and clears the undo history (open, new, preset). Throws
    // SceneError("scene", "too large: ...") before anything changes if the window could not hold
    // the scene (checkWindowMemory).
    void resetScene(const Scene& scene, const QString& fileName = {});
    // The window's size rule, shared by every path that brings a scene into the document: throws
    // SceneError("scene", "too large: needs about X GiB (...), this machine has Y GiB") if
    // windowBytes(scene) exceed the machine's memory.
    static void checkWindowMemory(const Scene& scene);

    // Edits. Each one is one undo step, except that calls made between beginInteraction() and
    // endInteraction() (a slider drag) merge into one step per kind.
    // Ignored unless heads divides d_proj; refused (false, *error) if the window could not hold
    // that many score matrices, and nothing changes then.
    bool setHeads(int heads, QString* error = nullptr);
    void setScale(const Scale& scale);
    void setMask(const Mask& mask);
    void setMaskFill(double fill);
    // Rejects a non-finite value, or one that makes the scores overflow, keeping the old value;
    // returns false and sets *error to a one-line reason.
    bool setEmbeddingValue(Stream stream, int row, int column, double value,
                           QString* error = nullptr);
    bool setWeightValue(WeightMatrix which, int row, int column, double value,
                        QString* error = nullptr);
    // Structural edits (tokens, d_model, positions, norm, projection mode, re-roll...): the new
    // scene must be valid. Returns false with *error if it is too large for this machine
    // (checked before anything is allocated) or computing it fails; nothing changes then.
    bool replaceScene(const Scene& scene, const QString& description, QString* error = nullptr);

    void beginInteraction();
    void endInteraction();
    int interactionSerial() const { return interactionSerial_; }

    // Edits that are no undo step: training's steps (many a second would bury the user's own
    // edits) and a batch export's frames on its own document. Unchecked: the caller passes
    // values the scene can take.
    void setHeadsWithoutUndo(int heads) { applyHeads(heads); }
    void setScaleWithoutUndo(const Scale& scale) { applyScale(scale); }
    void setMaskWithoutUndo(const Mask& mask) { applyMask(mask); }
    void setSceneWithoutUndo(const Scene& scene) { applyScene(scene); }

    static double weightValue(const Scene& scene, WeightMatrix which, int row, int column);
    // Called by a checked edit's undo command when it is deleted.
    void forgetCommand(const QUndoCommand* command);

    // Background computing.
    // Work estimated above this many flops (estimatedComputeFlops) runs on the worker thread;
    // 0 sends every compute there (tests).
    static constexpr double kDefaultBackgroundFlops = 8e9;
    void setBackgroundThreshold(double flops) { backgroundFlops_ = flops; }
    double backgroundThreshold() const { return backgroundFlops_; }
    // A background compute running longer than this shows progress (tests set 0).
    static constexpr int kDefaultProgressDelayMs = 200;
    void setProgressDelay(int milliseconds) { progressDelayMs_ = milliseconds; }
    // True from the start of a background compute until its result (or error) is shown.
    bool isComputing() const { return computing_; }
    // True once a background compute has run longer than the progress delay.
    bool showsProgress() const { return showsProgress_; }
    // Runs an event loop until engine() holds the results of scene() (tests, CLI, benchmark).
    void waitForResults();
    // Called on the worker thread before each job (tests hold a job there with a semaphore).
    void setBeforeJobForTesting(std::function<void()> hook) { beforeJob_ = std::move(hook); }

signals:
    void structureChanged();  // sizes, tokens, heads or modes changed: rebuild views
    void resultsChanged();    // new numbers (or a new errorText)
    void fileNameChanged(const QString& fileName);
    void modifiedChanged(bool modified);
    void computingChanged(bool computing);
    // Only once the progress delay has passed; `stage` is the engine's ("heads", "projections").
    void progressChanged(double fraction, const QString& stage);
    // A value or scene edit that a background compute found impossible was taken back.
    void editRefused(const QString& message);

private:
    // The undo commands apply their values through these, pushing nothing.
    friend class EmbeddingValueCommand;
    friend class WeightValueCommand;
    friend class ReplaceSceneCommand;
    void applyHeads(int heads);
    void applyScale(const Scale& scale);
    void applyMask(const Mask& mask);
    void applyMaskFill(double fill);
    void applyEmbeddingValue(Stream stream, int row, int column, double value);
    void applyWeightValue(WeightMatrix which, int row, int column, double value);
    void applyScene(const Scene& scene);

    // The verdict a value or structural edit is waiting for when its compute runs in the
    // background: how to take it back.
    struct PendingCheck {
        std::function<QString(const QString&)> reason;  // the message, from the engine's error
        // Computed at once: take it back with one more edit, also computed at once.
        std::function<void()> takeBackNow;
        // Refused by the worker: what an engine does instead of the edit (the old value), and
        // how the latest scene loses it (`serial` is the edit's; later edits stay).
        std::function<void(AttentionEngine<float>&)> takeBackOnEngine;
        std::function<void(Scene&, long serial)> takeBackOnScene;
        const QUndoCommand* command = nullptr;  // set once pushed; null once deleted
    };
    struct Edit {
        long serial = 0;
        std::function<void(Scene&)> onScene;
        std::function<void(AttentionEngine<float>&)> onEngine;
        std::shared_ptr<PendingCheck> check;  // null, or not yet verified
    };
    struct JobResult {
        bool cancelled = false;
        QString error;
        double milliseconds = 0.0;
    };

    // One number of the scene edited through setEmbeddingValue or setWeightValue.
    struct CellEdit {
        std::function<double&(Scene&)> cell;
        std::function<void(double)> apply;  // records the value, no undo step
        // Puts the value back into an engine's copy only (a refused edit taken back).
        std::function<void(AttentionEngine<float>&, double)> restoreOnEngine;
        std::function<QUndoCommand*(double old, double value)> command;
    };
    // The one path of both value edits: refuses a non-finite value, checks the new value, and
    // pushes its undo command once it stands.
    bool setCellValue(const CellEdit& edit, double value, QString* error);

    // Applies an edit to scene() and brings the results up to date (now or in the background).
    void record(std::function<void(Scene&)> onScene,
                std::function<void(AttentionEngine<float>&)> onEngine, WorkFrom from,
                bool structural);
    void computeShownNow();
    void startJob();
    void onJobFinished(long serial, const JobResult& result);
    bool standsOrTakenBack(const PendingCheck& check, QString* error);
    void refuse(Edit& edit, const PendingCheck& check, const QString& error);
    void catchUp(AttentionEngine<float>& engine, long& appliedSerial, long untilSerial);
    void dropAppliedEdits();
    void setComputing(bool computing);
    void publish(const JobResult& result);
    void updateProgress();
    int nextSerial();

    Scene scene_;
    std::unique_ptr<AttentionEngine<float>> shown_, spare_;
    long lastSerial_ = 0, shownSerial_ = 0, spareSerial_ = 0;
    std::deque<Edit> edits_;  // those not yet applied to both engines, in order
    WorkFrom shownPendingFrom_ = WorkFrom::Nothing;
    int shownPendingRows_ = 0;
    std::shared_ptr<PendingCheck> checkToAttach_;  // handed from set*Value to record()

    double backgroundFlops_ = kDefaultBackgroundFlops;
    int progressDelayMs_ = kDefaultProgressDelayMs;
    QThread* worker_ = nullptr;
    QObject* workerContext_ = nullptr;  // lives in worker_: jobs are queued to it
    bool jobRunning_ = false;
    long jobSerial_ = 0;
    std::shared_ptr<PendingCheck> jobCheck_;
    std::atomic<bool> cancel_{false};
    std::atomic<int> progressPermille_{0};
    std::atomic<const char*> progressStage_{""};
    std::function<void()> beforeJob_;
    bool computing_ = false, showsProgress_ = false;
    QElapsedTimer computingSince_;
    QTimer* progressTimer_ = nullptr;

    QUndoStack undoStack_;
    QString errorText_;
    QString fileName_;
    double lastComputeMs_ = 0.0;
    int interactionSerial_ = 0;
    bool interacting_ = false;
};

}  // namespace ae::ui
