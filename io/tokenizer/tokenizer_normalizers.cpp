// Normalizers: Unicode forms, Lowercase, BertNormalizer, Prepend, Replace, Strip, Sequence.
// Character classes come from Qt's Unicode data (QChar, QString::normalized).

#include <QStringList>

#include "io/tokenizer/tokenizer_parts.h"

namespace ae::io::tok {
namespace {

class UnicodeForm : public Normalizer {
public:
    explicit UnicodeForm(QString::NormalizationForm form) : form_(form) {}
    QString normalize(const QString& text) const override { return text.normalized(form_); }

private:
    QString::NormalizationForm form_;
};

class Lowercase : public Normalizer {
public:
    QString normalize(const QString& text) const override { return text.toLower(); }
};

class Prepend : public Normalizer {
public:
    explicit Prepend(QString prefix) : prefix_(std::move(prefix)) {}
    QString normalize(const QString& text) const override {
        return text.isEmpty() ? text : prefix_ + text;
    }

private:
    QString prefix_;
};

class Replace : public Normalizer {
public:
    Replace(QRegularExpression pattern, QString content)
        : pattern_(std::move(pattern)), content_(std::move(content)) {}
    // The content is literal text (QString::replace would read `\1` in it as a reference).
    QString normalize(const QString& text) const override {
        QString result;
        qsizetype copied = 0;
        QRegularExpressionMatchIterator it = pattern_.globalMatch(text);
        while (it.hasNext()) {
            const QRegularExpressionMatch match = it.next();
            result += QStringView(text).mid(copied, match.capturedStart() - copied);
            result += content_;
            copied = match.capturedEnd();
        }
        result += QStringView(text).mid(copied);
        return result;
    }

private:
    QRegularExpression pattern_;
    QString content_;
};

class Strip : public Normalizer {
public:
    Strip(bool left, bool right) : left_(left), right_(right) {}
    QString normalize(const QString& text) const override {
        qsizetype begin = 0, end = text.size();
        while (left_ && begin < end && text.at(begin).isSpace())
            ++begin;
        while (right_ && end > begin && text.at(end - 1).isSpace())
            --end;
        return text.mid(begin, end - begin);
    }

private:
    bool left_, right_;
};

void appendCodePoint(QString& text, char32_t c) {
    const QChar pair[2] = {QChar(QChar::highSurrogate(c)), QChar(QChar::lowSurrogate(c))};
    if (QChar::requiresSurrogates(c)) {
        text.append(pair, 2);
    } else {
        text += QChar(static_cast<char16_t>(c));
    }
}

// The reference library's StripAccents: every combining mark (Unicode's M categories) dropped, as
// they stand; accents come apart from their letters only after an NFD or NFKD before it.
class StripAccents : public Normalizer {
public:
    QString normalize(const QString& text) const override {
        QString result;
        result.reserve(text.size());
        for (const char32_t c : text.toUcs4()) {
            const QChar::Category category = QChar::category(c);
            if (category == QChar::Mark_NonSpacing || category == QChar::Mark_SpacingCombining ||
                category == QChar::Mark_Enclosing)
                continue;
            appendCodePoint(result, c);
        }
        return result;
    }
};

class Sequence : public Normalizer {
public:
    explicit Sequence(std::vector<std::unique_ptr<Normalizer>> parts) : parts_(std::move(parts)) {}
    QString normalize(const QString& text) const override {
        QString result = text;
        for (const auto& part : parts_)
            result = part->normalize(result);
        return result;
    }

private:
    std::vector<std::unique_ptr<Normalizer>> parts_;
};

// BERT's: drop control characters, make every space a plain space, surround CJK ideographs
// with spaces, strip accents, lowercase; in that order, as the reference library does.
class BertNormalizer : public Normalizer {
public:
    BertNormalizer(bool cleanText, bool chineseChars, bool stripAccents, bool lowercase)
        : cleanText_(cleanText),
          chineseChars_(chineseChars),
          stripAccents_(stripAccents),
          lowercase_(lowercase) {}

