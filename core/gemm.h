#pragma once
// The large matrix products, at the machine's best rate: through OpenBLAS when the build has it
// (its kernels are chosen at run time for the CPU, AVX2 or AVX-512), else through Eigen.
//
// Threading: the engine runs its own threads (OpenMP) and calls these from inside them, one block
// of a product per thread. Debian's OpenMP build of OpenBLAS then runs each call on its calling
// thread, so BLAS threads never pile on top of the engine's (see configureBlasThreads).

#include <Eigen/Core>
#include <string>
#include <type_traits>

namespace ae::gemm {

// Whether products go through OpenBLAS in this build.
bool usesBlas();

// One line naming the library that multiplies, for bench and --version: "OpenBLAS 0.3.21
// (SkylakeX kernels, OpenMP threads)" or "Eigen 3.4.0".
std::string description();

// OpenBLAS picks its kernels from the CPU model it recognises. Under a virtual machine that
// reports an unknown model it falls back to generic ones (Prescott: a quarter of the rate). When
// the kernels in use are older than what the CPU's flags allow, returns the core type to ask for
// with OPENBLAS_CORETYPE (SkylakeX with AVX-512, Haswell with AVX2 and FMA); else empty.
std::string betterCoreType();

// The kernels' name as OpenBLAS reports it ("Haswell"), empty without OpenBLAS.
std::string coreName();

// Makes sure BLAS threads do not oversubscribe the engine's: with an OpenMP build nothing is
// needed (a call inside a parallel region runs on its thread); a pthreads build (a user's
// alternatives may select one) is told to use one thread. Idempotent; called by the first product.
void configureBlasThreads();

// c = a·b (+ c when accumulate). a: m x k, b: k x n, c: m x n. Each operand is a pointer, its
// storage order and the distance between its rows (row-major) or columns (column-major); c is
// row-major. float and double.
template <typename Scalar>
struct Operand {
    const Scalar* data;
    Eigen::Index outerStride;
    bool rowMajor;
};
template <typename Scalar>
void multiply(Eigen::Index m, Eigen::Index n, Eigen::Index k, Operand<Scalar> a, Operand<Scalar> b,
              Scalar* c, Eigen::Index cStride, bool accumulate);

// An Eigen block, map or transpose with unit inner stride as an operand.
template <typename Derived>
Operand<typename Derived::Scalar> operand(const Eigen::MatrixBase<Derived>& m) {
    eigen_assert(m.innerStride() == 1);
    return {m.derived().data(), m.outerStride(), bool(Derived::IsRowMajor)};
}

// Below this many multiply-adds Eigen's inlined product beats a library call.
constexpr double blasMinimumMultiplyAdds = 32.0 * 32.0 * 32.0;

// out = a·b, or out += a·b when accumulate; out row-major with unit inner stride. Through BLAS
// when it is present and the product is large enough, else Eigen's single-threaded product.
template <typename A, typename B, typename Out>
void multiplyInto(const Eigen::MatrixBase<A>& a, const Eigen::MatrixBase<B>& b,
                  Eigen::MatrixBase<Out>& out, bool accumulate) {
    static_assert(
        bool(Out::IsRowMajor) || Out::ColsAtCompileTime == 1 || Out::RowsAtCompileTime == 1,
        "multiplyInto writes row-major blocks");
    // A plain matrix is sized as Eigen's assignment would size it; a block must fit already.
    if constexpr (std::is_base_of_v<Eigen::PlainObjectBase<Out>, Out>) {
        if (!accumulate) out.derived().resize(a.rows(), b.cols());
    }
    eigen_assert(out.rows() == a.rows() && out.cols() == b.cols() && a.cols() == b.rows());
    const double multiplyAdds = double(a.rows()) * double(a.cols()) * double(b.cols());
    if (usesBlas() && multiplyAdds >= blasMinimumMultiplyAdds && a.innerStride() == 1 &&
        b.innerStride() == 1 && out.innerStride() == 1 && bool(Out::IsRowMajor)) {
        multiply<typename Out::Scalar>(a.rows(), b.cols(), a.cols(), operand(a), operand(b),
                                       out.derived().data(), out.outerStride(), accumulate);
    } else if (accumulate) {
        out.derived().noalias() += a * b;
    } else {
        out.derived().noalias() = a * b;
    }
}

template <typename A, typename B, typename Out>
void multiplyInto(const Eigen::MatrixBase<A>& a, const Eigen::MatrixBase<B>& b,
                  Eigen::MatrixBase<Out>&& out, bool accumulate) {
    multiplyInto(a, b, out, accumulate);
}

}  // namespace ae::gemm
