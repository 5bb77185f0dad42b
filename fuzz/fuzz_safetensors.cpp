// Fuzz target: .safetensors files. io::SafetensorsFile on arbitrary bytes (it memory-maps a file,
// so the bytes go into an in-memory file first), then every tensor it lists is read as a matrix,
// and a model import is tried with fixed tensor names, as `import` would. A refusal
// (MatrixFileError, ModelImportError, or SceneError from the import's checks) is the expected
// answer to garbage; anything else that escapes, and every sanitizer report, is a finding.
#include <sys/mman.h>
#include <unistd.h>

#include <QString>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "core/scene_error.h"
#include "io/formats/safetensors.h"
#include "io/model/model_import.h"

namespace {

// One anonymous in-memory file for the whole run, rewritten for each input: no disk traffic, and
// the reader maps it like any other file through /proc/self/fd.
int inputFile() {
    static const int fd = [] {
        const int f = memfd_create("fuzz_safetensors", 0);
        if (f < 0) {
            std::perror("memfd_create");
            std::abort();
        }
        return f;
    }();
    return fd;
}

void writeInput(const std::uint8_t* data, std::size_t size) {
    const int fd = inputFile();
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) {
        std::perror("writing the input");
        std::abort();
    }
}

// A GPT-2 style spec when the file has c_attn, a separate-projection one otherwise. No name ends
// in ".npy": the reader would then look for a file of that name on disk.
ae::io::ModelImportSpec specFor(const ae::io::SafetensorsFile& file) {
    ae::io::ModelImportSpec spec;
    if (file.find("c_attn")) {
        spec.qkv = "c_attn";
        if (file.find("c_attn_bias")) spec.qkvBias = "c_attn_bias";
    } else {
        spec.layout = ae::io::WeightLayout::Linear;
        spec.query = "q";
        spec.key = "k";
        spec.value = "v";
    }
    if (file.find("o")) spec.output = "o";
    if (file.find("wpe")) spec.positions = "wpe";
    if (file.find("ln_w")) spec.normWeight = "ln_w";
    if (file.find("ln_b")) spec.normBias = "ln_b";
    spec.embeddings = "wte";
    spec.tokenIds = {0, 1, 0};
    spec.heads = 1;
    return spec;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    writeInput(data, size);
    const QString path = QStringLiteral("/proc/self/fd/%1").arg(inputFile());
    try {
        const ae::io::SafetensorsFile file(path);
        for (const ae::io::TensorInfo& info : file.tensors()) {
            // Offsets were validated when the file opened: they must lie inside the data.
            if (info.begin < 0 || info.end < info.begin) __builtin_trap();
            try {
                const ae::MatrixD m = file.matrix(info.name);
                // An accepted matrix holds the tensor's elements, all finite.
                if (m.size() != info.elementCount() || !m.allFinite()) __builtin_trap();
            } catch (const ae::io::MatrixFileError&) {
            }
        }
        try {
            const ae::Scene scene = ae::io::importModel(ae::io::tensorReader(file), specFor(file));
            if (!scene.embeddings.allFinite() || scene.queryCount() != 3) __builtin_trap();
        } catch (const ae::io::MatrixFileError&) {  // ModelImportError too
        } catch (const ae::SceneError&) {
        }
    } catch (const ae::io::MatrixFileError&) {
    }
    return 0;
}
