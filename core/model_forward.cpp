// The forward pass of core/model.h, after shared/reference/model_reference.py (gpt2_layer,
// bert_layer, llama_layer, forward): the same operations in the same order, with the ops of
// core/ops.h and Eigen products. Every projection is one product on the whole T x d block; the
// heads then run in parallel, each with single-threaded products on its own columns.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/model.h"
#include "core/parallel_product.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace ae::model {
namespace {

template <typename Scalar>
using MatrixMap = Eigen::Map<const Matrix<Scalar>>;
template <typename Scalar>
using VectorMap = Eigen::Map<const ops::ColumnVector<Scalar>>;

template <typename Scalar>
constexpr DType computeType() {
    return sizeof(Scalar) == 8 ? DType::F64 : DType::F32;
}

// A weight as rows x cols Scalars: the mapped bytes themselves when they are stored as Scalar
// (and aligned for it), else a converted copy that lives as long as this view (one layer).
template <typename Scalar>
class WeightView {
public:
    WeightView() = default;
    explicit WeightView(const TensorRef& t) : rows_(t.rows), cols_(t.cols) {
        if (!t.present()) return;
        const bool inPlace = t.dtype == computeType<Scalar>() &&
                             reinterpret_cast<std::uintptr_t>(t.data) % alignof(Scalar) == 0;
        if (inPlace) {
            data_ = reinterpret_cast<const Scalar*>(t.data);
        } else {
            copy_.resize(static_cast<std::size_t>(t.count()));
            convertElements(t.data, t.dtype, 0, t.count(), copy_.data());
            data_ = copy_.data();
        }
    }
    bool present() const { return data_ != nullptr; }
    MatrixMap<Scalar> matrix() const { return MatrixMap<Scalar>(data_, rows_, cols_); }
    VectorMap<Scalar> vector() const { return VectorMap<Scalar>(data_, rows_ * cols_); }

private:
    long long rows_ = 0, cols_ = 0;
    const Scalar* data_ = nullptr;
    std::vector<Scalar> copy_;
};

int threadCount() {
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

// out = in·W (+ b) where W is `weight` as stored: [in, out] when `xw` (gpt2's Conv1D), else
// nn.Linear's [out, in], used transposed. in: T x n, out: T x m. Blocks of `out` (rows when there
// are many, else columns) are computed on every thread, each a single-threaded Eigen product, as
// core/parallel_product.h does for the one-layer engine.
template <typename Scalar>
void project(const Matrix<Scalar>& in, const WeightView<Scalar>& weight, bool xw,
             const WeightView<Scalar>& bias, Matrix<Scalar>& out) {
    const MatrixMap<Scalar> w = weight.matrix();
    const Eigen::Index rows = in.rows(), cols = xw ? w.cols() : w.rows();
    out.resize(rows, cols);
    const double flops = static_cast<double>(rows) * static_cast<double>(in.cols()) * cols;
    const int threads = flops > 4e6 ? threadCount() : 1;
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
                block.noalias() = in.middleRows(begin, count) * w;
            } else {
                block.noalias() = in.middleRows(begin, count) * w.transpose();
            }
            if (bias.present()) block.rowwise() += bias.vector().transpose();
        } else {
            auto block = out.middleCols(begin, count);
            if (xw) {
                block.noalias() = in * w.middleCols(begin, count);
            } else {
                block.noalias() = in * w.middleRows(begin, count).transpose();
            }
            if (bias.present()) block.rowwise() += bias.vector().segment(begin, count).transpose();
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

template <typename Scalar>
void layerNorm(Matrix<Scalar>& x, const TensorRef& weight, const TensorRef& bias, double eps) {
    const WeightView<Scalar> w(weight), b(bias);
    ops::layerNormRows<Scalar>(x, w.vector(), b.vector(), eps);
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
        case Activation::Silu:
            ops::silu(a);
            break;
        case Activation::Relu:
            ops::relu(a);
            break;
    }
}

// Which keys each query sees: causal in a decoder, and never a padding key.
struct Visibility {
    bool causal = false;
    std::vector<int> mask;  // empty: no padding
};

// Every head of one layer: scores_h = q_h·k_hᵀ, weights_h = softmax(scale·scores_h, hidden keys
// −∞), context columns h = weights_h·v_h. q: T x (H·hd), k, v: T x (KV·hd). Heads in parallel.
template <typename Scalar>
void attend(const Config& c, double scale, const Visibility& visibility, LayerRecord<Scalar>& layer,
            Matrix<Scalar>& context) {
    const Eigen::Index T = layer.query.rows(), hd = c.headDim;
    context.resize(T, c.heads * hd);
    layer.scores.assign(static_cast<std::size_t>(c.heads), Matrix<Scalar>());
    layer.weights.assign(static_cast<std::size_t>(c.heads), Matrix<Scalar>());
    // With padding, every row gets the mask's two numeric forms (ops::SoftmaxMaskRow); without,
    // a decoder's row i is the plain softmax of its first i + 1 keys.
    const bool padded = !visibility.mask.empty();
    Matrix<Scalar> visibleAsOne, hiddenAsMinusInfinity;
    if (padded) {
        visibleAsOne.resize(T, T);
        hiddenAsMinusInfinity.resize(T, T);
        for (Eigen::Index i = 0; i < T; ++i) {
            for (Eigen::Index j = 0; j < T; ++j) {
                const bool seen = visibility.mask[static_cast<std::size_t>(j)] != 0 &&
                                  (!visibility.causal || j <= i);
                visibleAsOne(i, j) = seen ? Scalar(1) : Scalar(0);
                hiddenAsMinusInfinity(i, j) =
                    seen ? Scalar(0) : -std::numeric_limits<Scalar>::infinity();
            }
        }
    }
    const ops::RowVector<Scalar> none;
    const int threads = static_cast<double>(T) * T * hd * c.heads > 2e5 ? threadCount() : 1;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (int h = 0; h < c.heads; ++h) {
        const int kv = c.kvHeadOf(h);
        const auto q = layer.query.middleCols(h * hd, hd);
        const auto k = layer.key.middleCols(kv * hd, hd);
        const auto v = layer.value.middleCols(kv * hd, hd);
        Matrix<Scalar>& scores = layer.scores[static_cast<std::size_t>(h)];
        Matrix<Scalar>& weights = layer.weights[static_cast<std::size_t>(h)];
        scores.noalias() = q * k.transpose();
        weights.resize(T, T);
        ops::RowVector<Scalar> scaled(T);
        for (Eigen::Index i = 0; i < T; ++i) {
            if (padded) {
                scaled = scores.row(i) * static_cast<Scalar>(scale);
                const ops::SoftmaxMaskRow<Scalar> mask{false, true, visibleAsOne.row(i),
                                                       hiddenAsMinusInfinity.row(i)};
                ops::maskedSoftmaxRow<Scalar>(scaled, weights.row(i), mask,
                                              -std::numeric_limits<double>::infinity());
            } else {
                const Eigen::Index seen = visibility.causal ? i + 1 : T;
                scaled.head(seen) = scores.row(i).head(seen) * static_cast<Scalar>(scale);
                const ops::SoftmaxMaskRow<Scalar> all{true, true, none, none};
                ops::maskedSoftmaxRow<Scalar>(scaled.head(seen), weights.row(i).head(seen), all,
                                              0.0);
                weights.row(i).tail(T - seen).setZero();
            }
        }
        context.middleCols(h * hd, hd).noalias() = weights * v;
    }
}

template <typename Scalar>
void requireFinite(const Model& model, const Matrix<Scalar>& m, const std::string& what) {
    if (!allFiniteFast(m)) {
        throw ModelError(model.folder + ": " + what + " is not finite: the numbers overflowed" +
                         (sizeof(Scalar) == 4 ? " float (try --double)" : ""));
    }
}

// modeling_gpt2.GPT2Block.forward: pre-norm, fused c_attn, gelu_new MLP.
template <typename Scalar>
void gpt2Layer(const Model& model, int index, const Visibility& visibility, Matrix<Scalar>& h,
               LayerRecord<Scalar>& layer) {
    const Config& c = model.config;
    const LayerWeights& lw = model.weights.layers[static_cast<std::size_t>(index)];
    const Eigen::Index d = c.hidden;
    Matrix<Scalar> x = h, fused, context, projected;
    layerNorm(x, lw.norm1, lw.norm1Bias, c.normEps);
    {
        const WeightView<Scalar> w(lw.qkv), b(lw.qkvBias);
        project(x, w, true, b, fused);
    }
    layer.query = fused.leftCols(d);
    layer.key = fused.middleCols(d, d);
    layer.value = fused.rightCols(d);
    fused.resize(0, 0);
    attend(c, c.attentionScale(index), visibility, layer, context);
    {
        const WeightView<Scalar> w(lw.output), b(lw.outputBias);
        project(context, w, true, b, projected);
    }
    h += projected;
    x = h;
    layerNorm(x, lw.norm2, lw.norm2Bias, c.normEps);
    Matrix<Scalar> inner;
    {
        const WeightView<Scalar> w(lw.up), b(lw.upBias);
        project(x, w, true, b, inner);
    }
    activate(c.activation, inner);
    {
        const WeightView<Scalar> w(lw.down), b(lw.downBias);
        project(inner, w, true, b, projected);
    }
    h += projected;
}

// modeling_bert.BertLayer: attention, then dense + residual + LayerNorm (post-norm), the MLP the
// same way.
template <typename Scalar>
void bertLayer(const Model& model, int index, const Visibility& visibility, Matrix<Scalar>& h,
               LayerRecord<Scalar>& layer) {
    const Config& c = model.config;
    const LayerWeights& lw = model.weights.layers[static_cast<std::size_t>(index)];
    auto linear = [&](const Matrix<Scalar>& in, const TensorRef& weight, const TensorRef& bias,
                      Matrix<Scalar>& out) {
        const WeightView<Scalar> w(weight), b(bias);
        project(in, w, false, b, out);
    };
    linear(h, lw.query, lw.queryBias, layer.query);
    linear(h, lw.key, lw.keyBias, layer.key);
    linear(h, lw.value, lw.valueBias, layer.value);
    Matrix<Scalar> context, attended, inner, out;
    attend(c, c.attentionScale(index), visibility, layer, context);
    linear(context, lw.output, lw.outputBias, attended);
    attended += h;
    layerNorm(attended, lw.norm1, lw.norm1Bias, c.normEps);
    linear(attended, lw.up, lw.upBias, inner);
    activate(c.activation, inner);
    linear(inner, lw.down, lw.downBias, out);
    out += attended;
    layerNorm(out, lw.norm2, lw.norm2Bias, c.normEps);
    h = std::move(out);
}

// modeling_llama.LlamaDecoderLayer (and Qwen3's, with q_norm / k_norm on each head before the
// rotation): RMS pre-norm, rotary q and k, grouped-query attention, SwiGLU MLP.
template <typename Scalar>
void llamaLayer(const Model& model, int index, const Visibility& visibility,
                const std::vector<double>& inverseFrequencies, int positionOffset,
                Matrix<Scalar>& h, LayerRecord<Scalar>& layer) {
    const Config& c = model.config;
    const LayerWeights& lw = model.weights.layers[static_cast<std::size_t>(index)];
    const Eigen::Index hd = c.headDim;
    auto linear = [&](const Matrix<Scalar>& in, const TensorRef& weight, const TensorRef& bias,
                      Matrix<Scalar>& out) {
        const WeightView<Scalar> w(weight), b(bias);
        project(in, w, false, b, out);
    };
    Matrix<Scalar> x = h;
    {
        const WeightView<Scalar> norm(lw.norm1);
        ops::rmsNormRows<Scalar>(x, norm.vector(), c.normEps);
    }
    linear(x, lw.query, lw.queryBias, layer.query);
    linear(x, lw.key, lw.keyBias, layer.key);
    linear(x, lw.value, lw.valueBias, layer.value);
    // Each query head, then each kv head: q/k norm (qwen3) and the rotation, heads in parallel.
    const WeightView<Scalar> queryNorm(lw.queryNorm), keyNorm(lw.keyNorm);
    const int blocks = c.heads + c.kvHeads;
    // Every head of the layer turns its rows by the same angles: computed once.
    const ops::RotaryAngles angles =
        ops::rotaryAngles(positionOffset, h.rows(), inverseFrequencies);
    const int threads = static_cast<double>(h.rows()) * hd * blocks > 1e5 ? threadCount() : 1;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int block = 0; block < blocks; ++block) {
        const bool isQuery = block < c.heads;
        Matrix<Scalar>& m = isQuery ? layer.query : layer.key;
        auto head = m.middleCols((isQuery ? block : block - c.heads) * hd, hd);
        if (c.qkNorm)
            ops::rmsNormRows<Scalar>(head, (isQuery ? queryNorm : keyNorm).vector(), c.normEps);
        ops::rotateHalf<Scalar>(head, angles);
    }
    Matrix<Scalar> context, out, gate, up;
    attend(c, c.attentionScale(index), visibility, layer, context);
    linear(context, lw.output, lw.outputBias, out);
    h += out;
    x = h;
    {
        const WeightView<Scalar> norm(lw.norm2);
        ops::rmsNormRows<Scalar>(x, norm.vector(), c.normEps);
    }
    linear(x, lw.gate, lw.gateBias, gate);
    linear(x, lw.up, lw.upBias, up);
    activate(c.activation, gate);
    gate.array() *= up.array();
    up.resize(0, 0);
    linear(gate, lw.down, lw.downBias, out);
    h += out;
}

}  // namespace

