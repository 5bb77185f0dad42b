#pragma once
// Training a small whole model (issue 17, "Watch a model learn"): token embeddings, several
// layers of attention (and optionally an MLP), a final norm and an unembedding, trained on a
// next-token-style cross-entropy by hand-written backpropagation in double, with Adam.
//
// The model IS a core/model/model.h model of the gpt2 or llama family, weight for weight: the
// trainer keeps its parameters in exactly the tensors (names, shapes, layouts) a Hugging Face
// folder of that family holds, and model() hands them to runModel as they are. So what `run`
// computes on a saved folder is what was trained (tests/core/training/test_model_training.cpp
// checks it to 1e-12).
//
//   gpt2:  h = wte[ids] + wpe[0..T)                                  T x d, learned positions
//          per layer: h += c_proj(attention(ln_1(h)));  h += MLP(ln_2(h)),
//                     MLP = c_proj(gelu_tanh(c_fc(·)))  (Conv1D weights [in, out], with biases)
//          logits = ln_f(h)·wteᵀ                                      T x V (tied, as GPT-2)
//   llama: h = embed_tokens[ids]                                      rotary q and k instead
//          per layer: h += o_proj(attention(rms(h)));  h += down(silu(gate(x)) ⊙ up(x)),
//                     x = rms(h)  (nn.Linear weights [out, in], no biases)
//          logits = rms(h)·lm_headᵀ                                   T x V (untied, as Llama)
//   attention: per head softmax(q_h·k_hᵀ/√hd, causal)·v_h; heads·hd = d.
//
// Attention-only (the default): the MLP's tensors exist, as the family's folder needs them, with
// intermediate size 1 and every MLP weight and bias 0 and never trained (nor the MLP's pre-norm,
// ln_2 / post_attention_layernorm, left at 1 and 0): gelu(0) = silu(0)·0 = 0, so each MLP adds
// exactly 0 to the residual stream, and the trainer's forward pass skips it.
//
// The forward pass is the model's own (core/model/forward_tape.h's runModelForTraining: runModel's
// layers, keeping what backpropagation reads); the backward pieces are core/training/backprop.h's,
// shared with the one-layer trainer (core/training/attention_training.h).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/init_draw.h"
#include "core/model/forward_tape.h"
#include "core/model/model.h"
#include "core/scene.h"
#include "core/training/named_choices.h"

namespace ae::model {

// The tasks (docs/training.md). Ids are drawn uniformly from [0, vocab) unless said otherwise;
// a position "in the loss" predicts the target named, by cross-entropy on its logits.
//   induction:      N random ids, then the same N again (T = 2N tokens); the loss is on the
//                   second copy only: position i (N ≤ i < 2N − 1) predicts ids[i + 1], which only
//                   the earlier copy can tell. N is drawn from [max(2, length/8), length/2] for
//                   each sequence: with one fixed N, attending "N − 1 back" by position alone
//                   would solve it, and no induction head would form.
//   copy-next:      windows of the built-in text (bytes; vocab ≥ 128); every position predicts
//                   the next byte.
//   previous-token: random ids; position i ≥ 1 predicts ids[i − 1] (what it just saw).
//   first-token:    random ids; every position predicts ids[0].
//   match:          random ids; a position whose token occurred before predicts the token that
//                   followed its most recent earlier occurrence. The one-layer task attends to
//                   the same token; in a token model that is useful only for what came after it,
//                   so this is induction on sequences where repeats happen by chance.
enum class ModelTask { Induction, CopyNext, PreviousToken, FirstToken, Match };
// Listed "induction, copy-next, previous-token, first-token, match".
inline constexpr NamedChoices<ModelTask, 5> kModelTasks({{ModelTask::Induction, "induction"},
                                                         {ModelTask::CopyNext, "copy-next"},
                                                         {ModelTask::PreviousToken,
                                                          "previous-token"},
                                                         {ModelTask::FirstToken, "first-token"},
                                                         {ModelTask::Match, "match"}});
inline std::optional<ModelTask> modelTaskFromName(const std::string& name) {
    return kModelTasks.fromName(name);
}
inline const char* modelTaskName(ModelTask task) {
    return kModelTasks.name(task);
}

// The built-in text of copy-next (ASCII; its source is named in model_training.cpp).
const std::string& trainingText();

struct ModelTrainingOptions {
    // The family's model_type: one of the family table's trainable rows (trainableFamilies(),
    // "llama" rotary, "gpt2" learned positions).
    std::string family = "llama";
    int layers = 2;
    int heads = 4;
    int hidden = 64;  // d; heads must divide it (llama: into even head sizes)
    bool mlp = false;
    int vocab = 128;  // V; the ids are bytes (io writes a byte-level tokenizer for them)
    int length = 64;  // tokens per training sequence; gpt2: also its learned positions
    ModelTask task = ModelTask::Induction;
    std::uint64_t seed = 1;
    double learningRate = 1e-3;
    int batch = 16;         // sequences per step
    int totalSteps = 0;     // > 0: the rate decays by a cosine to 0 at that step, as the one-layer
                            // trainer's; 0: constant
    double initStd = 0.02;  // N(0, initStd) for every weight matrix (GPT-2's); norms 1, biases 0
    double ropeTheta = 10000.0;  // llama: rope_theta, the base of the rotary frequencies
    // > 0: every k-th step trains on previous-token sequences instead of the task's. With
    // induction alone the previous-token role ends up split between layer-0 heads, each copying
    // the previous token for some of the tokens (rotary llama has no bias, so a query cannot
    // ignore its token); a share of previous-token steps makes one head do it for every token,
    // and the induction head reads it (docs/training.md, "Whole models", measured: k = 4).
    int previousTokenEvery = 0;
};

// The first problem with `options` as one line naming the option ("--heads: ..."), or "".
std::string checkTrainingOptions(const ModelTrainingOptions& options);
// The model's configuration (what config.json will say).
Config trainingConfig(const ModelTrainingOptions& options);
// Bytes a ModelTrainer for `options` holds at its peak, from the shapes: the parameters and
// Adam's two moments, one gradient per sequence of a batch (summed in order, model_training.cpp)
// and each sequence's kept forward pass (per layer about 12 T x max(d, I) matrices and the heads'
// T x T weights, plus the T x V logits twice).
double trainerBytes(const ModelTrainingOptions& options);

// One training sequence: ids, and per position the id it must predict or -1 (not in the loss).
struct TrainingExample {
    std::vector<long long> ids;
    std::vector<long long> targets;
};

// Per head (layers·heads values, layer by layer, as summarizeHeads), on the probe sequence.
struct HeadScores {
    std::vector<double> previousToken;
    std::vector<double> induction;
    int bestPreviousToken = 0;  // index l·heads + h of the highest score
    int bestInduction = 0;
};

class ModelTrainer {
public:
    // Throws ModelError with checkTrainingOptions's message, or when trainerBytes exceeds this
    // machine's memory (before anything is allocated).
    explicit ModelTrainer(const ModelTrainingOptions& options);
    // model() points into this object's parameters: not copied or moved.
    ModelTrainer(const ModelTrainer&) = delete;
    ModelTrainer& operator=(const ModelTrainer&) = delete;

