#pragma once
// A whole model in the window (issue 16): the opened folder, its tokenizer, the text or ids, the
// model's run on them, and the one layer the explorer shows.
//
// The document's scene is the single source of truth. The open layer is an ordinary scene
// (core/model/model_layer_scene.h) whose free-form viewJson carries a "model" object
// (ModelReference: the folder, a fingerprint of the model, the text, ids and padding, the open
// layer and head). Every change the user makes (a text edit, a head opened, a what-if in the
// explorer) is an edit of that scene through AttentionDocument, so undo, save and autosave cover it
// with no machinery of their own; the session follows the document:
// - the reference's ids differ from the base run's: the model runs again on them (worker thread);
// - the scene equals the layer as the model has it: the current run IS the base run (so undo
//   brings back the very same numbers, bit for bit);
// - else (a what-if): the layer's q, k, v, scores, weights and output are taken from the
//   document's engine and resumeAfterAttention recomputes every later layer.
//
// Runs use float (runModel<float>), as the window's engine does. The layer scene needs a double
// run (layerScene): the float run's residual stream of that layer is converted to double instead
// of running the model again in double. Measured on the golden models the engine's q, k, v and
// scores on that scene then differ from the float run's by at most 1.9e-6 (qwen3-tiny; the test
// checks 1e-5), and no second pass is paid per head opened.
//
// Work that may take long (opening a folder, a run, a resumed run and the analysis) goes to one
// worker thread, as ComputeScheduler's computes do (document/latest_job_runner.h): a newer request
// makes the running job stale, and a stale result is dropped on arrival; busy shows after 200 ms.
// A model pass stops between two layers when cancel() or a newer run asks it to. Its parts: the
// reference (document/model_reference.h), opening (document/model_opening.h), the runs and their
// analysis (document/run_analysis.h) and the what-if's arithmetic (core/model/what_if.h).

#include <QJsonObject>
#include <QObject>
#include <QString>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "core/model/model.h"
#include "core/scene.h"
#include "document/model_opening.h"
#include "document/model_reference.h"
#include "document/model_runs.h"
#include "document/model_work.h"
#include "document/run_analysis.h"

class QTimer;

namespace ae::document {

class AttentionDocument;

class ModelSession : public QObject {
    Q_OBJECT
public:
    using Run = model::ModelRun<float>;

    explicit ModelSession(AttentionDocument* document, QObject* parent = nullptr);
    ~ModelSession() override;

    AttentionDocument* document() const { return document_; }

    // ---- Opening ----
    // Opens `folder` in the background; once it is open and has run, the document's scene is
    // replaced (resetScene: no undo across it; the caller asks about unsaved changes first) by
    // layer 0 with head 0 open. A refusal (model::ModelError's one line) comes as problem(); the
    // model and the scene open before stay. `ids` empty: a default text or default ids.
    // `folder` may be "builtin:NAME" (io/model/builtin_models.h): that built-in model, opened on
    // its about.json's text or ids and at its layer and head unless `text` or `ids` are given.
    void open(const QString& folder, const QString& text = {}, std::vector<long long> ids = {});
    // Drops the result of whatever is under way (opening, a run); the window stays as it was.
    void cancel();
    // Forgets the model (the document's scene stays as it is).
    void close();
    bool isOpen() const { return static_cast<bool>(model_.folder); }
    const model::Model* model() const { return model_.model(); }
    // The open folder itself, for work that must keep the model alive while it runs elsewhere
    // (the workbench's sweeps); null when no model is open.
    std::shared_ptr<const io::ModelFolder> folderHandle() const { return model_.folder; }
    QString folder() const { return model_.directory(); }
    // The built-in model's name when the open model is one, else empty.
    QString builtInName() const { return model_.builtIn; }
    // What open() takes to open this model again: "builtin:NAME", or the folder.
    QString location() const { return model_.location(); }
    // The folder's tokenizer, or null (none there, or one that could not be read: ids only).
    const io::Tokenizer* tokenizer() const { return model_.tokenizer.get(); }
    // Why the tokenizer could not be read, or empty.
    QString tokenizerProblem() const { return model_.tokenizerProblem; }

    // ---- Input (each an undo step of the document, once the model has run on it) ----
    // Tokenized 150 ms after the last call (typing), then run. setText keeps the sentence B of
    // a pair; setTextPair gives both (an empty `second`: a single text).
    void setText(const QString& text);
    void setTextPair(const QString& text, const QString& second);
    // Typed ids; `attentionMask` empty or one 0/1 a token.
    void setIds(const std::vector<long long>& ids, const std::vector<int>& attentionMask = {});
    // Marks token `position` as padding or not (bert).
    void setPadding(int position, bool padding);
    // What the document's scene says (or, while a new input is being run, that input).
    QString text() const { return input_.text; }
    QString textPair() const { return input_.textPair; }
    // The first token of a pair's sentence B, or -1.
    int pairStart() const { return input_.pairStart; }
    const std::vector<long long>& ids() const { return input_.ids; }
    const std::vector<int>& attentionMask() const { return input_.attentionMask; }
    // A token's label: the tokenizer's text, or "#id".
    QString tokenLabel(long long id) const { return model_.tokenLabel(id); }

