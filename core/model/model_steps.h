#pragma once
// Single steps of the forward pass (core/model/model_forward.cpp) for the analyses that take a
// run apart (core/model/workbench.h): a layer's attention output or whole output on a given
// residual input, and the family's final norm, head and soft-cap on residual rows. The same code
// as a pass, so the numbers are the pass's.
//
// Shapes: T rows of the residual stream, d wide; V the vocabulary.

#include "core/model/model.h"

namespace ae::model {

// Layer `layer`'s attention sub-block on `input` (T x d, the residual entering the layer): its
// pre-norm, q, k, v, every head with `options`' mask, the output projection and its bias (before
// a post-attention norm, which belongs to the rest of the layer): T x d. `contexts`, when given,
// receives every head's context side by side (T x H·hd).
template <typename Scalar>
Matrix<Scalar> attentionOutput(const Model& model, int layer, const Matrix<Scalar>& input,
                               const RunOptions& options, Matrix<Scalar>* contexts = nullptr);

// Layer `layer`'s output projection and its bias on the heads' contexts (T x H·hd): T x d.
template <typename Scalar>
Matrix<Scalar> outputProjection(const Model& model, int layer, const Matrix<Scalar>& contexts);

// The rest of layer `layer` after its attention: `input` (T x d, the residual that entered the
// layer) and the attention output (T x d, as attentionOutput gives it) make the layer's output,
// as the pass makes it (residual adds, norms, the MLP; DeBERTa's ConvLayer after layer 0). Row
// by row but for that ConvLayer: a decoder's rows may be several sequences stacked.
template <typename Scalar>
Matrix<Scalar> finishLayerOutput(const Model& model, int layer, const Matrix<Scalar>& input,
                                 const Matrix<Scalar>& attention, const RunOptions& options);

// The whole of layer `layer` on `input`: its output, the residual entering the next layer (or,
// for the last, what the final norm reads), T x d.
template <typename Scalar>
Matrix<Scalar> layerOutput(const Model& model, int layer, const Matrix<Scalar>& input,
                           const RunOptions& options);

// layerOutput on B sequences of T rows each, stacked (B·T x d): every sequence's attention on its
// own rows, the rest of the layer (row by row: residual adds, norms, the MLP) on all of them at
// once, so the layer's MLP weights are read once for the B sequences. For decoders (no ConvLayer).
template <typename Scalar>
Matrix<Scalar> stackedLayerOutput(const Model& model, int layer, const Matrix<Scalar>& inputs,
                                  Eigen::Index T, const RunOptions& options);

// A decoder's last steps on residual rows (n x d): the final norm, the LM head and the final
// soft-cap, n x V, as a pass ends.
template <typename Scalar>
Matrix<Scalar> finalHeadLogits(const Model& model, const Matrix<Scalar>& residual);

}  // namespace ae::model
