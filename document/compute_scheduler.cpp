#include "document/compute_scheduler.h"

#include <QEventLoop>
#include <QTimer>
#include <algorithm>
#include <utility>

#include "document/latest_job_runner.h"

namespace ae::document {

namespace {

double milliseconds(const QElapsedTimer& timer) {
    return static_cast<double>(timer.nsecsElapsed()) / 1e6;
}

}  // namespace

ComputeScheduler::ComputeScheduler(Scene& latest, QObject* parent)
    : QObject(parent),
      latest_(latest),
      shown_(std::make_unique<Engine>()),
      jobs_(new LatestJobRunner(QStringLiteral("attention compute"), 1, this)),
      progressTimer_(new QTimer(this)) {
    progressTimer_->setInterval(50);
    connect(progressTimer_, &QTimer::timeout, this, &ComputeScheduler::updateProgress);
}

ComputeScheduler::~ComputeScheduler() {
    // A running job stops at its next head; a queued one is dropped. Both engines outlive it.
    cancel_ = true;
    jobs_->stop();
}

void ComputeScheduler::startOver() {
    ++weightsRevision_;
    // Verdicts still due belong to a history that is gone; a job checking one may be cancelled.
    for (Edit& edit : edits_)
        edit.check.reset();
    jobCheck_.reset();
    if (!jobRunning_) spare_.reset();  // a new scene may be small: free the second engine's memory
}

void ComputeScheduler::record(std::function<void(Scene&)> onScene,
                              std::function<void(Engine&)> onEngine, WorkFrom from,
                              std::shared_ptr<Refusal> check) {
    onScene(latest_);
    if (from <= WorkFrom::Projections) ++weightsRevision_;
    edits_.push_back({++lastSerial_, std::move(onScene), std::move(onEngine), std::move(check)});
    shownPendingFrom_ = std::min(shownPendingFrom_, from);
    if (from == WorkFrom::EditedRows) ++shownPendingRows_;
}

void ComputeScheduler::bringUpToDate() {
    if (jobRunning_) {
        // Newer input makes the running job stale, unless it still owes an edit its verdict.
        if (!jobCheck_) cancel_ = true;
        return;
    }
    // What the shown engine would redo: from the earliest stage these edits touch, or more if
    // its last compute failed part-way.
    const double pending =
        std::max(estimatedComputeFlops(latest_, shownPendingFrom_, shownPendingRows_),
                 shown_->pendingFlops());
    if (!computing_ && pending <= backgroundFlops_) {
        computeShownNow();
    } else {
        startJob();
    }
}

void ComputeScheduler::catchUp(Engine& engine, long& appliedSerial, long untilSerial) {
    for (const Edit& edit : edits_) {
        if (edit.serial > appliedSerial && edit.serial <= untilSerial) edit.onEngine(engine);
    }
    appliedSerial = untilSerial;
}

void ComputeScheduler::dropAppliedEdits() {
    const long appliedToBoth = spare_ ? std::min(shownSerial_, spareSerial_) : shownSerial_;
    while (!edits_.empty() && edits_.front().serial <= appliedToBoth)
        edits_.pop_front();
}

void ComputeScheduler::computeShownNow() {
    catchUp(*shown_, shownSerial_, lastSerial_);
    // The second engine is idle: keep it current (setters only, no compute) so the log stays short.
    if (spare_) catchUp(*spare_, spareSerial_, lastSerial_);
    for (Edit& edit : edits_)
        edit.check.reset();  // judged here and now, by the document
    dropAppliedEdits();
    QElapsedTimer timer;
    timer.start();
    try {
        shown_->compute();
        errorText_.clear();
    } catch (const SceneError& error) {
        errorText_ = QString::fromStdString(error.what());
    }
    lastComputeMs_ = milliseconds(timer);
    shownPendingFrom_ = WorkFrom::Nothing;
    shownPendingRows_ = 0;
    emit resultsChanged();
}

void ComputeScheduler::startJob() {
    // The edits the spare engine has not seen, applied on the worker before computing; a job
    // stops after the first edit still waiting for its verdict, so each verdict is its own.
    std::vector<std::function<void(Engine&)>> edits;
    std::shared_ptr<Refusal> check;
    if (!spare_) {
        spare_ = std::make_unique<Engine>();
        auto snapshot = std::make_shared<const Scene>(latest_);
        edits.push_back([snapshot](Engine& engine) { engine.setScene(*snapshot); });
        jobSerial_ = lastSerial_;
        // Without a spare engine every compute so far was synchronous: only the newest edit can
        // still wait for a verdict.
        if (!edits_.empty() && edits_.back().serial == lastSerial_) check = edits_.back().check;
    } else {
        jobSerial_ = spareSerial_;
        for (const Edit& edit : edits_) {
            if (edit.serial <= spareSerial_) continue;
            edits.push_back(edit.onEngine);
            jobSerial_ = edit.serial;
            if (edit.check) {
                check = edit.check;
                break;
            }
        }
    }
    spareSerial_ = jobSerial_;
    jobCheck_ = check;
    cancel_ = false;
    progressPermille_ = 0;
    progressStage_ = "queued";
    jobRunning_ = true;
    setComputing(true);
    Engine* engine = spare_.get();
    const long serial = jobSerial_;
    jobs_->post([this, engine, serial, edits = std::move(edits), beforeJob = beforeJob_] {
        // On the worker thread: only `engine` and the atomics are touched here.
        QElapsedTimer timer;
        timer.start();
        JobResult result;
        if (beforeJob) beforeJob();
        try {
            for (const auto& apply : edits)
                apply(*engine);
            ComputeControl control;
            control.cancel = &cancel_;
            control.progress = [this](double fraction, const char* stage) {
                progressPermille_ = static_cast<int>(fraction * 1000.0);
                progressStage_ = stage;
            };
            engine->compute(control);
        } catch (const ComputeCancelled&) {
            result.cancelled = true;
        } catch (const std::exception& error) {  // SceneError, or out of memory
            result.error = QString::fromStdString(error.what());
        }
        result.milliseconds = milliseconds(timer);
        return [this, serial, result] { onJobFinished(serial, result); };
    });
}

void ComputeScheduler::onJobFinished(long serial, const JobResult& result) {
    jobRunning_ = false;
    if (result.cancelled) {
        startJob();  // on the latest input
        return;
    }
    if (const std::shared_ptr<Refusal> check = std::exchange(jobCheck_, nullptr)) {
        // The job stopped at the checked edit, so it is still in the log and the spare
        // engine has applied nothing after it.
        auto edit = std::find_if(edits_.begin(), edits_.end(),
                                 [&](const Edit& e) { return e.check == check; });
        if (edit != edits_.end()) {
            edit->check.reset();  // judged now, either way
            if (!result.error.isEmpty()) {
                refuse(*edit, *check, result.error);
                startJob();  // the later edits, judged without the refused one
                return;
            }
        }
    }
    if (lastSerial_ > serial) {
        startJob();  // the result is stale: never show it after newer input
        return;
    }
    publish(result);
}

void ComputeScheduler::refuse(Edit& edit, const Refusal& check, const QString& error) {
    const QString message = check.message(error);
    // The edit's place in the log now holds its taking back, so an engine that has not applied it
    // never sees it, and the later edits apply in their order on top. The spare engine applied it
    // (and nothing after it) in the failed job: it takes it back here; setters only, no compute.
    edit.onEngine = check.takeBackOnEngine;
    check.takeBackOnEngine(*spare_);
    const long serial = edit.serial;
    ++weightsRevision_;
    check.takeBackOnScene(latest_, [this, serial](Scene& scene) {
        for (const Edit& later : edits_) {
            if (later.serial > serial) later.onScene(scene);
        }
    });
    emit editRefused(check.undoStep, message);
}

void ComputeScheduler::publish(const JobResult& result) {
    std::swap(shown_, spare_);
    std::swap(shownSerial_, spareSerial_);
    errorText_ = result.error;
    lastComputeMs_ = result.milliseconds;
    shownPendingFrom_ = WorkFrom::Nothing;
    shownPendingRows_ = 0;
    dropAppliedEdits();
    emit resultsChanged();
    setComputing(false);
}

void ComputeScheduler::setComputing(bool computing) {
    if (computing == computing_) return;
    computing_ = computing;
    showsProgress_ = false;
    if (computing) {
        computingSince_.start();
        progressTimer_->start();
    } else {
        progressTimer_->stop();
    }
    emit computingChanged(computing);
}

void ComputeScheduler::updateProgress() {
    if (!computing_) return;
    if (!showsProgress_ && computingSince_.elapsed() < progressDelayMs_) return;
    showsProgress_ = true;
    emit progressChanged(progressPermille_.load() / 1000.0,
                         QString::fromLatin1(progressStage_.load()));
}

void ComputeScheduler::waitForResults() {
    if (!computing_) return;
    QEventLoop loop;
    connect(this, &ComputeScheduler::computingChanged, &loop, [&loop](bool computing) {
        if (!computing) loop.quit();
    });
    loop.exec();
}

void ComputeScheduler::forgetUndoStep(const QUndoCommand* undoStep) {
    for (Edit& edit : edits_) {
        if (edit.check && edit.check->undoStep == undoStep) edit.check->undoStep = nullptr;
    }
    if (jobCheck_ && jobCheck_->undoStep == undoStep) jobCheck_->undoStep = nullptr;
}

}  // namespace ae::document
