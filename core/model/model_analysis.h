#pragma once
// What the model view shows about a run (issue 16): a summary of every head, attention rollout,
// the next-token predictions and a 2-D projection of one head's queries and keys. Plain C++ and
// Eigen on a ModelRun; the window, `heads` and `render` all call these. docs/models.md, "Head
// summaries", has the formulas.
//
// Padding (bert, run.attentionMask): a padded position's query row is not the model's output for
// any token, so it is left out of every mean below and out of the query–key fit; its keys are
// already hidden (weight exactly 0) from every row.

#include <Eigen/Core>
#include <string>
#include <vector>

#include "core/model/head_scores.h"
#include "core/model/model.h"

namespace ae::model {

// Whether the induction scores a list of summaries carries belong to the run it summarizes.
// Induction needs a second run, on the text repeated twice, which comes after the first and
// cannot always be made.
enum class InductionState {
    Pending,       // not measured yet: NaN
    Measured,      // measured on this run's model (what-if included) and text
    Unmeasurable,  // cannot be measured on this text: NaN, and the caller says why
    Stale,         // a what-if's: the model's own scores, not measured on the what-if
};

// The scores of headScores() of every head of `run` in layers firstLayer.., layer by layer
// ((layers − firstLayer)·heads entries, entry (l − firstLayer)·heads + h is layer l's head h);
// a score that needs a repeated run (induction) is left NaN. A what-if from layer l leaves the
// earlier layers' heads as they were: their summaries need not be computed again.
template <typename Scalar>
std::vector<HeadSummary> summarizeHeads(const ModelRun<Scalar>& run, int firstLayer = 0);

// The induction score of every head (layers·heads values, layer by layer), from a run on
// `prefix` + `repeated` + `repeated` (the caller runs the model on that sequence; prefixLength is
// prefix's length P, period repeated's length N ≥ 1). With T = P + 2N tokens, head h's score is
//   (1/N) Σ_{i=0}^{N−1} w[P+N+i][P+i+1],
// the diagonal at offset −(N−1) restricted to the second copy's N rows. TransformerLens's
// tutorial takes the mean of that whole diagonal, which also holds P+1 rows of the first copy
// (where no induction is possible); over the second copy alone a perfect induction head scores
// exactly 1. Throws ModelError when the run's length is not P + 2N or its second copy differs
// from its first.
template <typename Scalar>
std::vector<double> inductionScores(const ModelRun<Scalar>& repeatedRun, int prefixLength,
                                    int period);

// Every score of headScores() that needs a repeated run, measured on `repeatedRun` (a run of
// prefix + repeated + repeated, as for inductionScores, which throws as this does) into each
// summary of `summaries` (summarizeHeads's of the same model, any first layer) for its head.
template <typename Scalar>
void addRepeatedRunScores(std::vector<HeadSummary>& summaries, const ModelRun<Scalar>& repeatedRun,
                          int prefixLength, int period);

// Abnar & Zuidema (2020): per layer, Â_l = the mean of the heads' weights plus the identity (the
// residual), rows renormalised to 1; rollout(l) = Â_l · … · Â_0. Returns one T x T matrix per
// layer: entry (i, j) is how much input token j feeds position i after layers 0..l; each row
// sums to 1. The last is the rollout the view shows. Padded positions (bert) are computed by the
// same formula, and no token's row reads them: a token's row of every Â is 0 in a padded
// column (the mask hides the key, and the identity adds only to the diagonal), so a token's
// rollout row is what it would be without them.
template <typename Scalar>
std::vector<Eigen::MatrixXd> attentionRollout(const ModelRun<Scalar>& run);

// The alignment view of an encoder–decoder run (Bahdanau et al.'s picture): target x source
// weights, S x T, from the decoder stack's run (EncoderDecoderRun::decoder): one head's
// cross-attention weights (layer and head given), the mean over a layer's heads (head −1), or the
// mean over every layer's heads (layer −1). Each row sums to 1, like each map it averages; the
// encoder's padding columns are 0. Throws ModelError for a run without cross-attention or a
// layer or head outside it.
template <typename Scalar>
Eigen::MatrixXd crossAttentionAlignment(const ModelRun<Scalar>& decoderRun, int layer = -1,
                                        int head = -1);

struct Prediction {
    long long token = 0;
    double probability = 0;
};
// The `count` most probable tokens at `position` (softmax, in double and shifted by the row's
// maximum, of that row of the logits), most probable first; equal logits: lower id first. At
// most the vocabulary. A decoder's are the next token's; an encoder's the masked-LM head's guess
// for the token at `position` (fill-mask). Throws ModelError for an encoder whose folder holds
// no masked-LM head, or for a position outside the run.
template <typename Scalar>
std::vector<Prediction> topPredictions(const ModelRun<Scalar>& run, int position, int count = 10);
// The same from any position of a run that kept only some rows of the logits (the window's runs,
// RunOptions::logitsForEveryPosition false): the missing row is computed from run.finalHidden.
template <typename Scalar>
std::vector<Prediction> topPredictions(const Model& model, const ModelRun<Scalar>& run,
                                       int position, int count = 10);

// AttentionViz's query–key map for one head: its T queries and T keys (of the kv head it reads)
// projected onto two principal components. Separate: each set on its own components (two
// spaces); Joint: both on the components of the union (one space, where a query near a key
// attends to it). Norms: instead of projections, x = position, y = the vector's length.
//
// The components are the eigenvectors of the covariance (the points centred on their mean: the
// set's own, or the union's in Joint) with the two largest eigenvalues; coordinates are the
// centred points' dot products with them (orthonormal axes, so distances in the plane are the
// head's distances, shrunk by what the plane leaves out). An eigenvector's sign is arbitrary:
// each is turned so that its largest-magnitude loading is positive, so the same run draws the
// same figure every time. With hd = 1 the second coordinate is 0. The components are fitted on
// the tokens only (padded positions are projected onto them but do not pull them).
enum class QkProjectionMode { Separate, Joint, Norms };
struct QkProjection {
    Eigen::MatrixX2d queries;  // T x 2
    Eigen::MatrixX2d keys;     // T x 2
    // The share of the variance the two components keep (Σ of the two largest eigenvalues over
    // Σ of all): the queries' and the keys' own in Separate, the union's (both the same) in
    // Joint, 0 for Norms. 1 when the points do not vary at all (nothing is lost).
    double explainedQuery = 0;
    double explainedKey = 0;
};
// Throws ModelError for a layer or head outside the run.
template <typename Scalar>
QkProjection projectQueriesAndKeys(const ModelRun<Scalar>& run, int layer, int head,
                                   QkProjectionMode mode);

}  // namespace ae::model
