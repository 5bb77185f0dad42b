// Fuzz target: SentencePiece's precompiled charsmap (the Precompiled normalizer) from arbitrary
// bytes, put in a tokenizer.json as base64 beside a one-piece Unigram model, then texts
// normalized and tokenized through it: grapheme clusters of several scripts, combining marks,
// flags, CR LF, and a text cut from the input. A refusal (TokenizerError: a blob too short, a
// trie past its end or pointing outside itself, strings that are not UTF-8) is the expected
// answer to garbage; anything else that escapes, and every sanitizer report, is a finding.
#include <QByteArray>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>
#include <cstddef>
#include <cstdint>

#include "io/tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const QByteArray blob(reinterpret_cast<const char*>(data), static_cast<qsizetype>(size));
    const QJsonObject normalizer{{"type", "Precompiled"},
                                 {"precompiled_charsmap", QString::fromLatin1(blob.toBase64())}};
    const QJsonObject model{{"type", "Unigram"},
                            {"unk_id", 0},
                            {"vocab", QJsonArray{QJsonArray{"<unk>", 0.0}, QJsonArray{"a", -1.0},
                                                 QJsonArray{"\u2581", -2.0}}}};
    const QByteArray json =
        QJsonDocument(QJsonObject{{"normalizer", normalizer}, {"model", model}}).toJson();
    try {
        const ae::io::Tokenizer tokenizer =
            ae::io::Tokenizer::fromJson(json, {}, "tokenizer.json", {});
        const QString texts[] = {
            QStringLiteral("cafe\u0301\u0301 \uff21\u0301 \u0140\u1dd2 \uff76\uff9e a\r\nb"),
            QStringLiteral("\u0939\u092b\u093c\u094d\u0924\u093e\u3000\U0001F1EB\U0001F1F7 "
                           "\U0001F468\u200d\U0001F469 \ufeff\u00a0x"),
            QString(),
            QString::fromUtf8(blob.left(64)),
        };
        for (const QString& text : texts) {
            for (const int id : tokenizer.encode(text, false))
                if (id < 0 || id > 2) __builtin_trap();
        }
    } catch (const ae::io::TokenizerError&) {
    }
    return 0;
}
