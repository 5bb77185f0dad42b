#pragma once
// The forward pass's building blocks (core/model/model_forward.cpp): weights read as stored, the
// projections, the norms and the activations. Internal to the forward pass; templates over the
// compute type (float or double).
//
// Dimension names are those of core/dimensions.h, in their short forms: T, d, I.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/gemm.h"
#include "core/model/forward_tape.h"
#include "core/model/model.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace ae::model::forward {

template <typename Scalar>
using MatrixMap = Eigen::Map<const Matrix<Scalar>>;
template <typename Scalar>
using VectorMap = Eigen::Map<const ops::ColumnVector<Scalar>>;

template <typename Scalar>
constexpr DType computeType() {
    return sizeof(Scalar) == 8 ? DType::F64 : DType::F32;
}

// Whether `t` can be read as Scalars where it is mapped: stored as Scalar, and aligned for it.
template <typename Scalar>
bool readableInPlace(const TensorRef& t) {
    return t.dtype == computeType<Scalar>() &&
           reinterpret_cast<std::uintptr_t>(t.data) % alignof(Scalar) == 0;
}

// Buffers for widened weights, kept on the thread that widened them for the next layer's
// weights of the same size. A pass widens every layer's weights in turn, and a fresh buffer of
// hundreds of megabytes each time (an 8B layer is 0.9 GB of floats) cost more than the widening:
// std::vector zeroed it first, on one core, and the kernel faulted its pages in again for every
// layer (docs/performance.md, "Maps on demand"). A buffer is taken uninitialised, the widening
// writes all of it, and at most kSpareWeightBuffers wait for reuse, the smallest let go first:
// about one layer's weights stay allocated between passes.
inline constexpr std::size_t kSpareWeightBuffers = 8;

template <typename Scalar>
class WideningBuffer {
public:
    explicit WideningBuffer(std::size_t count) {
        std::vector<Spare>& spares = sparesOfThisThread();
        auto best = spares.end();
        for (auto it = spares.begin(); it != spares.end(); ++it)
            if (it->capacity >= count && (best == spares.end() || it->capacity < best->capacity))
                best = it;
        if (best != spares.end()) {
            buffer_ = std::move(*best);
            spares.erase(best);
        } else {
            buffer_.data.reset(new Scalar[count]);
            buffer_.capacity = count;
        }
    }
    ~WideningBuffer() {
        if (!buffer_.data) return;
        std::vector<Spare>& spares = sparesOfThisThread();
        spares.push_back(std::move(buffer_));
        if (spares.size() > kSpareWeightBuffers) {
            spares.erase(std::min_element(
                spares.begin(), spares.end(),
                [](const Spare& a, const Spare& b) { return a.capacity < b.capacity; }));
        }
    }
    WideningBuffer(const WideningBuffer&) = delete;
    WideningBuffer& operator=(const WideningBuffer&) = delete;
    Scalar* data() { return buffer_.data.get(); }

private:
    struct Spare {
        std::unique_ptr<Scalar[]> data;
        std::size_t capacity = 0;
    };
    static std::vector<Spare>& sparesOfThisThread() {
        thread_local std::vector<Spare> spares;
        return spares;
    }
    Spare buffer_;
};

