#pragma once
// Matrices from .npy or CSV files put into a scene: the new scene for the document to take as one
// undoable replacement. A matrix whose shape does not fit is refused with both shapes.

#include <string>
#include <vector>

#include "document/attention_document.h"

namespace ae::ui {

// The query embeddings replaced by `embeddings` (L_q x d_model). With `tokens`, the tokens are
// replaced too and the embeddings need one row per token (the mask and a learned positional table
// follow, as for typed tokens). Throws io::MatrixFileError("embeddings: expected RxC, got rxc").
Scene withEmbeddings(const Scene& scene, const MatrixD& embeddings,
                     const std::vector<std::string>* tokens = nullptr);

// W_Q, W_K, W_V (d_model x d_proj) or W_O (d_proj rows, any width: the output bias is reset to
// zeros when the width changes; a scene without W_O gets one). Throws io::MatrixFileError for a
// shape that does not fit, or a matrix the projection mode has no place for.
Scene withWeight(const Scene& scene, document::WeightMatrix which, const MatrixD& weight);

}  // namespace ae::ui