template <typename Scalar>
ModelRun<Scalar> runModel(const Model& model, const std::vector<long long>& ids,
                          const RunOptions& options) {
    const Config& c = model.config;
    checkInputs(c, ids, options);
    const long long T = static_cast<long long>(ids.size());
    const RunMemory need = runMemory(model, T, sizeof(Scalar));
    checkRunFitsInMemory(model, need.total(),
                         sizeof(Scalar) == 4 ? "the model in float" : "the model in double");

    ModelRun<Scalar> run;
    run.config = c;
    run.tokens = ids;
    run.attentionMask = options.attentionMask;
    Visibility visibility{c.isDecoder(), options.attentionMask};
    // A mask of all ones hides nothing: the plain path computes the same weights.
    if (std::all_of(visibility.mask.begin(), visibility.mask.end(), [](int a) { return a == 1; }))
        visibility.mask.clear();

    const ModelWeights& w = model.weights;
    Matrix<Scalar> h = gatherRows<Scalar>(w.tokenEmbedding, ids);
    std::vector<long long> positions(static_cast<std::size_t>(T));
    for (long long i = 0; i < T; ++i)
        positions[static_cast<std::size_t>(i)] = i;
    if (c.family == Family::Gpt2) {
        // GPT2Model.forward: wte(ids) + wpe(position_ids)
        h += gatherRows<Scalar>(w.positionEmbedding, positions, options.positionOffset);
    } else if (c.family == Family::Bert) {
        // BertEmbeddings.forward: word + token_type (all 0) + position, then LayerNorm
        h += gatherRows<Scalar>(w.tokenTypeEmbedding, std::vector<long long>(T, 0));
        h += gatherRows<Scalar>(w.positionEmbedding, positions, options.positionOffset);
        layerNorm(h, w.embeddingNorm, w.embeddingNormBias, c.normEps);
    }
    const std::vector<double> inverseFrequencies =
        c.rotary() ? ops::ropeInverseFrequencies(c.headDim, c.rope) : std::vector<double>();

    run.layers.resize(static_cast<std::size_t>(c.layers));
    for (int i = 0; i < c.layers; ++i) {
        LayerRecord<Scalar>& layer = run.layers[static_cast<std::size_t>(i)];
        layer.hiddenIn = h;
        if (c.family == Family::Gpt2) {
            gpt2Layer(model, i, visibility, h, layer);
        } else if (c.family == Family::Bert) {
            bertLayer(model, i, visibility, h, layer);
        } else {
            llamaLayer(model, i, visibility, inverseFrequencies, options.positionOffset, h, layer);
        }
        requireFinite(model, h, "the output of layer " + std::to_string(i));
    }
    if (c.family == Family::Bert) {
        run.lastHidden = std::move(h);
        return run;
    }
    if (c.family == Family::Gpt2) {
        layerNorm(h, w.finalNorm, w.finalNormBias, c.normEps);
    } else {
        const WeightView<Scalar> norm(w.finalNorm);
        ops::rmsNormRows<Scalar>(h, norm.vector(), c.normEps);
    }
    const WeightView<Scalar> head(w.lmHead), none;
    project(h, head, false, none, run.logits);
    requireFinite(model, run.logits, "the logits");
    return run;
}

template ModelRun<float> runModel<float>(const Model&, const std::vector<long long>&,
                                         const RunOptions&);
template ModelRun<double> runModel<double>(const Model&, const std::vector<long long>&,
                                           const RunOptions&);

}  // namespace ae::model