    // ---- The open layer ----
    // Opens head `head` of layer `layer` in the explorer as one undo step: the same layer keeps
    // its what-ifs, another layer comes as the model has it.
    void openHead(int layer, int head);
    // From the document's scene; -1 when it is not a layer of this model.
    int layer() const { return layerOpen_ ? reference_.layer : -1; }
    int head() const { return layerOpen_ ? reference_.head : -1; }
    // The layer `layer` as the model has it on the current input, with `head` in its reference.
    Scene layerAsModelHasIt(int layer, int head) const;
    // The layer as the open model gives it, for a scene made from it on the current input
    // (io::sceneToJson(scene, layer) then saves the scene without the model's numbers); nothing
    // when the scene is not from the open model or its input has not run yet.
    std::shared_ptr<const Scene> modelLayerOf(const Scene& scene) const;
    // Opens a scene file that takes its numbers from its model (io::takesNumbersFromModel):
    // the model it names, run on its input, then the file read against that layer. `fileName`
    // resolves a relative folder and becomes the document's file ("" for a restored autosave);
    // `unsaved` leaves the document modified (an autosave). Refusals come as openRefused().
    void openSavedLayer(const QByteArray& json, const QString& fileName, bool unsaved = false);

    // ---- Results ----
    // The run on the input without what-ifs, and with the document's what-if (the same object
    // when there is none). Null before the first run.
    std::shared_ptr<const Run> baseRun() const { return runs_->base(); }
    std::shared_ptr<const Run> currentRun() const { return runs_->current(); }
    const RunAnalysis& analysis() const { return runs_->analysis(); }
    // Heads (layer, head) whose weights differ between the base and the current run by more
    // than `threshold` in some cell (none when there is no what-if).
    std::vector<std::pair<int, int>> changedHeads(double threshold = 0.01) const {
        return runs_->changedHeads(threshold);
    }
    // The document's what-if as the workbench carries it to texts of its own: the layer it edits
    // (-1: none), and the heads it switches off there by zeros when that is all it does (else
    // empty: it edits this text's numbers, which another text does not have).
    int whatIfLayer() const { return whatIfLayer_; }
    const std::vector<int>& whatIfHeadsOff() const { return whatIfHeadsOff_; }
    // The what-if's layer as the model has it (null without a what-if); the document's scene is
    // the same layer as edited (model::withLayerWeights makes a model of the two).
    std::shared_ptr<const Scene> whatIfPristine() const {
        return whatIfLayer_ >= 0 ? pristine_ : nullptr;
    }
    // The model view's maps value-weighted (valueWeightedDigests) rather than the weights: on,
    // each current run's are computed after it on the worker, and resultsChanged() says when
    // they are in. Null while off or not yet in for the current run.
    void setValueWeighted(bool on);
    bool valueWeighted() const { return valueWeighted_; }
    std::shared_ptr<const std::vector<model::LayerDigest>> valueWeightedDigests() const {
        return valueWeighted_ ? weighedDigests() : nullptr;
    }
    // Every head's sink_norm on the current run (layer·heads + head), from its value-weighted
    // map (whose first_token it is): weighed after every run that keeps its maps, else while
    // valueWeighted() is on. Empty until then.
    std::vector<double> sinkNorms() const;
    // Asks for the induction scores: measured if they can be and are not yet, else problem()
    // says why not.
    void measureInduction();
    // The position the predictions are for, as the user picked it: -1 follows the last token
    // (the default, and what picking the last token means, so typing on keeps predicting the
    // next token). A text too short for the position picked goes back to following the last.
    // analysis().position is the position it resolves to on the current run.
    void setSelectedPosition(int position) { runs_->setSelectedPosition(position); }
    int selectedPosition() const { return runs_->selectedPosition(); }

    // The memory a run may keep before it drops its maps and keeps only what the model view
    // draws (windowRunOptions); from the next run on. Default: half of physical memory.
    void setMapBudget(double bytes) { mapBudget_ = bytes; }
    double mapBudget() const { return mapBudget_; }
    // Head `head`'s weights (T x T) in layer `layer` of `run` (baseRun() or currentRun()): the
    // run's own, or recomputed from the model when it dropped its maps
    // (model::recomputedLayerMaps).
    model::Matrix<float> headWeights(const Run& run, int layer, int head) const;
    // Whether the run shown dropped its maps: a view that needs a layer's recomputes them.
    bool keepsOnlyDigests() const {
        return runs_->current() && document::keepsOnlyDigests(*runs_->current());
    }

