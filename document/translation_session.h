#pragma once
// An encoder–decoder model in the window (T5, BART, Marian): the source text, the target, either
// typed (teacher forcing) or produced by Translate (greedy decoding, shown token by token, with
// Cancel), the model's run on them, and one attention of it open in the explorer: a layer of the
// encoder, a layer of the decoder, or a decoder layer's cross-attention as a cross scene (the
// decoder's queries, the encoder's output as the source).
//
// As in the model session (document/model_session.h), the document's scene is the single source
// of truth. The open layer's scene carries a "translation" object in its view (the attention, the
// layer and head, the source and target and the ids they ran on), so that undo, which brings an
// earlier scene back, brings its input back too. The session follows the document:
// - the scene's ids differ from the run's: the model runs again on them (teacher forced);
// - the scene computes the layer as the model has it: the run shown IS the model's own run;
// - else (a what-if): the engine's results on the scene replace that attention, and
//   model::resumeEncoderDecoder recomputes what follows it: an encoder edit the later encoder
//   layers and the whole decoder, a decoder or cross edit the rest of the decoder.
//
// Runs are in float, as the window's engine is; the scenes come from a run in double made with it
// (short texts: a few milliseconds on the tiny models, under a second on opus-mt). The work goes
// to one worker thread (document/model_work.h): a newer run makes an older one stale.

#include <QObject>
#include <QString>
#include <QStringList>
#include <atomic>
#include <memory>
#include <optional>
#include <vector>

#include "core/model/model.h"
#include "core/model/model_analysis.h"
#include "core/model/what_if.h"
#include "core/scene.h"

class QTimer;

namespace ae::io {
class ModelFolder;
class Tokenizer;
}  // namespace ae::io

namespace ae::document {

class AttentionDocument;
class ModelWork;

// What an encoder–decoder model runs on: the texts and their ids.
struct TranslationInput {
    QString source, target;  // the texts (target empty: translated)
    bool translated = true;  // the target was produced by Translate, not typed
    // decoderIds: decoder_start_token_id, then the target's tokens; empty: to translate.
    std::vector<long long> sourceIds, decoderIds;
};

// What the explorer's scene holds of an encoder–decoder model, and the input it was made on.
struct TranslationLayer {
    QString model;  // the session's location(): which model the layer is of
    model::AttentionKind kind = model::AttentionKind::Cross;
    int layer = 0;
    int head = 0;
    TranslationInput input;
};

// The scene's "translation" view object, or nothing when the scene has none (a plain scene, or a
// layer of a one-stack model).
std::optional<TranslationLayer> translationLayer(const std::string& viewJson);
// `viewJson` with its "translation" object set to `layer`.
std::string withTranslationLayer(const std::string& viewJson, const TranslationLayer& layer);
// "encoder", "decoder", "cross": the names the view and the command line (`scene --stack`) use.
QString attentionKindName(model::AttentionKind kind);

class TranslationSession : public QObject {
    Q_OBJECT
public:
    using Run = model::EncoderDecoderRun<float>;

    explicit TranslationSession(AttentionDocument* document, QObject* parent = nullptr);
    ~TranslationSession() override;

    // Takes an encoder–decoder model (a folder read and checked, as the model session hands it
    // over): translates `source` (a default sentence when empty) and opens `layer`'s
    // cross-attention, head `head` (0 where the model has no such layer or head), in the
    // explorer, replacing the document's scene (no undo across it). `location` is what opens it
    // again ("builtin:NAME" or the folder). Refused (problem()) without a tokenizer in the folder.
    void start(std::shared_ptr<io::ModelFolder> folder, const QString& location,
               const QString& source = {}, int layer = 0, int head = 0);
    // Forgets the model (the document's scene stays).
    void close();
    bool isOpen() const { return static_cast<bool>(folder_); }
    const model::Model* model() const;
    QString location() const { return location_; }
    QString folder() const;

