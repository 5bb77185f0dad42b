#pragma once
// The document: the latest scene, its undo stack and its file name. Widgets never change the
// scene directly: they call the edit methods below, each of which pushes an undo command. A
// change of sizes or tokens emits structureChanged() at once; new numbers emit resultsChanged().
//
// Who owns what: the document owns the scene, the undo stack, the file name and whether the scene
// is modified. Its ComputeScheduler (document/compute_scheduler.h, reached through scheduler())
// owns the engines, the edit log, the worker thread, cancelling and progress. The document
// records each edit there and forwards the scheduler's signals, so a widget needs only the
// document: engine() and errorText() are the scheduler's last results. scene() always shows the
// latest edit; engine() the last result (docs/architecture.md, "Computing off the GUI thread").

#include <QObject>
#include <QString>
#include <QUndoStack>
#include <functional>
#include <memory>

#include "core/attention_engine.h"
#include "core/key_value_heads.h"
#include "document/compute_scheduler.h"

namespace ae::document {

// The head count, the kv head count and the K and V weights that go with them (grouped-query
// attention): one undo step of the kv heads slider, or of the heads slider on a grouped layer.
// `source` is the multi-head K and V the weights were pooled from, kept so that later settings
// come from it too.
struct HeadGrouping {
    int heads = 1;
    std::optional<int> kvHeads;
    MatrixD key, value;          // dModel x kvHeads·dHead
    VectorD keyBias, valueBias;  // kvHeads·dHead (or empty)
    std::shared_ptr<const KeyValueSource> source;
};

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
    const AttentionEngine<float>& engine() const { return scheduler_.engine(); }
    QUndoStack* undoStack() { return &undoStack_; }
    // Why the last compute failed ("scores: overflow ..."), or empty.
    QString errorText() const { return scheduler_.errorText(); }
    double lastComputeMilliseconds() const { return scheduler_.lastComputeMilliseconds(); }
    // Runs an event loop until engine() holds the results of scene() (tests, CLI, benchmark).
    void waitForResults() { scheduler_.waitForResults(); }
    // Where and when the results are computed: thresholds, progress, test hooks.
    ComputeScheduler& scheduler() { return scheduler_; }
    const ComputeScheduler& scheduler() const { return scheduler_; }
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
    // On a grouped layer (kv heads < heads) the kv count goes along: the one nearest to the kv
    // count the layer had when the change (or drag) began that divides the new head count
    // (nearestKeyValueHeads), K and V pooled anew from the multi-head source.
    bool setHeads(int heads, QString* error = nullptr);
    // Grouped-query attention: `kvHeads` (a divisor of the head count) key/value heads, each the
    // mean of its group's K and V columns (and biases) in the multi-head source: the layer's K and
    // V as they stood before the first kv change, as long as the layer still holds exactly that
    // source pooled (no weight edited since); else the layer's K and V written out per head
    // (repeat_kv). So kvHeads = heads gives back exactly the weights the user had. Refused (false,
    // *error) unless the projections are separate and kvHeads divides the head count.
    bool setKeyValueHeads(int kvHeads, QString* error = nullptr);
    void setScale(const Scale& scale);
    void setMask(const Mask& mask);
    void setMaskFill(double fill);
    // Heads switched off (issue 16): their context replaced by zeros or by its mean. Ignored
    // unless every head is in range.
    void setAblation(const Scene::Ablation& ablation);
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
    // The same, sharing the caller's scene with the undo step instead of copying it.
    bool replaceScene(std::shared_ptr<const Scene> scene, const QString& description,
                      QString* error = nullptr);
    // Whether scene()'s weights are still those of `snapshot`, the last scene applied, with no
    // edit of the weights since: a check of two numbers instead of every weight.
    bool hasWeightsOf(const std::shared_ptr<const Scene>& snapshot) const {
        return snapshot && appliedScene_.lock() == snapshot &&
               appliedSceneRevision_ == scheduler_.weightsRevision();
    }

    void beginInteraction();
    void endInteraction();
    int interactionSerial() const { return interactionSerial_; }

    // Edits that are no undo step: training's steps (many a second would bury the user's own
    // edits) and a batch export's frames on its own document. Unchecked: the caller passes
    // values the scene can take.
    void setHeadsWithoutUndo(int heads) { applyHeads(heads); }
    void setScaleWithoutUndo(const Scale& scale) { applyScale(scale); }
    void setMaskWithoutUndo(const Mask& mask) { applyMask(mask); }
    void setSceneWithoutUndo(const Scene& scene) {
        applyScene(std::make_shared<const Scene>(scene));
    }

