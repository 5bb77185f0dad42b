// Fuzz target: model.safetensors.index.json. io::parseSafetensorsIndex on arbitrary bytes; every
// entry it accepts names a plain file in the folder (no separator, not "." or ".."), since the
// folder reader opens that name. A refusal (ModelError) is the expected answer to garbage.
#include <QByteArray>
#include <QString>
#include <cstddef>
#include <cstdint>

#include "core/model/model.h"
#include "io/model/model_folder.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const auto entries = ae::io::parseSafetensorsIndex(
            QByteArray(reinterpret_cast<const char*>(data), static_cast<qsizetype>(size)),
            QStringLiteral("model.safetensors.index.json"));
        for (const auto& [name, file] : entries) {
            if (file.isEmpty() || file.contains('/') || file.contains('\\') || file == "." ||
                file == "..")
                __builtin_trap();
        }
    } catch (const ae::model::ModelError&) {
    }
    return 0;
}