// A weight as rows x cols Scalars: the mapped bytes themselves when they are stored as Scalar
// (and aligned for it), else a converted copy that lives as long as this view (one layer).
template <typename Scalar>
class WeightView {
public:
    WeightView() = default;
    explicit WeightView(const TensorRef& t) : rows_(t.rows), cols_(t.cols) {
        if (!t.present()) return;
        if (readableInPlace<Scalar>(t)) {
            data_ = reinterpret_cast<const Scalar*>(t.data);
        } else {
            copy_ = std::make_unique<WideningBuffer<Scalar>>(static_cast<std::size_t>(t.count()));
            Scalar* into = copy_->data();
            // On every core: a BF16 layer of an 8B model is 218 million values, and one thread
            // widening them left the other idle for a third of a pass.
            const long long count = t.count(), chunk = 1 << 16;
            const long long chunks = (count + chunk - 1) / chunk;
#pragma omp parallel for schedule(static) if (chunks > 16)
            for (long long c = 0; c < chunks; ++c) {
                const long long first = c * chunk;
                convertElements(t.data, t.dtype, first, std::min(chunk, count - first),
                                into + first);
            }
            data_ = into;
        }
    }
    bool present() const {
        return data_ != nullptr;
    }
    MatrixMap<Scalar> matrix() const {
        return MatrixMap<Scalar>(data_, rows_, cols_);
    }
    VectorMap<Scalar> vector() const {
        return VectorMap<Scalar>(data_, rows_ * cols_);
    }

private:
    long long rows_ = 0, cols_ = 0;
    const Scalar* data_ = nullptr;
    std::unique_ptr<WideningBuffer<Scalar>> copy_;
};

inline int threadCount() {
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

// out = in·W (+ b) where W is `weight` as stored: [in, out] when `xw` (gpt2's Conv1D), else
// nn.Linear's [out, in], used transposed. in: T x n, out: T x m. Blocks of `out` (rows when there
// are many, else columns) are computed on up to maxThreads threads, each a single-threaded product
// (core/gemm.h), as core/parallel_product.h does for the one-layer engine; with one thread, one.
template <typename Scalar>
void project(const Matrix<Scalar>& in, const WeightView<Scalar>& weight, bool xw,
             const WeightView<Scalar>& bias, Matrix<Scalar>& out, int maxThreads) {
    const MatrixMap<Scalar> w = weight.matrix();
    const Eigen::Index rows = in.rows(), cols = xw ? w.cols() : w.rows();
    out.resize(rows, cols);
    const double flops = static_cast<double>(rows) * static_cast<double>(in.cols()) * cols;
    const int threads = flops > 4e6 ? maxThreads : 1;
    const bool byRows = rows >= 256;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int thread = 0; thread < threads; ++thread) {
        const Eigen::Index size = byRows ? rows : cols;
        const Eigen::Index begin = size * thread / threads;
        const Eigen::Index count = size * (thread + 1) / threads - begin;
        if (count <= 0) continue;
        if (byRows) {
            auto block = out.middleRows(begin, count);
            if (xw) {
                gemm::multiplyInto(in.middleRows(begin, count), w, block, false);
            } else {
                gemm::multiplyInto(in.middleRows(begin, count), w.transpose(), block, false);
            }
            if (bias.present()) block.rowwise() += bias.vector().transpose();
        } else {
            auto block = out.middleCols(begin, count);
            if (xw) {
                gemm::multiplyInto(in, w.middleCols(begin, count), block, false);
            } else {
                gemm::multiplyInto(in, w.middleRows(begin, count).transpose(), block, false);
            }
            if (bias.present()) block.rowwise() += bias.vector().segment(begin, count).transpose();
        }
    }
}

// Rows of a weight converted at a time by projectByWeightRows: 2048 rows of a 4096-wide table are
// 32 MiB of floats per thread.
constexpr long long kWeightRowBlock = 2048;

