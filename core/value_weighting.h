#pragma once
// Value-weighted attention (Kobayashi et al. 2020): what a head moves from each key, not only how
// much it looks there. The one home of these maps: the model view's (document/run_analysis.h),
// the value_norms analysis's sink_norm (core/model/workbench.h) and the explorer's one-layer maps
// (plot/heatmap_grid.h) call it. The sink_norm head score takes key 0's share row by row on its
// own view of the weights, which skips padding rows (core/model/head_scores.h); a test holds the
// two equal.
//
//   f_j    = ‖v_j·W_O^h‖     (‖v_j‖ in a layer without an output projection)
//   map_ij = α_ij·f_j / Σ_j α_ij·f_j, a row of zeros where the sum is 0
//
// Shapes: values Lk x dHead (one head's), outputRows dHead x dOut (that head's rows of W_O),
// weights Lq x Lk, norms Lk.

#include <Eigen/Core>

#include "core/ops.h"

namespace ae {

// f_j for every key j of one head. `outputRows` empty: the layer has no output projection.
Eigen::RowVectorXd valueOutputNorms(
    const Eigen::Ref<const ops::RowMajorMatrix<double>>& values,
    const Eigen::Ref<const ops::RowMajorMatrix<double>>& outputRows);

// The value-weighted map of one head's weights. Throws std::invalid_argument when there is not
// one norm a key.
template <typename Scalar>
ops::RowMajorMatrix<Scalar> valueWeightedMap(const ops::RowMajorMatrix<Scalar>& weights,
                                             const Eigen::RowVectorXd& norms);

extern template ops::RowMajorMatrix<float> valueWeightedMap<float>(
    const ops::RowMajorMatrix<float>&, const Eigen::RowVectorXd&);
extern template ops::RowMajorMatrix<double> valueWeightedMap<double>(
    const ops::RowMajorMatrix<double>&, const Eigen::RowVectorXd&);

}  // namespace ae
