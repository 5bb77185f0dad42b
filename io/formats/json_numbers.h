#pragma once
// Numbers written into result JSON by hand: a result holds millions of them, too many for
// QJsonDocument's memory and speed. Shortest digits that read back to the same value (float or
// double); NaN and ±inf as JavaScript spells them, for the one-layer export's overflow report.
#include <Eigen/Core>
#include <QByteArray>
#include <charconv>
#include <cmath>

namespace ae::io::json {

template <typename Scalar>
void appendNumber(QByteArray& out, Scalar value) {
    if (std::isnan(value)) {
        out.append("NaN");
        return;
    }
    if (std::isinf(value)) {
        out.append(value > 0 ? "Infinity" : "-Infinity");
        return;
    }
    char buffer[32];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    out.append(buffer, static_cast<qsizetype>(result.ptr - buffer));
}

// A matrix as a list of rows; `separator` between numbers and between rows ("," or ", ").
template <typename Derived>
void appendMatrix(QByteArray& out, const Eigen::DenseBase<Derived>& m, const char* separator) {
    out.append('[');
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
        if (i) out.append(separator);
        out.append('[');
        for (Eigen::Index j = 0; j < m.cols(); ++j) {
            if (j) out.append(separator);
            appendNumber(out, m(i, j));
        }
        out.append(']');
    }
    out.append(']');
}

}  // namespace ae::io::json
