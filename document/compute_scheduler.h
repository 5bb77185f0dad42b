#pragma once
// Computing the document's results (docs/architecture.md, "Computing off the GUI thread").
//
// Who owns what: AttentionDocument owns the latest scene, the undo stack and the file name, and
// turns every edit into a pair of small operations, one on a scene and one on an engine. It hands
// them to its ComputeScheduler, which owns everything from there on: both engines, the log of
// edits not yet applied to both, the worker thread, cancelling, progress, the verdict on an edit
// checked in the background, and waitForResults(). The scheduler writes to the document's scene
// only to apply a recorded edit or to take back a refused one; it never touches the undo stack
// (a refusal hands the edit's undo step back through editRefused).
//
// Work estimated at or under backgroundThreshold() flops is computed at once on the GUI thread,
// in the engine the widgets read. Larger work runs on one worker thread in a second engine; newer
// input cancels a running job and restarts it on the latest scene (except a job still checking a
// value edit, which finishes first); a finished result swaps the two engines.

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <atomic>
#include <deque>
#include <functional>
#include <memory>

#include "core/attention_engine.h"

class QTimer;
class QUndoCommand;

namespace ae::document {

class LatestJobRunner;

class ComputeScheduler : public QObject {
    Q_OBJECT
public:
    using Engine = AttentionEngine<float>;

    // `latest` is the document's scene, which outlives the scheduler: every recorded edit is
    // applied to it at once.
    explicit ComputeScheduler(Scene& latest, QObject* parent = nullptr);
    ~ComputeScheduler() override;

    // How a checked edit (a value or a whole scene) is taken back when a background compute
    // finds it impossible. A check computed at once is judged by the document instead.
    struct Refusal {
        // The message, from the engine's error ("scores: overflow ...").
        std::function<QString(const QString& engineError)> message;
        // What an engine applies instead of the edit (the old value).
        std::function<void(Engine&)> takeBackOnEngine;
        // How the latest scene loses the edit; `replayLaterEdits` applies to a scene, in order,
        // every edit made after this one (they stay).
        std::function<void(Scene& latest, const std::function<void(Scene&)>& replayLaterEdits)>
            takeBackOnScene;
        // The edit's undo step, handed back by editRefused; null until pushed and once deleted.
        const QUndoCommand* undoStep = nullptr;
    };

    // Applies an edit to the latest scene and logs it for the engines. `from` is the earliest
    // stage it touches; `check`, if any, says how to take it back if a background compute fails.
    // Call bringUpToDate() after (the document announces structural edits in between).
    void record(std::function<void(Scene&)> onScene, std::function<void(Engine&)> onEngine,
                WorkFrom from, std::shared_ptr<Refusal> check = {});
    // Computes the recorded edits at once when the work is small, else starts (or marks stale)
    // a background job.
    void bringUpToDate();
    // A new scene with no history: verdicts still due are dropped, and an idle second engine is
    // freed (the new scene may be small).
    void startOver();
    // Called when an undo step is deleted, so no refusal hands it back.
    void forgetUndoStep(const QUndoCommand* undoStep);

    // The last finished results, with the scene they belong to (engine().scene(), behind the
    // latest scene while a background compute runs). Valid unless errorText() is non-empty.
    const Engine& engine() const { return *shown_; }
    // True when engine() has applied every recorded edit (computed, or failed: errorText()).
    bool hasLatestResults() const { return shownSerial_ == lastSerial_; }
    // Changes whenever the latest scene's weights may have changed (an edit from the projections
    // or earlier, a refusal taken back, a new scene): equal revisions mean the same weights, so
    // views compare a revision instead of every weight.
    long weightsRevision() const { return weightsRevision_; }
    // The serial of the last recorded edit: unchanged, with an unchanged weightsRevision(), means
    // the latest scene has not been touched.
    long lastEditSerial() const { return lastSerial_; }
    // Why the last compute failed ("scores: overflow ..."), or empty.
    QString errorText() const { return errorText_; }
    double lastComputeMilliseconds() const { return lastComputeMs_; }

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
    // Runs an event loop until engine() holds the results of the latest scene.
    void waitForResults();
    // Called on the worker thread before each job (tests hold a job there with a semaphore).
    void setBeforeJobForTesting(std::function<void()> hook) { beforeJob_ = std::move(hook); }

signals:
    void resultsChanged();  // new numbers (or a new errorText)
    void computingChanged(bool computing);
    // Only once the progress delay has passed; `stage` is the engine's ("heads", "projections").
    void progressChanged(double fraction, const QString& stage);
    // A checked edit was taken back from the engines and the latest scene; its undo step (or
    // null) is for the document to drop.
    void editRefused(const QUndoCommand* undoStep, const QString& message);

private:
    struct Edit {
        long serial = 0;
        std::function<void(Scene&)> onScene;
        std::function<void(Engine&)> onEngine;
        std::shared_ptr<Refusal> check;  // null, or not yet verified
    };
    struct JobResult {
        bool cancelled = false;
        QString error;
        double milliseconds = 0.0;
    };

    void computeShownNow();
    void startJob();
    void onJobFinished(long serial, const JobResult& result);
    void refuse(Edit& edit, const Refusal& check, const QString& error);
    void catchUp(Engine& engine, long& appliedSerial, long untilSerial);
    void dropAppliedEdits();
    void setComputing(bool computing);
    void publish(const JobResult& result);
    void updateProgress();

    Scene& latest_;
    std::unique_ptr<Engine> shown_, spare_;
    long lastSerial_ = 0, shownSerial_ = 0, spareSerial_ = 0;
    long weightsRevision_ = 0;
    std::deque<Edit> edits_;  // those not yet applied to both engines, in order
    WorkFrom shownPendingFrom_ = WorkFrom::Nothing;
    int shownPendingRows_ = 0;
    QString errorText_;
    double lastComputeMs_ = 0.0;

    double backgroundFlops_ = kDefaultBackgroundFlops;
    int progressDelayMs_ = kDefaultProgressDelayMs;
    LatestJobRunner* jobs_;  // one job at a time: a newer edit cancels it (cancel_) instead
    bool jobRunning_ = false;
    long jobSerial_ = 0;
    std::shared_ptr<Refusal> jobCheck_;
    std::atomic<bool> cancel_{false};
    std::atomic<int> progressPermille_{0};
    std::atomic<const char*> progressStage_{""};
    std::function<void()> beforeJob_;
    bool computing_ = false, showsProgress_ = false;
    QElapsedTimer computingSince_;
    QTimer* progressTimer_ = nullptr;
};

}  // namespace ae::document
