// The forward pass of core/model/model.h, after shared/reference/model_reference.py (gpt2_layer,
// bert_layer, llama_layer, forward) and decoder_families.py (decoder_layer, neox_layer): the same
// operations in the same order, with the ops of
// core/ops.h and Eigen products. Every projection is one product on the whole T x d block; the
// heads then run in parallel, each with single-threaded products on its own columns.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <mutex>

#include "core/attention_kernel.h"
#include "core/model/forward_ops.h"
#include "core/model/forward_tape.h"
#include "core/model/layer_mask.h"
#include "core/model/model.h"
#include "core/model/model_steps.h"
#include "core/model/relative_buckets.h"
#include "core/model/what_if.h"
#include "core/parallel_product.h"

namespace ae::model {
namespace {

using namespace forward;

// Which keys each query sees: causal in a decoder, and never a padding key.
struct Visibility {
    std::vector<int> mask;  // empty: no padding
};

// What every layer of one pass shares: which keys each query sees, the rotary frequencies, the
// position of the first token and the heads switched off; and how it computes. An ordinary run
// uses every core, keeps every head's scores and refuses an overflow layer by layer. A trainer's
// pass (runModelForTraining, with a tape) runs on one thread, since the trainer runs its batch's
// sequences in parallel; it keeps no scores, fills the tape, and leaves an overflow to the
// trainer's check of its loss.
// How one layer turns q and k: the frequencies of its turned pairs and longrope's factor on cos
// and sin. No frequencies: the layer does not turn them (no rotary positions, or a NoPE layer).
struct LayerRotation {
    std::vector<double> inverseFrequencies;
    double factor = 1.0;
    bool operator==(const LayerRotation& o) const {
        return inverseFrequencies == o.inverseFrequencies && factor == o.factor;
    }
};

using IndexMatrix = Eigen::Matrix<int, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

template <typename Scalar>
struct Pass {
    Visibility visibility;
    std::vector<LayerRotation> rotations;  // one a layer
    int positionOffset = 0;
    const RunOptions* options = nullptr;  // its ablations and ablation mode
    int threads = 1;                      // at most, for any step
    ForwardTape<Scalar>* tape = nullptr;  // a trainer's pass: sized to the layers
    bool skipMlp = false;                 // every MLP adds exactly 0 (all its weights are 0)
    // ScoreTermKind::BucketBias: per head, T x T, added to every layer's scaled scores.
    std::vector<Matrix<Scalar>> scoreBias;
    // ScoreTermKind::Disentangled: the relative-position embeddings (LayerNorm'ed when the model
    // says so), 2·span x d, and for each query i and key j the row of the position keys its c2p
    // term reads and the row of the position queries its p2c term reads, T x T each.
    Matrix<Scalar> relativeEmbeddings;
    IndexMatrix contentToPositionRow, positionToContentRow;
    // A decoder stack's pass (Config::hasCrossAttention): the encoder's output every
    // cross-attention reads (T x d) and the encoder's padding (empty: none), which hides keys.
    const Matrix<Scalar>* encoderOutput = nullptr;
    std::vector<int> encoderMask;
    // The run's layers, where each decoder layer's cross-attention is recorded as it runs; null:
    // not recorded.
    std::vector<LayerRecord<Scalar>>* records = nullptr;
};

// DisentangledSelfAttention.disentangled_attention_bias with build_relative_position: the
// relative position r(i, j) = i − j, log-bucketed with position_buckets; c2p reads position key
// clamp(r(i, j) + span) for query i, p2c position query clamp(−r(j, i) + span) for key j.
template <typename Scalar>
void placeRelativePositions(const Config& c, Eigen::Index T, Pass<Scalar>& pass) {
    const Config::DisentangledAttention& da = c.disentangled;
    const auto relative = [&](long long r) {
        return da.buckets > 0 && da.maxRelative > 0
                   ? logBucketPosition(r, da.buckets, da.maxRelative)
                   : r;
    };
    const long long last = 2LL * da.span - 1;
    std::vector<long long> byDistance(static_cast<std::size_t>(2 * T - 1));
    for (Eigen::Index r = -(T - 1); r <= T - 1; ++r)
        byDistance[static_cast<std::size_t>(r + T - 1)] = relative(r);
    const auto at = [&](Eigen::Index r) { return byDistance[static_cast<std::size_t>(r + T - 1)]; };
    pass.contentToPositionRow.resize(T, T);
    pass.positionToContentRow.resize(T, T);
    for (Eigen::Index i = 0; i < T; ++i) {
        for (Eigen::Index j = 0; j < T; ++j) {
            pass.contentToPositionRow(i, j) =
                static_cast<int>(std::clamp<long long>(at(i - j) + da.span, 0, last));
            pass.positionToContentRow(i, j) =
                static_cast<int>(std::clamp<long long>(-at(j - i) + da.span, 0, last));
        }
    }
}

// MPNetEncoder.compute_position_bias and T5Attention.compute_bias: per head h, T x T, bias(i, j)
// = table[bucket(j − i), h], the positions 0..T−1 whatever the padding (not the ids-based ones of
// the embeddings); the buckets bidirectional in an encoder, causal in a decoder (T5's decoder).
template <typename Scalar>
std::vector<Matrix<Scalar>> bucketBias(const Model& model, Eigen::Index T) {
    const Config& c = model.config;
    const WeightView<Scalar> table(model.weights.relativeBias);
    const auto stored = table.matrix();  // buckets x H
    std::vector<int> bucketOf(static_cast<std::size_t>(2 * T - 1));
    for (Eigen::Index r = -(T - 1); r <= T - 1; ++r)
        bucketOf[static_cast<std::size_t>(r + T - 1)] =
            relativePositionBucket(r, c.relativeBucketsUsed, c.relativeMaxDistance, !c.isDecoder());
    std::vector<Matrix<Scalar>> bias(static_cast<std::size_t>(c.heads));
    for (int h = 0; h < c.heads; ++h) {
        Matrix<Scalar>& b = bias[static_cast<std::size_t>(h)];
        b.resize(T, T);
        for (Eigen::Index i = 0; i < T; ++i)
            for (Eigen::Index j = 0; j < T; ++j)
                b(i, j) = stored(bucketOf[static_cast<std::size_t>(j - i + T - 1)], h);
    }
    return bias;
}

// Layer `index`'s DeBERTa terms, per head (T x T each, into c2p and p2c, left empty when the
// model has no such term): c2p_h(i, j) = q_h(i)·posKey_h(row c2p(i, j)), p2c_h(i, j) =
// k_h(j)·posQuery_h(row p2c(i, j)), the position keys and queries the layer's projections (its
// own key and query ones with share_att_key) of the relative-position embeddings.
template <typename Scalar>
void disentangledTerms(const Model& model, int index, const Pass<Scalar>& pass,
                       const LayerRecord<Scalar>& layer, std::vector<Matrix<Scalar>>& c2p,
                       std::vector<Matrix<Scalar>>& p2c) {
    const Config& c = model.config;
    const Config::DisentangledAttention& da = c.disentangled;
    const LayerWeights& lw = model.weights.layers[static_cast<std::size_t>(index)];
    const Eigen::Index T = layer.query.rows(), hd = c.headDim;
    c2p.clear();
    p2c.clear();
    Matrix<Scalar> positionKeys, positionQueries;  // 2·span x H·hd
    if (da.contentToPosition) {
        const WeightView<Scalar> w(da.shareKeys ? lw.key : lw.positionKey);
        const WeightView<Scalar> b(da.shareKeys ? lw.keyBias : lw.positionKeyBias);
        project(pass.relativeEmbeddings, w, false, b, positionKeys, pass.threads);
        c2p.resize(static_cast<std::size_t>(c.heads));
    }
    if (da.positionToContent) {
        const WeightView<Scalar> w(da.shareKeys ? lw.query : lw.positionQuery);
        const WeightView<Scalar> b(da.shareKeys ? lw.queryBias : lw.positionQueryBias);
        project(pass.relativeEmbeddings, w, false, b, positionQueries, pass.threads);
        p2c.resize(static_cast<std::size_t>(c.heads));
    }
#pragma omp parallel for schedule(static) num_threads(pass.threads) if (c.heads > 1 && T > 64)
    for (int h = 0; h < c.heads; ++h) {
        const auto at = static_cast<std::size_t>(h);
        if (da.contentToPosition) {
            const Matrix<Scalar> byRow = layer.query.middleCols(h * hd, hd) *
                                         positionKeys.middleCols(h * hd, hd).transpose();
            Matrix<Scalar>& term = c2p[at];
            term.resize(T, T);
            for (Eigen::Index i = 0; i < T; ++i)
                for (Eigen::Index j = 0; j < T; ++j)
                    term(i, j) = byRow(i, pass.contentToPositionRow(i, j));
        }
        if (da.positionToContent) {
            const Matrix<Scalar> byRow = layer.key.middleCols(h * hd, hd) *
                                         positionQueries.middleCols(h * hd, hd).transpose();
            Matrix<Scalar>& term = p2c[at];
            term.resize(T, T);
            for (Eigen::Index i = 0; i < T; ++i)
                for (Eigen::Index j = 0; j < T; ++j)
                    term(i, j) = byRow(j, pass.positionToContentRow(i, j));
        }
    }
}

// Every head of one layer on query rows firstRow..T−1: scores_h = q_h·k_hᵀ, weights_h =
// softmax(scale·scores_h, hidden keys −∞), context rows = weights_h·v_h. q: T x (H·hd), k, v:
// T x (KV·hd), every row present; context: (T − firstRow) x (H·hd). Rows before firstRow come from
// `previous` (a run that had the same first firstRow tokens, so in a decoder the same rows): its
// weights as they were, its scores with the columns of the new keys computed here; or, when
// `previous` kept no maps of this layer, computed again here. Heads in parallel.
//
// Layer `index`'s sliding window hides keys j <= i − W (a scene's window W − 1 with the causal
// part), and its soft-cap turns the scaled scores into cap·tanh(x/cap) before the mask.
//
// `preBias`: per head, T x T, added to q·kᵀ before the scale (DeBERTa's terms); null: none.
template <typename Scalar>
void attend(const Config& c, int index, const Pass<Scalar>& pass, LayerRecord<Scalar>& layer,
            Matrix<Scalar>& context, Eigen::Index firstRow = 0,
            const LayerRecord<Scalar>* previous = nullptr,
            const std::vector<Matrix<Scalar>>* preBias = nullptr) {
    const Visibility& visibility = pass.visibility;
    // The first firstRow rows' maps come from `previous` when it kept them; a run that dropped
    // them (planned memory) lends its q, k and v rows only, and every query row is attended
    // again here: the maps' product is a small part of a long pass's layer (the projections and
    // the MLP, which the reused rows skip, are the rest), and the digests need whole maps.
    const Eigen::Index rowsTaken = firstRow;
    if (firstRow > 0 && !previous->hasMaps()) firstRow = 0;
    const Eigen::Index T = layer.query.rows(), hd = c.headDim, count = T - firstRow;
    layer.scores.assign(static_cast<std::size_t>(c.heads), Matrix<Scalar>());
    layer.weights.assign(static_cast<std::size_t>(c.heads), Matrix<Scalar>());
    // Without padding, a decoder's row i is the plain softmax of its first i + 1 keys.
    const attention::SoftmaxMask<Scalar> softmaxMask(
        layerMask(c, index, visibility.mask), layerMaskFill(c), static_cast<int>(T),
        static_cast<int>(T), attention::SoftmaxMask<Scalar>::Rows::VisiblePrefix);
    attention::HeadOptions<Scalar> options;
    options.scale = attention::ScoreScale::times(c.attentionScale(index));
    options.softCap = c.attentionSoftCap;
    if (!pass.scoreBias.empty()) options.bias = &pass.scoreBias;
    options.preBias = preBias;
    options.mask = &softmaxMask;
    options.firstRow = firstRow;
    options.threads = static_cast<double>(count) * T * hd * c.heads > 2e5 ? pass.threads : 1;
    if (firstRow > 0) {
        // The first firstRow rows as `previous` had them, with their scores against the new keys.
        options.beginHead = [&](int h) {
            const auto q = layer.query.middleCols(h * hd, hd);
            const auto k = layer.key.middleCols(c.kvHeadOf(h) * hd, hd);
            Matrix<Scalar>& scores = layer.scores[static_cast<std::size_t>(h)];
            Matrix<Scalar>& weights = layer.weights[static_cast<std::size_t>(h)];
            scores.resize(T, T);
            weights.resize(T, T);
            const auto& before = previous->scores[static_cast<std::size_t>(h)];
            scores.topLeftCorner(firstRow, firstRow) = before.topLeftCorner(firstRow, firstRow);
            scores.topRightCorner(firstRow, count).noalias() =
                q.topRows(firstRow) * k.bottomRows(count).transpose();
            weights.topLeftCorner(firstRow, firstRow) =
                previous->weights[static_cast<std::size_t>(h)].topLeftCorner(firstRow, firstRow);
            weights.topRightCorner(firstRow, count).setZero();  // causal: no row sees a later key
            return true;
        };
    }
    // A layer whose maps are not kept computes its weights (the context needs them) but not its
    // scores, and drops each head's weights as soon as its digest has them.
    const bool keep = !pass.tape && (!pass.options || pass.options->keepsMapsOf(index));
    const bool digest = !pass.tape && pass.options && pass.options->keepDigest;
    // Heads finish in any order, and are summed into weightSum in head order (so the sum is the
    // same bit for bit as digestLayer's): a head done early waits, with its weights, for the
    // ones before it.
    std::mutex summing;
    std::vector<char> finished(static_cast<std::size_t>(c.heads), 0);
    int nextToSum = 0;
    // Summed row-major, as the weights are stored: into the column-major weightSum directly, each
    // head's add strode across the rows and took 31 ms at T = 2048 against 1.3 ms, on one thread
    // while the other waited for the lock (docs/performance.md).
    ops::RowMajorMatrix<double> weightSum;
    if (digest) {
        layer.digest = {};
        layer.digest.pool =
            poolShape(static_cast<int>(T), static_cast<int>(T), kDigestCells, kDigestCells);
        layer.digest.heads.resize(static_cast<std::size_t>(c.heads));
        weightSum.setZero(T, T);
        options.endHead = [&](int h) {
            const std::size_t at = static_cast<std::size_t>(h);
            HeadDigest head =
                digestHead(layer.weights[at], pass.options->attentionMask, c.isDecoder(), index, h,
                           pass.options->repeated, &pass.options->separators);
            const std::lock_guard<std::mutex> lock(summing);
            layer.digest.heads[at] = std::move(head);
            finished[at] = 1;
            for (; nextToSum < c.heads && finished[static_cast<std::size_t>(nextToSum)];
                 ++nextToSum) {
                Matrix<Scalar>& w = layer.weights[static_cast<std::size_t>(nextToSum)];
                weightSum += w.template cast<double>();
                if (!keep) w = Matrix<Scalar>();
            }
        };
    } else if (!keep && !pass.tape) {
        options.endHead = [&](int h) {
            layer.weights[static_cast<std::size_t>(h)] = Matrix<Scalar>();
        };
    }
    attention::attendHeads<Scalar>(
        {layer.query, layer.key, layer.value, c.heads, c.kvHeads, hd},
        {keep ? &layer.scores : nullptr, nullptr, &layer.weights, &context}, options);
    if (!keep && !pass.tape) {
        layer.scores.clear();
        layer.weights.clear();
    }
    if (digest) layer.digest.weightSum = weightSum;
    // The caller wants the context of its own rows only.
    if (rowsTaken > firstRow) context = context.bottomRows(T - rowsTaken).eval();
}

template <typename Scalar>
void requireFinite(const Model& model, const Matrix<Scalar>& m, const std::string& what) {
    if (!allFiniteFast(m)) {
        throw ModelError(model.folder + ": " + what + " is not finite: the numbers overflowed" +
                         (sizeof(Scalar) == 4 ? " float (try --double)" : ""));
    }
}

// A pass over T tokens: the positions end at the options' offset + T, which picks longrope's
// factors.
template <typename Scalar>
Pass<Scalar> passFor(const Model& model, const RunOptions& options, long long T) {
    const Config& c = model.config;
    const long long positionsEnd = options.positionOffset + T;
    Pass<Scalar> pass;
    if (c.architecture().scoreTerms == ScoreTermKind::BucketBias)
        pass.scoreBias = bucketBias<Scalar>(model, T);
    if (c.architecture().scoreTerms == ScoreTermKind::Disentangled && c.disentangled.any()) {
        const ModelWeights& w = model.weights;
        pass.relativeEmbeddings = WeightView<Scalar>(w.relativeEmbeddings).matrix();
        if (c.disentangled.normEmbeddings) {
            const Architecture a = c.architecture();
            applyNorm(a, pass.relativeEmbeddings, w.relativeEmbeddingsNorm,
                      w.relativeEmbeddingsNormBias, c.normEps);
        }
        placeRelativePositions(c, static_cast<Eigen::Index>(T), pass);
    }
    pass.visibility = Visibility{options.attentionMask};
    // A mask of all ones hides nothing: the plain path computes the same weights.
    const std::vector<int>& mask = pass.visibility.mask;
    if (std::all_of(mask.begin(), mask.end(), [](int a) { return a == 1; }))
        pass.visibility.mask.clear();
    pass.rotations.resize(static_cast<std::size_t>(c.layers));
    for (int l = 0; l < c.layers; ++l) {
        const std::optional<ops::RopeParameters> rope = c.layerRope(l, positionsEnd);
        if (!rope) continue;
        LayerRotation& r = pass.rotations[static_cast<std::size_t>(l)];
        r.inverseFrequencies = ops::ropeInverseFrequencies(c.headDim, *rope);
        r.factor = rope->attentionFactor;
    }
    pass.positionOffset = options.positionOffset;
    pass.options = &options;
    pass.threads = threadCount();
    return pass;
}

// Makes `fresh` (rows firstRow.. of a T-row matrix) whole: the first firstRow rows of `before`
// above it. Nothing to do when firstRow is 0.
template <typename Scalar>
void prependRows(const Matrix<Scalar>* before, Eigen::Index firstRow, Matrix<Scalar>& fresh) {
    if (firstRow == 0) return;
    Matrix<Scalar> whole(firstRow + fresh.rows(), fresh.cols());
    whole.topRows(firstRow) = before->topRows(firstRow);
    whole.bottomRows(fresh.rows()) = fresh;
    fresh = std::move(whole);
}

template <typename Scalar>
void linear(const Matrix<Scalar>& in, const TensorRef& weight, const TensorRef& bias, bool xw,
            Matrix<Scalar>& out, int maxThreads) {
    const WeightView<Scalar> w(weight), b(bias);
    project(in, w, xw, b, out, maxThreads);
}

// Layer `index`'s attention sub-block on the residual stream h (rows firstRow..T−1, each x d), as
// the architecture's axes build it: the pre-norm (none when the norms come after the block), q, k
// and v (fused, fused per head, or separate), the q/k norm and rotation by `angles` (the layer's,
// for rows firstRow..; null: the layer does not turn q and k), every head, the switched-off heads'
// contexts replaced, then the output projection and its bias: attentionOut, the same rows x d.
// Fills layer's q, k, v, scores and weights, all T rows: rows before firstRow from `previous` (see
// attend); and, in a trainer's pass, the tape's norm and context.
template <typename Scalar>
void attentionSubBlock(const Model& model, int index, const Pass<Scalar>& pass,
                       const ops::RotaryAngles* angles, const Matrix<Scalar>& h,
                       LayerRecord<Scalar>& layer, Matrix<Scalar>& attentionOut,
                       Eigen::Index firstRow = 0, const LayerRecord<Scalar>* previous = nullptr) {
    const Config& c = model.config;
    const Architecture& a = c.architecture();
    const LayerWeights& lw = model.weights.layers[static_cast<std::size_t>(index)];
    const Eigen::Index hd = c.headDim;
    const bool xw = a.layout == WeightLayout::Conv1D;
    LayerTape<Scalar>* tape =
        pass.tape ? &pass.tape->layers[static_cast<std::size_t>(index)] : nullptr;
    // A block with a norm before it reads the normed stream (GPT2Attention's ln_1, LlamaAttention's
    // RMS input_layernorm, Gemma 2's, GPT-NeoX's); a post-norm one (BertSelfAttention, OLMo 2's)
    // the stream itself.
    const bool normedInput =
        (a.placement == NormPlacement::Pre || a.placement == NormPlacement::Sandwich ||
         a.placement == NormPlacement::Parallel) &&
        (index > 0 || a.firstLayerAttentionNorm);
    Matrix<Scalar> ownNormed;
    Matrix<Scalar>& normed = tape ? tape->attentionNormed : ownNormed;
    if (normedInput) {
        normed = h;
        applyNorm(a, normed, lw.norm1, lw.norm1Bias, c.normEps,
                  tape ? &tape->attentionNorm : nullptr);
    }
    const Matrix<Scalar>& x = normedInput ? normed : h;
    const Eigen::Index width = c.heads * hd, kvWidth = c.kvHeads * hd;
    if (a.qkv == QkvStorage::Fused) {
        // One product [Q | K | V] (GPT-2's c_attn, Phi-3's qkv_proj), split by columns.
        Matrix<Scalar> fused;
        linear(x, lw.qkv, lw.qkvBias, xw, fused, pass.threads);
        layer.query = fused.leftCols(width);
        layer.key = fused.middleCols(width, kvWidth);
        layer.value = fused.rightCols(kvWidth);
    } else if (a.qkv == QkvStorage::FusedInterleaved) {
        // GPT-NeoX's query_key_value: T x (H·3hd), head h's [q | k | v] in turn.
        Matrix<Scalar> fused;
        linear(x, lw.qkv, lw.qkvBias, xw, fused, pass.threads);
        layer.query.resize(fused.rows(), width);
        layer.key.resize(fused.rows(), width);
        layer.value.resize(fused.rows(), width);
        for (Eigen::Index head = 0; head < c.heads; ++head) {
            layer.query.middleCols(head * hd, hd) = fused.middleCols(3 * hd * head, hd);
            layer.key.middleCols(head * hd, hd) = fused.middleCols(3 * hd * head + hd, hd);
            layer.value.middleCols(head * hd, hd) = fused.middleCols(3 * hd * head + 2 * hd, hd);
        }
    } else {
        linear(x, lw.query, lw.queryBias, xw, layer.query, pass.threads);
        linear(x, lw.key, lw.keyBias, xw, layer.key, pass.threads);
        linear(x, lw.value, lw.valueBias, xw, layer.value, pass.threads);
    }
    if (a.qkNorm != QkNormKind::None || angles) {
        // Each query head, then each kv head: the q/k norm (Qwen3's and Gemma 3's per head,
        // OLMo 2's over the full width first) and the rotation (LlamaAttention's rotary q and k,
        // partial where the angles cover part of a head), heads in parallel.
        const WeightView<Scalar> queryNormStored(lw.queryNorm), keyNormStored(lw.keyNorm);
        const ops::ColumnVector<Scalar> queryNorm = a.qkNorm != QkNormKind::None
                                                        ? normMultiplier(a.norm, queryNormStored)
                                                        : ops::ColumnVector<Scalar>();
        const ops::ColumnVector<Scalar> keyNorm = a.qkNorm != QkNormKind::None
                                                      ? normMultiplier(a.norm, keyNormStored)
                                                      : ops::ColumnVector<Scalar>();
        attention::HeadTransform<Scalar> transform;
        transform.headDim = hd;
        if (a.qkNorm != QkNormKind::None) {
            transform.norm = a.qkNorm == QkNormKind::PerHead ? attention::QkNormSpan::PerHead
                                                             : attention::QkNormSpan::FullWidth;
            transform.queryNormWeight = queryNorm.data();
            transform.keyNormWeight = keyNorm.data();
            transform.normEps = c.normEps;
        }
        transform.angles = angles;
        const int blocks = c.heads + c.kvHeads;
        const int threads = static_cast<double>(h.rows()) * hd * blocks > 1e5 ? pass.threads : 1;
        attention::transformHeads<Scalar>(layer.query, layer.key, transform, threads);
    }
    if (firstRow > 0) {
        prependRows(&previous->query, firstRow, layer.query);
        prependRows(&previous->key, firstRow, layer.key);
        prependRows(&previous->value, firstRow, layer.value);
    }
    // DeBERTa's terms on the scores, kept with the maps.
    std::vector<Matrix<Scalar>> contentToPosition, positionToContent, preBias;
    if (c.architecture().scoreTerms == ScoreTermKind::Disentangled && c.disentangled.any()) {
        disentangledTerms(model, index, pass, layer, contentToPosition, positionToContent);
        preBias = contentToPosition.empty() ? positionToContent : contentToPosition;
        if (!contentToPosition.empty() && !positionToContent.empty())
            for (int h = 0; h < c.heads; ++h)
                preBias[static_cast<std::size_t>(h)] +=
                    positionToContent[static_cast<std::size_t>(h)];
    }
    Matrix<Scalar> ownContext;
    Matrix<Scalar>& context = tape ? tape->context : ownContext;
    attend(c, index, pass, layer, context, firstRow, previous,
           preBias.empty() ? nullptr : &preBias);
    if (layer.hasMaps()) {
        layer.contentToPosition = std::move(contentToPosition);
        layer.positionToContent = std::move(positionToContent);
    } else {
        layer.contentToPosition.clear();
        layer.positionToContent.clear();
    }
    if (pass.options) {
        const bool byMean = pass.options->ablationMode == AblationMode::Mean;
        for (const HeadAblation& a : pass.options->ablations) {
            if (a.layer == index) ops::ablateContextColumns<Scalar>(context, a.head, hd, byMean);
        }
    }
    linear(context, lw.output, lw.outputBias, xw, attentionOut, pass.threads);
}

// Layer `index`'s cross-attention in a decoder stack, on its stream h (S x d, after the
// self-attention's residual step): queries from h (normed by crossNorm first in a pre-norm
// stack), keys and values from the encoder's output (T x d), every key but the encoder's padding
// visible, the layer's scale and no position terms (T5's EncDecAttention has none); then
//   pre-norm (T5LayerCrossAttention): h += o(attention);
//   post-norm (BartDecoderLayer's encoder_attn): h = crossNorm(h + o(attention)).
template <typename Scalar>
void crossAttentionBlock(const Model& model, int index, const Pass<Scalar>& pass, Matrix<Scalar>& h,
                         CrossRecord<Scalar>& record) {
    const Config& c = model.config;
    const Architecture a = c.architecture();
    const LayerWeights& lw = model.weights.layers[static_cast<std::size_t>(index)];
    if (!pass.encoderOutput)
        throw ModelError("layer " + std::to_string(index) +
                         "'s cross-attention needs the encoder's output, which this pass lacks");
    const bool pre = a.placement == NormPlacement::Pre;
    record.hiddenIn = h;
    record.queryInput = h;
    if (pre) applyNorm(a, record.queryInput, lw.crossNorm, lw.crossNormBias, c.normEps);
    const Matrix<Scalar>& x = record.queryInput;
    linear(x, lw.crossQuery, lw.crossQueryBias, false, record.query, pass.threads);
    linear(*pass.encoderOutput, lw.crossKey, lw.crossKeyBias, false, record.key, pass.threads);
    linear(*pass.encoderOutput, lw.crossValue, lw.crossValueBias, false, record.value,
           pass.threads);
    const auto S = static_cast<int>(h.rows()), T = static_cast<int>(pass.encoderOutput->rows());
    Mask mask;
    for (int attended : pass.encoderMask)
        mask.padding.push_back(attended == 0);
    const attention::SoftmaxMask<Scalar> softmaxMask(
        mask, -std::numeric_limits<double>::infinity(), S, T,
        attention::SoftmaxMask<Scalar>::Rows::VisiblePrefix);
    attention::HeadOptions<Scalar> options;
    options.scale = attention::ScoreScale::times(c.attentionScale(index));
    options.mask = &softmaxMask;
    options.threads = static_cast<double>(S) * T * c.headDim * c.heads > 2e5 ? pass.threads : 1;
    Matrix<Scalar> context;
    attention::attendHeads<Scalar>(
        {record.query, record.key, record.value, c.heads, c.heads, c.headDim},
        {&record.scores, nullptr, &record.weights, &context}, options);
    Matrix<Scalar> out;
    linear(context, lw.crossOutput, lw.crossOutputBias, false, out, pass.threads);
    h += out;
    if (!pre) applyNorm(a, h, lw.crossNorm, lw.crossNormBias, c.normEps);
}

// The rest of layer `index`: h (T x d, the residual stream that entered the layer) becomes the
// layer's output, given its attention sub-block's output attentionOut (T x d).
//   pre-norm (GPT2Block, LlamaDecoderLayer): h += attention; h += MLP(norm2(h)).
//   post-norm (BertLayer): a = norm1(attention + h); h = norm2(a + MLP(a)).
//   sandwich (Gemma2DecoderLayer): h += norm(attention); h += norm(MLP(norm2(h))).
//   post-only (Olmo2DecoderLayer): h += norm(attention); h += norm(MLP(h)).
//   parallel (GPTNeoXLayer): h = MLP(norm2(h)) + attention + h.
// MLP: down(act(up(x))) (GPT-2's c_fc / c_proj, BERT's intermediate / output), or gated,
// down(act(gate(x)) ⊙ up(x)) (Llama's; Phi-3's gate and up from one fused product). A trainer's
// pass keeps the MLP's pieces in its tape (a pre-norm layer's: the tape covers no other), or
// skips an MLP that adds exactly 0.
template <typename Scalar>
//
// `givenCrossOut` (a decoder stack's what-if in its cross-attention): h is the stream entering
// the layer's cross-attention and this its output (S x d, after W_O and its bias), given rather
// than computed; the layer finishes from there (attentionOut is not read).
void finishLayer(const Model& model, int index, const Pass<Scalar>& pass,
                 const Matrix<Scalar>& attentionOut, Matrix<Scalar>& h,
                 const Matrix<Scalar>* givenCrossOut = nullptr) {
    const Config& c = model.config;
    const Architecture& a = c.architecture();
    const LayerWeights& lw = model.weights.layers[static_cast<std::size_t>(index)];
    const bool xw = a.layout == WeightLayout::Conv1D;
    LayerTape<Scalar>* tape =
        pass.tape ? &pass.tape->layers[static_cast<std::size_t>(index)] : nullptr;
    const int threads = pass.threads;
    const auto mlp = [&](const Matrix<Scalar>& x, Matrix<Scalar>& out) {
        Matrix<Scalar> inner;
        if (a.mlp == MlpKind::Gated) {
            Matrix<Scalar> up;
            if (a.mlpStorage == MlpStorage::Fused) {
                Matrix<Scalar> both;  // T x 2I: [gate | up]
                linear(x, lw.gateUp, lw.gateUpBias, xw, both, threads);
                inner = both.leftCols(c.intermediate);
                up = both.rightCols(c.intermediate);
            } else {
                linear(x, lw.gate, lw.gateBias, xw, inner, threads);
                linear(x, lw.up, lw.upBias, xw, up, threads);
            }
            if (tape) tape->gate = inner;
            activate(c.activation, inner);
            inner.array() *= up.array();
            if (tape) tape->up = std::move(up);
        } else {
            linear(x, lw.up, lw.upBias, xw, inner, threads);
            if (tape) tape->up = inner;
            activate(c.activation, inner);
        }
        linear(inner, lw.down, lw.downBias, xw, out, threads);
        if (tape) tape->activated = std::move(inner);
    };
    // A decoder stack's cross-attention, after the self-attention's residual step.
    const auto cross = [&](Matrix<Scalar>& stream) {
        if (!c.hasCrossAttention()) return;
        if (givenCrossOut) {
            stream += *givenCrossOut;
            if (a.placement == NormPlacement::Post)
                applyNorm(a, stream, lw.crossNorm, lw.crossNormBias, c.normEps);
            return;
        }
        CrossRecord<Scalar> ownRecord;
        crossAttentionBlock(
            model, index, pass, stream,
            pass.records ? (*pass.records)[static_cast<std::size_t>(index)].cross : ownRecord);
    };
    if (c.hasCrossAttention() && a.placement != NormPlacement::Pre &&
        a.placement != NormPlacement::Post)
        throw ModelError(std::string(familyName(c.family)) +
                         ": not implemented: cross-attention beside this norm placement");
    // A block's output normed before its residual add (Gemma 2's and OLMo 2's post-norms).
    const auto normedOutput = [&](Matrix<Scalar> block, const TensorRef& weight) {
        applyNorm(a, block, weight, TensorRef{}, c.normEps);
        return block;
    };
    Matrix<Scalar> out;
    switch (a.placement) {
        case NormPlacement::Post: {
            Matrix<Scalar> attended = givenCrossOut ? h : attentionOut + h;
            if (!givenCrossOut) applyNorm(a, attended, lw.norm1, lw.norm1Bias, c.normEps);
            cross(attended);
            mlp(attended, out);
            out += attended;
            applyNorm(a, out, lw.norm2, lw.norm2Bias, c.normEps);
            h = std::move(out);
            break;
        }
        case NormPlacement::Sandwich: {
            h += normedOutput(attentionOut, lw.attentionOutputNorm);
            Matrix<Scalar> x = h;
            applyNorm(a, x, lw.norm2, lw.norm2Bias, c.normEps);
            mlp(x, out);
            h += normedOutput(std::move(out), lw.mlpOutputNorm);
            break;
        }
        case NormPlacement::PostOnly:
            h += normedOutput(attentionOut, lw.attentionOutputNorm);
            mlp(h, out);
            h += normedOutput(std::move(out), lw.mlpOutputNorm);
            break;
        case NormPlacement::Parallel: {
            Matrix<Scalar> x = h;
            applyNorm(a, x, lw.norm2, lw.norm2Bias, c.normEps);
            mlp(x, out);
            out += attentionOut;
            h += out;
            break;
        }
        case NormPlacement::Pre: {
            if (!givenCrossOut) h += attentionOut;
            cross(h);
            if (pass.skipMlp) return;
            Matrix<Scalar> ownNormed;
            Matrix<Scalar>& x = tape ? tape->mlpNormed : ownNormed;
            x = h;
            applyNorm(a, x, lw.norm2, lw.norm2Bias, c.normEps, tape ? &tape->mlpNorm : nullptr);
            if (tape) tape->hiddenMid = h;
            mlp(x, out);
            h += out;
            break;
        }
    }
}

// DeBERTa-v2-xlarge's ConvLayer, after layer 0 (conv_kernel_size > 0): layer 0's output `out`
// (T x d) becomes LayerNorm(out + act(Conv1d(embeddings) with padding rows 0)) · mask, the
// Conv1d running along the sequence over `embeddings` (T x d, layer 0's input), zero-padded by
// (k − 1) / 2 at both ends, in conv_groups groups.
template <typename Scalar>
void convolveAfterFirstLayer(const Model& model, const Matrix<Scalar>& embeddings,
                             const std::vector<int>& attentionMask, Matrix<Scalar>& out) {
    const Config& c = model.config;
    const ModelWeights& w = model.weights;
    const Eigen::Index T = embeddings.rows(), d = c.hidden, k = c.convKernel;
    const Eigen::Index perGroup = d / c.convGroups, pad = (k - 1) / 2;
    const WeightView<Scalar> weight(w.conv), bias(w.convBias);
    const auto kernel = weight.matrix();  // d·perGroup x k: row o·perGroup + i is W[o, i, :]
    Matrix<Scalar> y(T, d);
    for (Eigen::Index t = 0; t < T; ++t) {
        for (Eigen::Index o = 0; o < d; ++o) {
            const Eigen::Index first = (o / perGroup) * perGroup;
            Scalar sum = bias.vector()(o);
            for (Eigen::Index tap = 0; tap < k; ++tap) {
                const Eigen::Index from = t + tap - pad;
                if (from < 0 || from >= T) continue;
                for (Eigen::Index i = 0; i < perGroup; ++i)
                    sum += kernel(o * perGroup + i, tap) * embeddings(from, first + i);
            }
            y(t, o) = sum;
        }
    }
    const auto masked = [&](Matrix<Scalar>& m) {
        if (attentionMask.empty()) return;
        for (Eigen::Index t = 0; t < T; ++t)
            if (attentionMask[static_cast<std::size_t>(t)] == 0) m.row(t).setZero();
    };
    masked(y);
    activate(c.convActivation, y);
    out += y;
    applyNorm(c.architecture(), out, w.convNorm, w.convNormBias, c.normEps);
    masked(out);
}

// Gemma 2 and 3's final soft-cap on the logits, in place: cap·tanh(x/cap).
template <typename Scalar>
void capLogits(const Config& c, Matrix<Scalar>& logits) {
    if (c.finalSoftCap <= 0) return;
    const auto cap = static_cast<Scalar>(c.finalSoftCap);
    logits = ((logits.array() / cap).tanh() * cap).matrix();
}

// The LM head on rows of the final hidden state h (n x d): (h·logitScale)·lmHeadᵀ + logitsBias,
// soft-capped: n x V.
template <typename Scalar>
void languageModelLogits(const Model& model, const Matrix<Scalar>& h, Matrix<Scalar>& logits,
                         int threads) {
    const Config& c = model.config;
    const ModelWeights& w = model.weights;
    if (c.logitScale != 1.0) {
        const Matrix<Scalar> scaled = h * static_cast<Scalar>(c.logitScale);
        projectByWeightRows(scaled, w.lmHead, logits, threads);
    } else {
        projectByWeightRows(h, w.lmHead, logits, threads);
    }
    if (w.logitsBias.present()) {
        const WeightView<Scalar> bias(w.logitsBias);
        logits.rowwise() += bias.vector().transpose();
    }
    capLogits(c, logits);
}

// The masked-LM head (BertLMPredictionHead and its kin, model_reference.lm_head_logits) on the
// last hidden state h (T x d): norm(act(h·denseᵀ + b))·decoderᵀ + decoderBias, T x V.
template <typename Scalar>
Matrix<Scalar> maskedLmLogits(const Model& model, const Matrix<Scalar>& h, int threads) {
    const Config& c = model.config;
    const ModelWeights& w = model.weights;
    Matrix<Scalar> x;
    linear(h, w.maskedLmDense, w.maskedLmDenseBias, false, x, threads);
    activate(c.maskedLm.activation, x);
    const WeightView<Scalar> norm(w.maskedLmNorm), normBias(w.maskedLmNormBias);
    const ops::ColumnVector<Scalar> shift = normBias.present()
                                                ? ops::ColumnVector<Scalar>(normBias.vector())
                                                : ops::ColumnVector<Scalar>::Zero(x.cols());
    ops::layerNormRows<Scalar>(x, norm.vector(), shift, c.maskedLm.normEps);
    Matrix<Scalar> logits;
    projectByWeightRows(x, w.maskedLmDecoder, logits, threads);
    if (w.maskedLmDecoderBias.present()) {
        const WeightView<Scalar> bias(w.maskedLmDecoderBias);
        logits.rowwise() += bias.vector().transpose();
    }
    return logits;
}

// Layers `first` onwards on h (the residual stream entering layer `first`: rows firstRow..T−1,
// each x d), recorded in run.layers; then the final norm and the logits (decoders) or the last
// hidden state (bert). Rows before firstRow are taken from `previous` (a decoder's run on the
// same first firstRow tokens, with the same options), every layer's and the final hidden state's.
template <typename Scalar>
void runLayersFrom(const Model& model, const Pass<Scalar>& pass, int first, Matrix<Scalar> h,
                   ModelRun<Scalar>& run, Eigen::Index firstRow = 0,
                   const ModelRun<Scalar>* previous = nullptr) {
    const Config& c = model.config;
    // The angles each distinct rotation turns these rows by, computed once: most models turn
    // every layer alike; Gemma 3's sliding layers and SmolLM3's NoPE layers differ.
    std::vector<ops::RotaryAngles> distinctAngles;
    std::vector<int> anglesOfLayer(static_cast<std::size_t>(c.layers), -1);
    for (int i = 0; i < c.layers; ++i) {
        const LayerRotation& rotation = pass.rotations[static_cast<std::size_t>(i)];
        if (rotation.inverseFrequencies.empty()) continue;
        for (int j = 0; j < i && anglesOfLayer[static_cast<std::size_t>(i)] < 0; ++j) {
            if (pass.rotations[static_cast<std::size_t>(j)] == rotation)
                anglesOfLayer[static_cast<std::size_t>(i)] =
                    anglesOfLayer[static_cast<std::size_t>(j)];
        }
        if (anglesOfLayer[static_cast<std::size_t>(i)] >= 0) continue;
        anglesOfLayer[static_cast<std::size_t>(i)] = static_cast<int>(distinctAngles.size());
        distinctAngles.push_back(ops::rotaryAngles(pass.positionOffset + static_cast<int>(firstRow),
                                                   h.rows(), rotation.inverseFrequencies,
                                                   rotation.factor));
    }
    const auto anglesOf = [&](int layer) -> const ops::RotaryAngles* {
        const int at = anglesOfLayer[static_cast<std::size_t>(layer)];
        return at < 0 ? nullptr : &distinctAngles[static_cast<std::size_t>(at)];
    };
    Matrix<Scalar> attentionOut;
    for (int i = first; i < c.layers; ++i) {
        LayerRecord<Scalar>& layer = run.layers[static_cast<std::size_t>(i)];
        const LayerRecord<Scalar>* before =
            previous ? &previous->layers[static_cast<std::size_t>(i)] : nullptr;
        layer.hiddenIn = h;
        if (before) prependRows(&before->hiddenIn, firstRow, layer.hiddenIn);
        attentionSubBlock(model, i, pass, anglesOf(i), h, layer, attentionOut, firstRow, before);
        finishLayer(model, i, pass, attentionOut, h);
        if (i == 0 && c.convKernel > 0)
            convolveAfterFirstLayer(model, layer.hiddenIn, pass.visibility.mask, h);
        if (!pass.tape) requireFinite(model, h, "the output of layer " + std::to_string(i));
        if (pass.options && pass.options->digestReady && !layer.digest.empty())
            pass.options->digestReady(i, layer.digest);
        if (pass.options && pass.options->afterLayer && !pass.options->afterLayer(i + 1))
            throw RunCancelled();
    }
    const Architecture& a = c.architecture();
    if (!a.decoder) {
        // A pre-norm encoder ends with its final norm (ModernBERT's final_norm).
        if (a.placement != NormPlacement::Post)
            applyNorm(a, h, model.weights.finalNorm, model.weights.finalNormBias, c.normEps);
        run.logits.resize(0, 0);
        run.maskedLmLogits.resize(0, 0);
        if (model.weights.hasMaskedLmHead() && !pass.tape) {
            run.maskedLmLogits = maskedLmLogits(model, h, pass.threads);
            requireFinite(model, run.maskedLmLogits, "the masked-LM logits");
        }
        run.lastHidden = std::move(h);
        return;
    }
    const ModelWeights& w = model.weights;
    if (pass.tape) {
        pass.tape->finalIn = h;
        // The trainer's families turn every layer alike.
        if (c.layers > 0 && anglesOf(0)) pass.tape->angles = *anglesOf(0);
    }
    // Every decoder placement ends with a final norm (a post-norm encoder has none).
    if (a.placement != NormPlacement::Post) {
        applyNorm(a, h, w.finalNorm, w.finalNormBias, c.normEps,
                  pass.tape ? &pass.tape->finalNorm : nullptr);
    }
    if (previous) prependRows(&previous->finalHidden, firstRow, h);
    const bool every = pass.options->logitsForEveryPosition;
    run.logitsFrom = every ? 0 : h.rows() - 1;
    if (every && previous && previous->logitsFrom == 0 && previous->logits.rows() >= firstRow) {
        const Matrix<Scalar> fresh = h.bottomRows(h.rows() - firstRow);
        languageModelLogits(model, fresh, run.logits, pass.threads);
        prependRows(&previous->logits, firstRow, run.logits);
    } else if (every) {
        languageModelLogits(model, h, run.logits, pass.threads);
    } else {
        const Matrix<Scalar> last = h.bottomRows(1);
        languageModelLogits(model, last, run.logits, pass.threads);
    }
    if (!pass.tape) requireFinite(model, run.logits, "the logits");
    run.finalHidden = std::move(h);
}

// The residual stream entering layer 0 for the tokens at positions firstRow.. of `ids`:
// (T − firstRow) x d.
template <typename Scalar>
Matrix<Scalar> embed(const Model& model, const std::vector<long long>& ids,
                     const RunOptions& options, long long firstRow = 0) {
    const Config& c = model.config;
    const ModelWeights& w = model.weights;
    const std::vector<long long> fresh(ids.begin() + firstRow, ids.end());
    const auto count = static_cast<long long>(fresh.size());
    Matrix<Scalar> h = gatherRows<Scalar>(w.tokenEmbedding, fresh);
    // GemmaModel: the embeddings times √d (exact here; HF rounds it to the weights' type).
    if (c.embeddingScale > 0) h *= static_cast<Scalar>(c.embeddingScale);
    // GPT2Model.forward: wte(ids) + wpe(position_ids). BertEmbeddings.forward: word +
    // token_type (row 0 unless given) + position, then LayerNorm; RobertaEmbeddings numbers the
    // positions from the ids.
    const Architecture& a = c.architecture();
    if (a.tokenTypes && c.tokenTypes > 0) {
        std::vector<long long> types(static_cast<std::size_t>(count), 0);
        if (!options.tokenTypes.empty())
            std::copy(options.tokenTypes.begin() + firstRow, options.tokenTypes.end(),
                      types.begin());
        h += gatherRows<Scalar>(w.tokenTypeEmbedding, types);
    }
    if (a.positions == PositionKind::Learned || a.positions == PositionKind::LearnedAfterPadding)
        h += gatherRows<Scalar>(w.positionEmbedding,
                                learnedPositions(c, ids, options.positionOffset, firstRow));
    // DebertaV2Embeddings: embeddings narrower than d are projected (embed_proj, no bias).
    if (w.embeddingProjection.present()) {
        Matrix<Scalar> projected;
        project(h, WeightView<Scalar>(w.embeddingProjection), false, WeightView<Scalar>(),
                projected, threadCount());
        h = std::move(projected);
    }
    if (a.embeddingNorm) applyNorm(a, h, w.embeddingNorm, w.embeddingNormBias, c.normEps);
    // ... and then times the attention mask: padding rows are 0.
    if (a.maskedPadding && !options.attentionMask.empty()) {
        for (Eigen::Index t = 0; t < h.rows(); ++t)
            if (options.attentionMask[static_cast<std::size_t>(firstRow + t)] == 0)
                h.row(t).setZero();
    }
    return h;
}

bool sameAblations(const RunOptions& a, const RunOptions& b) {
    return a.ablations == b.ablations && (a.ablations.empty() || a.ablationMode == b.ablationMode);
}

bool hidesNothing(const std::vector<int>& mask) {
    return std::all_of(mask.begin(), mask.end(), [](int m) { return m == 1; });
}

}  // namespace

namespace {

// What one stack of an encoder–decoder model's pass is given: the encoder's output and padding,
// for a decoder stack's cross-attention (else none); whether the memory of the whole pass was
// checked already (runEncoderDecoder checks both stacks at once).
template <typename Scalar>
struct StackInputs {
    const Matrix<Scalar>* encoderOutput = nullptr;
    std::vector<int> encoderMask;
    bool memoryChecked = false;
};

// runModel, or rerunModel's rows firstRow.. with the earlier ones from `previous`; or one stack of
// an encoder–decoder model.
template <typename Scalar>
ModelRun<Scalar> runFrom(const Model& model, const std::vector<long long>& ids,
                         const RunOptions& options, long long firstRow,
                         const ModelRun<Scalar>* previous, const StackInputs<Scalar>& stack = {}) {
    const Config& c = model.config;
    checkImplemented(c);
    checkInputs(c, ids, options);
    const long long T = static_cast<long long>(ids.size());
    const int mapLayers = options.keptMaps == RunOptions::KeptMaps::Every
                              ? -1
                              : static_cast<int>(options.mapLayers.size());
    if (!stack.memoryChecked) {
        const RunMemory need = runMemory(model, T, sizeof(Scalar), mapLayers, options.keepDigest);
        checkRunFitsInMemory(model, need.total(),
                             sizeof(Scalar) == 4 ? "the model in float" : "the model in double");
    }
    ModelRun<Scalar> run;
    run.config = c;
    run.tokens = ids;
    run.attentionMask = options.attentionMask;
    run.options = options;
    run.options.afterLayer = nullptr;  // about the pass, not its result
    run.options.digestReady = nullptr;
    Matrix<Scalar> h = embed<Scalar>(model, ids, options, firstRow);
    run.layers.resize(static_cast<std::size_t>(c.layers));
    Pass<Scalar> pass = passFor<Scalar>(model, options, T);
    pass.encoderOutput = stack.encoderOutput;
    pass.encoderMask = stack.encoderMask;
    pass.records = &run.layers;
    run.positionBias = pass.scoreBias;
    runLayersFrom(model, pass, 0, std::move(h), run, firstRow, previous);
    return run;
}

// The decoder's refusal when an encoder–decoder model is run without decoder ids, as the
// reference words it.
std::string decoderIdsNeeded(const Config& c) {
    return "decoder ids: " + std::string(familyName(c.family)) +
           " is an encoder-decoder model: give the decoder input (--decoder-ids), starting with "
           "decoder_start_token_id (teacher forcing)";
}

// A pass of one stack asked of an encoder–decoder model (the commands and views made for one
// stack): refused, saying what runs it.
void refuseEncoderDecoder(const Model& model) {
    if (model.config.isEncoderDecoder())
        throw ModelError(std::string(familyName(model.config.family)) +
                         " is an encoder-decoder model: it runs with its decoder input too "
                         "(`run` with --decoder-ids, --target-text or --generate; `scene "
                         "--stack`), which this does not take yet");
}

// The decoder stack's options: the encoder's padding is not the decoder's (it is causal only),
// nor are its separators or repeated text; the rest as given.
RunOptions decoderOptionsOf(const RunOptions& options) {
    RunOptions o = options;
    o.attentionMask.clear();
    o.separators.clear();
    o.repeated = {};
    o.keptMaps = RunOptions::KeptMaps::Every;
    o.mapLayers.clear();
    return o;
}

// What runEncoderDecoder refuses before any work (the decoder ids aside).
void checkEncoderDecoderInputs(const Model& model, const std::vector<long long>& ids,
                               const RunOptions& options) {
    const Config& c = model.config;
    const std::string family = familyName(c.family);
    if (!c.isEncoderDecoder() || !model.decoder)
        throw ModelError("decoder ids: " + family +
                         " is not an encoder-decoder model (decoder ids apply to " +
                         encoderDecoderFamilyNames() + ")");
    if (!options.tokenTypes.empty())
        throw ModelError("token types: " + family +
                         " has no token-type embeddings (its model takes no token_type_ids)");
    if (options.positionOffset != 0)
        throw ModelError("position offset: " + family +
                         " numbers the positions of both stacks from 0");
    if (!options.ablations.empty())
        throw ModelError("ablation: switching heads off is not available for " + family +
                         " (an encoder-decoder model) yet");
    const std::vector<int>& mask = options.attentionMask;
    if (!mask.empty() && mask.size() == ids.size() &&
        std::find(mask.begin(), mask.end(), 1) == mask.end())
        throw ModelError("attention mask: every encoder token is padding, so no query sees a key");
    checkImplemented(c);
    checkInputs(c, ids, options);
}

void checkDecoderIds(const Model& model, const std::vector<long long>& decoderIds,
                     const RunOptions& decoderOptions) {
    if (decoderIds.empty()) throw ModelError(decoderIdsNeeded(model.config));
    try {
        checkInputs(model.decoder->config, decoderIds, decoderOptions);
    } catch (const ModelError& error) {
        // checkInputs speaks of "token ids": these are the decoder's.
        std::string message = error.what();
        const std::string tokenIds = "token ids";
        if (message.rfind(tokenIds, 0) == 0)
            message = "decoder ids" + message.substr(tokenIds.size());
        throw ModelError(message);
    }
}

// The decoder stack on `decoderIds`, reading the encoder's run.
template <typename Scalar>
ModelRun<Scalar> runDecoderStack(const Model& model, const ModelRun<Scalar>& encoder,
                                 const std::vector<long long>& decoderIds,
                                 const RunOptions& decoderOptions) {
    StackInputs<Scalar> inputs;
    inputs.encoderOutput = &encoder.lastHidden;
    inputs.encoderMask = encoder.attentionMask;
    inputs.memoryChecked = true;
    return runFrom<Scalar>(*model.decoder, decoderIds, decoderOptions, 0, nullptr, inputs);
}

template <typename Scalar>
void checkEncoderDecoderMemory(const Model& model, long long T, long long S) {
    checkRunFitsInMemory(model, encoderDecoderRunMemory(model, T, S, sizeof(Scalar)).total(),
                         sizeof(Scalar) == 4 ? "the model in float" : "the model in double");
}

}  // namespace

template <typename Scalar>
ModelRun<Scalar> runModel(const Model& model, const std::vector<long long>& ids,
                          const RunOptions& options) {
    refuseEncoderDecoder(model);
    return runFrom<Scalar>(model, ids, options, 0, nullptr);
}

RunMemory encoderDecoderRunMemory(const Model& model, long long sourceTokens,
                                  long long decoderTokens, int scalarSize) {
    RunMemory m = runMemory(model, sourceTokens, scalarSize);
    if (!model.decoder) return m;
    const RunMemory d = runMemory(*model.decoder, decoderTokens, scalarSize);
    const Config& c = model.decoder->config;
    const double S = static_cast<double>(decoderTokens), T = static_cast<double>(sourceTokens),
                 H = c.heads, hd = c.headDim, s = scalarSize;
    // Each decoder layer keeps its cross-attention: q (S x H·hd), k and v (T x H·hd), scores and
    // weights (H of S x T); its work is one head's maps per thread and the keys' projections.
    const double crossNumbers = c.layers * (S * H * hd + 2 * T * H * hd + 2 * H * S * T);
    m.storedWeights += d.storedWeights;
    m.convertedLayer = std::max(m.convertedLayer, d.convertedLayer);
    m.keptNumbers += d.keptNumbers + crossNumbers;
    m.kept += d.kept + crossNumbers * s;
    m.working = std::max(m.working, d.working + (2 * T * H * hd + 2 * S * T) * s);
    return m;
}

template <typename Scalar>
EncoderDecoderRun<Scalar> runEncoderDecoder(const Model& model, const std::vector<long long>& ids,
                                            const std::vector<long long>& decoderIds,
                                            const RunOptions& options) {
    checkEncoderDecoderInputs(model, ids, options);
    const RunOptions decoderOptions = decoderOptionsOf(options);
    checkDecoderIds(model, decoderIds, decoderOptions);
    checkEncoderDecoderMemory<Scalar>(model, static_cast<long long>(ids.size()),
                                      static_cast<long long>(decoderIds.size()));
    EncoderDecoderRun<Scalar> run;
    StackInputs<Scalar> encoderInputs;
    encoderInputs.memoryChecked = true;
    run.encoder = runFrom<Scalar>(model, ids, options, 0, nullptr, encoderInputs);
    run.decoder = runDecoderStack(model, run.encoder, decoderIds, decoderOptions);
    return run;
}

template <typename Scalar>
EncoderDecoderRun<Scalar> resumeEncoderDecoder(
    const Model& model, const EncoderDecoderRun<Scalar>& base, AttentionKind kind, int layer,
    LayerRecord<Scalar> record, const Matrix<Scalar>& attentionOut, const RunOptions& options) {
    checkEncoderDecoderInputs(model, base.encoder.tokens, options);
    const Model& stack = kind == AttentionKind::EncoderSelf ? model : *model.decoder;
    const ModelRun<Scalar>& stackRun =
        kind == AttentionKind::EncoderSelf ? base.encoder : base.decoder;
    const int layers = stack.config.layers;
    if (layer < 0 || layer >= layers || static_cast<int>(stackRun.layers.size()) != layers)
        throw ModelError("resume: layer " + std::to_string(layer) + " is outside 0 to " +
                         std::to_string(layers - 1));
    const auto S = static_cast<Eigen::Index>(base.decoder.tokens.size());
    const Eigen::Index rows = kind == AttentionKind::EncoderSelf
                                  ? static_cast<Eigen::Index>(base.encoder.tokens.size())
                                  : S;
    if (attentionOut.rows() != rows || attentionOut.cols() != stack.config.hidden)
        throw ModelError("resume: the attention output is " + std::to_string(attentionOut.rows()) +
                         " x " + std::to_string(attentionOut.cols()) + ", expected " +
                         std::to_string(rows) + " x " + std::to_string(stack.config.hidden));
    const RunOptions decoderOptions = decoderOptionsOf(options);
    EncoderDecoderRun<Scalar> run;
    if (kind == AttentionKind::EncoderSelf) {
        // The encoder from this layer on, then the whole decoder: every cross-attention reads
        // the encoder's new output.
        run.encoder = base.encoder;
        const Matrix<Scalar> residualIn = record.hiddenIn;
        run.encoder.layers[static_cast<std::size_t>(layer)] = std::move(record);
        resumeAfterAttention<Scalar>(model, run.encoder, layer, residualIn, attentionOut, options);
        run.decoder = runDecoderStack(model, run.encoder, base.decoder.tokens, decoderOptions);
        run.decoder.whatIf = true;
        return run;
    }
    // The decoder from this layer on, reading the encoder's output as it was.
    run.encoder = base.encoder;
    run.decoder.config = base.decoder.config;
    run.decoder.tokens = base.decoder.tokens;
    run.decoder.options = decoderOptions;
    run.decoder.whatIf = true;
    run.decoder.positionBias = base.decoder.positionBias;
    run.decoder.layers.resize(base.decoder.layers.size());
    std::copy(base.decoder.layers.begin(), base.decoder.layers.begin() + layer,
              run.decoder.layers.begin());
    Pass<Scalar> pass = passFor<Scalar>(stack, decoderOptions, S);
    pass.encoderOutput = &run.encoder.lastHidden;
    pass.encoderMask = run.encoder.attentionMask;
    pass.records = &run.decoder.layers;
    LayerRecord<Scalar>& edited = run.decoder.layers[static_cast<std::size_t>(layer)];
    Matrix<Scalar> h;
    if (kind == AttentionKind::DecoderSelf) {
        edited = std::move(record);
        h = edited.hiddenIn;
        finishLayer(stack, layer, pass, attentionOut, h);
    } else {
        // The cross scene's embeddings are what its queries read; the stream it adds to is the
        // base run's (the same in a post-norm stack, the un-normed one in T5's pre-norm).
        const LayerRecord<Scalar>& before = base.decoder.layers[static_cast<std::size_t>(layer)];
        edited = before;
        const bool post = stack.config.architecture().placement == NormPlacement::Post;
        edited.cross.hiddenIn = post ? record.hiddenIn : before.cross.hiddenIn;
        edited.cross.queryInput = record.hiddenIn;
        edited.cross.query = std::move(record.query);
        edited.cross.key = std::move(record.key);
        edited.cross.value = std::move(record.value);
        edited.cross.scores = std::move(record.scores);
        edited.cross.weights = std::move(record.weights);
        h = edited.cross.hiddenIn;
        finishLayer(stack, layer, pass, attentionOut, h, &attentionOut);
    }
    requireFinite(stack, h, "the output of decoder layer " + std::to_string(layer));
    runLayersFrom(stack, pass, layer + 1, std::move(h), run.decoder);
    return run;
}

template <typename Scalar>
std::vector<long long> generateGreedy(
    const Model& model, const std::vector<long long>& ids, int maxNewTokens,
    const RunOptions& options,
    const std::function<bool(const std::vector<long long>& decoderIds)>& step) {
    checkEncoderDecoderInputs(model, ids, options);
    const Config& c = model.decoder->config;
    if (c.decoderStartToken < 0 || c.decoderStartToken >= c.vocab)
        throw ModelError("generate: " + std::string(familyName(c.family)) +
                         "'s config.json has no decoder_start_token_id in the vocabulary to "
                         "start from");
    if (maxNewTokens < 1)
        throw ModelError("generate: expected at least 1 new token, got " +
                         std::to_string(maxNewTokens));
    // The decoder input may grow to the positions the decoder has (BART's and Marian's tables).
    const long long longest =
        c.positions > 0 ? c.positions - c.positionRowOffset : std::numeric_limits<long long>::max();
    RunOptions decoderOptions = decoderOptionsOf(options);
    decoderOptions.logitsForEveryPosition = false;
    checkEncoderDecoderMemory<Scalar>(model, static_cast<long long>(ids.size()),
                                      std::min<long long>(longest, 1LL + maxNewTokens));
    // The encoder runs once; each step runs the decoder on the ids so far and appends the argmax
    // of its last row (the first of equal maxima, as torch.argmax).
    StackInputs<Scalar> encoderInputs;
    encoderInputs.memoryChecked = true;
    const ModelRun<Scalar> encoder =
        runFrom<Scalar>(model, ids, options, 0, nullptr, encoderInputs);
    std::vector<long long> decoderIds{c.decoderStartToken};
    for (int added = 0; added < maxNewTokens && static_cast<long long>(decoderIds.size()) < longest;
         ++added) {
        const ModelRun<Scalar> run = runDecoderStack(model, encoder, decoderIds, decoderOptions);
        const auto last = run.logits.row(run.logits.rows() - 1);
        Eigen::Index best = 0;
        for (Eigen::Index v = 1; v < last.size(); ++v)
            if (last(v) > last(best)) best = v;
        decoderIds.push_back(static_cast<long long>(best));
        if (step && !step(decoderIds)) break;
        if (best == c.eosToken) break;
    }
    return decoderIds;
}

template <typename Scalar>
long long reusablePrefix(const Model& model, const ModelRun<Scalar>& previous,
                         const std::vector<long long>& ids, const RunOptions& options) {
    const Config& c = model.config;
    if (!c.isDecoder() || previous.whatIf || previous.tokens.empty() || ids.empty()) return 0;
    if (previous.config.family != c.family || previous.config.layers != c.layers ||
        previous.config.hidden != c.hidden || previous.config.heads != c.heads ||
        previous.config.kvHeads != c.kvHeads || previous.config.vocab != c.vocab ||
        static_cast<int>(previous.layers.size()) != c.layers)
        return 0;
    // Padding changes which keys the rows before an edit see; a mean over positions (mean
    // ablation) changes with every row. Either way the earlier rows are not the same.
    if (!hidesNothing(options.attentionMask) || !hidesNothing(previous.attentionMask)) return 0;
    if (!options.ablations.empty() && options.ablationMode == AblationMode::Mean) return 0;
    if (!sameAblations(options, previous.options) ||
        options.positionOffset != previous.options.positionOffset)
        return 0;
    // Longrope turns every row by factors the text's length picks: a text that crosses the
    // original length changes the earlier rows too.
    const long long before =
        options.positionOffset + static_cast<long long>(previous.tokens.size());
    const long long now = options.positionOffset + static_cast<long long>(ids.size());
    for (int l = 0; l < c.layers; ++l) {
        if (!(c.layerRope(l, before) == c.layerRope(l, now))) return 0;
    }
    const std::size_t limit = std::min(previous.tokens.size(), ids.size());
    std::size_t same = 0;
    while (same < limit && previous.tokens[same] == ids[same])
        ++same;
    // At least the last row is computed again: it carries the logits.
    return static_cast<long long>(std::min(same, ids.size() - 1));
}

template <typename Scalar>
ModelRun<Scalar> rerunModel(const Model& model, const ModelRun<Scalar>& previous,
                            const std::vector<long long>& ids, const RunOptions& options) {
    refuseEncoderDecoder(model);
    const long long firstRow = reusablePrefix(model, previous, ids, options);
    return runFrom<Scalar>(model, ids, options, firstRow, firstRow > 0 ? &previous : nullptr);
}

template <typename Scalar>
void resumeAfterAttention(const Model& model, ModelRun<Scalar>& run, int layer,
                          const Matrix<Scalar>& residualIn, const Matrix<Scalar>& attentionOut,
                          const RunOptions& options) {
    const Config& c = model.config;
    if (layer < 0 || layer >= c.layers) {
        throw ModelError("resume: layer " + std::to_string(layer) + " is outside 0 to " +
                         std::to_string(c.layers - 1));
    }
    if (static_cast<int>(run.layers.size()) != c.layers) {
        throw ModelError("resume: the run has " + std::to_string(run.layers.size()) +
                         " layers, the model " + std::to_string(c.layers));
    }
    checkInputs(c, run.tokens, options);
    const auto T = static_cast<Eigen::Index>(run.tokens.size());
    const auto shape = [](const Matrix<Scalar>& m) {
        return std::to_string(m.rows()) + " x " + std::to_string(m.cols());
    };
    const std::string expected = std::to_string(T) + " x " + std::to_string(c.hidden);
    if (residualIn.rows() != T || residualIn.cols() != c.hidden) {
        throw ModelError("resume: the residual input is " + shape(residualIn) + ", expected " +
                         expected);
    }
    if (attentionOut.rows() != T || attentionOut.cols() != c.hidden) {
        throw ModelError("resume: the attention output is " + shape(attentionOut) + ", expected " +
                         expected);
    }
    run.whatIf = true;
    // The later layers are made with `options`, which recomputeLayerMaps then follows.
    run.options = options;
    run.options.afterLayer = {};
    run.options.digestReady = {};
    LayerRecord<Scalar>& edited = run.layers[static_cast<std::size_t>(layer)];
    edited.hiddenIn = residualIn;
    if (options.keepDigest)
        edited.digest = digestLayer(edited.weights, options.attentionMask, c.isDecoder(), layer,
                                    options.repeated, &options.separators);
    const Pass<Scalar> pass = passFor<Scalar>(model, options, T);
    Matrix<Scalar> h = residualIn;
    finishLayer(model, layer, pass, attentionOut, h);
    if (layer == 0 && c.convKernel > 0)
        convolveAfterFirstLayer(model, residualIn, pass.visibility.mask, h);
    requireFinite(model, h, "the output of layer " + std::to_string(layer));
    runLayersFrom(model, pass, layer + 1, std::move(h), run);
}

ModelRun<double> runModelForTraining(const Model& model, const std::vector<long long>& ids,
                                     ForwardTape<double>& tape, bool mlpAddsZero) {
    const Config& c = model.config;
    checkImplemented(c);
    const Architecture& a = c.architecture();
    if (!a.decoder || a.placement != NormPlacement::Pre || a.embeddingNorm) {
        throw ModelError(std::string(familyName(c.family)) +
                         ": a training pass keeps the activations of pre-norm decoders only");
    }
    const RunOptions options;
    checkInputs(c, ids, options);
    ModelRun<double> run;
    run.config = c;
    run.tokens = ids;
    run.options = options;
    run.layers.resize(static_cast<std::size_t>(c.layers));
    tape = ForwardTape<double>();
    tape.layers.resize(static_cast<std::size_t>(c.layers));
    Pass<double> pass = passFor<double>(model, options, static_cast<long long>(ids.size()));
    pass.threads = 1;
    pass.tape = &tape;
    pass.skipMlp = mlpAddsZero;
    runLayersFrom(model, pass, 0, embed<double>(model, ids, options), run);
    return run;
}

template <typename Scalar>
LayerMaps<Scalar> recomputedLayerMaps(const Model& model, const ModelRun<Scalar>& run, int layer) {
    const Config& c = model.config;
    if (layer < 0 || layer >= static_cast<int>(run.layers.size()))
        throw ModelError("layer " + std::to_string(layer) + " is outside the run's " +
                         std::to_string(run.layers.size()) + " layers");
    const LayerRecord<Scalar>& kept = run.layers[static_cast<std::size_t>(layer)];
    // A layer that kept its maps has them; a what-if's edited layer always does (they are the
    // caller's). Every other layer, a what-if's included, was made by the model from its kept
    // input with the run's options.
    if (kept.hasMaps())
        return {kept.scores, kept.weights, kept.contentToPosition, kept.positionToContent,
                run.positionBias};
    const long long T = kept.hiddenIn.rows();
    // The pass as the run made it, keeping this layer's maps.
    RunOptions options = run.options;
    options.keptMaps = RunOptions::KeptMaps::Every;
    options.keepDigest = false;  // the layer's digest is the run's already
    const Pass<Scalar> pass = passFor<Scalar>(model, options, T);
    const LayerRotation& rotation = pass.rotations[static_cast<std::size_t>(layer)];
    ops::RotaryAngles angles;
    if (!rotation.inverseFrequencies.empty())
        angles =
            ops::rotaryAngles(pass.positionOffset, T, rotation.inverseFrequencies, rotation.factor);
    LayerRecord<Scalar> again;
    Matrix<Scalar> attentionOut;
    attentionSubBlock(model, layer, pass, rotation.inverseFrequencies.empty() ? nullptr : &angles,
                      kept.hiddenIn, again, attentionOut);
    return {std::move(again.scores), std::move(again.weights), std::move(again.contentToPosition),
            std::move(again.positionToContent), pass.scoreBias};
}

template <typename Scalar>
void recomputeLayerMaps(const Model& model, ModelRun<Scalar>& run, int layer) {
    LayerMaps<Scalar> maps = recomputedLayerMaps(model, run, layer);
    LayerRecord<Scalar>& kept = run.layers[static_cast<std::size_t>(layer)];
    kept.scores = std::move(maps.scores);
    kept.weights = std::move(maps.weights);
    kept.contentToPosition = std::move(maps.contentToPosition);
    kept.positionToContent = std::move(maps.positionToContent);
}

template <typename Scalar>
Eigen::VectorXd logitsAt(const Model& model, const ModelRun<Scalar>& run, int position) {
    const long long T = static_cast<long long>(run.tokens.size());
    if (!run.config.isDecoder() && run.maskedLmLogits.rows() != T) {
        throw ModelError(std::string("logits: this ") + familyName(run.config.family) +
                         " folder holds no masked-LM head");
    }
    if (position < 0 || position >= T) {
        throw ModelError("logits: position " + std::to_string(position) + " is outside the run's " +
                         std::to_string(T) + " tokens");
    }
    if (!run.config.isDecoder())
        return run.maskedLmLogits.row(position).transpose().template cast<double>();
    const long long kept = position - run.logitsFrom;
    if (kept >= 0 && kept < run.logits.rows())
        return run.logits.row(kept).transpose().template cast<double>();
    if (run.finalHidden.rows() != T)
        throw ModelError("logits: the run kept neither that row nor its final hidden state");
    const Matrix<Scalar> row = run.finalHidden.row(position);
    Matrix<Scalar> logits;
    languageModelLogits(stackOf(model, run.config), row, logits, threadCount());
    return logits.row(0).transpose().template cast<double>();
}

namespace {

// The angles layer `layer` turns the rows of a T-token pass by (empty when it turns none).
template <typename Scalar>
ops::RotaryAngles layerAngles(const Pass<Scalar>& pass, int layer, long long T) {
    const LayerRotation& rotation = pass.rotations[static_cast<std::size_t>(layer)];
    if (rotation.inverseFrequencies.empty()) return {};
    return ops::rotaryAngles(pass.positionOffset, T, rotation.inverseFrequencies, rotation.factor);
}

template <typename Scalar>
void checkStep(const Model& model, int layer, const Matrix<Scalar>& input) {
    const Config& c = model.config;
    if (layer < 0 || layer >= c.layers)
        throw ModelError("layer " + std::to_string(layer) + " is outside 0 to " +
                         std::to_string(c.layers - 1));
    if (input.cols() != c.hidden || input.rows() == 0)
        throw ModelError("the residual input is " + std::to_string(input.rows()) + " x " +
                         std::to_string(input.cols()) + ", expected T x " +
                         std::to_string(c.hidden));
}

}  // namespace

template <typename Scalar>
Matrix<Scalar> attentionOutput(const Model& model, int layer, const Matrix<Scalar>& input,
                               const RunOptions& options, Matrix<Scalar>* contexts) {
    checkStep(model, layer, input);
    RunOptions keep = options;
    keep.keptMaps = RunOptions::KeptMaps::Chosen;
    keep.mapLayers.clear();
    keep.keepDigest = false;
    Pass<Scalar> pass = passFor<Scalar>(model, keep, input.rows());
    const ops::RotaryAngles angles = layerAngles(pass, layer, input.rows());
    const bool turns = !pass.rotations[static_cast<std::size_t>(layer)].inverseFrequencies.empty();
    LayerRecord<Scalar> record;
    Matrix<Scalar> out;
    // The heads' contexts are the tape's: a pass with a tape keeps them. Its other parts stay
    // unused here.
    ForwardTape<Scalar> tape;
    tape.layers.resize(static_cast<std::size_t>(model.config.layers));
    if (contexts) pass.tape = &tape;
    attentionSubBlock(model, layer, pass, turns ? &angles : nullptr, input, record, out);
    if (contexts) *contexts = std::move(tape.layers[static_cast<std::size_t>(layer)].context);
    return out;
}

template <typename Scalar>
Matrix<Scalar> outputProjection(const Model& model, int layer, const Matrix<Scalar>& contexts) {
    const Config& c = model.config;
    if (layer < 0 || layer >= c.layers ||
        contexts.cols() != static_cast<Eigen::Index>(c.heads) * c.headDim)
        throw ModelError("output projection: layer " + std::to_string(layer) + ", contexts " +
                         std::to_string(contexts.rows()) + " x " + std::to_string(contexts.cols()));
    const LayerWeights& lw = model.weights.layers[static_cast<std::size_t>(layer)];
    Matrix<Scalar> out;
    linear(contexts, lw.output, lw.outputBias, c.architecture().layout == WeightLayout::Conv1D, out,
           threadCount());
    return out;
}

template <typename Scalar>
Matrix<Scalar> finishLayerOutput(const Model& model, int layer, const Matrix<Scalar>& input,
                                 const Matrix<Scalar>& attention, const RunOptions& options) {
    checkStep(model, layer, input);
    const Pass<Scalar> pass = passFor<Scalar>(model, options, input.rows());
    Matrix<Scalar> h = input;
    finishLayer(model, layer, pass, attention, h);
    if (layer == 0 && model.config.convKernel > 0)
        convolveAfterFirstLayer(model, input, pass.visibility.mask, h);
    return h;
}

template <typename Scalar>
Matrix<Scalar> layerOutput(const Model& model, int layer, const Matrix<Scalar>& input,
                           const RunOptions& options) {
    return finishLayerOutput(model, layer, input, attentionOutput(model, layer, input, options),
                             options);
}

template <typename Scalar>
Matrix<Scalar> stackedLayerOutput(const Model& model, int layer, const Matrix<Scalar>& inputs,
                                  Eigen::Index T, const RunOptions& options) {
    const Config& c = model.config;
    if (T < 1 || inputs.rows() % T != 0 || !c.isDecoder())
        throw ModelError("stacked layer: " + std::to_string(inputs.rows()) +
                         " rows are not whole sequences of " + std::to_string(T) +
                         " (decoders only)");
    checkStep(model, layer, inputs);
    RunOptions keep = options;
    keep.keptMaps = RunOptions::KeptMaps::Chosen;
    keep.mapLayers.clear();
    keep.keepDigest = false;
    const Pass<Scalar> pass = passFor<Scalar>(model, keep, T);
    const ops::RotaryAngles angles = layerAngles(pass, layer, T);
    const bool turns = !pass.rotations[static_cast<std::size_t>(layer)].inverseFrequencies.empty();
    Matrix<Scalar> attention(inputs.rows(), c.hidden);
    for (Eigen::Index first = 0; first < inputs.rows(); first += T) {
        const Matrix<Scalar> block = inputs.middleRows(first, T);
        LayerRecord<Scalar> record;
        Matrix<Scalar> out;
        attentionSubBlock(model, layer, pass, turns ? &angles : nullptr, block, record, out);
        attention.middleRows(first, T) = out;
    }
    Matrix<Scalar> h = inputs;
    finishLayer(model, layer, pass, attention, h);
    return h;
}

template <typename Scalar>
Matrix<Scalar> finalHeadLogits(const Model& model, const Matrix<Scalar>& residual) {
    const Config& c = model.config;
    if (!c.isDecoder())
        throw ModelError(std::string(familyName(c.family)) + " has no causal LM head");
    Matrix<Scalar> h = residual;
    applyNorm(c.architecture(), h, model.weights.finalNorm, model.weights.finalNormBias, c.normEps);
    Matrix<Scalar> logits;
    languageModelLogits(model, h, logits, threadCount());
    return logits;
}

template Matrix<float> attentionOutput<float>(const Model&, int, const Matrix<float>&,
                                              const RunOptions&, Matrix<float>*);
template Matrix<double> attentionOutput<double>(const Model&, int, const Matrix<double>&,
                                                const RunOptions&, Matrix<double>*);
template Matrix<float> outputProjection<float>(const Model&, int, const Matrix<float>&);
template Matrix<double> outputProjection<double>(const Model&, int, const Matrix<double>&);
template Matrix<float> finishLayerOutput<float>(const Model&, int, const Matrix<float>&,
                                                const Matrix<float>&, const RunOptions&);
template Matrix<double> finishLayerOutput<double>(const Model&, int, const Matrix<double>&,
                                                  const Matrix<double>&, const RunOptions&);
template Matrix<float> layerOutput<float>(const Model&, int, const Matrix<float>&,
                                          const RunOptions&);
template Matrix<double> layerOutput<double>(const Model&, int, const Matrix<double>&,
                                            const RunOptions&);
template Matrix<float> stackedLayerOutput<float>(const Model&, int, const Matrix<float>&,
                                                 Eigen::Index, const RunOptions&);
template Matrix<double> stackedLayerOutput<double>(const Model&, int, const Matrix<double>&,
                                                   Eigen::Index, const RunOptions&);
template Matrix<float> finalHeadLogits<float>(const Model&, const Matrix<float>&);
template Matrix<double> finalHeadLogits<double>(const Model&, const Matrix<double>&);

template ModelRun<float> runModel<float>(const Model&, const std::vector<long long>&,
                                         const RunOptions&);
template void recomputeLayerMaps<float>(const Model&, ModelRun<float>&, int);
template void recomputeLayerMaps<double>(const Model&, ModelRun<double>&, int);
template LayerMaps<float> recomputedLayerMaps<float>(const Model&, const ModelRun<float>&, int);
template LayerMaps<double> recomputedLayerMaps<double>(const Model&, const ModelRun<double>&, int);
template EncoderDecoderRun<float> runEncoderDecoder<float>(const Model&,
                                                           const std::vector<long long>&,
                                                           const std::vector<long long>&,
                                                           const RunOptions&);
template EncoderDecoderRun<double> runEncoderDecoder<double>(const Model&,
                                                             const std::vector<long long>&,
                                                             const std::vector<long long>&,
                                                             const RunOptions&);
template EncoderDecoderRun<float> resumeEncoderDecoder<float>(
    const Model&, const EncoderDecoderRun<float>&, AttentionKind, int, LayerRecord<float>,
    const Matrix<float>&, const RunOptions&);
template EncoderDecoderRun<double> resumeEncoderDecoder<double>(
    const Model&, const EncoderDecoderRun<double>&, AttentionKind, int, LayerRecord<double>,
    const Matrix<double>&, const RunOptions&);
template std::vector<long long> generateGreedy<float>(
    const Model&, const std::vector<long long>&, int, const RunOptions&,
    const std::function<bool(const std::vector<long long>&)>&);
template std::vector<long long> generateGreedy<double>(
    const Model&, const std::vector<long long>&, int, const RunOptions&,
    const std::function<bool(const std::vector<long long>&)>&);
template Eigen::VectorXd logitsAt<float>(const Model&, const ModelRun<float>&, int);
template Eigen::VectorXd logitsAt<double>(const Model&, const ModelRun<double>&, int);
template ModelRun<double> runModel<double>(const Model&, const std::vector<long long>&,
                                           const RunOptions&);
template long long reusablePrefix<float>(const Model&, const ModelRun<float>&,
                                         const std::vector<long long>&, const RunOptions&);
template long long reusablePrefix<double>(const Model&, const ModelRun<double>&,
                                          const std::vector<long long>&, const RunOptions&);
template ModelRun<float> rerunModel<float>(const Model&, const ModelRun<float>&,
                                           const std::vector<long long>&, const RunOptions&);
template ModelRun<double> rerunModel<double>(const Model&, const ModelRun<double>&,
                                             const std::vector<long long>&, const RunOptions&);
template void resumeAfterAttention<float>(const Model&, ModelRun<float>&, int, const Matrix<float>&,
                                          const Matrix<float>&, const RunOptions&);
template void resumeAfterAttention<double>(const Model&, ModelRun<double>&, int,
                                           const Matrix<double>&, const Matrix<double>&,
                                           const RunOptions&);

}  // namespace ae::model
