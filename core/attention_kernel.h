#pragma once
// The attention head, written once. The one-layer engine (attention_engine.cpp), the whole-model
// forward pass (model/model_forward.cpp's attend) and both trainers
// (training/attention_training.cpp, training/model_training.cpp) call attendHeads, and normalise
// and turn their queries and keys with transformHeads; none writes these steps out again. In the
// manner of llm.c's attention_forward: the caller owns every output buffer, so the maps the window
// keeps (scores, scaled, weights) are written in place and never copied.
//
// Dimension names: Tq queries, Tk keys, hd = head size; heads query heads read kvHeads kv heads,
// query head h reading kv head g = h / (heads / kvHeads).
//
//   per query head h (in parallel, OpenMP):
//     scores_h  = q_h·k_gᵀ                                    Tq x Tk
//     scaled_h  = softCap(scale(scores_h + preBias_h) + bias_h)  Tq x Tk
//                 scale: ·factor or /divisor; softCap(x) = cap·tanh(x/cap), when a cap is given
//     weights_h = softmax(mask(scaled_h, fill))               Tq x Tk, row by row
//     context_h = weights_h·v_g                               Tq x hd, columns h·hd .. of context
//
// Every step keeps the order of floating-point operations its callers had before sharing it, so
// their numbers did not move: a scene divides by its divisor while a model multiplies by its
// scale, and a model's causal rows are softmaxed over their visible prefix (SoftmaxMask::Rows).

#include <Eigen/Core>
#include <algorithm>
#include <functional>
#include <limits>
#include <vector>

#include "core/ops.h"
#include "core/scene.h"

namespace ae::attention {

template <typename Scalar>
using Matrix = ops::RowMajorMatrix<Scalar>;

// ---- The mask ----

// The parts of a mask (core/scene.h's Mask: causal, window, padding, custom `allowed`) that hide
// one cell; a cell may be hidden by several.
struct HidingParts {
    bool causal = false;   // the key comes after the query
    bool window = false;   // |query − key| > window
    bool padding = false;  // the key is padding
    bool custom = false;   // allowed(query, key) is false
    bool any() const { return causal || window || padding || custom; }
};
HidingParts hidingParts(const Mask& mask, int query, int key);

// The mask as the softmax reads it, built once per mask: which cells are visible (Tq x Tk, as
// allowedMatrix) and, for rows softmaxed whole, the two numeric forms of ops::SoftmaxMaskRow.
// fill −∞ hides a key (weight exactly 0; a row that sees no key gets zeros); a finite fill stands
// in for the hidden scores, as torch's masked_fill does.
template <typename Scalar>
class SoftmaxMask {
public:
    // Whole: every row softmaxed over all Tk keys, hidden ones zeroed through the numeric rows
    // (the one-layer engine and its trainer). VisiblePrefix: when the visible keys of every row
    // are a prefix (nothing hidden, or causal alone with fill −∞), row i is softmaxed over keys
    // 0..i alone and no Tq x Tk numbers are built (the whole-model pass and its trainer); any
    // other mask falls back to Whole.
    enum class Rows { Whole, VisiblePrefix };

    // Every key visible, for any Tq x Tk.
    SoftmaxMask() = default;
    SoftmaxMask(const Mask& mask, double fill, int queries, int keys, Rows rows = Rows::Whole);
    // The same, in place: the Tq x Tk buffers of a mask of the same size are reused rather than
    // allocated again (at L = 2048 fresh ones cost more in page faults than the softmax itself).
    void rebuild(const Mask& mask, double fill, int queries, int keys, Rows rows = Rows::Whole);