    // One Adam update (β1 0.9, β2 0.999, ε 1e-8) on a fresh batch. Returns the batch's mean loss
    // (nats per predicted token) before the update.
    double step();
    // The mean loss on a fixed evaluation batch (drawn once from the seed) at the current weights.
    double loss() const;
    int stepCount() const { return steps_; }
    const ModelTrainingOptions& options() const { return options_; }

    // The current model, for runModel and core/model/model_analysis.h: its tensors are this
    // trainer's parameters (F64), so it changes with every step (run it again after step()).
    const Model& model() const { return model_; }

    // Previous-token and induction score of every head on the probe sequence (probeIds(): a
    // fixed random period of min(20, length/2) ids repeated twice), via summarizeHeads and
    // inductionScores on runModel<double>: about one forward pass.
    HeadScores probeHeads() const;
    const std::vector<long long>& probeIds() const { return probeIds_; }
    int probePeriod() const { return probePeriod_; }

    // ---- For tests and the CLI ----

    // A sequence of `task` (the options' when null), drawn from `rng` (the trainer's own stream
    // when null).
    TrainingExample drawExample(SplitMix64* rng = nullptr,
                                std::optional<ModelTask> task = std::nullopt);
    // Mean cross-entropy over the positions with a target. With `gradient` (one matrix per
    // parameter tensor, as parameters(), zero-initialised by the caller), adds dLoss/dθ scaled by
    // `gradientScale`. Throws ModelError for ids outside the vocabulary or a sequence longer than
    // the learned positions.
    double lossAndGradient(const TrainingExample& example, std::vector<MatrixD>* gradient,
                           double gradientScale = 1.0) const;
    // T x V logits of the trainer's forward pass (runModelForTraining).
    MatrixD logits(const std::vector<long long>& ids) const;
    // Every parameter tensor, in core/model/model.h's tensorSpecs order (a 1-D tensor as 1 x n),
    // with its name as stored (prefix included). Changing an entry changes model().
    std::vector<MatrixD>& parameters() { return values_; }
    const std::vector<std::string>& parameterNames() const { return names_; }
    // Whether the optimizer moves tensor i (false for an attention-only model's MLP and its norm).
    bool trained(std::size_t i) const { return trained_[i]; }

private:
    // Back through the forward pass `run` (runModelForTraining, which kept `tape`) from the loss
    // on `targets`; returns the loss.
    double backward(const std::vector<long long>& ids, const std::vector<long long>& targets,
                    const ModelRun<double>& run, const ForwardTape<double>& tape,
                    std::vector<MatrixD>* gradient, double scale) const;
    int index(const TensorRef& slot) const;

    ModelTrainingOptions options_;
    Model model_;
    std::vector<MatrixD> values_, firstMoment_, secondMoment_;
    std::vector<std::string> names_;
    std::vector<bool> trained_;
    std::vector<const unsigned char*> dataOf_;  // values_[i].data(), to find a slot's tensor
    std::vector<TrainingExample> evaluation_;
    std::vector<long long> probeIds_;
    int probePeriod_ = 0;
    SplitMix64 rng_{0};
    int steps_ = 0;
};

}  // namespace ae::model
