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
#include <utility>
#include <vector>

#include "core/scene.h"
#include "io/formats/matrix_files.h"

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

// Where tensors come from. Throws MatrixFileError for a missing or unreadable tensor; shape
// checks are the importer's.
struct TensorReader {
    // The whole tensor: 0-D as 1x1, 1-D [n] as one row 1 x n, 2-D [r, c] as r x c.
    std::function<MatrixD(const QString& name)> matrix;
    // That matrix's (rows, cols) without reading the values.
    std::function<std::pair<long long, long long>(const QString& name)> shape;
    // The given rows of that matrix, in order (rows.size() x cols), reading only them: a token
    // table of 50257 x 768 costs what the chosen rows cost.
    std::function<MatrixD(const QString& name, const std::vector<long long>& rows)> rows;

    MatrixD operator()(const QString& name) const { return matrix(name); }
};

// Tensors from an open .safetensors file; a name that ends in ".npy" and is not a tensor of the
// file is read as an .npy file instead. The file must outlive the reader.
TensorReader tensorReader(const SafetensorsFile& file);
// Tensors from .npy files only: each name is a path to one (a 1-D or 2-D float32/float64 array).
// An .npy file is read whole when its values are needed; its shape comes from its header alone.
TensorReader npyTensorReader();

// A tensor's name and shape as its file lists it.
struct TensorShape {
    QString name;
    std::vector<long long> shape;
};
// A guess at a ModelImportSpec from tensor names alone, for a reader to check and change: the
// first layer's attention (GPT-2, BERT, OPT and Llama-style names), its biases, W_O, the token
// table, learned positions, the layer norm before the layer, and the layout the names imply.
// Heads are guessed as dProj / 64 (the usual dHead), causal for decoders (no "encoder." in any
// name). Empty names, and heads 0: no guess.
ModelImportSpec guessImportSpec(const std::vector<TensorShape>& tensors);

// Token ids for words typed by a reader, looked up in a vocabulary (index = id, as readVocabulary
// returns it). Words are separated by white space. In a byte-level vocabulary (GPT-2's, whose
// tokens that follow a space start with "Ġ"), a word after the first is looked up as "Ġword"
// first, as GPT-2's tokenizer spells a word that follows a space, then as written. Refuses a word
// that is not a token, naming it.
std::vector<long long> lookUpTokens(const std::vector<std::string>& vocabulary,
                                    const QString& words);

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
