#include "document/attention_document.h"

#include <QCoreApplication>
#include <QEventLoop>
#include <QThread>
#include <QTimer>
#include <algorithm>
#include <cmath>

#include "document/undo_commands.h"

namespace ae::ui {

using EngineF = AttentionEngine<float>;

namespace {

double& weightCell(Projections& p, WeightMatrix which, int row, int column) {
    switch (which) {
        case WeightMatrix::Query:
            return p.query(row, column);
        case WeightMatrix::Key:
            return p.key(row, column);
        case WeightMatrix::Value:
            return p.value(row, column);
        case WeightMatrix::Output:
            return p.output(row, column);
        case WeightMatrix::QueryBias:
            return p.queryBias(column);
        case WeightMatrix::KeyBias:
            return p.keyBias(column);
        case WeightMatrix::ValueBias:
            return p.valueBias(column);
        case WeightMatrix::OutputBias:
            return p.outputBias(column);
    }
    return p.query(row, column);
}

double& embeddingCell(Scene& scene, Stream stream, int row, int column) {
    const bool source = stream == Stream::Source && scene.hasSource;
    return (source ? scene.sourceEmbeddings : scene.embeddings)(row, column);
}

double milliseconds(const QElapsedTimer& timer) {
    return static_cast<double>(timer.nsecsElapsed()) / 1e6;
}

}  // namespace

AttentionDocument::AttentionDocument(QObject* parent)
    : QObject(parent), shown_(std::make_unique<EngineF>()), progressTimer_(new QTimer(this)) {
    progressTimer_->setInterval(50);
    connect(progressTimer_, &QTimer::timeout, this, &AttentionDocument::updateProgress);
    connect(&undoStack_, &QUndoStack::cleanChanged, this,
            [this](bool clean) { emit modifiedChanged(!clean); });
}

AttentionDocument::~AttentionDocument() {
    undoStack_.clear();  // while the edits its commands point into still exist
    if (worker_) {
        // A running job stops at its next head; a queued one is dropped with the event loop.
        cancel_ = true;
        worker_->quit();
        worker_->wait();
        delete workerContext_;
    }
}

void AttentionDocument::setFileName(const QString& fileName) {
    fileName_ = fileName;
    emit fileNameChanged(fileName_);
}

namespace {
const char* const kWindowMemoryUse =
    "two float engines, shown and computing, and three copies of the scene";
}

void AttentionDocument::checkWindowMemory(const Scene& scene) {
    checkFitsInMemory(windowBytes(scene), kWindowMemoryUse);
}

void AttentionDocument::resetScene(const Scene& scene, const QString& fileName) {
    checkWindowMemory(scene);
    undoStack_.clear();
    fileName_ = fileName;
    // Verdicts still due belong to a history that is gone; a job checking one may be cancelled.
    for (Edit& edit : edits_)
        edit.check.reset();
    jobCheck_.reset();
    if (!jobRunning_) spare_.reset();  // a new scene may be small: free the second engine's memory
    auto snapshot = std::make_shared<const Scene>(scene);
    record([snapshot](Scene& s) { s = *snapshot; },
           [snapshot](EngineF& engine) { engine.setScene(*snapshot); }, WorkFrom::Inputs, true);
    undoStack_.setClean();
    emit fileNameChanged(fileName_);
}

void AttentionDocument::record(std::function<void(Scene&)> onScene,
                               std::function<void(EngineF&)> onEngine, WorkFrom from,
                               bool structural) {
    onScene(scene_);
    edits_.push_back(
        {++lastSerial_, std::move(onScene), std::move(onEngine), std::move(checkToAttach_)});
    checkToAttach_.reset();
    shownPendingFrom_ = std::min(shownPendingFrom_, from);
    if (from == WorkFrom::EditedRows) ++shownPendingRows_;
    if (structural) emit structureChanged();
    if (jobRunning_) {
        // Newer input makes the running job stale, unless it still owes an edit its verdict.
        if (!jobCheck_) cancel_ = true;
        return;
    }
    // What the shown engine would redo: from the earliest stage these edits touch, or more if
    // its last compute failed part-way.
    const double pending =
        std::max(estimatedComputeFlops(scene_, shownPendingFrom_, shownPendingRows_),
                 shown_->pendingFlops());
    if (!computing_ && pending <= backgroundFlops_) {
        computeShownNow();
    } else {
        startJob();
    }
}

void AttentionDocument::catchUp(EngineF& engine, long& appliedSerial, long untilSerial) {
    for (const Edit& edit : edits_) {
        if (edit.serial > appliedSerial && edit.serial <= untilSerial) edit.onEngine(engine);
    }
    appliedSerial = untilSerial;
}

void AttentionDocument::dropAppliedEdits() {
    const long appliedToBoth = spare_ ? std::min(shownSerial_, spareSerial_) : shownSerial_;
    while (!edits_.empty() && edits_.front().serial <= appliedToBoth)
        edits_.pop_front();
}

void AttentionDocument::computeShownNow() {
    catchUp(*shown_, shownSerial_, lastSerial_);
    // The second engine is idle: keep it current (setters only, no compute) so the log stays short.
    if (spare_) catchUp(*spare_, spareSerial_, lastSerial_);
    for (Edit& edit : edits_)
        edit.check.reset();  // judged here and now, by the caller
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

void AttentionDocument::startJob() {
    // The edits the spare engine has not seen, applied on the worker before computing; a job
    // stops after the first edit still waiting for its verdict, so each verdict is its own.
    std::vector<std::function<void(EngineF&)>> edits;
    std::shared_ptr<PendingCheck> check;
    if (!spare_) {
        spare_ = std::make_unique<EngineF>();
        auto snapshot = std::make_shared<const Scene>(scene_);
        edits.push_back([snapshot](EngineF& engine) { engine.setScene(*snapshot); });
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
    if (!worker_) {
        worker_ = new QThread(this);
        worker_->setObjectName(QStringLiteral("attention compute"));
        workerContext_ = new QObject;
        workerContext_->moveToThread(worker_);
        worker_->start();
    }
    EngineF* engine = spare_.get();
    const long serial = jobSerial_;
    QMetaObject::invokeMethod(
        workerContext_,
        [this, engine, serial, edits = std::move(edits), beforeJob = beforeJob_] {
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
            QMetaObject::invokeMethod(
                this, [this, serial, result] { onJobFinished(serial, result); },
                Qt::QueuedConnection);
        },
        Qt::QueuedConnection);
}

void AttentionDocument::onJobFinished(long serial, const JobResult& result) {
    jobRunning_ = false;
    if (result.cancelled) {
        startJob();  // on the latest input
        return;
    }
    if (const std::shared_ptr<PendingCheck> check = std::exchange(jobCheck_, nullptr)) {
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

void AttentionDocument::refuse(Edit& edit, const PendingCheck& check, const QString& error) {
    const QString message = check.reason(error);
    if (const QUndoCommand* command = check.command) {
        // Obsolete: QUndoStack deletes it when it is next undone or redone, without applying it.
        const_cast<QUndoCommand*>(command)->setObsolete(true);
        if (undoStack_.index() > 0 && undoStack_.command(undoStack_.index() - 1) == command)
            undoStack_.undo();
    }
    // The edit's place in the log now holds its taking back, so an engine that has not applied it
    // never sees it, and the later edits apply in their order on top. The spare engine applied it
    // (and nothing after it) in the failed job: it takes it back here; setters only, no compute.
    edit.onEngine = check.takeBackOnEngine;
    check.takeBackOnEngine(*spare_);
    check.takeBackOnScene(scene_, edit.serial);
    emit structureChanged();  // editors show the old value again
    emit editRefused(message);
}

void AttentionDocument::publish(const JobResult& result) {
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

void AttentionDocument::setComputing(bool computing) {
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

void AttentionDocument::updateProgress() {
    if (!computing_) return;
    if (!showsProgress_ && computingSince_.elapsed() < progressDelayMs_) return;
    showsProgress_ = true;
    emit progressChanged(progressPermille_.load() / 1000.0,
                         QString::fromLatin1(progressStage_.load()));
}

void AttentionDocument::waitForResults() {
    if (!computing_) return;
    QEventLoop loop;
    connect(this, &AttentionDocument::computingChanged, &loop, [&loop](bool computing) {
        if (!computing) loop.quit();
    });
    loop.exec();
}

void AttentionDocument::forgetCommand(const QUndoCommand* command) {
    for (Edit& edit : edits_) {
        if (edit.check && edit.check->command == command) edit.check->command = nullptr;
    }
    if (jobCheck_ && jobCheck_->command == command) jobCheck_->command = nullptr;
}

bool AttentionDocument::standsOrTakenBack(const PendingCheck& check, QString* error) {
    if (shownSerial_ < lastSerial_) return true;  // computing in the background: verdict later
    if (errorText_.isEmpty()) return true;
    if (error) *error = check.reason(errorText_);
    check.takeBackNow();
    return false;
}

int AttentionDocument::nextSerial() {
    return interacting_ ? interactionSerial_ : ++interactionSerial_;
}

void AttentionDocument::beginInteraction() {
    interacting_ = true;
    ++interactionSerial_;
}

void AttentionDocument::endInteraction() {
    interacting_ = false;
    ++interactionSerial_;
}

bool AttentionDocument::setHeads(int heads, QString* error) {
    if (heads < 1 || scene().dProj() % heads != 0 || heads == scene().heads) return false;
    try {
        checkHeadCount(scene(), heads);  // grouped kv heads, a q/k norm, rotary's even d_head
        // Only the number of score, scaled and weight matrices (Lq x Lk each) changes, in both
        // engines.
        const double cells = static_cast<double>(scene().queryCount()) * scene().keyCount();
        checkFitsInMemory(
            windowBytes(scene()) + 2.0 * 3.0 * (heads - scene().heads) * cells * sizeof(float),
            kWindowMemoryUse);
    } catch (const SceneError& refusal) {
        if (error) *error = QString::fromStdString(refusal.what());
        return false;
    }
    nextSerial();
    undoStack_.push(new ChangeValueCommand<int>(
        this, kHeadsCommand, [this](const int& h) { applyHeads(h); }, scene().heads, heads,
        tr("Change head count")));
    return true;
}

void AttentionDocument::setScale(const Scale& scale) {
    nextSerial();
    undoStack_.push(new ChangeValueCommand<Scale>(
        this, kScaleCommand, [this](const Scale& s) { applyScale(s); }, scene().scale, scale,
        tr("Change scaling")));
}

void AttentionDocument::setMask(const Mask& mask) {
    nextSerial();
    undoStack_.push(new ChangeValueCommand<Mask>(
        this, kMaskCommand, [this](const Mask& m) { applyMask(m); }, scene().mask, mask,
        tr("Change mask")));
}

void AttentionDocument::setMaskFill(double fill) {
    nextSerial();
    undoStack_.push(new ChangeValueCommand<double>(
        this, kMaskFillCommand, [this](const double& f) { applyMaskFill(f); }, scene().maskFill,
        fill, tr("Change mask fill")));
}

bool AttentionDocument::setCellValue(const CellEdit& edit, double value, QString* error) {
    const double old = edit.cell(scene_);
    if (!std::isfinite(value)) {
        if (error) *error = tr("%1 is not a finite number; kept %2").arg(value).arg(old);
        return false;
    }
    if (value == old) return true;
    auto check = std::make_shared<PendingCheck>();
    check->reason = [value, old](const QString& why) {
        return tr("%1 refused: %2; kept %3").arg(value).arg(why).arg(old);
    };
    check->takeBackNow = [apply = edit.apply, old] { apply(old); };
    check->takeBackOnEngine = [restore = edit.restoreOnEngine, old](EngineF& engine) {
        restore(engine, old);
    };
    check->takeBackOnScene = [cell = edit.cell, value, old](Scene& s, long) {
        // Only while the cell still holds the refused value: a later edit of it stands.
        if (cell(s) == value) cell(s) = old;
    };
    checkToAttach_ = check;
    edit.apply(value);
    if (!standsOrTakenBack(*check, error)) return false;
    nextSerial();
    QUndoCommand* command = edit.command(old, value);
    check->command = command;
    undoStack_.push(command);
    return true;
}

bool AttentionDocument::setEmbeddingValue(Stream stream, int row, int column, double value,
                                          QString* error) {
    CellEdit edit;
    edit.cell = [=](Scene& s) -> double& { return embeddingCell(s, stream, row, column); };
    edit.apply = [=](double v) { applyEmbeddingValue(stream, row, column, v); };
    edit.restoreOnEngine = [=](EngineF& engine, double v) {
        engine.setEmbeddingValue(stream, row, column, v);
    };
    edit.command = [=](double old, double v) -> QUndoCommand* {
        return new EmbeddingValueCommand(this, stream, row, column, old, v);
    };
    return setCellValue(edit, value, error);
}

bool AttentionDocument::setWeightValue(WeightMatrix which, int row, int column, double value,
                                       QString* error) {
    CellEdit edit;
    edit.cell = [=](Scene& s) -> double& { return weightCell(s.projections, which, row, column); };
    edit.apply = [=](double v) { applyWeightValue(which, row, column, v); };
    edit.restoreOnEngine = [=](EngineF& engine, double v) {
        Projections p = engine.scene().projections;
        weightCell(p, which, row, column) = v;
        engine.setProjections(p);
    };
    edit.command = [=](double old, double v) -> QUndoCommand* {
        return new WeightValueCommand(this, which, row, column, old, v);
    };
    return setCellValue(edit, value, error);
}

bool AttentionDocument::replaceScene(const Scene& newScene, const QString& description,
                                     QString* error) {
    try {
        checkWindowMemory(newScene);
    } catch (const SceneError& refusal) {
        if (error) *error = QString::fromStdString(refusal.what());
        return false;
    }
    auto old = std::make_shared<const Scene>(scene_);
    auto check = std::make_shared<PendingCheck>();
    check->reason = [](const QString& why) { return why; };
    check->takeBackNow = [this, old] { applyScene(*old); };
    check->takeBackOnEngine = [old](EngineF& engine) { engine.setScene(*old); };
    check->takeBackOnScene = [this, old](Scene& s, long serial) {
        // The old scene, with every edit made since this one replayed on it.
        Scene restored = *old;
        for (const Edit& edit : edits_) {
            if (edit.serial > serial) edit.onScene(restored);
        }
        s = std::move(restored);
    };
    checkToAttach_ = check;
    applyScene(newScene);
    if (!standsOrTakenBack(*check, error)) return false;
    nextSerial();
    auto* command = new ReplaceSceneCommand(this, *old, newScene, description);
    check->command = command;
    undoStack_.push(command);
    return true;
}

void AttentionDocument::applyHeads(int heads) {
    record([heads](Scene& s) { s.heads = heads; },
           [heads](EngineF& engine) { engine.setHeads(heads); }, WorkFrom::Scores, true);
}

void AttentionDocument::applyScale(const Scale& scale) {
    record([scale](Scene& s) { s.scale = scale; },
           [scale](EngineF& engine) { engine.setScale(scale); }, WorkFrom::Scaling, false);
}

void AttentionDocument::applyMask(const Mask& mask) {
    record([mask](Scene& s) { s.mask = mask; }, [mask](EngineF& engine) { engine.setMask(mask); },
           WorkFrom::Softmax, false);
}

void AttentionDocument::applyMaskFill(double fill) {
    record([fill](Scene& s) { s.maskFill = fill; },
           [fill](EngineF& engine) { engine.setMaskFill(fill); }, WorkFrom::Softmax, false);
}

void AttentionDocument::applyEmbeddingValue(Stream stream, int row, int column, double value) {
    record(
        [=](Scene& s) {
            s.init.reset();
            embeddingCell(s, stream, row, column) = value;
        },
        [=](EngineF& engine) {
            engine.forgetInit();
            engine.setEmbeddingValue(stream, row, column, value);
        },
        WorkFrom::EditedRows, false);
}

void AttentionDocument::applyWeightValue(WeightMatrix which, int row, int column, double value) {
    record(
        [=](Scene& s) {
            s.init.reset();
            weightCell(s.projections, which, row, column) = value;
        },
        [=](EngineF& engine) {
            // From the engine's own copy: the edit log holds no matrices.
            Projections p = engine.scene().projections;
            weightCell(p, which, row, column) = value;
            engine.forgetInit();
            engine.setProjections(p);
        },
        WorkFrom::Projections, false);
}

void AttentionDocument::applyScene(const Scene& scene) {
    auto snapshot = std::make_shared<const Scene>(scene);
    record([snapshot](Scene& s) { s = *snapshot; },
           [snapshot](EngineF& engine) { engine.setScene(*snapshot); }, WorkFrom::Inputs, true);
}

double AttentionDocument::weightValue(const Scene& scene, WeightMatrix which, int row, int column) {
    // weightCell only reads here.
    return weightCell(const_cast<Projections&>(scene.projections), which, row, column);
}

}  // namespace ae::ui
