#pragma once
// Structural edits of a scene: tokens, widths, modes. Each function takes a valid scene and leaves
// a valid one (every matrix, mask and table sized to match), so the editors can hand the result to
// the document as one undoable replacement.
//
// Where an edit needs numbers that did not exist before, it says where they come from:
//   * new embedding columns (d_model grows): zeros, so a new dimension changes nothing until a
//     value is typed into it;
//   * new tokens: wordVector(text), so a word always gets the same vector;
//   * new projection cells (d_model or d_proj grows, W_O added): the value a re-roll with `spec`
//     would put in that cell (drawnProjections below); cells that existed keep their values;
//   * new learned position rows or columns: learnedPositionRows, one generator per position.
//
// The scene's `init` describes matrices that were drawn rather than written; an edit that changes
// such a matrix drops it, so saving writes the matrices themselves.

#include <string>
#include <vector>

#include "core/attention_engine.h"

namespace ae {

// The largest divisor of n (n >= 1) that is at most `limit`; 1 if limit < 1.
int largestDivisorAtMost(int n, int limit);

// Learned positional rows for positions firstRow .. firstRow + rows - 1, each rows x dModel.
// Position r has its own generator, so growing the table (more tokens) or widening it (d_model)
// never changes a value that was already drawn. Normal, std 0.5: visible next to embeddings of
// std 1, like the sinusoidal values in [-1, 1].
MatrixD learnedPositionRows(int firstRow, int rows, int dModel);

// The spec used for new projection cells when the caller has none: the scene's init if it has
// one; else, if every weight is a whole number, integers over the same range; else normal, std 1,
// seed 0.
InitSpec inferredDrawSpec(const Scene& scene);

// Fresh projections for the given widths, as a re-roll with `spec` draws them: drawProjections with
// spec.dProj = dProj in separate mode, biases zero, and W_O (dProj x dOut) drawn too; for
// dOut != dModel W_O is drawn after the rest from the same generator. Identity mode is ignored
// (W_Q, W_K, W_V are drawn anyway).
Projections drawnProjections(const InitSpec& spec, int dModel, int dProj, int dOut);

// --- tokens -------------------------------------------------------------------------------------

// The stream whose tokens are the keys: the source in cross-attention, else the queries.
inline Stream keyStream(const Scene& scene) {
    return scene.hasSource ? Stream::Source : Stream::Query;
}
const std::vector<std::string>& streamTokens(const Scene& scene, Stream stream);
const MatrixD& streamEmbeddings(const Scene& scene, Stream stream);

// Rebuilds one stream: token i of `tokens` comes from old row fromOld[i], or is new (-1) and then
// gets wordVector(tokens[i]). Its mask row (as a query) and column and padding flag (as a key)
// follow it; a new token is unpadded and allowed everywhere. The learned table grows if needed.
// `tokens` must not be empty.
void retokenize(Scene& scene, Stream stream, const std::vector<std::string>& tokens,
                const std::vector<int>& fromOld);

void insertToken(Scene& scene, Stream stream, int at, const std::string& text);
void removeToken(Scene& scene, Stream stream, int at);  // the last token cannot be removed
void moveToken(Scene& scene, Stream stream, int from, int to);
void renameToken(Scene& scene, Stream stream, int at, const std::string& text);

// A new sentence for one stream, one vector per word: every occurrence of a text gets the vector
// (and mask row, column and padding flag) of its first occurrence in the old tokens, or, for a
// text the old tokens lack, wordVector(text), so "the cat saw the dog" has two equal "the" rows.
// The old sentence itself (words == old tokens) changes nothing.
void setSentence(Scene& scene, Stream stream, const std::vector<std::string>& words);

// mask.padding[key] = padded, creating the list (all false) if the scene had none.
void setPadding(Scene& scene, int key, bool padded);

// Cross-attention on: the source starts as a copy of the query tokens and vectors (nothing
// changes numerically until it is edited). Off: keys are the queries again; padding and `allowed`
// are cut or extended (false / true) to the query count.
void setSourceEnabled(Scene& scene, bool enabled);

// Embeddings (and the source's) drawn normal std 1 from SplitMix64(seed), row by row, queries
// first, as init draws them.
void randomizeEmbeddings(Scene& scene, std::uint64_t seed);

// --- widths and modes ---------------------------------------------------------------------------
// On a version 2 scene these keep what they can: a change of d_proj, of the mode or a re-roll
// first ungroups the kv heads (ungroupKeyValueHeads); when d_head changes, the q/k norm weights
// follow it (new values 1) and, with rotary positions, the head count is the largest one that
// leaves d_head even (rotary positions are dropped when d_proj is odd).

// Grouped K and V (kv_heads) written out with one kv head per query head, as Hugging Face's
// repeat_kv does: W_K, W_V and their biases become d_model x d_proj and kv_heads goes. Every
// number the layer computes stays the same.
void ungroupKeyValueHeads(Scene& scene);

// d_model: embedding and learned-table columns, norm weight (ones) and bias (zeros), projection
// rows; in identity mode d_proj follows (biases, W_O rows, heads). W_O keeps its d_out.
void setModelWidth(Scene& scene, int dModel, const InitSpec& spec);
// d_proj (not in identity mode): projection columns, biases (zeros), W_O rows. Heads drop to the
// largest divisor of the new width that is at most the old count.
void setProjectionWidth(Scene& scene, int dProj, const InitSpec& spec);
// Keeps what the new mode can keep: separate -> shared keeps W_Q (W_K is dropped); shared ->
// separate copies W_Q into W_K; leaving identity starts from identity matrices (nothing changes
// numerically); entering identity sets d_proj = d_model (W_O rows resized as above).
void setProjectionMode(Scene& scene, ProjectionMode mode, const InitSpec& spec);
// Adds W_O (d_proj x d_model, drawn) with a zero bias, or removes it.
void setOutputProjection(Scene& scene, bool enabled, const InitSpec& spec);
// Redraws every projection with drawProjections(SplitMix64(spec.seed)), keeping the mode, d_proj,
// W_O (and its d_out) and heads; biases drawn if `bias`, else zero. When the result is exactly what
// the scene's init would draw, init is set to it, so saving stays compact.
void rerollProjections(Scene& scene, InitSpec spec, bool bias);

// --- inputs -------------------------------------------------------------------------------------

// Learned: the table is drawn (learnedPositionRows) if it is missing or too small.
void setPositionalKind(Scene& scene, PositionalKind kind);
void setNormEnabled(Scene& scene, bool enabled);

}  // namespace ae
