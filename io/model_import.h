#pragma once
// Building a scene from a real model's tensors (a .safetensors file, or .npy files): one
// attention layer's weights, and embeddings picked from a token table by id.
//
// The engine computes Q = X·W_Q (X one token per row), so W_Q must be dModel x dProj. Models store
// projections in one of two layouts:
//   xw      [in, out], already X·W: GPT-2's Conv1D (`attn.c_attn.weight` [d, 3d]);
//   linear  [out, in], PyTorch nn.Linear (y = x·Wᵀ): BERT, Llama, ... transposed on import.
// A fused QKV tensor holds Q, K and V side by side along `out`, in that order: xw [d, 3p] is split
// into three column blocks, linear [3p, d] into three row blocks; a fused bias [3p] the same way.

#include <QString>
#include <functional>
#include <optional>
#include <vector>

#include "matrix_files.h"
#include "scene.h"

namespace ae::io {

class SafetensorsFile;

// A refusal of the import: names the tensor (or option) and the shapes involved.
class ModelImportError : public MatrixFileError {
public:
    using MatrixFileError::MatrixFileError;
};

enum class WeightLayout { XW, Linear };

struct ModelImportSpec {
    WeightLayout layout = WeightLayout::XW;
    // Either qkv (and optionally qkvBias), or query/key/value (and optionally their biases).
    QString qkv, qkvBias;
    QString query, key, value;
    QString queryBias, keyBias, valueBias;
    QString output, outputBias;  // optional W_O and b_O
    QString embeddings;          // the token table, vocab x dModel (GPT-2: wte.weight)
    std::vector<long long> tokenIds;
    QString vocabularyFile;        // optional: labels for the ids
    QString positions;             // optional learned positions, >= L x dModel (GPT-2: wpe.weight)
    QString normWeight, normBias;  // optional layer norm before the layer (GPT-2: ln_1)
    int heads = 1;
    bool causal = false;
    QString title;
};

// Where tensors come from: a name → its matrix (1-D as one row), with shape checks done by the
// importer. Throws MatrixFileError for a missing or unreadable tensor.
using TensorReader = std::function<MatrixD(const QString& name)>;

// Tensors from an open .safetensors file; a name that ends in ".npy" and is not a tensor of the
// file is read as an .npy file instead.
TensorReader tensorReader(const SafetensorsFile& file);

// The scene for `spec`: separate projections (Q, K, V each dModel x dProj), output projection if
// given, explicit matrices throughout (no init). Throws ModelImportError (or MatrixFileError from
// the reader).
Scene importModel(const TensorReader& read, const ModelImportSpec& spec);

// Labels for token ids from a vocabulary file: one token per line (line k is id k), or a JSON
// object mapping token → id (GPT-2's vocab.json). Throws MatrixFileError.
std::vector<std::string> readVocabulary(const QString& fileName);

// "1,2,3" → ids; throws ModelImportError for anything but non-negative integers.
std::vector<long long> parseTokenIds(const QString& text);

}  // namespace ae::io
