#include "document/attention_document.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "document/undo_commands.h"

namespace ae::document {

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

}  // namespace

AttentionDocument::AttentionDocument(QObject* parent) : QObject(parent) {
    connect(&undoStack_, &QUndoStack::cleanChanged, this,
            [this](bool clean) { emit modifiedChanged(!clean); });
    connect(&scheduler_, &ComputeScheduler::resultsChanged, this,
            &AttentionDocument::resultsChanged);
    connect(&scheduler_, &ComputeScheduler::computingChanged, this,
            &AttentionDocument::computingChanged);
    connect(&scheduler_, &ComputeScheduler::progressChanged, this,
            &AttentionDocument::progressChanged);
    connect(&scheduler_, &ComputeScheduler::editRefused, this, &AttentionDocument::dropRefusedEdit);
}

AttentionDocument::~AttentionDocument() {
    // While the scheduler, which its checked commands tell when they go, still exists.
    undoStack_.clear();
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
    keyValueSource_.reset();
    scheduler_.startOver();
    auto snapshot = std::make_shared<const Scene>(scene);
    record([snapshot](Scene& s) { s = *snapshot; },
           [snapshot](EngineF& engine) { engine.setScene(*snapshot); }, WorkFrom::Inputs, true);
    undoStack_.setClean();
    emit fileNameChanged(fileName_);
    emit sceneReset();
}

void AttentionDocument::record(std::function<void(Scene&)> onScene,
                               std::function<void(EngineF&)> onEngine, WorkFrom from,
                               bool structural, std::shared_ptr<const Scene> applied) {
    scheduler_.record(std::move(onScene), std::move(onEngine), from,
                      std::exchange(checkToAttach_, nullptr));
    if (applied) {
        appliedScene_ = applied;
        appliedSceneRevision_ = scheduler_.weightsRevision();
        appliedSceneSerial_ = scheduler_.lastEditSerial();
    }
    if (structural) emit structureChanged();
    scheduler_.bringUpToDate();
}

void AttentionDocument::dropRefusedEdit(const QUndoCommand* undoStep, const QString& message) {
    if (undoStep) {
        // Obsolete: QUndoStack deletes it when it is next undone or redone, without applying it.
        const_cast<QUndoCommand*>(undoStep)->setObsolete(true);
        if (undoStack_.index() > 0 && undoStack_.command(undoStack_.index() - 1) == undoStep)
            undoStack_.undo();
    }
    emit structureChanged();  // editors show the old value again
    emit editRefused(message);
}

void AttentionDocument::forgetCommand(const QUndoCommand* command) {
    scheduler_.forgetUndoStep(command);
}

bool AttentionDocument::standsOrTakenBack(const ComputeScheduler::Refusal& check,
                                          const std::function<void()>& takeBackNow,
                                          QString* error) {
    // Computing in the background: the verdict comes later.
    if (!scheduler_.hasLatestResults()) return true;
    if (scheduler_.errorText().isEmpty()) return true;
    if (error) *error = check.message(scheduler_.errorText());
    takeBackNow();
    return false;
}

int AttentionDocument::nextSerial() {
    return interacting_ ? interactionSerial_ : ++interactionSerial_;
}

void AttentionDocument::beginInteraction() {
    interacting_ = true;
    ++interactionSerial_;
    interactionHeads_ = scene().heads;
    interactionKeyValueHeads_ = scene().keyValueHeads();
}

void AttentionDocument::endInteraction() {
    interacting_ = false;
    ++interactionSerial_;
}

