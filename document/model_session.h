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
// worker thread, as ComputeScheduler's computes do: each job carries a serial, a newer request
// makes the running job stale, and a stale result is dropped on arrival; busy shows after 200 ms.
// A model pass cannot stop half-way: cancel() drops its result when it comes.

#include <QJsonObject>
#include <QObject>
#include <QString>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "core/model/model.h"
#include "core/model/model_analysis.h"
#include "core/scene.h"

class QThread;
class QTimer;

namespace ae::io {
class ModelFolder;
class Tokenizer;
}  // namespace ae::io

namespace ae::ui {

class AttentionDocument;

// What a layer scene's viewJson says about the model it came from, under the key "model".
// A built-in model (io/model/builtin_models.h) is referred to by its name: a saved file holds the
// name alone, and it is looked up again where the file is opened (another machine, another prefix).
struct ModelReference {
    QString folder;       // absolute while open; a saved file may hold it relative to itself
    QString builtIn;      // the built-in model's name, or empty (then `folder` says where)
    QString fingerprint;  // modelFingerprint() of the model when the scene was made
    QString text;         // the sentence; empty when the ids were typed
    std::vector<long long> ids;
    std::vector<int> attentionMask;  // empty, or one 0/1 a token (bert padding)
    int layer = 0;
    int head = 0;
    bool operator==(const ModelReference& o) const {
        return folder == o.folder && builtIn == o.builtIn && fingerprint == o.fingerprint &&
               text == o.text && ids == o.ids && attentionMask == o.attentionMask &&
               layer == o.layer && head == o.head;
    }
};

// The "model" object of a scene's viewJson, or nothing (no such key, or not readable).
std::optional<ModelReference> modelReference(const std::string& viewJson);
// `viewJson` (an object's text, or empty) with its "model" key set to `reference` (other keys
// kept).
std::string withModelReference(const std::string& viewJson, const ModelReference& reference);
// The reference's folder relative to `sceneFile`'s folder when it is near it (they share a
// folder below the root, and the path needs no more than two "../"), else absolute; a built-in
// model's name alone (no folder). And back: a relative folder resolved against `sceneFile`'s
// folder (a built-in model's reference is left as it is: the session looks the name up).
std::string withFolderRelativeTo(const std::string& viewJson, const QString& sceneFile);
std::string withFolderResolvedFrom(const std::string& viewJson, const QString& sceneFile);

// A short text that changes when the model's shape changes: the family, the sizes of the config
// and a hash of every tensor's name, dtype and shape ("gpt2 L2 H4/4 d32 hd8 V64 I128 #1a2b3c4d").
QString modelFingerprint(const model::Model& model);

// The status line's KV-cache figures (core/key_value_heads.h): the layer's per token at its
// current kv heads, in the window's float32 ("KV cache 2 × 2 kv heads × 16 = 64
// numbers/token/layer (256 B at float32)"), and with `model` (the one the layer came from) that
// model's at its real size: every layer, its own kv heads, its stored dtype ("; Llama-3.2-1B:
// 32 KiB/token"), named by its folder.
// `brief`: the layer's figure in bytes alone ("KV cache 256 B/token/layer; …"), for a status bar
// that must fit beside the other figures at 922 pixels (the tooltip has the whole).
QString keyValueCacheStatus(const Scene& scene, const model::Model* model = nullptr,
                            const QString& modelFolder = {}, bool brief = false);

// The analysis of one run, for the model view.
struct RunAnalysis {
    std::vector<model::HeadSummary> summaries;  // with induction when measured, else NaN
    // Whose induction scores the summaries carry, and, unless they are this run's own, why.
    model::InductionState induction = model::InductionState::Pending;
    QString inductionNote;
    std::vector<Eigen::MatrixXd> rollout;  // per layer, T x T
    // The token position `predictions` are for: the selected one, or the last token when none
    // is selected (or the selected one is past the end). -1 when there are none.
    int position = -1;
    std::vector<model::Prediction> predictions;  // decoders: at `position`
    // The same, before the what-if; empty for the model's own run.
    std::vector<model::Prediction> basePredictions;
};

class ModelSession : public QObject {
    Q_OBJECT
public:
    using Run = model::ModelRun<float>;

