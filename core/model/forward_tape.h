#pragma once
// The model forward pass as a trainer runs it: runModel's own layers (model_forward.cpp, the same
// code, no second copy), keeping besides the run's records what backpropagation reads, as llm.c's
// gpt2_forward keeps the activations its gpt2_backward reads. core/training/model_training.cpp's
// backward reads a ModelRun and its ForwardTape.
//
// Dimension names are those of core/dimensions.h, in their short forms: T, d, H, hd, I.

#include <vector>

#include "core/model/model.h"
#include "core/ops.h"

namespace ae::model {

// A LayerNorm's pieces its backward reads (an RMSNorm's backward reads its input, which the run
// or the tape keeps already, so these stay empty for it).
template <typename Scalar>
struct NormTape {
    Matrix<Scalar> normalised;                   // T x d: x̂ = (x − mean)·(1/σ)
    ops::ColumnVector<Scalar> inverseDeviation;  // T: 1/σ = 1/√(var + eps), per row
};

// One pre-norm layer's activations beyond its LayerRecord (whose hiddenIn is the attention norm's
// input, and whose q, k, v and weights the attention's backward reads).
template <typename Scalar>
struct LayerTape {
    Matrix<Scalar> attentionNormed;  // T x d: the attention's pre-norm output, q k v's input
    NormTape<Scalar> attentionNorm;
    Matrix<Scalar> context;  // T x (H·hd): every head's weights·v, the output projection's input
    // The MLP's pieces (empty when the pass skipped the MLPs):
    Matrix<Scalar> hiddenMid;  // T x d: the residual stream after the attention's add
    Matrix<Scalar> mlpNormed;  // T x d: the MLP's pre-norm output
    NormTape<Scalar> mlpNorm;
    Matrix<Scalar> gate;       // T x I, gated MLPs: the gate projection, before its activation
    Matrix<Scalar> up;         // T x I: the up projection (plain MLPs: before the activation)
    Matrix<Scalar> activated;  // T x I: what the down projection reads
};

template <typename Scalar>
struct ForwardTape {
    std::vector<LayerTape<Scalar>> layers;
    Matrix<Scalar> finalIn;  // T x d: the residual stream entering the final norm, whose output
                             // is the run's finalHidden
    NormTape<Scalar> finalNorm;
    ops::RotaryAngles angles;  // rotary families: the T x hd/2 angles q and k were turned by
};

// The forward pass on one sequence, for a pre-norm decoder (the trainable rows of the family
// table), filling `tape`: checkInputs, then runModel's embedding, layers, final norm and logits
// (every position's, T x V). Unlike runModel: one thread (a trainer runs its batch's sequences in
// parallel), no scores kept (the attention's backward reads the weights), no memory check and no
// refusal of an overflow (the trainer checks its loss). `mlpAddsZero`: every MLP weight and bias
// is 0 (an attention-only trainer's), so each MLP adds exactly 0 to the residual stream and is
// skipped. Throws ModelError for a family the tape does not cover.
ModelRun<double> runModelForTraining(const Model& model, const std::vector<long long>& ids,
                                     ForwardTape<double>& tape, bool mlpAddsZero);

}  // namespace ae::model
