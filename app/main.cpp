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

// Whether the kernel gives transparent huge pages to memory that asks for them ("[madvise]"); with
// "[always]" every allocation gets them already, with "[never]" none can.
bool hugePagesOnRequest() {
    std::FILE* f = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (f == nullptr) return false;
    char text[128] = {};
    const size_t read = std::fread(text, 1, sizeof text - 1, f);
    std::fclose(f);
    return std::string(text, read).find("[madvise]") != std::string::npos;
}

// Two settings take effect only when a process starts, so the program sets them and starts again,
// once (AE_RESTARTED marks the second start):
// - OpenBLAS chooses its kernels when it loads, from the CPU model it recognises. A virtual machine
//   that names its CPU generically ("AMD EPYC" with AVX-512) gets older kernels: Haswell's ran at
//   half SkylakeX's rate on such a machine. When the CPU's flags allow better kernels than the
//   chosen ones, OPENBLAS_CORETYPE names them; a core type the user set is theirs (bench names the
//   kernels in use).
// - glibc's malloc backs its memory with transparent huge pages only when asked
//   (glibc.malloc.hugetlb=1). A model pass writes gigabytes of fresh maps; on 4 KiB pages their
//   page faults took two thirds of a GPT-2-small-shaped pass at L = 1024 (3.6 s against 1.1 s).
void restartWithTheEnginesSettings(char** argv) {
    const char* marker = "AE_RESTARTED";
    const std::string betterKernels = ae::gemm::betterCoreType();
    if (std::getenv(marker) != nullptr) {
        const char* asked = std::getenv("OPENBLAS_CORETYPE");
        if (!betterKernels.empty() && asked != nullptr && betterKernels == asked) {
            std::fprintf(stderr,
                         "attention-explorer: OpenBLAS runs %s kernels though OPENBLAS_CORETYPE=%s "
                         "asks for better ones; matrix products may run at half speed\n",
                         ae::gemm::coreName().c_str(), betterKernels.c_str());
        }
        return;
    }
    bool restart = false;
    if (!betterKernels.empty() && std::getenv("OPENBLAS_CORETYPE") == nullptr) {
        setenv("OPENBLAS_CORETYPE", betterKernels.c_str(), 1);
        restart = true;
    }
#if defined(__GLIBC__)
    const std::string tunables = std::getenv("GLIBC_TUNABLES") ? std::getenv("GLIBC_TUNABLES") : "";
    if (tunables.find("glibc.malloc.hugetlb") == std::string::npos && hugePagesOnRequest()) {
        const std::string asked = "glibc.malloc.hugetlb=1";
        setenv("GLIBC_TUNABLES", (tunables.empty() ? asked : tunables + ":" + asked).c_str(), 1);
        restart = true;
    }
#endif
    if (!restart) return;
    setenv(marker, "1", 1);
    execv("/proc/self/exe", argv);
    // Not restarted: the settings only cost speed.
}

}  // namespace

int main(int argc, char** argv) {
    restartWithTheEnginesSettings(argv);
    keepFreedMemoryForReuse();
    return ae::cli::run(argc, argv);
}
