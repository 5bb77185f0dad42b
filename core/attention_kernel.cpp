#include "core/attention_kernel.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include "core/parallel_product.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace ae::attention {

HidingParts hidingParts(const Mask& mask, int query, int key) {
    HidingParts parts;
    parts.causal = mask.causal && key > query;
    parts.window = mask.window && std::abs(query - key) > *mask.window;
    parts.padding = !mask.padding.empty() && mask.padding[static_cast<std::size_t>(key)];
    parts.custom = mask.allowed && !(*mask.allowed)(query, key);
    return parts;
}

template <typename Scalar>
SoftmaxMask<Scalar>::SoftmaxMask(const Mask& mask, double fill, int queries, int keys, Rows rows) {
    rebuild(mask, fill, queries, keys, rows);
}

template <typename Scalar>
void SoftmaxMask<Scalar>::rebuild(const Mask& mask, double fill, int queries, int keys, Rows rows) {
    fill_ = fill;
    prefixRows_ = true;
    causal_ = false;
    everyKeyVisible_ = true;
    fullyMaskedRows_.clear();
    rowSeesAKey_.clear();
    const bool padded =
        std::find(mask.padding.begin(), mask.padding.end(), true) != mask.padding.end();
    const bool causalAlone = !mask.window && !padded && !mask.allowed;
    const bool hidesNothing = causalAlone && (!mask.causal || keys <= 1);
    const bool hides = fill == -std::numeric_limits<double>::infinity();
    if (rows == Rows::VisiblePrefix && causalAlone && (hidesNothing || hides)) {
        causal_ = mask.causal;
        everyKeyVisible_ = hidesNothing;
        visible_.resize(0, 0);
        visibleAsOne_.resize(0, 0);
        hiddenAsMinusInfinity_.resize(0, 0);
        return;
    }
    prefixRows_ = false;
    visible_ = allowedMatrix(mask, queries, keys);
    everyKeyVisible_ = visible_.all();
    rowSeesAKey_.assign(static_cast<std::size_t>(queries), true);
    for (int i = 0; i < queries; ++i) {
        if (!visible_.row(i).any()) {
            fullyMaskedRows_.push_back(i);
            rowSeesAKey_[static_cast<std::size_t>(i)] = false;
        }
    }
    using Array = Eigen::Array<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    visibleAsOne_ = visible_.template cast<Scalar>().matrix();
    hiddenAsMinusInfinity_ =
        visible_
            .select(Array::Zero(queries, keys),
                    Array::Constant(queries, keys, -std::numeric_limits<Scalar>::infinity()))
            .matrix();
}

