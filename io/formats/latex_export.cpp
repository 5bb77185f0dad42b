#include "io/formats/latex_export.h"

#include <QStringList>
#include <cmath>

namespace ae::io {

QString latexBmatrix(const MatrixD& m, int decimals) {
    QStringList rows;
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
        QStringList cells;
        for (Eigen::Index j = 0; j < m.cols(); ++j) {
            QString cell = QString::number(m(i, j), 'f', decimals);
            // Rounding can leave "-0.00", which reads as a different number on a slide.
            if (QString::number(std::abs(m(i, j)), 'f', decimals).toDouble() == 0.0)
                cell.remove('-');
            cells << cell;
        }
        rows << "  " + cells.join(" & ");
    }
    return "\\begin{bmatrix}\n" + rows.join(" \\\\\n") + "\n\\end{bmatrix}";
}

}  // namespace ae::io
