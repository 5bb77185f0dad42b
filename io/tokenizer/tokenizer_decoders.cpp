// Decoders: ids back to text as the reference library's `decode` does it. Each stage takes the
// list of token strings and returns a new list (some join them into one); the result is the
// list joined. ByteLevel, ByteFallback, Fuse, Strip, Replace, Metaspace, WordPiece, Sequence.

#include <QStringList>

#include "io/tokenizer/tokenizer_parts.h"

namespace ae::io::tok {

QString decodeUtf8Lossy(const QByteArray& bytes) {
    // Rust's String::from_utf8_lossy: every maximal prefix of a valid sequence that is cut short,
    // and every byte that starts none, becomes one U+FFFD. (Qt's own replacement counts
    // differently for a truncated sequence.)
    QString text;
    const auto byteAt = [&](qsizetype i) { return i < bytes.size() ? quint8(bytes[i]) : 0; };
    for (qsizetype i = 0; i < bytes.size();) {
        const quint8 lead = byteAt(i);
        int length = 0;
        quint8 low = 0x80, high = 0xBF;  // the range of the byte after the lead
        if (lead < 0x80) {
            length = 1;
        } else if (lead >= 0xC2 && lead <= 0xDF) {
            length = 2;
        } else if (lead >= 0xE0 && lead <= 0xEF) {
            length = 3;
            if (lead == 0xE0) low = 0xA0;
            if (lead == 0xED) high = 0x9F;  // no surrogates
        } else if (lead >= 0xF0 && lead <= 0xF4) {
            length = 4;
            if (lead == 0xF0) low = 0x90;
            if (lead == 0xF4) high = 0x8F;
        }
        if (length == 0) {
            text += QChar(QChar::ReplacementCharacter);
            ++i;
            continue;
        }
        int valid = 1;
        for (; valid < length; ++valid) {
            const quint8 next = byteAt(i + valid);
            const bool ok = i + valid < bytes.size() && (valid == 1 ? next >= low && next <= high
                                                                    : next >= 0x80 && next <= 0xBF);
            if (!ok) break;
        }
        if (valid == length) {
            text += QString::fromUtf8(bytes.constData() + i, length);
        } else {
            text += QChar(QChar::ReplacementCharacter);
        }
        i += valid;
    }
    return text;
}

namespace {

class ByteLevelDecoder : public Decoder {
public:
    // All tokens become one: their bytes, read as UTF-8. A token with a character outside the
    // byte table is taken as its own UTF-8 (an added token such as `<|im_end|>` is either way).
    QStringList decode(const QStringList& tokens) const override {
        QByteArray bytes;
        for (const QString& token : tokens) {
            QByteArray mapped;
            for (const QChar c : token) {
                const int byte = characterByte(c);
                if (byte < 0) {
                    mapped = token.toUtf8();
                    break;
                }
                mapped += char(byte);
            }
            bytes += mapped;
        }
        return {decodeUtf8Lossy(bytes)};
    }
};

// The byte a `<0xNN>` token stands for, or -1.
int byteToken(const QString& token) {
    if (token.size() != 6 || !token.startsWith(QLatin1String("<0x")) || !token.endsWith('>'))
        return -1;
    const auto digit = [](QChar c) {
        return c.isDigit()                                ? c.unicode() - '0'
               : c.unicode() >= 'a' && c.unicode() <= 'f' ? c.unicode() - 'a' + 10
               : c.unicode() >= 'A' && c.unicode() <= 'F' ? c.unicode() - 'A' + 10
                                                          : -1;
    };
    const int high = digit(token.at(3)), low = digit(token.at(4));
    return high < 0 || low < 0 ? -1 : high * 16 + low;
}

class ByteFallbackDecoder : public Decoder {
public:
    // Runs of `<0xNN>` tokens become the text their bytes spell, or one U+FFFD per byte when
    // they are not valid UTF-8.
    QStringList decode(const QStringList& tokens) const override {
        QStringList result;
        QByteArray pending;
        const auto flush = [&] {
            if (pending.isEmpty()) return;
            const QString text = QString::fromUtf8(pending);
            if (text.toUtf8() == pending) {
                result << text;
            } else {
                for (qsizetype i = 0; i < pending.size(); ++i)
                    result << QString(QChar(QChar::ReplacementCharacter));
            }
            pending.clear();
        };
        for (const QString& token : tokens) {
            const int byte = byteToken(token);
            if (byte >= 0) {
                pending += char(byte);
                continue;
            }
            flush();
            result << token;
        }
        flush();
        return result;
    }
};

class Fuse : public Decoder {
public:
    QStringList decode(const QStringList& tokens) const override { return {tokens.join("")}; }
};

class StripDecoder : public Decoder {
public:
    StripDecoder(QString content, int start, int stop)
        : content_(std::move(content)), start_(start), stop_(stop) {}
    // Up to `start` leading and `stop` trailing copies of the character, from each token.
    QStringList decode(const QStringList& tokens) const override {
        QStringList result;
        for (const QString& token : tokens) {
            const QList<uint> characters = token.toUcs4();
            const uint c = content_.toUcs4().value(0);
            qsizetype begin = 0, end = characters.size();
            while (begin < end && begin < start_ && characters[begin] == c)
                ++begin;
            while (end > begin && characters.size() - end < stop_ && characters[end - 1] == c)
                --end;
            result << QString::fromUcs4(
                reinterpret_cast<const char32_t*>(characters.constData()) + begin, end - begin);
        }
        return result;
    }

private:
    QString content_;
    int start_, stop_;
};

class ReplaceDecoder : public Decoder {
public:
    explicit ReplaceDecoder(std::unique_ptr<Normalizer> replace) : replace_(std::move(replace)) {}
    QStringList decode(const QStringList& tokens) const override {
        QStringList result;
        for (const QString& token : tokens)
            result << replace_->normalize(token);
        return result;
    }

private:
    std::unique_ptr<Normalizer> replace_;
};

class MetaspaceDecoder : public Decoder {
public:
    MetaspaceDecoder(QChar replacement, bool prepended)
        : replacement_(replacement), prepended_(prepended) {}
    // The replacement character is a space again, except in the first token, where the
    // pre-tokenizer may have put it and it is dropped (every one of them, as in the library).
    QStringList decode(const QStringList& tokens) const override {
        QStringList result;
        for (qsizetype i = 0; i < tokens.size(); ++i) {
            QString token = tokens.at(i);
            if (i == 0 && prepended_) {
                token.remove(replacement_);
            } else {
                token.replace(replacement_, QLatin1Char(' '));
            }
            result << token;
        }
        return result;
    }

private:
    QChar replacement_;
    bool prepended_;
};

class WordPieceDecoder : public Decoder {
public:
    WordPieceDecoder(QString prefix, bool cleanup)
        : prefix_(std::move(prefix)), cleanup_(cleanup) {}
    // A continuation joins the word before it; any other token after the first is a new word.
    // Cleanup takes back the spaces BERT's tokenization put before punctuation and contractions.
    QStringList decode(const QStringList& tokens) const override {
        QStringList result;
        for (qsizetype i = 0; i < tokens.size(); ++i) {
            QString token = tokens.at(i);
            if (i > 0) {
                if (!prefix_.isEmpty() && token.startsWith(prefix_)) {
                    token.remove(0, prefix_.size());
                } else {
                    token.prepend(QLatin1Char(' '));
                }
            }
            if (cleanup_) {
                static const std::pair<const char*, const char*> spacing[] = {
                    {" .", "."},   {" ?", "?"},     {" !", "!"},    {" ,", ","},
                    {" ' ", "'"},  {" n't", "n't"}, {" 'm", "'m"},  {" do not", " don't"},
                    {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
                for (const auto& [from, to] : spacing)
                    token.replace(QLatin1String(from), QLatin1String(to));
            }
            result << token;
        }
        return result;
    }

private:
    QString prefix_;
    bool cleanup_;
};

class SequenceDecoder : public Decoder {
public:
    explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> parts)
        : parts_(std::move(parts)) {}
    QStringList decode(const QStringList& tokens) const override {
        QStringList result = tokens;
        for (const auto& part : parts_)
            result = part->decode(result);
        return result;
    }

private:
    std::vector<std::unique_ptr<Decoder>> parts_;
};

// Throws only when asked to decode: a decoder that is not implemented must not keep a tokenizer
// from encoding, which is what the app needs it for.
class UnsupportedDecoder : public Decoder {
public:
    explicit UnsupportedDecoder(QString message) : message_(std::move(message)) {}
    QStringList decode(const QStringList&) const override { throw TokenizerError(message_); }

private:
    QString message_;
};

int optionalCount(const JsonReader& json, const QJsonObject& object, const QString& key,
                  const QString& field) {
    const QJsonValue value = object.value(key);
    return value.isUndefined() || value.isNull() ? 0 : json.id(value, field + "." + key);
}

}  // namespace

std::unique_ptr<Decoder> makeByteLevelDecoder() {
    return std::make_unique<ByteLevelDecoder>();
}

std::unique_ptr<Decoder> makeWordPieceDecoder(const QString& prefix, bool cleanup) {
    return std::make_unique<WordPieceDecoder>(prefix, cleanup);
}

std::unique_ptr<Decoder> parseDecoder(const JsonReader& json, const QJsonValue& value,
                                      const QString& field) {
    if (value.isNull() || value.isUndefined()) return nullptr;
    const QJsonObject object = json.object(value, field);
    const QString type = json.string(object.value("type"), field + ".type");
    if (type == "ByteLevel") return makeByteLevelDecoder();
    if (type == "ByteFallback") return std::make_unique<ByteFallbackDecoder>();
    if (type == "Fuse") return std::make_unique<Fuse>();
    if (type == "Strip") {
        const QString content = json.string(object.value("content"), field + ".content");
        if (content.toUcs4().size() != 1)
            json.fail(field + ".content", "expected one character, got \"" + content + "\"");
        return std::make_unique<StripDecoder>(content, optionalCount(json, object, "start", field),
                                              optionalCount(json, object, "stop", field));
    }
    if (type == "Replace")
        return std::make_unique<ReplaceDecoder>(parseNormalizer(json, value, field));
    if (type == "Metaspace") {
        const QString replacement = json.optionalString(object, "replacement", field, "\u2581");
        if (replacement.size() != 1)
            json.fail(field + ".replacement",
                      "expected one character, got \"" + replacement + "\"");
        bool prepended = json.optionalBool(object, "add_prefix_space", field, true);
        const QString scheme = json.optionalString(object, "prepend_scheme", field);
        if (!scheme.isEmpty() && scheme != "always" && scheme != "first" && scheme != "never")
            json.unsupported(field + ".prepend_scheme", scheme, {"always", "first", "never"});
        if (!scheme.isEmpty()) prepended = scheme != "never";
        return std::make_unique<MetaspaceDecoder>(replacement.at(0), prepended);
    }
    if (type == "WordPiece") {
        return makeWordPieceDecoder(json.optionalString(object, "prefix", field, "##"),
                                    json.optionalBool(object, "cleanup", field, true));
    }
    if (type == "Sequence") {
        const QJsonArray list = json.array(object.value("decoders"), field + ".decoders");
        std::vector<std::unique_ptr<Decoder>> parts;
        for (int i = 0; i < list.size(); ++i) {
            auto part =
                parseDecoder(json, list.at(i), QStringLiteral("%1.decoders[%2]").arg(field).arg(i));
            if (part) parts.push_back(std::move(part));
        }
        return std::make_unique<SequenceDecoder>(std::move(parts));
    }
    return std::make_unique<UnsupportedDecoder>(
        QStringLiteral("%1: %2.type: \"%3\" is not supported for decoding (supported: ByteLevel, "
                       "ByteFallback, Fuse, Strip, Replace, Metaspace, WordPiece, Sequence)")
            .arg(json.fileName(), field, type));
}

}  // namespace ae::io::tok