    explicit ModelSession(AttentionDocument* document, QObject* parent = nullptr);
    ~ModelSession() override;

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
    bool isOpen() const { return static_cast<bool>(folder_); }
    const model::Model* model() const;
    QString folder() const;
    // The built-in model's name when the open model is one, else empty.
    QString builtInName() const { return builtIn_; }
    // What open() takes to open this model again: "builtin:NAME", or the folder.
    QString location() const;
    // The folder's tokenizer, or null (none there, or one that could not be read: ids only).
    const io::Tokenizer* tokenizer() const { return tokenizer_.get(); }
    // Why the tokenizer could not be read, or empty.
    QString tokenizerProblem() const { return tokenizerProblem_; }

    // ---- Input (each an undo step of the document, once the model has run on it) ----
    // Tokenized 150 ms after the last call (typing), then run.
    void setText(const QString& text);
    // Typed ids; `attentionMask` empty or one 0/1 a token.
    void setIds(const std::vector<long long>& ids, const std::vector<int>& attentionMask = {});
    // Marks token `position` as padding or not (bert).
    void setPadding(int position, bool padding);
    // What the document's scene says (or, while a new input is being run, that input).
    QString text() const { return input_.text; }
    const std::vector<long long>& ids() const { return input_.ids; }
    const std::vector<int>& attentionMask() const { return input_.attentionMask; }
    // A token's label: the tokenizer's text, or "#id".
    QString tokenLabel(long long id) const;

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
    std::optional<Scene> modelLayerOf(const Scene& scene) const;
    // Opens a scene file that takes its numbers from its model (io::takesNumbersFromModel):
    // the model it names, run on its input, then the file read against that layer. `fileName`
    // resolves a relative folder and becomes the document's file ("" for a restored autosave);
    // `unsaved` leaves the document modified (an autosave). Refusals come as openRefused().
    void openSavedLayer(const QByteArray& json, const QString& fileName, bool unsaved = false);

    // ---- Results ----
    // The run on the input without what-ifs, and with the document's what-if (the same object
    // when there is none). Null before the first run.
    std::shared_ptr<const Run> baseRun() const { return base_; }
    std::shared_ptr<const Run> currentRun() const { return current_; }
    const RunAnalysis& analysis() const { return analysis_; }
    // Heads (layer, head) whose weights differ between the base and the current run by more
    // than `threshold` in some cell.
    std::vector<std::pair<int, int>> changedHeads(double threshold = 0.01) const;
    // Asks for the induction scores: measured if they can be and are not yet, else problem()
    // says why not.
    void measureInduction();
    // The position the predictions are for, as the user picked it: -1 follows the last token
    // (the default, and what picking the last token means, so typing on keeps predicting the
    // next token). A text too short for the position picked goes back to following the last.
    // analysis().position is the position it resolves to on the current run.
    void setSelectedPosition(int position);
    int selectedPosition() const;

    // ---- Work ----
    bool isBusy() const { return busy_; }
    // Runs an event loop until nothing is under way (tests, CLI); with `followUpsToo` false, until
    // the run's results are in, the induction scores that follow them (a second pass on the text
    // repeated, never holding up the maps) perhaps not yet.
    void waitUntilIdle(bool followUpsToo = true);
    // Busy shows this long after the work starts (tests set 0).
    void setProgressDelay(int milliseconds) { progressDelayMs_ = milliseconds; }
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
    void problem(const QString& message);
    // Opening a folder was refused (also problem()): worth a message box, unlike a typed id.
    void openRefused(const QString& message);
    // openSavedLayer's scene is in the document; `view` is its view object for the window.
    void savedLayerOpened(const QJsonObject& view);

private:
    struct Input {
        QString text;
        std::vector<long long> ids;
        std::vector<int> attentionMask;
        bool operator==(const Input& o) const {
            return text == o.text && ids == o.ids && attentionMask == o.attentionMask;
        }
    };
    struct Loaded;  // what an opening job hands back

