// The products the engine runs through OpenBLAS (core/gemm.h) against Eigen's: every storage order
// and transpose the engine hands over, blocks with a row stride, accumulation onto a bias, float
// and double, and sizes on both sides of the threshold below which Eigen multiplies.

#include <QtTest>

#include "core/gemm.h"

using namespace ae;

namespace {

template <typename Scalar>
using RowMajor = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// The largest |x − y| relative to the largest |y|.
template <typename A, typename B>
double relativeError(const A& x, const B& y) {
    return (x - y).cwiseAbs().maxCoeff() / std::max(1e-30, double(y.cwiseAbs().maxCoeff()));
}

template <typename Scalar>
void everyLayoutMatchesEigen(double tolerance) {
    for (const auto& [m, n, k] : {std::array<int, 3>{3, 5, 7}, {64, 64, 64}, {130, 96, 200}}) {
        const RowMajor<Scalar> a = RowMajor<Scalar>::Random(m, k);
        const RowMajor<Scalar> bStored = RowMajor<Scalar>::Random(n, k);  // nn.Linear's [out, in]
        const RowMajor<Scalar> b = bStored.transpose();
        const RowMajor<Scalar> expected = a * b;

        RowMajor<Scalar> out;  // a plain matrix is sized by the product
        gemm::multiplyInto(a, b, out, false);
        QVERIFY(relativeError(out, expected) < tolerance);

        // b used transposed, as the whole-model projections use a [out, in] weight.
        gemm::multiplyInto(a, bStored.transpose(), out, false);
        QVERIFY(relativeError(out, expected) < tolerance);

        // a transposed too (column-major view of a row-major matrix).
        const RowMajor<Scalar> aStored = a.transpose();
        gemm::multiplyInto(aStored.transpose(), b, out, false);
        QVERIFY(relativeError(out, expected) < tolerance);

        // Into a block of a wider matrix, whose rows are further apart than its width, onto a
        // bias already written there; the columns around it untouched.
        RowMajor<Scalar> wide = RowMajor<Scalar>::Constant(m, n + 9, Scalar(7));
        auto block = wide.middleCols(4, n);
        block.rowwise() = RowMajor<Scalar>::Constant(1, n, Scalar(0.5)).row(0);
        gemm::multiplyInto(a, b, block, true);
        QVERIFY(relativeError(wide.middleCols(4, n), (expected.array() + Scalar(0.5)).matrix()) <
                tolerance);
        QVERIFY((wide.leftCols(4).array() == Scalar(7)).all());
        QVERIFY((wide.rightCols(5).array() == Scalar(7)).all());

        // Row and column blocks of the operands, as each thread takes its share.
        const int rows = m / 2 + 1, cols = n / 2 + 1;
        RowMajor<Scalar> part(rows, cols);
        gemm::multiplyInto(a.bottomRows(rows), b.rightCols(cols), part, false);
        QVERIFY(relativeError(part, expected.bottomRightCorner(rows, cols)) < tolerance);
    }
}

}  // namespace

class TestGemm : public QObject {
    Q_OBJECT
private slots:
    void floatMatchesEigen() { everyLayoutMatchesEigen<float>(1e-5); }
    void doubleMatchesEigen() { everyLayoutMatchesEigen<double>(1e-13); }

    // A check that can fail: a wrong product is not within the tolerance.
    void wrongProductIsCaught() {
        const RowMajor<float> a = RowMajor<float>::Random(64, 64),
                              b = RowMajor<float>::Random(64, 64);
        RowMajor<float> out;
        gemm::multiplyInto(a, b.transpose(), out, false);  // aᵀ-free but b transposed: not a·b
        QVERIFY(relativeError(out, RowMajor<float>(a * b)) > 1e-2);
    }

    void describesWhatMultiplies() {
        const std::string text = gemm::description();
        QVERIFY2(text.rfind(gemm::usesBlas() ? "OpenBLAS " : "Eigen ", 0) == 0, text.c_str());
        if (gemm::usesBlas())
            QVERIFY2(text.find(gemm::coreName()) != std::string::npos, text.c_str());
    }
};

QTEST_APPLESS_MAIN(TestGemm)
#include "test_gemm.moc"
