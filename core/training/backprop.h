#pragma once
// The backward pieces of hand-written backpropagation, in double, one home for each: the
// one-layer trainer (attention_training.cpp) and the whole-model trainer (model_training.cpp)
// both call these. Each is the reverse of a forward op of core/ops.h and says which; shapes are
// stated per function (T rows: tokens or positions). Gradients of parameters are ADDED to the
// output (so several sequences or several uses of one weight accumulate); gradients of inputs are
// written (resized) unless the name says "add".
//
// The finite-difference tests of both trainers (tests/core/training/test_training_gradients.cpp,
// tests/core/training/test_model_training.cpp) check every piece through the parameters it feeds.

#include <Eigen/Core>

#include "core/ops.h"
#include "core/scene.h"

namespace ae::backprop {

// ---- Softmax rows (ops::maskedSoftmaxRow) ----

// weights = softmax(scores) row by row; given dLoss/dweights, returns dLoss/dscores:
//   dZ_ij = A_ij (dA_ij − Σ_k A_ik dA_ik).
// weights, weightGradient: T x Lk. A key hidden with −∞ has weight exactly 0 and so gets no
// gradient from this formula; a key hidden by a finite fill has a small weight but no path back
// to its score, so callers with a finite fill pass `allowed` (T x Lk, 1 visible, 0 hidden) to
// zero those entries. nullptr: every entry counts.
inline MatrixD softmaxRowsBackward(const MatrixD& weights, const MatrixD& weightGradient,
                                   const MatrixD* allowed = nullptr) {
    const VectorD rowDot = (weights.array() * weightGradient.array()).rowwise().sum();
    MatrixD dZ = (weights.array() * (weightGradient.array().colwise() - rowDot.array())).matrix();
    if (allowed) dZ.array() *= allowed->array();
    return dZ;
}

// ---- One attention head ----

// Forward (attention_engine.cpp, model_forward.cpp's attend): S = q·kᵀ, Z = scale·S,
// A = softmax(mask(Z)), C = A·v. Given dLoss/dC (T x hd), writes dq, dk, dv (T x hd; of the q
// and k that entered the product, i.e. after any rotation). q, k, v: T x hd; weights A: T x T;
// allowed: as softmaxRowsBackward.
template <typename QRef, typename KRef, typename VRef, typename CRef>
void attentionHeadBackward(const QRef& q, const KRef& k, const VRef& v, const MatrixD& weights,
                           const CRef& contextGradient, double scale, const MatrixD* allowed,
                           Eigen::Ref<MatrixD> dq, Eigen::Ref<MatrixD> dk, Eigen::Ref<MatrixD> dv) {
    // C = A·v:  dA = dC·vᵀ (T x T), dv = Aᵀ·dC (T x hd)
    const MatrixD dA = contextGradient * v.transpose();
    dv.noalias() = weights.transpose() * contextGradient;
    MatrixD dZ = softmaxRowsBackward(weights, dA, allowed);
    // Z = scale·q·kᵀ:  dq = scale·dZ·k, dk = scale·dZᵀ·q
    dZ *= scale;
    dq.noalias() = dZ * k;
    dk.noalias() = dZ.transpose() * q;
}

// ---- Projections ----

// Forward y = x·W + b with W stored [in, out] (the one-layer scene's W_Q..W_O, gpt2's Conv1D).
// x: T x in, W: in x out, dy: T x out. Adds dW (in x out) and db (out; skipped when null),
// returns dx (T x in).
template <typename XRef, typename WRef, typename DyRef>
MatrixD projectionBackward(const XRef& x, const WRef& weight, const DyRef& dy,
                           Eigen::Ref<MatrixD> dW, VectorD* dBias) {
    dW.noalias() += x.transpose() * dy;
    if (dBias) *dBias += dy.colwise().sum().transpose();
    return dy * weight.transpose();
}

// Forward y = x·Wᵀ (+ b) with W stored [out, in] (nn.Linear: llama, bert). x: T x in,
// W: out x in, dy: T x out. Adds dW (out x in) and db (out; skipped when null), returns dx.
template <typename XRef, typename WRef, typename DyRef>
MatrixD linearBackward(const XRef& x, const WRef& weight, const DyRef& dy, Eigen::Ref<MatrixD> dW,
                       VectorD* dBias) {
    dW.noalias() += dy.transpose() * x;
    if (dBias) *dBias += dy.colwise().sum().transpose();
    return dy * weight;
}

// ---- Norms ----

// Layer norm (ops::layerNormRows): y = x̂·diag(γ) + β, x̂ = (x − mean)·r, r = 1/√(var + eps).
// dy, normalised (x̂): T x d; inverseDeviation (r): T; gamma: d. Adds dγ = Σ_rows dy ⊙ x̂ and
// dβ = Σ_rows dy (dBeta null: no β), returns dx (T x d):
//   dx = r (dx̂ − mean(dx̂) − x̂ · mean(dx̂ ⊙ x̂)),  dx̂ = dy ⊙ γ  (the two means: through mean, var)
inline MatrixD layerNormBackward(const MatrixD& dy, const MatrixD& normalised,
                                 const VectorD& inverseDeviation, const VectorD& gamma,
                                 VectorD& dGamma, VectorD* dBeta) {
    dGamma += (dy.array() * normalised.array()).colwise().sum().transpose().matrix();
    if (dBeta) *dBeta += dy.colwise().sum().transpose();
    const MatrixD dNormalised = dy * gamma.asDiagonal();
    const double d = static_cast<double>(dy.cols());
    MatrixD dx(dy.rows(), dy.cols());
    for (Eigen::Index i = 0; i < dy.rows(); ++i) {
        const double meanGradient = dNormalised.row(i).mean();
        const double meanProjected = dNormalised.row(i).dot(normalised.row(i)) / d;
        dx.row(i) = inverseDeviation(i) * (dNormalised.row(i).array() - meanGradient -
                                           normalised.row(i).array() * meanProjected)
                                              .matrix();
    }
    return dx;
}

// RMS norm (ops::rmsNormRows): y = x·r ⊙ γ, r = 1/√(mean(x²) + eps). x (the norm's input), dy:
// T x d; gamma: d. Adds dγ = Σ_rows dy ⊙ x̂ (x̂ = x·r), returns dx (T x d):
//   dx = r (g − x̂ · mean(g ⊙ x̂)),  g = dy ⊙ γ   (r depends on x through mean(x²) only)
inline MatrixD rmsNormBackward(const MatrixD& dy, const MatrixD& x, const VectorD& gamma,
                               double eps, VectorD& dGamma) {
    const double d = static_cast<double>(x.cols());
    MatrixD dx(x.rows(), x.cols());
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
        const double r = 1.0 / std::sqrt(x.row(i).squaredNorm() / d + eps);
        const Eigen::RowVectorXd normalised = x.row(i) * r;
        dGamma += (dy.row(i).array() * normalised.array()).matrix().transpose();
        const Eigen::RowVectorXd g = (dy.row(i).array() * gamma.transpose().array()).matrix();
        dx.row(i) = r * (g - normalised * (g.dot(normalised) / d));
    }
    return dx;
}

