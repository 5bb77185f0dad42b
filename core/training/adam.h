#pragma once
// Adam (β1 0.9, β2 0.999, ε 1e-8) with the trainers' learning-rate schedule: one home for the
// update both the one-layer trainer (attention_training.cpp) and the whole-model trainer
// (model_training.cpp) take, so the two cannot drift apart.

#include <Eigen/Core>
#include <algorithm>
#include <cmath>

#include "core/scene.h"

namespace ae::adam {

constexpr double kBeta1 = 0.9, kBeta2 = 0.999, kEpsilon = 1e-8;

// What step number `step` (1-based) moves by.
struct StepSize {
    // The peak rate, or with a step budget a cosine from the peak down to 0 at step totalSteps:
    // late steps settle instead of jittering around what was learned.
    double rate = 0.0;
    double correction1 = 1.0;  // 1 − β1^step, the bias correction of the first moment
    double correction2 = 1.0;  // 1 − β2^step, of the second
};

// totalSteps 0: the rate stays at peakRate.
inline StepSize stepSize(double peakRate, int step, int totalSteps) {
    StepSize s;
    s.correction1 = 1.0 - std::pow(kBeta1, step);
    s.correction2 = 1.0 - std::pow(kBeta2, step);
    s.rate = peakRate;
    if (totalSteps > 0) {
        const double progress = std::min(1.0, (step - 1.0) / totalSteps);
        s.rate *= 0.5 * (1.0 + std::cos(3.141592653589793 * progress));
    }
    return s;
}

// One update in place of one parameter block, given its gradient; the moments are Adam's running
// means of the gradient and of its square. All four: n values (a matrix's, contiguous).
inline void update(Eigen::Map<VectorD> parameter, Eigen::Map<const VectorD> gradient,
                   Eigen::Map<VectorD> firstMoment, Eigen::Map<VectorD> secondMoment,
                   const StepSize& s) {
    firstMoment = kBeta1 * firstMoment + (1.0 - kBeta1) * gradient;
    secondMoment = kBeta2 * secondMoment + (1.0 - kBeta2) * gradient.cwiseAbs2();
    parameter.array() -= s.rate * (firstMoment.array() / s.correction1) /
                         ((secondMoment.array() / s.correction2).sqrt() + kEpsilon);
}

}  // namespace ae::adam
