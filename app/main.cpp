#include <cstdlib>  // defines __GLIBC__ on glibc

#include <unistd.h>
#include <cstdio>
#include <string>

#include "app/command_line.h"
#include "core/gemm.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace {

// A model pass allocates and frees blocks of a few to a few dozen megabytes many times (per-head
// maps, activations, Eigen's product buffers). By default glibc serves blocks above a threshold
// that starts at 128 KiB with their own mmap and gives freed memory back to the kernel, so every
// pass faults its pages in again: a quarter of a Qwen2.5-0.5B-shaped pass at L = 512 went to
// page faults. Blocks up to glibc's largest threshold (32 MiB on 64-bit) now come from the heap,
// and up to 1 GiB of free heap is kept for the next pass.
void keepFreedMemoryForReuse() {
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
    mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
#endif
}

// OpenBLAS chooses its kernels once, when it loads, from the CPU model it recognises. A virtual
// machine that names its CPU generically ("AMD EPYC" with AVX-512) gets older kernels: Haswell's
// ran at half SkylakeX's rate on such a machine. When the CPU's flags allow better kernels than
// the chosen ones, the program starts again, once, with OPENBLAS_CORETYPE naming them. A core type
// the user set is theirs (bench names the kernels in use); a second start that still gets the old
// kernels says so.
void useTheBestBlasKernels(char** argv) {
    const std::string better = ae::gemm::betterCoreType();
    if (better.empty()) return;
    const char* restartMarker = "AE_BLAS_RESTARTED";
    if (std::getenv(restartMarker) != nullptr) {
        std::fprintf(stderr,
                     "attention-explorer: OpenBLAS runs %s kernels though OPENBLAS_CORETYPE=%s "
                     "asks for better ones; matrix products may run at half speed\n",
                     ae::gemm::coreName().c_str(), better.c_str());
        return;
    }
    if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return;
    setenv("OPENBLAS_CORETYPE", better.c_str(), 1);
    setenv(restartMarker, "1", 1);
    execv("/proc/self/exe", argv);
}

}  // namespace

int main(int argc, char** argv) {
    useTheBestBlasKernels(argv);
    keepFreedMemoryForReuse();
    return ae::cli::run(argc, argv);
}