bool AttentionDocument::setHeads(int heads, QString* error) {
    if (heads < 1 || scene().dProj() % heads != 0 || heads == scene().heads) return false;
    if (!scene().ablation.heads.empty()) {
        // The switched-off heads are numbered for this head count.
        if (error) *error = tr("switch the heads back on first");
        return false;
    }
    // Grouped when the change began: the kv count follows (a multi-head layer stays one).
    const int startHeads = interacting_ ? interactionHeads_ : scene().heads;
    const int startKv = interacting_ ? interactionKeyValueHeads_ : scene().keyValueHeads();
    if (startKv != startHeads) {
        return pushHeadGrouping(heads, nearestKeyValueHeads(heads, startKv),
                                tr("Change head count"), error);
    }
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

bool AttentionDocument::setKeyValueHeads(int kvHeads, QString* error) {
    if (kvHeads == scene().keyValueHeads()) return false;
    return pushHeadGrouping(scene().heads, kvHeads, tr("Change kv heads"), error);
}

std::shared_ptr<const KeyValueSource> AttentionDocument::keyValueSourceNow() const {
    if (keyValueSource_ && isGroupedFrom(scene(), *keyValueSource_)) return keyValueSource_;
    return std::make_shared<const KeyValueSource>(keyValueSource(scene()));
}

bool AttentionDocument::pushHeadGrouping(int heads, int kvHeads, const QString& text,
                                         QString* error) {
    HeadGrouping before, after;
    try {
        before.source = keyValueSourceNow();
        Scene next = scene();
        ae::setKeyValueHeads(next, *before.source, heads, kvHeads);
        checkWindowMemory(next);
        after.heads = next.heads;
        after.kvHeads = next.kvHeads;
        after.key = std::move(next.projections.key);
        after.value = std::move(next.projections.value);
        after.keyBias = std::move(next.projections.keyBias);
        after.valueBias = std::move(next.projections.valueBias);
        after.source = before.source;
    } catch (const SceneError& refusal) {
        if (error) *error = QString::fromStdString(refusal.what());
        return false;
    }
    const Projections& p = scene().projections;
    before.heads = scene().heads;
    before.kvHeads = scene().kvHeads;
    before.key = p.key;
    before.value = p.value;
    before.keyBias = p.keyBias;
    before.valueBias = p.valueBias;
    // Undo goes back to the source the layer had before this step (the same one unless it was
    // stale), so an earlier step's source is there again for the steps before it.
    before.source = keyValueSource_;
    nextSerial();
    undoStack_.push(new ChangeValueCommand<HeadGrouping>(
        this, kHeadGroupingCommand, [this](const HeadGrouping& g) { applyHeadGrouping(g); },
        std::move(before), std::move(after), text));
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

void AttentionDocument::setAblation(const Scene::Ablation& ablation) {
    for (int h : ablation.heads) {
        if (h < 0 || h >= scene().heads) return;
    }
    if (ablation == scene().ablation) return;
    nextSerial();
    undoStack_.push(new ChangeValueCommand<Scene::Ablation>(
        this, kAblationCommand, [this](const Scene::Ablation& a) { applyAblation(a); },
        scene().ablation, ablation, tr("Switch heads off")));
}

bool AttentionDocument::setCellValue(const CellEdit& edit, double value, QString* error) {
    const double old = edit.cell(scene_);
    if (!std::isfinite(value)) {
        if (error) *error = tr("%1 is not a finite number; kept %2").arg(value).arg(old);
        return false;
    }
    if (value == old) return true;
    auto check = std::make_shared<ComputeScheduler::Refusal>();
    check->message = [value, old](const QString& why) {
        return tr("%1 refused: %2; kept %3").arg(value).arg(why).arg(old);
    };
    check->takeBackOnEngine = [restore = edit.restoreOnEngine, old](EngineF& engine) {
        restore(engine, old);
    };
    check->takeBackOnScene = [cell = edit.cell, value, old](Scene& s, const auto&) {
        // Only while the cell still holds the refused value: a later edit of it stands.
        if (cell(s) == value) cell(s) = old;
    };
    checkToAttach_ = check;
    edit.apply(value);
    if (!standsOrTakenBack(
            *check, [apply = edit.apply, old] { apply(old); }, error))
        return false;
    nextSerial();
    auto* command = new CellValueCommand(this, edit.apply, old, value, edit.undoText);
    check->undoStep = command;
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
    edit.undoText = QObject::tr("Edit embedding value");
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
    edit.undoText = QObject::tr("Edit weight value");
    return setCellValue(edit, value, error);
}

bool AttentionDocument::replaceScene(const Scene& newScene, const QString& description,
                                     QString* error) {
    return replaceScene(std::make_shared<const Scene>(newScene), description, error);
}

bool AttentionDocument::replaceScene(std::shared_ptr<const Scene> replacement,
                                     const QString& description, QString* error) {
    try {
        checkWindowMemory(*replacement);
    } catch (const SceneError& refusal) {
        if (error) *error = QString::fromStdString(refusal.what());
        return false;
    }
    std::shared_ptr<const Scene> old = untouchedAppliedScene();
    if (!old) old = std::make_shared<const Scene>(scene_);
    auto check = std::make_shared<ComputeScheduler::Refusal>();
    check->message = [](const QString& why) { return why; };
    check->takeBackOnEngine = [old](EngineF& engine) { engine.setScene(*old); };
    check->takeBackOnScene = [old](Scene& s, const std::function<void(Scene&)>& replayLaterEdits) {
        // The old scene, with every edit made since this one replayed on it.
        Scene restored = *old;
        replayLaterEdits(restored);
        s = std::move(restored);
    };
    checkToAttach_ = check;
    applyScene(replacement);
    if (!standsOrTakenBack(
            *check, [this, old] { applyScene(old); }, error))
        return false;
    nextSerial();
    auto* command = new ReplaceSceneCommand(this, old, std::move(replacement), description);
    check->undoStep = command;
    undoStack_.push(command);
    return true;
}

void AttentionDocument::applyHeads(int heads) {
    record([heads](Scene& s) { s.heads = heads; },
           [heads](EngineF& engine) { engine.setHeads(heads); }, WorkFrom::Scores, true);
}

void AttentionDocument::applyHeadGrouping(const HeadGrouping& grouping) {
    auto g = std::make_shared<const HeadGrouping>(grouping);
    const auto put = [g](Scene& s) {
        s.heads = g->heads;
        s.kvHeads = g->kvHeads;
        s.projections.key = g->key;
        s.projections.value = g->value;
        s.projections.keyBias = g->keyBias;
        s.projections.valueBias = g->valueBias;
    };
    // K and V change shape with the kv count: the engine takes its own scene anew, which is exact.
    record(
        put,
        [put](EngineF& engine) {
            Scene scene = engine.scene();
            put(scene);
            engine.setScene(scene);
        },
        WorkFrom::Inputs, true);
    keyValueSource_ = grouping.source;
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

void AttentionDocument::applyAblation(const Scene::Ablation& ablation) {
    record([ablation](Scene& s) { s.ablation = ablation; },
           [ablation](EngineF& engine) {
               // Only the context changes; the engine takes it as a new scene, which is exact.
               Scene scene = engine.scene();
               scene.ablation = ablation;
               engine.setScene(scene);
           },
           WorkFrom::Inputs, false);
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

std::shared_ptr<const Scene> AttentionDocument::untouchedAppliedScene() const {
    std::shared_ptr<const Scene> applied = appliedScene_.lock();
    if (applied && appliedSceneSerial_ == scheduler_.lastEditSerial() &&
        appliedSceneRevision_ == scheduler_.weightsRevision())
        return applied;
    return nullptr;
}

void AttentionDocument::applyScene(std::shared_ptr<const Scene> snapshot) {
    record([snapshot](Scene& s) { s = *snapshot; },
           [snapshot](EngineF& engine) { engine.setScene(*snapshot); }, WorkFrom::Inputs, true,
           snapshot);
}

double AttentionDocument::weightValue(const Scene& scene, WeightMatrix which, int row, int column) {
    // weightCell only reads here.
    return weightCell(const_cast<Projections&>(scene.projections), which, row, column);
}

}  // namespace ae::document
