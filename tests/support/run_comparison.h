#pragma once
// Two float runs of a whole model (core/model/model.h) side by side, as the model session's tests
// hold them: bit for bit, or by their largest difference.

#include <Eigen/Core>

#include "core/model/model.h"

namespace ae::testing {

using RunF = model::ModelRun<float>;

template <typename A, typename B>
inline bool identical(const A& a, const B& b) {
    return a.rows() == b.rows() && a.cols() == b.cols() && (a.size() == 0 || a == b);
}

template <typename A, typename B>
inline double largestDifference(const A& a, const B& b) {
    if (a.rows() != b.rows() || a.cols() != b.cols()) return 1e30;
    if (a.size() == 0) return 0.0;
    return static_cast<double>(
        (a.template cast<double>() - b.template cast<double>()).cwiseAbs().maxCoeff());
}

// Every kept matrix of two runs, bit for bit.
inline bool sameRun(const RunF& a, const RunF& b) {
    if (a.tokens != b.tokens || a.layers.size() != b.layers.size()) return false;
    for (std::size_t l = 0; l < a.layers.size(); ++l) {
        const auto &x = a.layers[l], &y = b.layers[l];
        if (!identical(x.hiddenIn, y.hiddenIn) || !identical(x.query, y.query) ||
            !identical(x.key, y.key) || !identical(x.value, y.value) ||
            x.keyValueHeads != y.keyValueHeads || x.weights.size() != y.weights.size())
            return false;
        for (std::size_t h = 0; h < x.weights.size(); ++h) {
            if (!identical(x.scores[h], y.scores[h]) || !identical(x.weights[h], y.weights[h]))
                return false;
        }
    }
    if (!identical(a.lastHidden, b.lastHidden)) return false;
    // The window's runs keep the last row of the logits only (RunOptions); then the final hidden
    // state every row comes from must agree.
    if (a.logitsFrom == b.logitsFrom && a.logits.rows() == b.logits.rows())
        return identical(a.logits, b.logits) && identical(a.finalHidden, b.finalHidden);
    return identical(a.finalHidden, b.finalHidden);
}

inline double outputDifference(const RunF& a, const RunF& b) {
    return a.config.isDecoder() ? largestDifference(model::Matrix<float>(a.logits.bottomRows(1)),
                                                    model::Matrix<float>(b.logits.bottomRows(1)))
                                : largestDifference(a.lastHidden, b.lastHidden);
}

}  // namespace ae::testing
