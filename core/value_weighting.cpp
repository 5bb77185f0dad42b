#include "core/value_weighting.h"

#include <stdexcept>
#include <string>

namespace ae {

Eigen::RowVectorXd valueOutputNorms(
    const Eigen::Ref<const ops::RowMajorMatrix<double>>& values,
    const Eigen::Ref<const ops::RowMajorMatrix<double>>& outputRows) {
    if (outputRows.size() == 0) return values.rowwise().norm().transpose();
    if (outputRows.rows() != values.cols())
        throw std::invalid_argument(
            "value norms: values of width " + std::to_string(values.cols()) + " and W_O rows " +
            std::to_string(outputRows.rows()) + " x " + std::to_string(outputRows.cols()));
    const ops::RowMajorMatrix<double> moved = values * outputRows;
    return moved.rowwise().norm().transpose();
}

template <typename Scalar>
ops::RowMajorMatrix<Scalar> valueWeightedMap(const ops::RowMajorMatrix<Scalar>& weights,
                                             const Eigen::RowVectorXd& norms) {
    if (norms.size() != weights.cols())
        throw std::invalid_argument("value-weighted map: " + std::to_string(norms.size()) +
                                    " value norms for " + std::to_string(weights.cols()) + " keys");
    ops::RowMajorMatrix<double> n =
        weights.template cast<double>().array().rowwise() * norms.array();
    for (Eigen::Index i = 0; i < n.rows(); ++i) {
        const double row = n.row(i).sum();
        if (row > 0)
            n.row(i) /= row;
        else
            n.row(i).setZero();
    }
    return n.template cast<Scalar>();
}

template ops::RowMajorMatrix<float> valueWeightedMap<float>(const ops::RowMajorMatrix<float>&,
                                                            const Eigen::RowVectorXd&);
template ops::RowMajorMatrix<double> valueWeightedMap<double>(const ops::RowMajorMatrix<double>&,
                                                              const Eigen::RowVectorXd&);

}  // namespace ae
