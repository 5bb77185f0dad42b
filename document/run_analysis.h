#pragma once
// A model's run as the window makes it, and what the model view shows of it: head summaries,
// induction scores (a second pass, measured after the run), rollout and next-token predictions
// (core/model/model_analysis.h). ModelSession (document/model_session.h) keeps a RunAnalysis for
// the model's own run and one for the run with the document's what-if.
//
// Shapes: T tokens, per layer and head.

#include <QString>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "core/model/model.h"
#include "core/model/model_analysis.h"
#include "core/model/what_if.h"
#include "document/model_reference.h"

namespace ae::document {

// The analysis of one run, for the model view.
struct RunAnalysis {
    std::vector<model::HeadSummary> summaries;  // with induction when measured, else NaN
    // Whose induction scores the summaries carry, and, unless they are this run's own, why.
    model::InductionState induction = model::InductionState::Pending;
    QString inductionNote;
    std::vector<Eigen::MatrixXd> rollout;  // per layer, T x T
    // The token position `predictions` are for: the selected one, or when none is selected (or
    // the selected one is past the end) defaultPredictionPosition's. -1 when there are none.
    int position = -1;
    // At `position`: a decoder's next token, an encoder's masked-LM guesses (fill-mask).
    std::vector<model::Prediction> predictions;
    // The same, before the what-if; empty for the model's own run.
    std::vector<model::Prediction> basePredictions;
};

// The window's runs are in float, as its engine is.
using WindowRun = model::ModelRun<float>;

// The tokenizer's tokens with a role in the analyses, or -1: the masked-LM's [MASK] / <mask>
// (where an encoder's predictions go) and the sentence separator [SEP] / </s> (what the
// to-[SEP] score measures).
struct SpecialTokenIds {
    long long mask = -1;
    long long separator = -1;
};

// Whether `run` has predictions to show: a decoder's next token, or the masked-LM head of an
// encoder whose folder holds one.
bool hasPredictions(const WindowRun& run);
// The predictions' position when the user has picked none: a decoder's last token; an encoder's
// first `maskToken` (its tokenizer's [MASK] or <mask>; -1: none), else its last token.
int defaultPredictionPosition(const WindowRun& run, long long maskToken);

struct AnalysedRun {
    std::shared_ptr<const WindowRun> run;
    RunAnalysis analysis;
};

// The memory a window's run may keep before it drops its maps: the "Memory for maps" setting,
// by default half of this machine's physical memory.
double defaultMapBudget();

// How the window runs `model` on `input`: with its attention mask, keeping the last position's
// logits only (the predictions read any other position through logitsAt) and every layer's
// digest (model::LayerDigest: what the model view draws). When the whole run, with every head's
// maps, needs at most `mapBudget` bytes (model::runMemory), it keeps them all; otherwise it keeps
// none (planned memory) and a view that needs a layer's maps recomputes them
// (model::recomputeLayerMaps).
// The separators are the positions of `separatorToken` in the input (-1: none).
model::RunOptions windowRunOptions(const model::Model& model, const ModelInput& input,
                                   double mapBudget, long long separatorToken = -1);

// The model view's maps value-weighted (core/value_weighting.h: ‖α_ij·v_j·W_O^h‖ normalised per
// row), as one digest a layer (model::digestLayer: the pooled maps the grid draws, and summaries
// whose first_token is each head's sink share in norms): from the run's maps, or recomputed a
// layer at a time when it dropped them. `layerDone(l)` after each layer; false stops
// (model::RunCancelled).
std::vector<model::LayerDigest> valueWeightedDigests(
    const model::Model& model, const WindowRun& run,
    const std::function<bool(int)>& layerDone = {});

// Whether `run` dropped its maps (windowRunOptions): the status bar says so.
bool keepsOnlyDigests(const WindowRun& run);

// What a pass tells as it goes, on the worker's thread, of a model of `layers` layers: each
// finished layer (returning false stops the pass there: model::RunOptions::afterLayer), and
// each layer's digest as it is made (model::RunOptions::digestReady), so the model view fills
// in layer by layer. Opening also tells, from the headers alone, the shape of the pass to come,
// then how much of the weights' values it has checked (io::ModelFolder::checkValues; returning
// false stops it). Any may be null.
struct PassReports {
    std::function<bool(int layersDone, int layers)> afterLayer;
    std::function<void(int layer, int layers, const model::LayerDigest& digest)> digestReady;
    std::function<void(int layers, int heads, int tokens)> starting;
    std::function<bool(double fraction)> checking;
};

// `model` run on `input` as the window runs it (windowRunOptions with `mapBudget`), analysed with
// the predictions at `selectedPosition` (analyse). `previous`, if given, is an earlier run of
// this model whose rows before the first changed token are taken over (model::rerunModel: typing
// at the end runs the new tokens only). `reports` hear the pass as it goes.
AnalysedRun runAndAnalyse(const model::Model& model, const ModelInput& input, int selectedPosition,
                          double mapBudget, const WindowRun* previous = nullptr,
                          const PassReports& reports = {}, const SpecialTokenIds& special = {});

// `base` with `edited`'s layer in its place and every later layer run again
// (model::resumeWhatIf), analysed: the heads before the edited layer keep `baseAnalysis`'s
// summaries, and the predictions before the what-if are `baseAnalysis`'s.
AnalysedRun resumeAndAnalyse(const model::Model& model, const WindowRun& base,
                             const RunAnalysis& baseAnalysis, model::EditedLayer<float> edited,
                             int selectedPosition, long long maskToken = -1);

// The analysis of `run`: every head's summary (induction NaN: measured later), and when it has
// predictions the top ten at `selectedPosition` (defaultPredictionPosition's with `maskToken`
// when it is −1 or past the end).
// `sameBefore`, if given, is the analysis of a run whose layers before `firstChangedLayer` are
// this run's (a what-if from that layer): their heads' summaries are taken from it.
RunAnalysis analyse(const WindowRun& run, const model::Model& model, int selectedPosition,
                    const RunAnalysis* sameBefore = nullptr, int firstChangedLayer = 0,
                    long long maskToken = -1);

struct InductionResult {
    std::vector<double> scores;  // layers·heads values, or none
    QString problem;             // why there are none
};

// Every head's induction score on `run`'s text repeated twice, or why it cannot be measured.
// `ablations` (heads switched off by zeros) measure a what-if instead: the whole repeated text
// then runs with them. `keepGoing`, if given, is asked after each layer of that pass: false stops
// it (model::RunCancelled), as a newer text makes these scores stale (on a big model the repeated
// text's pass takes minutes).
InductionResult inductionOf(const WindowRun& run, const model::Model& model,
                            const std::vector<model::HeadAblation>& ablations = {},
                            const std::function<bool()>& keepGoing = {});

// Sets each summary's induction from `scores` (NaN where there is none).
void setInduction(std::vector<model::HeadSummary>& summaries, const std::vector<double>& scores);

// The model's own induction, measured (`result`), into the model's analysis `base` and into the
// analysis shown, `shown` (the same run's when `shownIsBase`, else a what-if's that shows the
// model's scores while they are stale).
void takeModelInduction(const InductionResult& result, RunAnalysis& base, RunAnalysis& shown,
                        bool shownIsBase);

// A what-if's analysis shows the model's own induction scores (`base`'s), marked Stale with why,
// until its own are measured (`ownComing`: heads switched off in layer `layer`) or because they
// cannot be.
void showModelInductionOnWhatIf(RunAnalysis& whatIf, const RunAnalysis& base, bool ownComing,
                                int layer);

// Brings the predictions of `current` (analysed in `analysis`) and of the model's own run `base`
// (in `baseAnalysis`; the same object as `current` when there is no what-if) to position `at`,
// if they are for another; whether anything changed.
bool predictAt(int at, const model::Model& model, const WindowRun& current, RunAnalysis& analysis,
               const WindowRun& base, RunAnalysis& baseAnalysis);

// Heads (layer, head) whose weights differ between `base` and `current` by more than
// `threshold` in some cell; for a layer either run kept no maps of, in some cell of the pooled
// maps of their digests (a change the max-pooling hides is then not seen).
std::vector<std::pair<int, int>> changedHeads(const WindowRun& base, const WindowRun& current,
                                              double threshold);

}  // namespace ae::document