namespace {

// One head's columns of Q, K or V: a strided view, never a copy.
template <typename Scalar>
using HeadColumns = Eigen::Ref<const Matrix<Scalar>, 0, Eigen::OuterStride<>>;

int maxThreads() {
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

// Runs body(h) for every h < count, on `threads` threads (dynamic, one at a time) or here.
template <typename Body>
void forEachHead(int count, int threads, const Body& body) {
    if (threads == 1) {
        for (int h = 0; h < count; ++h)
            body(h);
        return;
    }
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (int h = 0; h < count; ++h)
        body(h);
}

struct Overflow {
    std::atomic<bool> logits{false};
    std::atomic<bool> context{false};
};

// Query head h: its rows firstRow.. of scores, logits, weights and context (see the header).
template <typename Scalar>
void attendHead(int h, const HeadInputs<Scalar>& in, const HeadBuffers<Scalar>& out,
                const HeadOptions<Scalar>& options, Overflow& overflow) {
    const Eigen::Index hd = in.headDim, Tq = in.query.rows(), Tk = in.key.rows();
    const Eigen::Index first = options.firstRow, count = Tq - first;
    const int kv = h / (in.heads / in.kvHeads);
    const HeadColumns<Scalar> q = in.query.middleCols(h * hd, hd);
    const HeadColumns<Scalar> k = in.key.middleCols(kv * hd, hd);
    const HeadColumns<Scalar> v = in.value.middleCols(kv * hd, hd);
    const auto index = static_cast<std::size_t>(h);
    Matrix<Scalar> ownScores;
    Matrix<Scalar>& scores = out.scores ? (*out.scores)[index] : ownScores;
    Matrix<Scalar>& weights = (*out.weights)[index];
    const AttendFrom from = options.from;

    // 1. scores = q·kᵀ  (Tq,hd)·(hd,Tk)
    if (from <= AttendFrom::Scores) {
        if (first == 0) {
            gemm::multiplyInto(q, k.transpose(), scores, false);
        } else {
            scores.resize(Tq, Tk);
            gemm::multiplyInto(q.bottomRows(count), k.transpose(), scores.bottomRows(count), false);
        }
    }
    // 2, 3. Row by row, so a row stays in cache from its logits to its weights.
    if (from <= AttendFrom::Weights) {
        const SoftmaxMask<Scalar> everyKey;
        const SoftmaxMask<Scalar>& mask = options.mask ? *options.mask : everyKey;
        const bool prefix = mask.prefixRows();
        const bool keepLogits = out.scaled != nullptr;
        // The capped logits kept apart from the scaled ones: the softmax reads them.
        const bool keepCapped = keepLogits && out.capped != nullptr && options.softCap > 0;
        Matrix<Scalar> noLogits;
        Matrix<Scalar>& logits = keepLogits ? (*out.scaled)[index] : noLogits;
        Matrix<Scalar> noCapped;
        Matrix<Scalar>& capped = keepCapped ? (*out.capped)[index] : noCapped;
        ops::RowVector<Scalar> rowLogits;
        if (keepLogits) {
            logits.resize(Tq, Tk);
        } else {
            rowLogits.resize(Tk);
        }
        if (keepCapped) capped.resize(Tq, Tk);
        weights.resize(Tq, Tk);
        const auto scale = static_cast<Scalar>(options.scale.value);
        const auto cap = static_cast<Scalar>(options.softCap);
        const ops::RowVector<Scalar> none;
        const ops::SoftmaxMaskRow<Scalar> all{true, true, none, none};
        for (Eigen::Index i = first; i < Tq; ++i) {
            const Eigen::Index seen = prefix ? mask.visiblePrefix(i, Tk) : Tk;
            // A kept row is whole (the maps show every cell); a passing one only what is seen.
            using RowRef = Eigen::Ref<ops::RowVector<Scalar>>;
            RowRef target = keepLogits ? RowRef(logits.row(i)) : RowRef(rowLogits.head(seen));
            if (from <= AttendFrom::Scaled) {
                const auto raw = scores.row(i).head(target.cols());
                if (options.preBias) {
                    target = raw + (*options.preBias)[index].row(i).head(target.cols());
                    if (options.scale.divide) {
                        target /= scale;
                    } else {
                        target *= scale;
                    }
                } else if (options.scale.divide) {
                    target = raw / scale;
                } else {
                    target = raw * scale;
                }
                if (options.bias) target += (*options.bias)[index].row(i).head(target.cols());
                if (keepCapped) {
                    capped.row(i) = ((target.array() / cap).tanh() * cap).matrix();
                } else if (options.softCap > 0) {
                    target = ((target.array() / cap).tanh() * cap).matrix();
                }
                if (options.checkFinite && !allFiniteFast(target))
                    overflow.logits.store(true, std::memory_order_relaxed);
            }
            RowRef softmaxed = keepCapped ? RowRef(capped.row(i)) : target;
            if (prefix) {
                ops::maskedSoftmaxRow<Scalar>(softmaxed.head(seen), weights.row(i).head(seen), all,
                                              0.0);
                weights.row(i).tail(Tk - seen).setZero();
            } else {
                ops::maskedSoftmaxRow<Scalar>(softmaxed, weights.row(i), mask.row(i), mask.fill());
            }
        }
    }
    // 4. context = weights·v  (Tq,Tk)·(Tk,hd)
    if (from <= AttendFrom::Context && !overflow.logits.load(std::memory_order_relaxed)) {
        auto context = out.context->middleCols(h * hd, hd);
        if (first == 0) {
            gemm::multiplyInto(weights, v, context, false);
        } else {
            gemm::multiplyInto(weights.bottomRows(count), v, context, false);
        }
        // Checked while this head's block is in cache: finite weights times a value that
        // overflowed would pass on inf or NaN silently.
        if (options.checkFinite && !allFiniteFast(context))
            overflow.context.store(true, std::memory_order_relaxed);
    }
}

}  // namespace

template <typename Scalar>
AttendResult attendHeads(const HeadInputs<Scalar>& inputs, const HeadBuffers<Scalar>& buffers,
                         const HeadOptions<Scalar>& options) {
    const auto heads = static_cast<std::size_t>(inputs.heads);
    for (std::vector<Matrix<Scalar>>* perHead :
         {buffers.scores, buffers.scaled, buffers.capped, buffers.weights})
        if (perHead && perHead->size() < heads) perHead->resize(heads);
    if (options.from <= AttendFrom::Context)
        buffers.context->resize(inputs.query.rows() - options.firstRow,
                                inputs.heads * inputs.headDim);
    // The kept maps are sized here, on the calling thread, as attendHead would size them: glibc
    // gives each thread its own arena and hands a worker's freed maps back to the kernel, so maps
    // allocated on the heads' threads were fresh pages, zeroed by the kernel, on every pass (a
    // third of a Pythia-410M-shaped pass at L = 1024).
    const Eigen::Index Tq = inputs.query.rows(), Tk = inputs.key.rows();
    const auto size = [&](std::vector<Matrix<Scalar>>* maps) {
        if (maps)
            for (std::size_t h = 0; h < heads; ++h)
                (*maps)[h].resize(Tq, Tk);
    };
    if (options.from <= AttendFrom::Scores) size(buffers.scores);
    if (options.from <= AttendFrom::Weights) {
        size(buffers.scaled);
        if (buffers.scaled && options.softCap > 0) size(buffers.capped);
        size(buffers.weights);
    }
    Overflow overflow;
    const int threads = options.threads > 0 ? options.threads : maxThreads();
    forEachHead(inputs.heads, threads, [&](int h) {
        if (options.beginHead && !options.beginHead(h)) return;
        attendHead(h, inputs, buffers, options, overflow);
        if (options.endHead) options.endHead(h);
    });
    return {overflow.logits.load(), overflow.context.load()};
}

template <typename Scalar>
void transformHeads(Eigen::Ref<Matrix<Scalar>> queries, Eigen::Ref<Matrix<Scalar>> keys,
                    const HeadTransform<Scalar>& t, int threads) {
    using Weights = Eigen::Map<const ops::ColumnVector<Scalar>>;
    const Eigen::Index hd = t.headDim;
    if (t.norm == QkNormSpan::FullWidth) {
        ops::rmsNormRows<Scalar>(queries, Weights(t.queryNormWeight, queries.cols()), t.normEps);
        ops::rmsNormRows<Scalar>(keys, Weights(t.keyNormWeight, keys.cols()), t.normEps);
    }
    const bool perHead = t.norm == QkNormSpan::PerHead;
    if (!perHead && !t.angles) return;
    const int heads = static_cast<int>(queries.cols() / hd);
    const int kvHeads = static_cast<int>(keys.cols() / hd);
    const Eigen::Index rotated = t.angles ? 2 * t.angles->cos.cols() : 0;
    // Query heads, then key heads: one loop, so the threads share both.
    forEachHead(heads + kvHeads, threads, [&](int block) {
        const bool isQuery = block < heads;
        auto head =
            (isQuery ? queries : keys).middleCols((isQuery ? block : block - heads) * hd, hd);
        if (perHead)
            ops::rmsNormRows<Scalar>(
                head, Weights(isQuery ? t.queryNormWeight : t.keyNormWeight, hd), t.normEps);
        if (t.angles) ops::rotateHalf<Scalar>(head.leftCols(rotated), *t.angles);
    });
}

template class SoftmaxMask<float>;
template class SoftmaxMask<double>;
template AttendResult attendHeads<float>(const HeadInputs<float>&, const HeadBuffers<float>&,
                                         const HeadOptions<float>&);
template AttendResult attendHeads<double>(const HeadInputs<double>&, const HeadBuffers<double>&,
                                          const HeadOptions<double>&);
template void transformHeads<float>(Eigen::Ref<Matrix<float>>, Eigen::Ref<Matrix<float>>,
                                    const HeadTransform<float>&, int);
template void transformHeads<double>(Eigen::Ref<Matrix<double>>, Eigen::Ref<Matrix<double>>,
                                     const HeadTransform<double>&, int);

}  // namespace ae::attention
