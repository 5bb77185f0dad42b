// Fuzz target: the classic tokenizer files. The first byte picks the format: even, GPT-2's
// vocab.json and merges.txt (separated by a NUL byte; a second NUL starts tokenizer_config.json);
// odd, BERT's vocab.txt (a NUL starts tokenizer_config.json). An accepted tokenizer then encodes a
// few texts. A refusal (TokenizerError) is the expected answer to garbage.
#include <QByteArray>
#include <QList>
#include <QString>
#include <cstddef>
#include <cstdint>

#include "io/tokenizer/tokenizer.h"
#include "io/tokenizer/tokenizer_parts.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    const QByteArray input = QByteArray::fromRawData(reinterpret_cast<const char*>(data) + 1,
                                                     static_cast<qsizetype>(size - 1));
    const QList<QByteArray> parts = input.split('\0');
    try {
        std::unique_ptr<ae::io::tok::Pipeline> pipeline;
        if (data[0] % 2 == 0) {
            pipeline =
                ae::io::tok::parseGpt2Files(parts.value(0), parts.value(1), parts.value(2),
                                            "vocab.json", "merges.txt", "tokenizer_config.json");
        } else {
            pipeline = ae::io::tok::parseBertVocabulary(parts.value(0), parts.value(1), "vocab.txt",
                                                        "tokenizer_config.json");
        }
        ae::io::Tokenizer tokenizer = ae::io::Tokenizer::fromPipeline(std::move(pipeline));
        const QString texts[] = {
            QStringLiteral("Hello world, it's 2024!  \t\n\u00a0 na\u00efve \U0001F600 [CLS]"),
            QString::fromUtf8(parts.value(0).left(200)),
        };
        for (const QString& text : texts) {
            for (const bool special : {true, false}) {
                for (const int id : tokenizer.encode(text, special)) {
                    if (id < 0) __builtin_trap();
                    (void)tokenizer.displayText(id);
                }
            }
        }
    } catch (const ae::io::TokenizerError&) {
    }
    return 0;
}