// ---- Rotary positions (ops::rotateHalf) ----

// Each row's rotation is orthogonal, so its transpose (the rotation by the negative angle) carries
// the gradient back: dx = R(−pθ)·dy. gradient: T x hd (one head's columns), in place; angles as
// the forward pass used them.
inline void rotateHalfBackward(Eigen::Ref<ops::RowMajorMatrix<double>> gradient,
                               const ops::RotaryAngles& angles) {
    const ops::RotaryAngles negative{angles.cos, -angles.sin};
    ops::rotateHalf<double>(gradient, negative);
}

// ---- Activations (ops::geluTanh, ops::silu) ----

// dLoss/du for a = gelu_tanh(u):  a' = ½(1 + t) + ½u(1 − t²)·c(1 + 3·0.044715u²),
// t = tanh(c(u + 0.044715u³)), c = √(2/π). u, da: T x I.
inline MatrixD geluTanhBackward(const MatrixD& u, const MatrixD& da) {
    const double c = 0.79788456080286535588, k = 0.044715;
    const Eigen::ArrayXXd x = u.array();
    const Eigen::ArrayXXd t = (c * (x + k * x.cube())).tanh();
    const Eigen::ArrayXXd derivative =
        0.5 * (1.0 + t) + 0.5 * x * (1.0 - t.square()) * c * (1.0 + 3.0 * k * x.square());
    MatrixD du = (da.array() * derivative).matrix();
    return du;
}

// dLoss/du for a = silu(u) = u·σ(u):  a' = σ(u)(1 + u(1 − σ(u))). u, da: T x I.
inline MatrixD siluBackward(const MatrixD& u, const MatrixD& da) {
    const Eigen::ArrayXXd x = u.array();
    const Eigen::ArrayXXd s = 1.0 / (1.0 + (-x).exp());
    MatrixD du = (da.array() * s * (1.0 + x * (1.0 - s))).matrix();
    return du;
}

}  // namespace ae::backprop
