#pragma once
// Training one self-attention layer by hand-written backpropagation, in double precision.
//
// The forward pass here is the engine's (attention_engine.h), recomputed in double with every
// intermediate kept, because the backward pass needs them; the engine itself caches for editing,
// not for gradients. Dimension names are the legend of core/dimensions.h; self-attention only, so
// Lk = Lq = L.
//
//   X0 = embeddings + positions                        L x dModel
//   X  = norm(X0) = X̂·diag(γ) + β                      L x dModel  (X = X0 without the norm)
//   Q = X·W_Q + b_Q,  K = X·W_K + b_K,  V = X·W_V + b_V  L x dProj  (shared_qk: W_K = W_Q)
//   per head h:  A_h = softmax(mask(Q_h·K_hᵀ / divisor)) L x L
//   C = [A_0·V_0 … A_{heads-1}·V_{heads-1}]               L x dProj
//   Y = C·W_O + b_O                                     L x dOut    (Y = C without W_O)
//
// The loss is the mean squared error of Y against a target on some rows. The tasks below make the
// target "what Y would be if every head looked only at the right key", so the only way to a small
// loss is for the attention pattern to concentrate there.
//
// Why mean squared error and not cross-entropy: the layer's output is a real vector with no
// vocabulary or unembedding behind it. Cross-entropy would need a read-out (logits over tokens)
// that is not part of the scene, so its weights could not be shown or saved; a squared error on
// the output itself trains exactly the numbers the window displays.

#include <Eigen/Core>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/init_draw.h"
#include "core/scene.h"
#include "core/training/named_choices.h"

namespace ae {

// Every number training may change. A group that the scene does not have is empty.
struct LayerParameters {
    MatrixD query;       // W_Q  dModel x dProj (empty in identity mode)
    MatrixD key;         // W_K  dModel x dProj (empty unless separate: shared_qk uses W_Q)
    MatrixD value;       // W_V  dModel x dProj (empty in identity mode)
    MatrixD output;      // W_O  dProj x dOut (empty without an output projection)
    VectorD queryBias;   // dProj (shared_qk: also the key bias)
    VectorD keyBias;     // dProj (empty unless separate)
    VectorD valueBias;   // dProj
    VectorD outputBias;  // dOut
    MatrixD embeddings;  // L x dModel
    MatrixD positions;   // learned table, rows >= L, x dModel (empty unless learned)
    VectorD normWeight;  // γ, dModel (empty without layer norm)
    VectorD normBias;    // β, dModel (empty without layer norm)
};

enum class ParameterGroup {
    Query,
    Key,
    Value,
    Output,
    QueryBias,
    KeyBias,
    ValueBias,
    OutputBias,
    Embeddings,
    Positions,
    NormWeight,
    NormBias
};
const char* parameterGroupName(ParameterGroup group);

// One group as a flat array (matrices are row-major and contiguous), so the optimizer and the
// finite-difference test can walk every group the same way.
struct ParameterSpan {
    ParameterGroup group;
    double* data;
    Eigen::Index size;
};
// The non-empty groups of `p`, in enum order.
std::vector<ParameterSpan> parameterSpans(LayerParameters& p);

// The scene's trainable numbers; absent biases become zeros (as the engine treats them).
LayerParameters parametersOf(const Scene& scene);
// Writes `p` back into `scene` (same shapes). The result no longer comes from `init`.
void applyParameters(const LayerParameters& p, Scene& scene);

// Everything the backward pass needs from the forward pass.
struct ForwardPass {
    BoolMatrix allowed;            // L x L
    MatrixD x0;                    // L x dModel, embeddings + positions
    MatrixD xHat;                  // L x dModel, normalised X0 (only with layer norm)
    VectorD inverseDeviation;      // L, 1/sqrt(var + eps) per row (only with layer norm)
    MatrixD x;                     // L x dModel, the layer's input X
    MatrixD q, k, v;               // L x dProj (k is q for shared_qk, q = k = v = X for identity)
    std::vector<MatrixD> weights;  // heads x (L x L), the softmax output A_h
    MatrixD concat;                // L x dProj
    MatrixD output;                // L x dOut, or concat without an output projection
};

// `config` supplies everything but the numbers in `p`: mode, heads, positional kind, norm,
// mask, fill and scale. Throws SceneError for cross-attention (not supported) or when a scaled
// score is not finite.
ForwardPass forwardPass(const Scene& config, const LayerParameters& p);

// Gradients of a scalar loss w.r.t. every group of `p`, given dLoss/dOutput (L x dOut, or
// L x dProj without an output projection). Same shapes as `p`; groups `p` lacks stay empty.
LayerParameters backwardPass(const Scene& config, const LayerParameters& p, const ForwardPass& f,
                             const MatrixD& outputGradient);

// Mean squared error over the rows with rowWeight > 0 (weights 0 or 1), all columns:
//   loss = Σ_i w_i |Y_i − T_i|² / (Σ_i w_i · cols).   output, target: L x cols; rowWeight: L.
// If `gradient` is given it receives dLoss/dOutput (L x cols).
double maskedMeanSquaredError(const MatrixD& output, const MatrixD& target,
                              const VectorD& rowWeight, MatrixD* gradient = nullptr);

// ---- Tasks and the trainer ----

enum class TrainingTask { PreviousToken, Match, FirstToken };
// Listed "previous-token, match or first-token" (train --task, the training dock).
inline constexpr NamedChoices<TrainingTask, 3> kTrainingTasks(
    {{TrainingTask::PreviousToken, "previous-token"},
     {TrainingTask::Match, "match"},
     {TrainingTask::FirstToken, "first-token"}},
    " or ");
inline std::optional<TrainingTask> trainingTaskFromName(const std::string& name) {
    return kTrainingTasks.fromName(name);
}
inline const char* trainingTaskName(TrainingTask task) {
    return kTrainingTasks.name(task);
}

// The key each query row should attend to, or -1 when the row is not part of the task:
//   previous-token: i − 1 (row 0 is excluded: it has no previous token);
//   first-token:    0 for every row (row 0 attends to itself);
//   match:          the first position holding the same token text (itself if it is the first).
// Computed from the token texts alone, so a saved scene can be checked without the trainer.
std::vector<int> taskTargets(TrainingTask task, const std::vector<std::string>& tokens);

// The success measure, computed by the real AttentionEngine<double>: for each head, the mean over
// rows with a target of weights_h(i, target(i)); returns the best head and its mean.
struct TargetAttention {
    int head = 0;
    double meanWeight = 0.0;
};
TargetAttention bestHeadTargetAttention(const Scene& scene, const std::vector<int>& targets);
constexpr double kSuccessWeight = 0.9;

constexpr int kDefaultTrainingSteps = 4000;
constexpr double kDefaultLearningRate = 0.05;
// Sequences per step: the scene's own plus random ones (see Trainer).
constexpr int kSequencesPerStep = 16;

struct TrainingOptions {
    std::uint64_t seed = 1;  // draws generated sequences and the random sequences of each step
    double learningRate = kDefaultLearningRate;
    // With a step budget, the learning rate follows a cosine from learningRate down to zero at
    // step totalSteps: the random sequences make late steps noisy, and a shrinking step lets
    // the weights settle instead of jittering around the pattern. 0: constant rate.
    int totalSteps = 0;
};

// Adam on every trainable group of one scene for one task. The constructor adapts the scene to
// the task (see note()) and fixes the target; step() then moves the parameters.
//
// Each step trains on the scene's own sequence and kSequencesPerStep - 1 random ones, drawn from
// the same vocabulary (the scene's embedding rows; for match, the generated tokens). On the
// scene's sequence alone, W_V, W_O and the positions could bend the values until a blurred
// pattern produces the target (they do: the loss reaches 1e-7 at a target weight of 0.3); with
// fresh content at every position each step, the only way to output the target key's value is
// to attend to it. The embeddings are the input data and are never trained here (their gradient
// exists: backwardPass computes it).
// Bytes a Trainer for `scene` holds at its peak, estimated from the shapes: its copy of the
// scene, four copies of the parameters (current, initial, Adam's two moments) and a gradient,
// one sequence's forward pass (heads x L x L weights) and the backward pass's temporaries
// (L x L per head at a time). L is the scene's length, or the generated one if longer.
double trainerBytes(const Scene& scene);

class Trainer {
public:
    // Throws SceneError when the scene cannot learn the task (cross-attention, a version 2
    // feature: rmsnorm, kv_heads, qk_norm or rotary, a mask that hides a target key, bad options).
    Trainer(const Scene& scene, TrainingTask task, const TrainingOptions& options = {});