    QString normalize(const QString& text) const override {
        QString result;
        result.reserve(text.size());
        for (const char32_t c : text.toUcs4()) {
            if (cleanText_) {
                if (c == 0 || c == 0xFFFD || isControl(c)) continue;
                if (c == '\t' || c == '\n' || c == '\r' || QChar::isSpace(c)) {
                    result += QLatin1Char(' ');
                    continue;
                }
            }
            if (chineseChars_ && isChineseCharacter(c)) {
                result += QLatin1Char(' ');
                appendCodePoint(result, c);
                result += QLatin1Char(' ');
                continue;
            }
            appendCodePoint(result, c);
        }
        if (stripAccents_) {
            const QString decomposed = result.normalized(QString::NormalizationForm_D);
            result.clear();
            for (const char32_t c : decomposed.toUcs4()) {
                if (QChar::category(c) != QChar::Mark_NonSpacing) appendCodePoint(result, c);
            }
        }
        return lowercase_ ? result.toLower() : result;
    }

private:
    // Unicode's "Other" categories, except the tab and line breaks BERT keeps as spaces, and
    // except unassigned code points, which the reference library keeps (so a word holding one
    // becomes the unknown token rather than losing a character).
    static bool isControl(char32_t c) {
        if (c == '\t' || c == '\n' || c == '\r') return false;
        switch (QChar::category(c)) {
            case QChar::Other_Control:
            case QChar::Other_Format:
            case QChar::Other_Surrogate:
            case QChar::Other_PrivateUse:
                return true;
            default:
                return false;
        }
    }
    // The CJK Unified Ideographs blocks BERT's reference code lists.
    static bool isChineseCharacter(char32_t c) {
        return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
               (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
               (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
               (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
    }

    bool cleanText_, chineseChars_, stripAccents_, lowercase_;
};

}  // namespace

std::unique_ptr<Normalizer> makeBertNormalizer(bool cleanText, bool chineseChars, bool stripAccents,
                                               bool lowercase) {
    return std::make_unique<BertNormalizer>(cleanText, chineseChars, stripAccents, lowercase);
}

std::unique_ptr<Normalizer> parseNormalizer(const JsonReader& json, const QJsonValue& value,
                                            const QString& field) {
    if (value.isNull() || value.isUndefined()) return nullptr;
    const QJsonObject object = json.object(value, field);
    const QString type = json.string(object.value("type"), field + ".type");
    if (type == "NFC") return std::make_unique<UnicodeForm>(QString::NormalizationForm_C);
    if (type == "NFD") return std::make_unique<UnicodeForm>(QString::NormalizationForm_D);
    if (type == "NFKC") return std::make_unique<UnicodeForm>(QString::NormalizationForm_KC);
    if (type == "NFKD") return std::make_unique<UnicodeForm>(QString::NormalizationForm_KD);
    if (type == "Lowercase") return std::make_unique<Lowercase>();
    if (type == "StripAccents") return std::make_unique<StripAccents>();
    if (type == "Prepend") {
        return std::make_unique<Prepend>(json.string(object.value("prepend"), field + ".prepend"));
    }
    if (type == "Replace") {
        return std::make_unique<Replace>(
            parsePattern(json, object.value("pattern"), field + ".pattern"),
            json.string(object.value("content"), field + ".content"));
    }
    if (type == "Strip") {
        return std::make_unique<Strip>(json.optionalBool(object, "strip_left", field, true),
                                       json.optionalBool(object, "strip_right", field, true));
    }
    if (type == "BertNormalizer") {
        const bool lowercase = json.optionalBool(object, "lowercase", field, true);
        return makeBertNormalizer(json.optionalBool(object, "clean_text", field, true),
                                  json.optionalBool(object, "handle_chinese_chars", field, true),
                                  json.optionalBool(object, "strip_accents", field, lowercase),
                                  lowercase);
    }
    if (type == "Precompiled") return parsePrecompiled(json, object, field);
    if (type == "Sequence") {
        const QJsonArray list = json.array(object.value("normalizers"), field + ".normalizers");
        std::vector<std::unique_ptr<Normalizer>> parts;
        for (int i = 0; i < list.size(); ++i) {
            auto part = parseNormalizer(json, list.at(i),
                                        QStringLiteral("%1.normalizers[%2]").arg(field).arg(i));
            if (part) parts.push_back(std::move(part));
        }
        return std::make_unique<Sequence>(std::move(parts));
    }
    json.unsupported(field + ".type", type,
                     {"NFC", "NFD", "NFKC", "NFKD", "Lowercase", "StripAccents", "BertNormalizer",
                      "Prepend", "Replace", "Strip", "Precompiled", "Sequence"});
}

}  // namespace ae::io::tok