    // ---- Work ----
    bool isBusy() const { return work_->isBusy(); }
    // Runs an event loop until nothing is under way (tests, CLI); with `followUpsToo` false, until
    // the run's results are in, the induction scores that follow them (a second pass on the text
    // repeated, never holding up the maps) perhaps not yet.
    void waitUntilIdle(bool followUpsToo = true);
    // Busy shows this long after the work starts (tests set 0).
    void setProgressDelay(int milliseconds) { work_->setProgressDelay(milliseconds); }
    // The last problem (a refused folder or input, a what-if that cannot flow forward), or empty.
    QString problemText() const { return problem_; }

signals:
    void opened();  // a new model is open (folder(), tokenizer())
    void closed();
    void inputChanged();  // text(), ids() or attentionMask()
    void openHeadChanged(int layer, int head);
    void resultsChanged();  // baseRun(), currentRun(), analysis()
    void busyChanged(bool busy);
    // Work has run longer than the progress delay: what is under way ("opening", "running").
    void progressShown(const QString& what);
    // A run of the model has finished `done` of its `layers` layers (a long pass on a big model
    // reports as it goes; cancel() stops it at the next layer).
    void layerProgress(int done, int layers);
    // The same pass has made layer `layer`'s digest (of `layers`, on `tokens` tokens): each
    // head's summary and pooled map, for the model view to show before the run is done.
    void layerDigestReady(int layer, int layers, int tokens,
                          const std::vector<model::HeadDigest>& heads);
    // A model being opened has shown its shape from its headers: its first pass will fill
    // `layers` layers of `heads` heads on `tokens` tokens once its values are checked.
    void passStarting(int layers, int heads, int tokens);
    // The opening's check of every weight value is this far (0 to 1): a big checkpoint's take
    // seconds, before its first layer.
    void valuesChecking(double fraction);
    void problem(const QString& message);
    // Opening a folder was refused (also problem()): worth a message box, unlike a typed id.
    void openRefused(const QString& message);
    // The folder opened holds an encoder–decoder model (read and its values checked): the
    // translation session (document/translation_session.h) takes it, to run on `text` (empty: its
    // own default) with `layer` and `head` open. This session's model stays open until the
    // translation's scene replaces its layer.
    void encoderDecoderOpened(std::shared_ptr<io::ModelFolder> folder, const QString& location,
                              const QString& text, int layer, int head);
    // openSavedLayer's scene is in the document; `view` is its view object for the window.
    void savedLayerOpened(const QJsonObject& view);

private:
    void fail(const QString& message);
    void weighCurrentRun();
    std::shared_ptr<const std::vector<model::LayerDigest>> weighedDigests() const {
        return weighedRun_ == runs_->current() ? weighed_ : nullptr;
    }
    bool valueWeighted_ = false;
    std::shared_ptr<const Run> weighedRun_;
    std::shared_ptr<const std::vector<model::LayerDigest>> weighed_;
    int whatIfLayer_ = -1;
    std::vector<int> whatIfHeadsOff_;
    void refuse(const QString& message);  // fail() and openRefused()

    // Opens the model `request` names (checkOpenRequest, then openModel on the worker), installs
    // it and its run, then `whenOpen`. A saved scene's request closes the model open before once
    // its folder is known to be there; a user's keeps it until the new one is open.
    void startOpening(OpenRequest request, std::function<void(const OpenedModel&)> whenOpen);
    void install(const OpenedModel& loaded);
    void onSceneReset();
    void followDocument();
    void startInput(const ModelInput& input);
    // Runs the model on `input` on the worker (runAndAnalyse, taking over `previous`'s rows when
    // given), then `then` with the result.
    void runModelOn(const ModelInput& input, std::shared_ptr<const Run> previous,
                    std::function<void(const AnalysedRun&)> then);
    // For a new pass (opening's with stopOpening_, a run's with stopRun_): stops the pass of that
    // kind under way at its next layer, and returns the new pass's reports: of each finished
    // layer (layerProgress; false once stopped) and of each layer's digest (layerDigestReady),
    // and an opening's shape and value check (passStarting, valuesChecking).
    PassReports startPass(std::shared_ptr<std::atomic<bool>>& stopFlag);
    // The model's own run is shown, or the document's what-if: its later layers resumed on the
    // worker.
    void computeCurrent();
    void installBase(std::shared_ptr<const Run> run, const ModelInput& input,
                     const RunAnalysis& analysis);

    AttentionDocument* document_;
    ModelWork* work_;
    ModelRuns* runs_;
    LoadedModel model_;  // the open model (no folder: none)

    ModelInput input_;                       // what the user asked for last
    ModelReference reference_;               // from the document's scene
    bool layerOpen_ = false;                 // the document's scene is a layer of this model
    bool inputJob_ = false;                  // a typed input is being run
    std::shared_ptr<const Scene> pristine_;  // the open layer as the model has it
    int pristineLayer_ = -1;

    // Set to stop the pass under way between two layers (cancel(), or a newer pass of its kind).
    std::shared_ptr<std::atomic<bool>> stopRun_, stopOpening_;
    double mapBudget_ = defaultMapBudget();
    QTimer* textTimer_;
    QString pendingText_;
    QString pendingPair_;  // sentence B of the pending text, or empty
    QString problem_;
};

}  // namespace ae::document