    bool everyKeyVisible() const { return everyKeyVisible_; }
    double fill() const { return fill_; }
    // Whether rows are softmaxed over their visible prefix; its length for row i (of Tk keys).
    bool prefixRows() const { return prefixRows_; }
    Eigen::Index visiblePrefix(Eigen::Index row, Eigen::Index keys) const {
        return causal_ ? std::min(row + 1, keys) : keys;
    }
    // Tq x Tk, true where the query sees the key (empty with prefix rows or the default mask).
    const BoolMatrix& visible() const { return visible_; }
    // The rows that see no key (whole rows only).
    const std::vector<int>& fullyMaskedRows() const { return fullyMaskedRows_; }
    // Tq x Tk each (whole rows only): 1 / 0 and 0 / −∞ for visible / hidden.
    const Matrix<Scalar>& visibleAsOne() const { return visibleAsOne_; }
    const Matrix<Scalar>& hiddenAsMinusInfinity() const { return hiddenAsMinusInfinity_; }
    // Row i as ops::maskedSoftmaxRow takes it (whole rows only).
    ops::SoftmaxMaskRow<Scalar> row(Eigen::Index i) const {
        return {everyKeyVisible_, rowSeesAKey_[static_cast<std::size_t>(i)], visibleAsOne_.row(i),
                hiddenAsMinusInfinity_.row(i)};
    }

private:
    bool everyKeyVisible_ = true;
    bool prefixRows_ = true;
    bool causal_ = false;
    double fill_ = -std::numeric_limits<double>::infinity();
    BoolMatrix visible_;
    std::vector<int> fullyMaskedRows_;
    std::vector<bool> rowSeesAKey_;
    Matrix<Scalar> visibleAsOne_, hiddenAsMinusInfinity_;
};

// ---- The heads ----

// How scores become logits: scores / divisor (a scene names its divisor) or scores · factor (a
// model's attention scale). Dividing by d and multiplying by 1/d round differently; each caller
// keeps its own.
struct ScoreScale {
    double value = 1.0;
    bool divide = false;
    static ScoreScale dividedBy(double divisor) { return {divisor, true}; }
    static ScoreScale times(double factor) { return {factor, false}; }
};

// Where a computation starts: the engine redoes only the steps a change touched, reading the
// earlier ones from the buffers it kept (from Weights: the capped logits when kept, else scaled).
enum class AttendFrom { Scores, Scaled, Weights, Context };

// The inputs, every head's columns side by side; head h's are columns h·hd .. (h+1)·hd − 1.
template <typename Scalar>
struct HeadInputs {
    Eigen::Ref<const Matrix<Scalar>> query;  // Tq x heads·hd
    Eigen::Ref<const Matrix<Scalar>> key;    // Tk x kvHeads·hd
    Eigen::Ref<const Matrix<Scalar>> value;  // Tk x kvHeads·hd
    int heads = 1;
    int kvHeads = 1;
    Eigen::Index headDim = 0;
};

// The caller's buffers: per head matrices (grown to `heads` when shorter; each resized to Tq x Tk,
// which keeps its numbers when it has that shape already) and the contexts.
template <typename Scalar>
struct HeadBuffers {
    std::vector<Matrix<Scalar>>* scores = nullptr;   // q·kᵀ; null: not kept (from Scores only)
    std::vector<Matrix<Scalar>>* scaled = nullptr;   // the logits; null: not kept
    std::vector<Matrix<Scalar>>* weights = nullptr;  // the softmax; required
    Matrix<Scalar>* context = nullptr;  // (Tq − firstRow) x heads·hd; required from Context
    // With a soft-cap: the capped logits, `scaled` then keeping them before the cap (the
    // explorer shows both). Null: `scaled` holds the capped logits.
    std::vector<Matrix<Scalar>>* capped = nullptr;
};

template <typename Scalar>
struct HeadOptions {
    ScoreScale scale;
    const SoftmaxMask<Scalar>* mask = nullptr;  // null: every key visible
    // Added to the raw scores before the scale, one Tq x Tk matrix per query head (DeBERTa's
    // disentangled position terms); null: none. `scores` keeps q·kᵀ without them.
    const std::vector<Matrix<Scalar>>* preBias = nullptr;
    // Added to the scaled scores, one Tq x Tk matrix per query head (MPNet's and T5's relative
    // position biases); null: none.
    const std::vector<Matrix<Scalar>>* bias = nullptr;
    double softCap = 0.0;  // > 0: logits become cap·tanh(logit/cap) after the bias
    AttendFrom from = AttendFrom::Scores;
    // Query rows before firstRow are the caller's (a rerun keeps them): only rows firstRow..
    // are computed, and context receives those rows alone.
    Eigen::Index firstRow = 0;
    bool checkFinite = false;  // report logits and contexts that are not finite (AttendResult)
    int threads = 0;           // heads in parallel on this many threads; 0: OpenMP's default
    // Called on the head's thread before and after it: beginHead returning false skips the head
    // (a cancelled compute). Neither may throw.
    std::function<bool(int head)> beginHead;
    std::function<void(int head)> endHead;
};

// With checkFinite: whether a computed logit or context value was not finite. A head whose
// logits overflowed (and any head after it) leaves its context alone.
struct AttendResult {
    bool logitsOverflow = false;
    bool contextOverflow = false;
};

template <typename Scalar>
AttendResult attendHeads(const HeadInputs<Scalar>& inputs, const HeadBuffers<Scalar>& buffers,
                         const HeadOptions<Scalar>& options);

// ---- Queries and keys before the scores ----

// The q/k norm (RMS norm, eps as given): over each head's hd columns with one weight of hd shared
// by every head (Qwen3, a scene's qk_norm), or over a row's full width with weights of
// heads·hd for queries and kvHeads·hd for keys (OLMo 2).
enum class QkNormSpan { None, PerHead, FullWidth };

template <typename Scalar>
struct HeadTransform {
    Eigen::Index headDim = 0;
    QkNormSpan norm = QkNormSpan::None;
    const Scalar* queryNormWeight = nullptr;  // hd values per head, heads·hd over the full width
    const Scalar* keyNormWeight = nullptr;    // hd, or kvHeads·hd
    double normEps = 1e-6;
    // Rotary positions after the norm: row r of the queries and of the keys turned by the
    // angles' row r (ops::rotaryAngles from the layer's own frequencies and the rows' first
    // position), on each head's first 2·pairs columns: all hd, or the leading part of a partial
    // rotation (the rest pass through). null: no rotation.
    const ops::RotaryAngles* angles = nullptr;
};

// queries: rows x heads·hd, keys: rows' x kvHeads·hd (0 columns: queries alone), in place:
// normalised, then rotated (ops::rotateHalf), head by head on `threads` threads (1: this one).
template <typename Scalar>
void transformHeads(Eigen::Ref<Matrix<Scalar>> queries, Eigen::Ref<Matrix<Scalar>> keys,
                    const HeadTransform<Scalar>& transform, int threads = 1);

}  // namespace ae::attention
