#pragma once
// What the model view shows about a run (issue 16): a summary of every head, attention rollout,
// the next-token predictions and a 2-D projection of one head's queries and keys. Plain C++ and
// Eigen on a ModelRun; the window, `heads` and `render` all call these.

#include <Eigen/Core>
#include <string>
#include <vector>

#include "core/model.h"

namespace ae::model {

// One head's behaviour on the current text. Every score is a mean over the query rows it is
// defined for (named below), so heads of different layers compare.
struct HeadSummary {
    int layer = 0;
    int head = 0;
    double entropy = 0;     // mean over rows of −Σ w·ln w (nats), over the keys each row sees
    double firstToken = 0;  // mean over rows of the weight on key 0 (BOS for decoders)
    double previousToken = 0;  // mean over rows i ≥ 1 of the weight on key i − 1
    double self = 0;           // mean over rows of the weight on key i (the diagonal)
    // TransformerLens's induction score, on a text repeated twice (tokens t, then t again, after
    // an optional prefix such as BOS): the mean over the second copy's rows of the weight from
    // the copy of token i to the token after i's first occurrence. NaN until measured.
    double induction = 0;
};

// entropy, firstToken, previousToken and self of every head of `run`, layer by layer
// (layers·heads entries); induction is left NaN.
template <typename Scalar>
std::vector<HeadSummary> summarizeHeads(const ModelRun<Scalar>& run);

// The induction score of every head (layers·heads values, layer by layer), from a run on
// `prefix` + `repeated` + `repeated` (the caller runs the model on that sequence; prefixLength is
// prefix's length, period repeated's length).
template <typename Scalar>
std::vector<double> inductionScores(const ModelRun<Scalar>& repeatedRun, int prefixLength,
                                    int period);

// Abnar & Zuidema (2020): per layer, the mean of the heads' weights plus the identity (the
// residual), rows renormalised to 1; rollout(l) = Â_l · … · Â_0. Returns one T x T matrix per
// layer: entry (i, j) is how much input token j feeds position i after layers 0..l. The last is
// the rollout the view shows.
template <typename Scalar>
std::vector<Eigen::MatrixXd> attentionRollout(const ModelRun<Scalar>& run);

struct Prediction {
    long long token = 0;
    double probability = 0;
};
// The `count` most probable next tokens at `position` (softmax of that row of the logits),
// most probable first. Decoders only (throws ModelError for bert).
template <typename Scalar>
std::vector<Prediction> topPredictions(const ModelRun<Scalar>& run, int position, int count = 10);

// AttentionViz's query–key map for one head: its T queries and T keys (of the kv head it reads)
// projected onto two principal components. Separate: each set on its own components (two
// spaces); Joint: both on the components of the union (one space, where a query near a key
// attends to it). Norms: instead of projections, x = position, y = the vector's length.
enum class QkProjectionMode { Separate, Joint, Norms };
struct QkProjection {
    Eigen::MatrixX2d queries;   // T x 2
    Eigen::MatrixX2d keys;      // T x 2
    double explainedQuery = 0;  // share of the variance the two components keep (0 for Norms)
    double explainedKey = 0;
};
template <typename Scalar>
QkProjection projectQueriesAndKeys(const ModelRun<Scalar>& run, int layer, int head,
                                   QkProjectionMode mode);

}  // namespace ae::model
