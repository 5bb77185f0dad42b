// Fuzz target: io::Tokenizer::fromJson on arbitrary tokenizer.json text (and, after a NUL byte, a
// tokenizer_config.json), then encoding a few fixed texts and a text cut from the input, and
// decoding their ids. A refusal (TokenizerError) is the expected answer to garbage; anything else
// that escapes, and every sanitizer report, is a finding.
#include <QByteArray>
#include <QString>
#include <cstddef>
#include <cstdint>

#include "io/tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const QByteArray input =
        QByteArray::fromRawData(reinterpret_cast<const char*>(data), static_cast<qsizetype>(size));
    const qsizetype nul = input.indexOf('\0');
    const QByteArray json = nul < 0 ? input : input.left(nul);
    const QByteArray config = nul < 0 ? QByteArray() : input.mid(nul + 1);
    try {
        const ae::io::Tokenizer tokenizer =
            ae::io::Tokenizer::fromJson(json, config, "tokenizer.json", "tokenizer_config.json");
        const QString texts[] = {
            QStringLiteral("Hello world, it's 2024!  \t\n\u00a0\u3000 na\u00efve \U0001F600 <s>"),
            QString(), QStringLiteral(" "),
            QString::fromUtf8(json.left(200)),  // the file's own tokens and patterns
        };
        for (const QString& text : texts) {
            for (const bool special : {true, false}) {
                const std::vector<int> ids = tokenizer.encode(text, special);
                for (const int id : ids) {
                    if (id < 0) __builtin_trap();
                    (void)tokenizer.displayText(id);
                }
                // Decoding refuses (TokenizerError) only for a decoder it does not implement.
                try {
                    (void)tokenizer.decode(ids);
                } catch (const ae::io::TokenizerError&) {
                }
            }
        }
        if (tokenizer.idCount() < 0) __builtin_trap();
    } catch (const ae::io::TokenizerError&) {
    }
    return 0;
}
