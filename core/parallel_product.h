#pragma once
// Matrix products on every core without Eigen's own threading.

#include <Eigen/Core>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace ae {

// out = in·w (+ bᵀ when b is given): (rows, n)·(n, m) + (m) -> (rows, m), shared between threads,
// each running a single-threaded product on its block: rows when there are many, else columns (a
// 64-row product split by rows leaves each thread too thin a panel). Eigen's own parallel product
// is switched off (EIGEN_DONT_PARALLELIZE): its threads busy-wait on each other, which stalls badly
// whenever the machine has other work, and this split needs only one barrier at the end.
// Returns whether every value of `out` is finite: each thread checks its own block while it is
// still in cache, which costs far less than a second pass over `out`.
template <typename Matrix, typename Vector>
bool affine(const Matrix& in, const Matrix& w, const Vector* b, Matrix& out) {
    out.resize(in.rows(), w.cols());
    const Eigen::Index rows = in.rows(), columns = w.cols();
    const bool byRows = rows >= 256;
    // A second thread costs more than it saves on a small product.
    const bool worthSplitting = static_cast<double>(rows) * in.cols() * columns > 4e6;
    bool finite = true;
#pragma omp parallel if (worthSplitting) reduction(&& : finite)
    {
#ifdef _OPENMP
        const Eigen::Index thread = omp_get_thread_num(), threads = omp_get_num_threads();
#else
        const Eigen::Index thread = 0, threads = 1;
#endif
        const Eigen::Index size = byRows ? rows : columns;
        const Eigen::Index begin = size * thread / threads;
        const Eigen::Index count = size * (thread + 1) / threads - begin;
        if (count > 0 && byRows) {
            out.middleRows(begin, count).noalias() = in.middleRows(begin, count) * w;
            if (b) out.middleRows(begin, count).rowwise() += b->transpose();
            finite = out.middleRows(begin, count).allFinite();
        } else if (count > 0) {
            out.middleCols(begin, count).noalias() = in * w.middleCols(begin, count);
            if (b) out.middleCols(begin, count).rowwise() += b->segment(begin, count).transpose();
            finite = out.middleCols(begin, count).allFinite();
        }
    }
    return finite;
}

template <typename Matrix, typename Vector>
bool affine(const Matrix& in, const Matrix& w, const Vector& b, Matrix& out) {
    return affine(in, w, &b, out);
}

template <typename Matrix>
bool product(const Matrix& in, const Matrix& w, Matrix& out) {
    return affine(
        in, w,
        static_cast<const Eigen::Matrix<typename Matrix::Scalar, Eigen::Dynamic, 1>*>(nullptr),
        out);
}

}  // namespace ae