    // ---- Input (each, once its run is in, an undo step of the document) ----
    // The source text, tokenized and run 150 ms after the last call (typing): translated again,
    // or run on the typed target.
    void setSource(const QString& text);
    // A typed target: the model runs on it teacher forced (decoder_start_token_id, then the
    // target's tokens without its end token). Empty: translate instead.
    void setTarget(const QString& text);
    // Greedy decoding from decoder_start_token_id to the end token, at most kMaxNewTokens tokens
    // (or the decoder's positions); each token as it comes (translationStep), then the run on
    // them.
    void translate();
    static constexpr int kMaxNewTokens = 48;
    // A translation under way stops after its current token, and the run on what it produced is
    // shown; any other work is dropped, and the window stays as it was.
    void cancel();
    QString source() const { return input_.source; }
    QString target() const { return input_.target; }
    bool translated() const { return input_.translated; }
    const std::vector<long long>& sourceIds() const { return input_.sourceIds; }
    // The decoder's input: decoder_start_token_id, then the target's tokens.
    const std::vector<long long>& decoderIds() const { return input_.decoderIds; }
    QStringList sourceLabels() const;
    QStringList targetLabels() const;  // one a decoder input token
    QString targetTokenText(long long id) const;
    // The translation as text (the decoder input after its start token, decoded).
    QString translationText() const;

    // ---- Results ----
    // The model's own run on the input, and the run shown (a what-if's, or the same object).
    std::shared_ptr<const Run> baseRun() const { return base_; }
    std::shared_ptr<const Run> currentRun() const { return current_; }
    bool showsWhatIf() const { return current_ && current_ != base_; }
    // The next token after the decoder input: on the run shown, and (with a what-if) before it.
    std::vector<model::Prediction> predictions(int count = 8) const;
    std::vector<model::Prediction> basePredictions(int count = 8) const;
    // Each stack's head summaries on the run shown (the cross heads': summarizeCrossHeads).
    std::vector<model::HeadSummary> summaries(model::AttentionKind kind) const;

    // ---- The layer in the explorer ----
    // Opens head `head` of `kind`'s layer `layer` as the model has it, one undo step.
    void openHead(model::AttentionKind kind, int layer, int head);
    // From the document's scene: nothing when it is no layer of this model.
    std::optional<TranslationLayer> openLayer() const { return open_; }

    // ---- Work ----
    bool isBusy() const;
    bool isTranslating() const { return translating_; }
    void waitUntilIdle();
    void setProgressDelay(int milliseconds);
    // Each token Translate makes waits this long before the next (tests: a translation slow
    // enough to cancel half-way; 0 by default).
    void setTokenPause(int milliseconds) { tokenPauseMs_ = milliseconds; }
    QString problemText() const { return problem_; }

signals:
    void opened();
    void closed();
    void inputChanged();
    // Translate's decoder input so far (the start token first), after each token.
    void translationStep(const std::vector<long long>& decoderIds);
    void resultsChanged();
    void openHeadChanged(int layer, int head);
    void busyChanged(bool busy);
    void progressShown(const QString& what);
    void problem(const QString& message);

private:
    using Input = TranslationInput;
    // Runs the model on `input` (translating first when its decoderIds are empty), then shows the
    // run, and with `placeLayer` puts the open layer (or `open_` when none is open, at opening)
    // on the new input into the document.
    void runOn(Input input, bool placeLayer);
    void install(const Input& input, std::shared_ptr<const Run> run,
                 std::shared_ptr<const model::EncoderDecoderRun<double>> exact, bool placeLayer);
    Scene layerAsModelHasIt(const TranslationLayer& layer) const;
    void placeScene(const TranslationLayer& layer, const QString& undoText, bool reset);
    void followDocument();
    void onSceneReset();
    void fail(const QString& message);
    std::vector<std::string> labelsOf(const std::vector<long long>& ids, bool target) const;

    AttentionDocument* document_;
    ModelWork* work_;
    std::shared_ptr<io::ModelFolder> folder_;
    std::shared_ptr<const io::Tokenizer> sourceTokenizer_, targetTokenizer_;
    QString location_;
    Input input_;  // what the user asked for last
    std::shared_ptr<const Run> base_, current_;
    std::shared_ptr<const model::EncoderDecoderRun<double>> exact_;  // base_'s input, in double
    std::optional<TranslationLayer> open_;
    std::shared_ptr<const Scene> pristine_;  // open_'s layer as the model has it
    std::shared_ptr<std::atomic<bool>> stopTranslation_;
    bool translating_ = false;
    int tokenPauseMs_ = 0;
    bool placing_ = false;  // the session itself is putting a scene into the document
    QTimer* sourceTimer_;
    QString pendingSource_;
    QString problem_;
};

}  // namespace ae::document