    static double weightValue(const Scene& scene, WeightMatrix which, int row, int column);
    // Called by a checked edit's undo command when it is deleted.
    void forgetCommand(const QUndoCommand* command);

signals:
    void structureChanged();  // sizes, tokens, heads or modes changed: rebuild views
    void fileNameChanged(const QString& fileName);
    // resetScene() replaced the scene and emptied Undo (a file, a preset, a model opened).
    void sceneReset();
    void modifiedChanged(bool modified);
    // Forwarded from the scheduler (ComputeScheduler's signals of the same names).
    void resultsChanged();  // new numbers (or a new errorText)
    void computingChanged(bool computing);
    void progressChanged(double fraction, const QString& stage);
    // A value or scene edit that a background compute found impossible was taken back: the scene
    // holds the old value again and its undo step is gone.
    void editRefused(const QString& message);

private:
    // The undo commands apply their values through these, pushing nothing.
    friend class ReplaceSceneCommand;
    void applyHeads(int heads);
    void applyHeadGrouping(const HeadGrouping& grouping);
    // The multi-head source of the current K and V (see setKeyValueHeads).
    std::shared_ptr<const KeyValueSource> keyValueSourceNow() const;
    // Pushes the grouping with `heads` and `kvHeads` pooled from keyValueSourceNow().
    bool pushHeadGrouping(int heads, int kvHeads, const QString& text, QString* error);
    void applyScale(const Scale& scale);
    void applyMask(const Mask& mask);
    void applyMaskFill(double fill);
    void applyAblation(const Scene::Ablation& ablation);
    void applyEmbeddingValue(Stream stream, int row, int column, double value);
    void applyWeightValue(WeightMatrix which, int row, int column, double value);
    // `scene` becomes the document's scene and the engine's; the snapshot is shared, not copied.
    void applyScene(std::shared_ptr<const Scene> scene);

    // One number of the scene edited through setEmbeddingValue or setWeightValue.
    struct CellEdit {
        std::function<double&(Scene&)> cell;
        std::function<void(double)> apply;  // records the value, no undo step
        // Puts the value back into an engine's copy only (a refused edit taken back).
        std::function<void(AttentionEngine<float>&, double)> restoreOnEngine;
        QString undoText;
    };
    // The one path of both value edits: refuses a non-finite value, checks the new value, and
    // pushes its undo command once it stands.
    bool setCellValue(const CellEdit& edit, double value, QString* error);

    // Applies an edit to scene() through the scheduler, announces a structural one, and brings
    // the results up to date (now or in the background). `applied`: the edit puts this whole
    // scene in place (applyScene), noted for hasWeightsOf before any listener runs.
    void record(std::function<void(Scene&)> onScene,
                std::function<void(AttentionEngine<float>&)> onEngine, WorkFrom from,
                bool structural, std::shared_ptr<const Scene> applied = nullptr);
    // After a checked edit is applied: true if it stands or is still being computed in the
    // background (the verdict comes later, as editRefused); else takes it back at once with
    // `takeBackNow`, sets *error and returns false.
    bool standsOrTakenBack(const ComputeScheduler::Refusal& check,
                           const std::function<void()>& takeBackNow, QString* error);
    // A checked edit the scheduler refused in the background: its undo step goes too.
    void dropRefusedEdit(const QUndoCommand* undoStep, const QString& message);
    int nextSerial();

    Scene scene_;
    ComputeScheduler scheduler_{scene_, this};  // applies edits to scene_
    // Handed from a checked edit (set*Value, replaceScene) to the record() it makes.
    std::shared_ptr<ComputeScheduler::Refusal> checkToAttach_;
    std::weak_ptr<const Scene> appliedScene_;  // the last applyScene's, for hasWeightsOf
    long appliedSceneRevision_ = -1;
    long appliedSceneSerial_ = -1;
    // scene_ as the shared snapshot applyScene last put there, when no edit has touched it since
    // (then the undo step of a replacement keeps that snapshot instead of a copy); else null.
    std::shared_ptr<const Scene> untouchedAppliedScene() const;

    QUndoStack undoStack_;
    QString fileName_;
    int interactionSerial_ = 0;
    bool interacting_ = false;
    // The head and kv head counts when the current interaction began: a drag of the heads slider
    // picks its kv counts from these, so dragging back gives back the grouping it started from.
    int interactionHeads_ = 1, interactionKeyValueHeads_ = 1;
    // Where the current K and V were pooled from, as the last grouping step left it; a stale one
    // (weights edited since) is noticed by isGroupedFrom and replaced.
    std::shared_ptr<const KeyValueSource> keyValueSource_;
};

}  // namespace ae::document
