// SentencePiece's precompiled charsmap (the `Precompiled` normalizer), applied as Hugging Face's
// library applies it. The blob, base64 in tokenizer.json: a u32 little-endian byte size of a
// Darts double-array trie, the trie (u32 units), then NUL-terminated replacement strings (UTF-8).
// The text goes by extended grapheme cluster: a cluster under 6 UTF-8 bytes is looked up whole
// and, when some prefix of it has a rule, replaced whole by the shortest such rule's string;
// other clusters, and clusters no rule matches, go code point by code point.
//
// Every unit the lookup reads is bounds-checked, and every string offset, so a damaged blob is
// refused by name and never read outside itself.
#include <QTextBoundaryFinder>
#include <QtEndian>
#include <cstring>

#include "io/tokenizer/tokenizer_parts.h"

namespace ae::io::tok {
namespace {

class Precompiled : public Normalizer {
public:
    Precompiled(const JsonReader& json, const QJsonObject& object, const QString& field)
        : field_(json.fileName() + ": " + field + ".precompiled_charsmap") {
        const QString where = field + ".precompiled_charsmap";
        const QString encoded = json.string(object.value("precompiled_charsmap"), where);
        const auto decoded = QByteArray::fromBase64Encoding(
            encoded.toLatin1(),
            QByteArray::Base64Encoding | QByteArray::AbortOnBase64DecodingErrors);
        if (!decoded) json.fail(where, QStringLiteral("not base64"));
        const QByteArray& blob = *decoded;
        if (blob.size() < 4)
            json.fail(where,
                      QStringLiteral("%1 bytes, too short for the trie's size").arg(blob.size()));
        quint32 trieBytes = 0;
        std::memcpy(&trieBytes, blob.constData(), 4);
        trieBytes = qFromLittleEndian(trieBytes);
        if (trieBytes % 4 != 0 || trieBytes == 0 || trieBytes > quint64(blob.size()) - 4)
            json.fail(where, QStringLiteral("a trie of %1 bytes in a blob of %2")
                                 .arg(trieBytes)
                                 .arg(blob.size()));
        units_.resize(trieBytes / 4);
        for (std::size_t i = 0; i < units_.size(); ++i) {
            quint32 unit = 0;
            std::memcpy(&unit, blob.constData() + 4 + 4 * i, 4);
            units_[i] = qFromLittleEndian(unit);
        }
        strings_ = blob.mid(4 + qsizetype(trieBytes));
        if (!QUtf8StringView(strings_).isValidUtf8())
            json.fail(where, QStringLiteral("its replacement strings are not UTF-8"));
    }

    QString normalize(const QString& text) const override {
        QString result;
        result.reserve(text.size());
        QTextBoundaryFinder clusters(QTextBoundaryFinder::Grapheme, text);
        qsizetype start = 0;
        while (start < text.size()) {
            qsizetype end = clusters.toNextBoundary();
            // Qt's finder can report a boundary between the halves of a surrogate pair (after
            // Devanagari, inside a flag): a cluster never ends there.
            while (end > 0 && end < text.size() && text.at(end - 1).isHighSurrogate() &&
                   text.at(end).isLowSurrogate())
                end = clusters.toNextBoundary();
            if (end <= start) end = text.size();
            const QStringView cluster = QStringView(text).mid(start, end - start);
            const QByteArray bytes = cluster.toUtf8();
            QByteArray rule;
            if (bytes.size() < 6 && shortestRule(bytes, rule)) {
                result += QString::fromUtf8(rule);
            } else {
                for (const uint codePoint : cluster.toUcs4()) {
                    // Not QString::fromUcs4, which drops U+FEFF as a byte order mark.
                    QString character;
                    character += QChar::fromUcs4(codePoint);
                    if (shortestRule(character.toUtf8(), rule))
                        result += QString::fromUtf8(rule);
                    else
                        result += character;
                }
            }
            start = end;
        }
        return result;
    }

private:
    // Darts' unit fields.
    static bool hasLeaf(quint32 unit) { return (unit >> 8) & 1; }
    static quint32 value(quint32 unit) { return unit & 0x7FFFFFFFu; }
    static quint32 label(quint32 unit) { return unit & 0x800000FFu; }
    static quint32 offset(quint32 unit) { return (unit >> 10) << ((unit & 0x200u) >> 6); }

    quint32 unitAt(quint64 position) const {
        if (position >= units_.size())
            throw TokenizerError(field_ + QStringLiteral(": the trie points outside itself"));
        return units_[static_cast<std::size_t>(position)];
    }

    // The replacement of the shortest prefix of `key` that has a rule (SentencePiece's
    // common-prefix search, stopping at a NUL byte), or false.
    bool shortestRule(const QByteArray& key, QByteArray& replacement) const {
        quint64 position = 0;
        position ^= offset(unitAt(position));
        for (const char c : key) {
            const auto byte = static_cast<unsigned char>(c);
            if (byte == 0) return false;
            position ^= byte;
            const quint32 unit = unitAt(position);
            if (label(unit) != byte) return false;
            position ^= offset(unit);
            if (hasLeaf(unit)) {
                const quint32 at = value(unitAt(position));
                if (at >= quint64(strings_.size()))
                    throw TokenizerError(field_ +
                                         QStringLiteral(": a rule's string starts at %1, past "
                                                        "the %2 bytes of strings")
                                             .arg(at)
                                             .arg(strings_.size()));
                const qsizetype nul = strings_.indexOf('\0', at);
                replacement = strings_.mid(at, (nul < 0 ? strings_.size() : nul) - at);
                return true;
            }
        }
        return false;
    }

    QString field_;
    std::vector<quint32> units_;
    QByteArray strings_;
};

}  // namespace

std::unique_ptr<Normalizer> parsePrecompiled(const JsonReader& json, const QJsonObject& object,
                                             const QString& field) {
    return std::make_unique<Precompiled>(json, object, field);
}

}  // namespace ae::io::tok