    // Two kinds of job, each with its own serial: opening a folder, and running the model on
    // the current folder (a run, a resumed run). A newer job of a kind makes the older one
    // stale; opening a model makes every run stale too.
    enum Channel { Opening = 0, Running = 1, Induction = 2 };
    // Runs `work` on the worker, then what it returns on this thread unless a newer job of its
    // channel started or cancel() was called in between. `what` is what the progress shows. An
    // opening job's failure is also openRefused().
    void post(Channel channel, const QString& what, std::function<std::function<void()>()> work);
    void dropJobs(Channel channel);
    void updateBusy();
    void fail(const QString& message);

    void onSceneReset();
    void followDocument();
    void startInput(const Input& input);
    void computeCurrent();
    void installBase(std::shared_ptr<const Run> run, const Input& input,
                     const RunAnalysis& analysis);
    // Measures the base run's induction scores on the worker, then shows them (resultsChanged).
    void measureInductionLater();
    // For a what-if that only switches heads of the open layer off (by zeros), measures induction
    // on the model with them off (whether it does); any other what-if keeps the model's own
    // scores, marked stale.
    bool measureWhatIfInduction(std::shared_ptr<const Run> whatIf, std::vector<int> headsOff);
    // `whatIfInductionComing`: a what-if whose own induction scores are being measured.
    void publish(std::shared_ptr<const Run> current, RunAnalysis analysis,
                 bool whatIfInductionComing = false);
    // Brings the predictions (and a what-if's "before") to the selected position on the current
    // run, if they are for another; whether they changed.
    bool predictAtSelectedPosition();
    // Layer `layer` of `run` as a scene. `sameLayer`, if given, is that layer as the model has it
    // for another input (pristine_): its weights are copied instead of converted again.
    Scene makeLayerScene(const Run& run, int layer, const ModelReference& reference,
                         const Scene* sameLayer = nullptr) const;
    ModelReference referenceFor(const Input& input, int layer, int head) const;
    std::vector<std::string> tokenLabels(const std::vector<long long>& ids) const;
    // Whether `r` refers to the open model (the same built-in name, or the same folder; and the
    // same fingerprint).
    bool refersToOpenModel(const ModelReference& r) const;
    // Opens the model `reference` names (its folder, or its built-in name), checks its
    // fingerprint, runs it on the reference's input and installs that run; then `whenOpen`. A
    // refusal ends with `consequence` (what the user gets instead).
    void openForReference(ModelReference reference, const QString& consequence,
                          std::function<void(const Run& run)> whenOpen);

    AttentionDocument* document_;
    std::shared_ptr<io::ModelFolder> folder_;
    QString builtIn_;  // the open model's built-in name, or empty
    std::shared_ptr<io::Tokenizer> tokenizer_;
    QString tokenizerProblem_;
    QString fingerprint_;

    Input input_;                      // what the user asked for last
    ModelReference reference_;         // from the document's scene
    bool layerOpen_ = false;           // the document's scene is a layer of this model
    bool inputJob_ = false;            // a typed input is being run
    std::shared_ptr<const Run> base_;  // on baseInput_
    Input baseInput_;
    RunAnalysis baseAnalysis_;
    std::shared_ptr<const Run> previousBase_;  // one step back: undo of a text edit is instant
    Input previousInput_;
    RunAnalysis previousAnalysis_;
    std::shared_ptr<const Scene> pristine_;  // the open layer as the model has it
    int pristineLayer_ = -1;
    std::shared_ptr<const Run> current_;
    RunAnalysis analysis_;
    int selectedPosition_ = -1;

    QTimer* textTimer_;
    QString pendingText_;

    QThread* worker_ = nullptr;
    QObject* workerContext_ = nullptr;
    long serials_[3] = {0, 0, 0};  // per channel, the job whose result counts
    bool pending_[3] = {false, false, false};
    bool busy_ = false;
    int progressDelayMs_ = 200;
    QString busyWhat_;
    QTimer* progressTimer_;
    QString problem_;
};

}  // namespace ae::ui
