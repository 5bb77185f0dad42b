#include <cstdlib>  // defines __GLIBC__ on glibc

#include "app/command_line.h"

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

}  // namespace

int main(int argc, char** argv) {
    keepFreedMemoryForReuse();
    return ae::cli::run(argc, argv);
}
