#pragma once
// Matrix products on every core without Eigen's own threading.

#include <Eigen/Core>
#include <cmath>
#include <initializer_list>
#include <vector>

#include "core/gemm.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace ae {

// Whether every value of `block` is finite. x·0 is 0 for a finite x and NaN for ±inf or NaN, so
// the sum is finite exactly when every value is; a sum vectorises, while Eigen's allFinite() on a
// block (a strided view) runs one scalar at a time, which cost ~4% of a pass at L = 64.
template <typename Block>
bool allFiniteFast(const Block& block) {
    return std::isfinite((block.array() * typename Block::Scalar(0)).sum());
}

// One product of a batch: out = in·w (+ bᵀ when b is given), (rows, n)·(n, m) + (m) -> (rows, m).
template <typename Matrix, typename Vector>
struct AffineProduct {
    const Matrix& in;
    const Matrix& w;
    const Vector* b;
    Matrix& out;
};

// Runs every product of `batch` on every core, in one parallel region: each thread computes its
// block of each product with a single-threaded product (core/gemm.h), so a batch costs one barrier
// rather than one per product. A block is rows when there are many, else columns (a 64-row product
// split by rows leaves each thread too thin a panel). Eigen's own parallel product is switched off
// (EIGEN_DONT_PARALLELIZE): its threads busy-wait on each other, which stalls badly whenever the
// machine has other work. Returns, per product, whether every value of its `out` is finite: each
// thread checks its own block while it is still in cache, which costs far less than a second pass.
// A bias is written first and the product added onto it: Eigen zeroes a product's destination
// before it accumulates, so this saves that pass and the bias's own.
template <typename Matrix, typename Vector>
std::vector<bool> affineBatch(std::initializer_list<AffineProduct<Matrix, Vector>> batch) {
    const AffineProduct<Matrix, Vector>* products = batch.begin();
    const size_t productCount = batch.size();
    double flops = 0.0;
    for (const auto& p : batch) {
        p.out.resize(p.in.rows(), p.w.cols());
        flops += static_cast<double>(p.in.rows()) * p.in.cols() * p.w.cols();
    }
    std::vector<int> nonFiniteBlocks(productCount, 0);
    // A second thread costs more than it saves on a small batch.
#pragma omp parallel if (flops > 4e6)
    {
#ifdef _OPENMP
        const Eigen::Index thread = omp_get_thread_num(), threads = omp_get_num_threads();
#else
        const Eigen::Index thread = 0, threads = 1;
#endif
        for (size_t i = 0; i < productCount; ++i) {
            const auto& [in, w, b, out] = products[i];
            const bool byRows = in.rows() >= 256;
            const Eigen::Index size = byRows ? in.rows() : w.cols();
            const Eigen::Index begin = size * thread / threads;
            const Eigen::Index count = size * (thread + 1) / threads - begin;
            bool finite = true;
            if (count > 0 && byRows) {
                auto block = out.middleRows(begin, count);
                if (b) block.rowwise() = b->transpose();
                gemm::multiplyInto(in.middleRows(begin, count), w, block, b != nullptr);
                finite = allFiniteFast(block);
            } else if (count > 0) {
                auto block = out.middleCols(begin, count);
                if (b) block.rowwise() = b->segment(begin, count).transpose();
                gemm::multiplyInto(in, w.middleCols(begin, count), block, b != nullptr);
                finite = allFiniteFast(block);
            }
            if (!finite) {
#pragma omp atomic
                ++nonFiniteBlocks[i];
            }
        }
    }
    std::vector<bool> finite;
    for (int blocks : nonFiniteBlocks)
        finite.push_back(blocks == 0);
    return finite;
}

// One product: out = in·w + bᵀ. Returns whether every value of `out` is finite.
template <typename Matrix, typename Vector>
bool affine(const Matrix& in, const Matrix& w, const Vector& b, Matrix& out) {
    return affineBatch<Matrix, Vector>({{in, w, &b, out}})[0];
}

// One product: out = in·w. Returns whether every value of `out` is finite.
template <typename Matrix>
bool product(const Matrix& in, const Matrix& w, Matrix& out) {
    using Vector = Eigen::Matrix<typename Matrix::Scalar, Eigen::Dynamic, 1>;
    return affineBatch<Matrix, Vector>({{in, w, nullptr, out}})[0];
}

}  // namespace ae