    // One Adam update (β1 0.9, β2 0.999, ε 1e-8, the rate of TrainingOptions) on one batch of
    // sequences. Returns the batch's loss before the update.
    double step();
    // The loss on the scene's own sequence at the current parameters.
    double loss() const;
    // The trained scene, valid for AttentionEngine (explicit matrices, no `init`).
    Scene scene() const;
    // Back to the adapted starting scene, step 0, fresh optimizer moments and random sequences.
    void reset();

    int stepCount() const { return steps_; }
    TrainingTask task() const { return task_; }
    // Per row of the scene's own sequence, as taskTargets().
    const std::vector<int>& targets() const { return own_.targets; }
    // What the constructor changed about the scene, one sentence per change ("" if nothing).
    const std::string& note() const { return note_; }

    // One training sequence with its target.
    struct Example {
        MatrixD embeddings;        // L x dModel
        std::vector<int> targets;  // L, as taskTargets()
        VectorD rowWeight;         // L, 1 for rows in the loss
        MatrixD target;            // L x dOut
    };

private:
    Example makeExample(const MatrixD& embeddings, const std::vector<std::string>& tokens) const;
    Example randomExample();

    TrainingTask task_;
    TrainingOptions options_;
    Scene start_;              // the adapted scene training starts from
    LayerParameters initial_;  // its parameters
    LayerParameters params_;
    LayerParameters firstMoment_, secondMoment_;
    MatrixD vocabulary_;  // V x dModel, what random sequences are made of
    std::vector<std::string> vocabularyTokens_;
    Example own_;  // the scene's own sequence
    SplitMix64 rng_{0};
    std::string note_;
    int steps_ = 0;
};

}  // namespace ae
