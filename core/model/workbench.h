#pragma once
// The interpretability workbench's analyses of a whole model, after
// shared/reference/analysis_reference.py (its header has the math and the conventions, which this
// follows): the logit lens, direct logit attribution, activation patching, value-weighted
// attention norms with attention sinks, and Q-, K- and V-composition scores.
//
// Shapes: T tokens, d hidden size, L layers, H query heads, KV kv heads, hd head size, V the
// vocabulary. Every matrix acts on row vectors (x·W): nn.Linear weights are used transposed.
// The residual stream resid_b (T x d), b = 0..L, is what enters layer b; resid_L is what the
// final norm reads. z^l_h (T x hd) = weights^l_h · v^l_kv(h), head h's input to the output
// projection.

#include <functional>
#include <string>
#include <vector>

#include "core/model/head_scores.h"
#include "core/model/model.h"

namespace ae::model {

// The analyses, as the command line and the result files name them.
enum class Analysis { Lens, Attribution, Patching, ValueNorms, Composition };
const char* analysisName(Analysis analysis);  // "lens", "dla", "patch", "value_norms", ...

// Refuses, by name, an analysis the family does not define (analysis_reference.require): lens,
// dla and patch read a causal LM head, so every encoder is refused them; dla is undefined for the
// post-norm encoders besides.
void requireAnalysis(const Config& config, Analysis analysis);

// ---- 1. The logit lens ----
// For every boundary b and position t: the family's final norm, head and soft-cap on resid_b[t]
// (at b = L the model's own logits), the top K tokens (equal logits: the lower id first) with
// their probabilities, and each target's probability and rank (1 + the number of larger logits).
struct LensResult {
    int topK = 0;
    std::vector<long long> targets;
    // Indexed [b][t][k] (top) or [b][t][target].
    std::vector<std::vector<std::vector<long long>>> topIds;
    std::vector<std::vector<std::vector<double>>> topProbabilities;
    std::vector<std::vector<std::vector<double>>> targetProbabilities;
    std::vector<std::vector<std::vector<long long>>> targetRanks;
    // The targets' logits, for a logit difference across the layers (not in the result JSON).
    std::vector<std::vector<std::vector<double>>> targetLogits;
};
// `run`: a run of `model` on its tokens (runModel, no attention mask).
template <typename Scalar>
LensResult logitLens(const Model& model, const ModelRun<Scalar>& run,
                     const std::vector<long long>& targets, int top);

// ---- 2. Direct logit attribution ----
// D = logit[p][A] − logit[p][B] (logit[p][A] without a foil), split into the parts of resid_L[p]
// with every norm's scale frozen at its value in the run: the embeddings, each head's z·W_O^h,
// each layer's output-projection bias, each MLP, and the final norm's bias. They sum to D.
struct AttributionResult {
    int position = 0;
    long long target = 0;
    long long foil = -1;  // −1: none
    double logitDifference = 0;
    double embed = 0;
    std::vector<std::vector<double>> heads;  // L x H
    std::vector<double> attentionBias;       // L
    std::vector<double> mlp;                 // L
    double finalNormBias = 0;
    double sum = 0;
    std::string finalNormKind;                // "layernorm", "rmsnorm" or "gemma"
    double finalNormScale = 0;                // 1 / s(x) or r(x)
    std::vector<double> postAttentionScales;  // L: r(a^l[p]); empty without such norms
    std::vector<double> softCapFactors;       // [s_A] or [s_A, s_B]; empty without a final cap
};
// `run` must keep every layer's maps. `position` may count from the end (−1: the last).
template <typename Scalar>
AttributionResult directLogitAttribution(const Model& model, const ModelRun<Scalar>& run,
                                         int position, long long target, long long foil);

// ---- 3. Activation patching ----
// A clean and a corrupted text of the same length; the metric M = logit[p][A] − logit[p][B]
// (logit[p][A] without a foil). Each patched run is the corrupted run with one thing taken from
// the clean run, its effect (M_patched − M_corrupt) / (M_clean − M_corrupt): 0 no effect, 1 as
// clean.
//   heads[l][h]     z^l_h, every row, from the clean run (the layers after recomputed);
//   residual[l][t]  row t of resid_l, l = 0..L−1;
//   pattern[l][h]   the head's weights from the clean run, its values the corrupted run's.
struct PatchingResult {
    int position = 0;
    long long target = 0;
    long long foil = -1;
    double cleanMetric = 0, corruptMetric = 0;
    std::vector<std::vector<double>> heads;     // L x H
    std::vector<std::vector<double>> residual;  // L x T
    std::vector<std::vector<double>> pattern;   // L x H
};
// Which sweeps to run (the others' lists stay empty).
struct PatchingSweeps {
    bool heads = true;
    bool pattern = true;
    bool residual = true;
};
// `progress` (optional) is called after each patched run with the fraction done; returning false
// stops the sweep (RunCancelled). `headsOff`: heads switched off (zeros) in every run, the edited
// model a what-if makes; patching one of them changes nothing.
template <typename Scalar>
PatchingResult activationPatching(const Model& model, const std::vector<long long>& clean,
                                  const std::vector<long long>& corrupt, int position,
                                  long long target, long long foil,
                                  const std::function<bool(double)>& progress = {},
                                  PatchingSweeps sweeps = {},
                                  const std::vector<HeadAblation>& headsOff = {});

// What every patch measures: the metric at `position` of a run continued from layer `layer` with
// `input` (T x d) entering it. With the corrupted run's own input it is M_corrupt; with the clean
// run's at layer 0, M_clean.
template <typename Scalar>
double metricAfter(const Model& model, int layer, const Matrix<Scalar>& input, int position,
                   long long target, long long foil);

// ---- 4. Value-weighted attention and sinks ----
// norms[l][h](i, j) = α_ij · ‖v_j·W_O^h‖ (Kobayashi et al. 2020); sinkWeight[l][h] the mean over
// queries of α_i0, sinkNorm[l][h] the mean of norms_i0 / Σ_j norms_ij (0 for a row summing to 0)
// (Xiao et al. 2023).
struct ValueNormsResult {
    std::vector<std::vector<Matrix<double>>> norms;  // L x H, T x T each
    std::vector<std::vector<double>> sinkWeight;     // L x H
    std::vector<std::vector<double>> sinkNorm;       // L x H
};
template <typename Scalar>
ValueNormsResult valueNorms(const Model& model, const ModelRun<Scalar>& run);

// ‖v_j·W_O^h‖ (core/value_weighting.h) for every key j and head h of layer `layer` of `run` (its
// values are kept even when its maps are not): H x T, row h head h's.
template <typename Scalar>
Eigen::MatrixXd valueOutputNorms(const Model& model, const ModelRun<Scalar>& run, int layer);
// Fills each summary's scores that need the values (HeadScore::needsValueNorms: sink_norm) from
// `run`, a run of `model` on the text the summaries are of (a layer whose maps the run dropped is
// recomputed).
template <typename Scalar>
void addValueNormScores(std::vector<HeadSummary>& summaries, const Model& model,
                        const ModelRun<Scalar>& run);
// The cross-attention heads of an encoder–decoder run, decoder layer by layer (`decoderRun`: an
// EncoderDecoderRun's decoder, `decoder` the decoder stack, model.decoder): the scores a query
// row reading another sequence defines. entropy; first_token, the weight on the source's first
// token; to_separator, on `sourceSeparators` (the source's [SEP] / </s> positions); sink_norm,
// the source's first token's share of α_ij·‖v_j·W_O^h‖. previous_token, self and induction
// compare a query's position with a key's in one sequence: NaN. Throws ModelError for a run
// without cross-attention.
template <typename Scalar>
std::vector<HeadSummary> summarizeCrossHeads(const Model& decoder,
                                             const ModelRun<Scalar>& decoderRun,
                                             const std::vector<int>& sourceSeparators);
// The mean cross-entropy in nats of each next token over positions first..T−2 of `run` (a
// decoder's run keeping every position's logits): −log softmax(logits[i])[tokens[i+1]]. On a
// sequence repeated twice, from the second copy, it is the loss induction lowers.
template <typename Scalar>
double nextTokenLoss(const ModelRun<Scalar>& run, int first);

// ---- 5. Composition scores ----
// Q-, K- and V-composition between heads (l1, h1) and (l2, h2), l1 < l2 (Elhage et al. 2021), on
// the weights as TransformerLens's from_pretrained processes them (the reading norm folded into
// W_Q, W_K, W_V; W_O centred for LayerNorm models). Indexed [l1·H + h1][l2·H + h2]; 0 where
// l1 >= l2 or a norm is 0.
struct CompositionResult {
    Matrix<double> q, k, v;                // (L·H) x (L·H)
    std::vector<std::string> readingFold;  // L: "layernorm", "rmsnorm", "gemma" or "none"
    bool centeredWriting = false;
};
CompositionResult compositionScores(const Model& model);

// What the scores are for heads of random weights, the line a real score is read against: the
// mean over `samples` draws of independent Gaussian W_V, W_Q, W_K (d x hd) and W_O (hd x d) of
// ‖OV₁·QK₂‖_F / (‖OV₁‖_F·‖QK₂‖_F), OV = W_V·W_O and QK = W_Q·W_Kᵀ. The scale of the draws cancels;
// Q-, K- and V-composition share it, their factors being alike in distribution.
double randomCompositionBaseline(int hidden, int headDim, int samples = 16, unsigned seed = 1);

}  // namespace ae::model
