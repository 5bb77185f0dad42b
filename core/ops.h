#pragma once
// The operations of the forward pass, one home for each: the engine (attention_engine.cpp), the
// trainer (attention_training.cpp), the whole-model forward pass (model_forward.cpp) and the
// walkthrough (ui/walkthrough_panel.cpp) call these and write none of them out again. Small named
// kernels in the style of llm.c: each states its shapes, takes Eigen::Ref in and out, and is
// templated on Scalar where the engine needs both float (the window) and double (export, tests,
// training).
//
// Sections follow the pipeline: positions, norms, the masked softmax. A whole model's operations
// sit next to their relatives: RMS norm beside layer norm, rotary positions beside the sinusoidal
// ones. Each op has a test against a hand computation in tests/core/engine/test_ops.cpp. The
// attention head built from them (scores to context, the q/k norm and rotation) is
// core/attention_kernel.h's, shared by every caller.

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/scene.h"

namespace ae::ops {

template <typename Scalar>
using RowMajorMatrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename Scalar>
using RowVector = Eigen::Matrix<Scalar, 1, Eigen::Dynamic>;
template <typename Scalar>
using ColumnVector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;

// ---- Positions ----

// PE[pos, 2i] = sin(pos / base^(2i/d)), PE[pos, 2i+1] = cos(pos / base^(2i/d)).
// pe: rows x d, filled for positions firstRow .. firstRow + rows - 1.
inline void sinusoidalPositions(Eigen::Ref<RowMajorMatrix<double>> pe, int firstRow, double base) {
    const Eigen::Index d = pe.cols();
    for (Eigen::Index c = 0; c < d; ++c) {
        // Columns 2i and 2i+1 share the frequency base^(-2i/d).
        const double frequency =
            1.0 / std::pow(base, static_cast<double>(c - c % 2) / static_cast<double>(d));
        for (Eigen::Index r = 0; r < pe.rows(); ++r) {
            const double angle = static_cast<double>(firstRow + r) * frequency;
            pe(r, c) = (c % 2 == 0) ? std::sin(angle) : std::cos(angle);
        }
    }
}

// x: rows x d, in place: x += PE of positions firstRow .. firstRow + rows - 1.
inline void addSinusoidalPositions(Eigen::Ref<RowMajorMatrix<double>> x, int firstRow,
                                   double base) {
    RowMajorMatrix<double> pe(x.rows(), x.cols());
    sinusoidalPositions(pe, firstRow, base);
    x += pe;
}

// x: rows x d, in place: x += table rows firstRow .. firstRow + rows - 1 (table: >= that x d).
inline void addLearnedPositions(Eigen::Ref<RowMajorMatrix<double>> x, int firstRow,
                                Eigen::Ref<const RowMajorMatrix<double>> table) {
    x += table.middleRows(firstRow, x.rows());
}

// x: rows x d, in place: adds the positions `kind` gives rows firstRow .. firstRow + rows - 1
// (sinusoidal with `base`, or rows of `learnedTable`; nothing for none).
inline void addPositions(Eigen::Ref<RowMajorMatrix<double>> x, PositionalKind kind, double base,
                         Eigen::Ref<const RowMajorMatrix<double>> learnedTable, int firstRow) {
    if (kind == PositionalKind::Sinusoidal) {
        addSinusoidalPositions(x, firstRow, base);
    } else if (kind == PositionalKind::Learned) {
        addLearnedPositions(x, firstRow, learnedTable);
    }
}

// Rotary parameters live with the scene (scene.h), which carries them as a layer's `rotary`.
using ae::RopeParameters;
using ae::RopeScaling;

// θ_i for i < n/2, n = the turned values (rope.turnedDims(headDim)): θ_i = theta^(−2i/n), then
// scaled. Linear divides every θ by factor. Llama 3 divides long wavelengths (2π/θ >
// original/low) by factor, keeps short ones (< original/high) and interpolates between
// (transformers' _compute_llama3_parameters). LongRope gives θ_i = 1 / (f_i · theta^(2i/n)) with
// the layer's factors f (_compute_longrope_parameters). Returns n/2 values, in double whatever
// the engine computes in.
inline std::vector<double> ropeInverseFrequencies(int headDim, const RopeParameters& rope) {
    const int dims = rope.turnedDims(headDim);
    std::vector<double> inverse(static_cast<std::size_t>(dims / 2));
    const double pi = 3.14159265358979323846;
    for (int i = 0; i < dims / 2; ++i) {
        const double power =
            std::pow(rope.theta, static_cast<double>(2 * i) / static_cast<double>(dims));
        double theta = 1.0 / power;
        if (rope.scaling == RopeScaling::Linear) {
            theta /= rope.factor;
        } else if (rope.scaling == RopeScaling::Llama3) {
            const double wavelength = 2.0 * pi / theta;
            const double lowWavelength = rope.originalMaxPositions / rope.lowFrequencyFactor;
            const double highWavelength = rope.originalMaxPositions / rope.highFrequencyFactor;
            if (wavelength > lowWavelength) {
                theta /= rope.factor;
            } else if (wavelength >= highWavelength) {
                const double smooth =
                    (rope.originalMaxPositions / wavelength - rope.lowFrequencyFactor) /
                    (rope.highFrequencyFactor - rope.lowFrequencyFactor);
                theta = (1.0 - smooth) * theta / rope.factor + smooth * theta;
            }
        } else if (rope.scaling == RopeScaling::LongRope) {
            theta = 1.0 / (rope.longRopeFactors[static_cast<std::size_t>(i)] * power);
        }
        inverse[static_cast<std::size_t>(i)] = theta;
    }
    return inverse;
}

// cos(p·θ_i) and sin(p·θ_i) for the rows at positions firstRow .. firstRow + rows − 1 and each
// i < d/2: computed once and shared by every head of a pass (they depend on the position only).
struct RotaryAngles {
    RowMajorMatrix<double> cos, sin;  // rows x d/2 each
};
// `factor` multiplies cos and sin (longrope's attention factor; 1 otherwise).
inline RotaryAngles rotaryAngles(int firstRow, Eigen::Index rows,
                                 const std::vector<double>& inverseFrequencies,
                                 double factor = 1.0) {
    const auto half = static_cast<Eigen::Index>(inverseFrequencies.size());
    RotaryAngles angles{RowMajorMatrix<double>(rows, half), RowMajorMatrix<double>(rows, half)};
    for (Eigen::Index r = 0; r < rows; ++r) {
        for (Eigen::Index i = 0; i < half; ++i) {
            const double angle =
                static_cast<double>(firstRow + r) * inverseFrequencies[static_cast<std::size_t>(i)];
            angles.cos(r, i) = std::cos(angle);
            angles.sin(r, i) = std::sin(angle);
        }
    }
    if (factor != 1.0) {
        angles.cos *= factor;
        angles.sin *= factor;
    }
    return angles;
}

// Rotary positions, rotate-half layout (GPT-NeoX, Llama), applied to a head's queries and keys
// instead of adding positions to X. For the row at position p and each i < d/2:
//   (x_i, x_{i+d/2}) ← (x_i·cos pθ_i − x_{i+d/2}·sin pθ_i,  x_{i+d/2}·cos pθ_i + x_i·sin pθ_i).
// x: rows x d (one head's columns, d even), in place; angles: rows x d/2 (rotaryAngles).
template <typename Scalar>
void rotateHalf(Eigen::Ref<RowMajorMatrix<Scalar>> x, const RotaryAngles& angles) {
    const Eigen::Index half = x.cols() / 2;
    for (Eigen::Index r = 0; r < x.rows(); ++r) {
        for (Eigen::Index i = 0; i < half; ++i) {
            const double c = angles.cos(r, i), s = angles.sin(r, i);
            const double first = x(r, i), second = x(r, i + half);
            x(r, i) = static_cast<Scalar>(first * c - second * s);
            x(r, i + half) = static_cast<Scalar>(second * c + first * s);
        }
    }
}

// The same for one head alone: row r sits at position firstRow + r; inverseFrequencies: d/2
// values θ_i (ropeInverseFrequencies).
template <typename Scalar>
void rotateHalf(Eigen::Ref<RowMajorMatrix<Scalar>> x, int firstRow,
                const std::vector<double>& inverseFrequencies) {
    rotateHalf<Scalar>(x, rotaryAngles(firstRow, x.rows(), inverseFrequencies));
}

// The unscaled rotation with base theta: θ_i = base^(−2i/d).
template <typename Scalar>
void rotateHalf(Eigen::Ref<RowMajorMatrix<Scalar>> x, int firstRow, double base) {
    RopeParameters rope;
    rope.theta = base;
    rotateHalf<Scalar>(x, firstRow, ropeInverseFrequencies(static_cast<int>(x.cols()), rope));
}

// q·k after rotating q to position queryPosition and k to keyPosition, by rotateHalf itself: the
// raw score of one query and one key of a head (before the divisor and the mask). q, k: 1 x d.
// Rotations compose, so it depends on queryPosition − keyPosition only (up to rounding).
inline double rotatedDot(Eigen::Ref<const RowVector<double>> q,
                         Eigen::Ref<const RowVector<double>> k, int queryPosition, int keyPosition,
                         const std::vector<double>& inverseFrequencies) {
    RowMajorMatrix<double> rotatedQuery = q, rotatedKey = k;
    rotateHalf<double>(rotatedQuery, queryPosition, inverseFrequencies);
    rotateHalf<double>(rotatedKey, keyPosition, inverseFrequencies);
    return rotatedQuery.row(0).dot(rotatedKey.row(0));
}

// ---- Activations (transformers' ACT2FN), element-wise on any Eigen array ----

// "gelu": exact, 0.5·x·(1 + erf(x/√2)) (BERT).
template <typename Derived>
void geluExact(Eigen::ArrayBase<Derived>& x) {
    x = x.unaryExpr([](auto v) {
        return decltype(v)(0.5) * v *
               (decltype(v)(1) + std::erf(v * decltype(v)(0.70710678118654752440)));
    });
}
// "gelu_new" / "gelu_pytorch_tanh": 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) (GPT-2).
template <typename Derived>
void geluTanh(Eigen::ArrayBase<Derived>& x) {
    using S = typename Derived::Scalar;
    x = S(0.5) * x * (S(1) + (S(0.79788456080286535588) * (x + S(0.044715) * x.cube())).tanh());
}
// "gelu_fast": 0.5·x·(1 + tanh(x·0.7978845608·(1 + 0.044715·x²))), the constant as written.
template <typename Derived>
void geluFast(Eigen::ArrayBase<Derived>& x) {
    using S = typename Derived::Scalar;
    x = S(0.5) * x * (S(1) + (x * S(0.7978845608) * (S(1) + S(0.044715) * x * x)).tanh());
}
// "silu" / "swish": x·σ(x) (Llama's SwiGLU gate).
template <typename Derived>
void silu(Eigen::ArrayBase<Derived>& x) {
    using S = typename Derived::Scalar;
    x = x / (S(1) + (-x).exp());
}
// "relu": max(x, 0).
template <typename Derived>
void relu(Eigen::ArrayBase<Derived>& x) {
    using S = typename Derived::Scalar;
    x = x.max(S(0));
}

// ---- Norms ----

// Mean and biased variance (as torch.nn.LayerNorm) of one row of d values.
struct RowMoments {
    double mean;
    double variance;
};
template <typename Derived>
RowMoments rowMoments(const Eigen::MatrixBase<Derived>& row) {
    const double mean = row.mean();
    const double variance = (row.array() - mean).square().mean();
    return {mean, variance};
}

// Layer norm of every row:  x_r = (x_r − mean_r) / √(var_r + eps) ⊙ γ + β.
// x: rows x d, in place; gamma, beta: d. Moments are taken in double whatever Scalar is. If given,
// normalised (rows x d) receives x̂ before γ and β, and inverseDeviation (rows) 1/√(var_r + eps):
// what the backward pass needs (double only).
template <typename Scalar>
void layerNormRows(Eigen::Ref<RowMajorMatrix<Scalar>> x,
                   Eigen::Ref<const ColumnVector<Scalar>> gamma,
                   Eigen::Ref<const ColumnVector<Scalar>> beta, double eps,
                   RowMajorMatrix<Scalar>* normalised = nullptr,
                   ColumnVector<Scalar>* inverseDeviation = nullptr) {
    const Eigen::Index rows = x.rows();
    if (normalised) normalised->resize(rows, x.cols());
    if (inverseDeviation) inverseDeviation->resize(rows);
    for (Eigen::Index r = 0; r < rows; ++r) {
        const RowMoments moments = rowMoments(x.row(r).template cast<double>());
        const auto mean = static_cast<Scalar>(moments.mean);
        const auto inverse = static_cast<Scalar>(1.0 / std::sqrt(moments.variance + eps));
        if (normalised) normalised->row(r) = (x.row(r).array() - mean) * inverse;
        if (inverseDeviation) (*inverseDeviation)(r) = inverse;
        x.row(r) = ((x.row(r).array() - mean) * inverse * gamma.transpose().array() +
                    beta.transpose().array())
                       .matrix();
    }
}
// The double version under its old name, for callers that pass plain matrices (no deduction).
inline void layerNormRows(Eigen::Ref<RowMajorMatrix<double>> x,
                          Eigen::Ref<const ColumnVector<double>> gamma,
                          Eigen::Ref<const ColumnVector<double>> beta, double eps,
                          RowMajorMatrix<double>* normalised = nullptr,
                          ColumnVector<double>* inverseDeviation = nullptr) {
    layerNormRows<double>(x, gamma, beta, eps, normalised, inverseDeviation);
}

// RMS norm of every row (Llama's):  x_r = x_r / √(mean(x_r²) + eps) ⊙ γ; no mean taken out, no β.
// x: rows x d, in place (one head's columns of Q or K too: Qwen3's q/k norm); gamma: d. In Scalar:
// the float engine normalises its own Q and K.
template <typename Scalar>
void rmsNormRows(Eigen::Ref<RowMajorMatrix<Scalar>> x, Eigen::Ref<const ColumnVector<Scalar>> gamma,
                 double eps) {
    for (Eigen::Index r = 0; r < x.rows(); ++r) {
        // The mean square in double: in float, a q of 2e19 would square to infinity and
        // normalise to 0 instead of to its direction.
        const double meanSquare =
            x.row(r).template cast<double>().squaredNorm() / static_cast<double>(x.cols());
        const Scalar inverse = static_cast<Scalar>(1.0 / std::sqrt(meanSquare + eps));
        x.row(r) = (x.row(r).array() * inverse * gamma.transpose().array()).matrix();
    }
}
inline void rmsNormRows(Eigen::Ref<RowMajorMatrix<double>> x,
                        Eigen::Ref<const ColumnVector<double>> gamma, double eps) {
    rmsNormRows<double>(x, gamma, eps);
}

// ---- Switching a head off (issue 16) ----

// Head `head`'s columns head·headDim .. (head+1)·headDim − 1 of the concatenated contexts
// (rows x heads·headDim, in place) replaced before the output projection: by zeros, or (byMean)
// every row by their mean row over all rows (positions), taken in double.
template <typename Scalar>
void ablateContextColumns(Eigen::Ref<RowMajorMatrix<Scalar>> context, int head,
                          Eigen::Index headDim, bool byMean) {
    auto columns = context.middleCols(head * headDim, headDim);
    if (!byMean || columns.rows() == 0) {
        columns.setZero();
        return;
    }
    const RowVector<Scalar> mean =
        columns.template cast<double>().colwise().mean().template cast<Scalar>();
    columns.rowwise() = mean;
}

// ---- Masked softmax ----

// Which keys one query row may see, as numbers so the softmax runs on SIMD lanes: a bool select
// falls back to scalar code (and scalar expf). The rows are views (of attention::SoftmaxMask's
// Lq x Lk arrays, core/attention_kernel.h); neither is read when every key of the matrix is
// visible.
template <typename Scalar>
struct SoftmaxMaskRow {
    bool everyKeyVisible;  // no key hidden from any row: the plain softmax
    bool seesAKey;         // this row sees at least one key
    Eigen::Ref<const RowVector<Scalar>> visibleAsOne;           // 1 x Lk: 1 visible, 0 hidden
    Eigen::Ref<const RowVector<Scalar>> hiddenAsMinusInfinity;  // 1 x Lk: 0 visible, −inf hidden
};

// weights = softmax(mask(scaled, fill)) for one query row.  scaled, weights: 1 x Lk.
// fill −∞ hides a key (weight exactly 0); a row that sees no key gets all zeros, never 0/0. A
// finite fill stands in for the hidden scores (weight close to 0), as torch's masked_fill does.
template <typename Scalar>
void maskedSoftmaxRow(Eigen::Ref<const RowVector<Scalar>> scaled,
                      Eigen::Ref<RowVector<Scalar>> weights, const SoftmaxMaskRow<Scalar>& mask,
                      double fill) {
    auto in = scaled.array();
    auto out = weights.array();
    if (mask.everyKeyVisible) {
        out = (in - in.maxCoeff()).exp();
    } else if (std::isinf(fill)) {
        if (!mask.seesAKey) {
            out.setZero();  // no key to attend to: no attention, rather than 0/0
            return;
        }
        const Scalar rowMax = (in + mask.hiddenAsMinusInfinity.array()).maxCoeff();
        // Hidden cells may hold scores above the visible maximum: cap their exponent at 0 so they
        // cannot overflow, then zero them exactly (Eigen's vectorised exp also turns -inf into
        // ~1e-39 rather than 0 in float, so exp(-inf) is never trusted).
        out = (in - rowMax).min(Scalar(0)).exp() * mask.visibleAsOne.array();
    } else {
        // A finite fill beyond this scalar's range would turn into -inf and change the semantics.
        const Scalar clamped = static_cast<Scalar>(
            std::clamp(fill, static_cast<double>(std::numeric_limits<Scalar>::lowest()),
                       static_cast<double>(std::numeric_limits<Scalar>::max())));
        // visible ? score : fill, in arithmetic: exact, since 0·score = 0 and 0·fill = 0.
        out = in * mask.visibleAsOne.array() + clamped * (Scalar(1) - mask.visibleAsOne.array());
        out = (out - out.maxCoeff()).exp();
    }
    out *= Scalar(1) / out.sum();
}

}  // namespace ae::ops
