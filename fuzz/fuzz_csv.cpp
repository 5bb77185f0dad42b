// Fuzz target: io::parseCsv on arbitrary text. A refusal (MatrixFileError) is the expected answer
// to garbage; anything else that escapes, and every sanitizer report, is a finding.
#include <QByteArray>
#include <cstddef>
#include <cstdint>

#include "io/formats/matrix_files.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const QByteArray text =
        QByteArray::fromRawData(reinterpret_cast<const char*>(data), static_cast<qsizetype>(size));
    try {
        const ae::MatrixD m = ae::io::parseCsv(text);
        if (m.size() == 0 || !m.allFinite()) __builtin_trap();
    } catch (const ae::io::MatrixFileError&) {
    }
    return 0;
}
