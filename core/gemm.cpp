#include "core/gemm.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <mutex>

#ifdef AE_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace ae::gemm {

namespace {

bool sameName(std::string a, std::string b) {
    auto lower = [](std::string s) {
        std::transform(s.begin(), s.end(), s.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        return s;
    };
    return lower(std::move(a)) == lower(std::move(b));
}

template <std::size_t N>
bool oneOf(const std::string& name, const std::array<const char*, N>& names) {
    return std::any_of(names.begin(), names.end(),
                       [&](const char* n) { return sameName(name, n); });
}

}  // namespace

static std::string eigenDescription() {
    return "Eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." +
           std::to_string(EIGEN_MAJOR_VERSION) + "." + std::to_string(EIGEN_MINOR_VERSION);
}

#ifdef AE_HAVE_OPENBLAS

bool usesBlas() {
    // AE_PRODUCTS=eigen runs every product through Eigen instead: the A/B switch for benchmarks.
    static const bool eigenAsked = [] {
        const char* asked = std::getenv("AE_PRODUCTS");
        return asked != nullptr && std::string(asked) == "eigen";
    }();
    return !eigenAsked;
}

std::string coreName() {
    const char* name = openblas_get_corename();
    return name ? std::string(name) : std::string();
}

std::string description() {
    if (!usesBlas()) return eigenDescription() + " (AE_PRODUCTS=eigen)";
    std::string threads;
    switch (openblas_get_parallel()) {
        case 0:
            threads = "single-threaded";
            break;
        case 1:
            threads = "pthreads, held to one thread";
            break;
        default:
            threads = "OpenMP threads";
            break;
    }
    std::string config = openblas_get_config();
    // "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY SkylakeX MAX_THREADS=64": the version is the
    // second word.
    std::string version;
    if (config.rfind("OpenBLAS ", 0) == 0) version = config.substr(9, config.find(' ', 9) - 9);
    return "OpenBLAS " + version + " (" + coreName() + " kernels, " + threads + ")";
}

void configureBlasThreads() {
    static std::once_flag once;
    std::call_once(once, [] {
        // A pthreads build would start its own threads inside each of the engine's. (Never call
        // openblas_set_num_threads on the OpenMP build: it sets OpenMP's thread count too.)
        if (openblas_get_parallel() == 1) openblas_set_num_threads(1);
    });
}

template <>
void multiply<float>(Eigen::Index m, Eigen::Index n, Eigen::Index k, Operand<float> a,
                     Operand<float> b, float* c, Eigen::Index cStride, bool accumulate) {
    configureBlasThreads();
    cblas_sgemm(CblasRowMajor, a.rowMajor ? CblasNoTrans : CblasTrans,
                b.rowMajor ? CblasNoTrans : CblasTrans, static_cast<blasint>(m),
                static_cast<blasint>(n), static_cast<blasint>(k), 1.0f, a.data,
                static_cast<blasint>(a.outerStride), b.data, static_cast<blasint>(b.outerStride),
                accumulate ? 1.0f : 0.0f, c, static_cast<blasint>(cStride));
}

template <>
void multiply<double>(Eigen::Index m, Eigen::Index n, Eigen::Index k, Operand<double> a,
                      Operand<double> b, double* c, Eigen::Index cStride, bool accumulate) {
    configureBlasThreads();
    cblas_dgemm(CblasRowMajor, a.rowMajor ? CblasNoTrans : CblasTrans,
                b.rowMajor ? CblasNoTrans : CblasTrans, static_cast<blasint>(m),
                static_cast<blasint>(n), static_cast<blasint>(k), 1.0, a.data,
                static_cast<blasint>(a.outerStride), b.data, static_cast<blasint>(b.outerStride),
                accumulate ? 1.0 : 0.0, c, static_cast<blasint>(cStride));
}

#else

bool usesBlas() {
    return false;
}

std::string coreName() {
    return {};
}

std::string description() {
    return eigenDescription();
}

void configureBlasThreads() {}

// Without BLAS, multiplyInto never calls these; they multiply with Eigen for completeness.
template <typename Scalar>
void eigenMultiply(Eigen::Index m, Eigen::Index n, Eigen::Index k, Operand<Scalar> a,
                   Operand<Scalar> b, Scalar* c, Eigen::Index cStride, bool accumulate) {
    using RowMajor = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    using ColMajor = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
    using Stride = Eigen::OuterStride<>;
    Eigen::Map<RowMajor, 0, Stride> out(c, m, n, Stride(cStride));
    auto run = [&](const auto& left, const auto& right) {
        if (accumulate) {
            out.noalias() += left * right;
        } else {
            out.noalias() = left * right;
        }
    };
    auto withRight = [&](const auto& left) {
        if (b.rowMajor) {
            run(left, Eigen::Map<const RowMajor, 0, Stride>(b.data, k, n, Stride(b.outerStride)));
        } else {
            run(left, Eigen::Map<const ColMajor, 0, Stride>(b.data, k, n, Stride(b.outerStride)));
        }
    };
    if (a.rowMajor) {
        withRight(Eigen::Map<const RowMajor, 0, Stride>(a.data, m, k, Stride(a.outerStride)));
    } else {
        withRight(Eigen::Map<const ColMajor, 0, Stride>(a.data, m, k, Stride(a.outerStride)));
    }
}

template <>
void multiply<float>(Eigen::Index m, Eigen::Index n, Eigen::Index k, Operand<float> a,
                     Operand<float> b, float* c, Eigen::Index cStride, bool accumulate) {
    eigenMultiply(m, n, k, a, b, c, cStride, accumulate);
}

template <>
void multiply<double>(Eigen::Index m, Eigen::Index n, Eigen::Index k, Operand<double> a,
                      Operand<double> b, double* c, Eigen::Index cStride, bool accumulate) {
    eigenMultiply(m, n, k, a, b, c, cStride, accumulate);
}

#endif

std::string betterCoreType() {
    if (!usesBlas()) return {};
    const std::string name = coreName();
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) {
        if (!oneOf(name, std::array{"SkylakeX", "Cooperlake", "SapphireRapids"})) return "SkylakeX";
    } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        if (!oneOf(name, std::array{"Haswell", "Zen", "SkylakeX", "Cooperlake", "SapphireRapids"}))
            return "Haswell";
    }
    return {};
}

}  // namespace ae::gemm