// out = in·Wᵀ for nn.Linear's [m, n] `weight` as stored (an LM head: V x d), read in blocks of
// kWeightRowBlock rows: each thread converts its block into a buffer of its own and multiplies it,
// so a BF16 table is never converted whole (Llama-3's head would be a 2 GB float copy). A weight
// stored as Scalar is multiplied in place. in: T x n, out: T x m.
template <typename Scalar>
void projectByWeightRows(const Matrix<Scalar>& in, const TensorRef& weight, Matrix<Scalar>& out,
                         int maxThreads) {
    if (readableInPlace<Scalar>(weight)) {
        const WeightView<Scalar> w(weight), none;
        project(in, w, false, none, out, maxThreads);
        return;
    }
    const long long m = weight.rows, n = weight.cols;
    out.resize(in.rows(), m);
    const long long blocks = (m + kWeightRowBlock - 1) / kWeightRowBlock;
    const int threads = static_cast<int>(std::min<long long>(maxThreads, blocks));
#pragma omp parallel num_threads(threads)
    {
        std::vector<Scalar> buffer;
#pragma omp for schedule(dynamic, 1)
        for (long long block = 0; block < blocks; ++block) {
            const long long first = block * kWeightRowBlock;
            const long long rows = std::min(kWeightRowBlock, m - first);
            buffer.resize(static_cast<std::size_t>(rows * n));
            convertElements(weight.data, weight.dtype, first * n, rows * n, buffer.data());
            const MatrixMap<Scalar> w(buffer.data(), rows, n);
            auto target = out.middleCols(first, rows);
            gemm::multiplyInto(in, w.transpose(), target, false);
        }
    }
}

// Rows `ids` of a table (V x d as stored), converted: T x d.
template <typename Scalar>
Matrix<Scalar> gatherRows(const TensorRef& table, const std::vector<long long>& ids,
                          int offset = 0) {
    Matrix<Scalar> out(static_cast<Eigen::Index>(ids.size()), table.cols);
    for (std::size_t i = 0; i < ids.size(); ++i) {
        convertElements(table.data, table.dtype, (ids[i] + offset) * table.cols, table.cols,
                        out.data() + static_cast<long long>(i) * table.cols);
    }
    return out;
}

// The multiplier a norm applies: the stored weight, or Gemma's 1 + w.
template <typename Scalar>
ops::ColumnVector<Scalar> normMultiplier(NormType norm, const WeightView<Scalar>& weight) {
    if (norm == NormType::RmsNormPlusOneWeight)
        return (weight.vector().array() + Scalar(1)).matrix();
    return weight.vector();
}

// The architecture's norm on each row of x (T x d), in place; a LayerNorm's x̂ and 1/σ kept in
// `kept` when given.
template <typename Scalar>
void applyNorm(const Architecture& a, Matrix<Scalar>& x, const TensorRef& weight,
               const TensorRef& bias, double eps, NormTape<Scalar>* kept = nullptr) {
    if (a.norm == NormType::RmsNorm) {
        const WeightView<Scalar> w(weight);
        ops::rmsNormRows<Scalar>(x, w.vector(), eps);
    } else if (a.norm == NormType::RmsNormPlusOneWeight) {
        // GemmaRMSNorm: x / √(mean(x²) + eps) · (1 + w)
        const WeightView<Scalar> w(weight);
        ops::rmsNormRows<Scalar>(x, normMultiplier(a.norm, w), eps);
    } else if (a.norm == NormType::LayerNormNoBias) {
        const WeightView<Scalar> w(weight);
        ops::layerNormRows<Scalar>(x, w.vector(), ops::ColumnVector<Scalar>::Zero(x.cols()), eps,
                                   kept ? &kept->normalised : nullptr,
                                   kept ? &kept->inverseDeviation : nullptr);
    } else {
        const WeightView<Scalar> w(weight), b(bias);
        ops::layerNormRows<Scalar>(x, w.vector(), b.vector(), eps,
                                   kept ? &kept->normalised : nullptr,
                                   kept ? &kept->inverseDeviation : nullptr);
    }
}

template <typename Scalar>
void activate(Activation activation, Matrix<Scalar>& x) {
    auto a = x.array();
    switch (activation) {
        case Activation::GeluExact:
            ops::geluExact(a);
            break;
        case Activation::GeluTanh:
            ops::geluTanh(a);
            break;
        case Activation::GeluFast:
            ops::geluFast(a);
            break;
        case Activation::Silu:
            ops::silu(a);
            break;
        case Activation::Tanh:
            a = a.tanh();
            break;
        case Activation::Relu:
            ops::relu(a);
            break;
    }
}

}  // namespace ae::model::forward
