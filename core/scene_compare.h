#pragma once
// Whether two parts of scenes are the same, bit for bit: what tells an edit from none (the undo
// stack's merged drags, a model layer judged against the layer as the model has it, an edit of a
// layer's weights told from one of its text).

#include "core/scene.h"

namespace ae {

// The same shape and the same numbers (two empty matrices of one shape are the same).
template <typename M>
bool sameMatrix(const M& a, const M& b) {
    return a.rows() == b.rows() && a.cols() == b.cols() && (a.size() == 0 || a == b);
}

inline bool sameMask(const Mask& a, const Mask& b) {
    if (a.causal != b.causal || a.window != b.window || a.padding != b.padding) return false;
    if (a.allowed.has_value() != b.allowed.has_value()) return false;
    return !a.allowed ||
           (a.allowed->rows() == b.allowed->rows() && a.allowed->cols() == b.allowed->cols() &&
            (*a.allowed == *b.allowed).all());
}

}  // namespace ae
