// Pre-tokenizers: Split (regex or string, five behaviours), ByteLevel, Metaspace,
// BertPreTokenizer, Punctuation, WhitespaceSplit, Digits, Sequence. Each splits pieces the way the
// reference library's `NormalizedString::split` does: the pattern's matches and the gaps between
// them become segments, the behaviour decides which are kept and which are joined, empty pieces
// vanish.

#include <QStringList>

#include "io/tokenizer/tokenizer_parts.h"

namespace ae::io::tok {
namespace {

enum class Behavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

struct Segment {
    qsizetype begin, end;
    bool match;
};

std::vector<Segment> findSegments(const QRegularExpression& regex, const QString& text) {
    std::vector<Segment> segments;
    qsizetype previous = 0;
    QRegularExpressionMatchIterator it = regex.globalMatch(text);
    while (it.hasNext()) {
        const QRegularExpressionMatch match = it.next();
        if (match.capturedStart() != previous)
            segments.push_back({previous, match.capturedStart(), false});
        segments.push_back({match.capturedStart(), match.capturedEnd(), true});
        previous = match.capturedEnd();
    }
    if (previous != text.size()) segments.push_back({previous, text.size(), false});
    return segments;
}

// The segments joined as `behavior` says; the result's `match` flags mean nothing except for
// Removed, where matches are dropped.
std::vector<Segment> applyBehavior(std::vector<Segment> segments, Behavior behavior) {
    std::vector<Segment> joined;
    bool previousMatch = false;
    switch (behavior) {
        case Behavior::Isolated:
            return segments;
        case Behavior::Removed:
            for (const Segment& s : segments)
                if (!s.match) joined.push_back(s);
            return joined;
        case Behavior::MergedWithPrevious:
            for (const Segment& s : segments) {
                if (s.match && !previousMatch && !joined.empty()) {
                    joined.back().end = s.end;
                } else {
                    joined.push_back(s);
                }
                previousMatch = s.match;
            }
            return joined;
        case Behavior::MergedWithNext:
            for (auto s = segments.rbegin(); s != segments.rend(); ++s) {
                if (s->match && !previousMatch && !joined.empty()) {
                    joined.back().begin = s->begin;
                } else {
                    joined.push_back(*s);
                }
                previousMatch = s->match;
            }
            return {joined.rbegin(), joined.rend()};
        case Behavior::Contiguous:
            for (const Segment& s : segments) {
                if (s.match == previousMatch && !joined.empty()) {
                    joined.back().end = s.end;
                } else {
                    joined.push_back(s);
                }
                previousMatch = s.match;
            }
            return joined;
    }
    return segments;
}

void splitPieces(std::vector<Piece>& pieces, const QRegularExpression& regex, Behavior behavior,
                 bool invert = false) {
    std::vector<Piece> result;
    result.reserve(pieces.size());
    for (const Piece& piece : pieces) {
        std::vector<Segment> segments = findSegments(regex, piece.text);
        if (invert)
            for (Segment& s : segments)
                s.match = !s.match;
        for (const Segment& s : applyBehavior(std::move(segments), behavior)) {
            if (s.end > s.begin)
                result.push_back(
                    {piece.text.mid(s.begin, s.end - s.begin), piece.atStart && s.begin == 0});
        }
    }
    pieces = std::move(result);
}

QRegularExpression unicodeRegex(const QString& pattern) {
    QRegularExpression regex(pattern, QRegularExpression::UseUnicodePropertiesOption);
    regex.optimize();
    return regex;
}

class PatternSplit : public PreTokenizer {
public:
    PatternSplit(QRegularExpression regex, Behavior behavior, bool invert)
        : regex_(std::move(regex)), behavior_(behavior), invert_(invert) {}
    void split(std::vector<Piece>& pieces) const override {
        splitPieces(pieces, regex_, behavior_, invert_);
    }

private:
    QRegularExpression regex_;
    Behavior behavior_;
    bool invert_;
};

class ByteLevel : public PreTokenizer {
public:
    ByteLevel(bool addPrefixSpace, bool useRegex)
        : addPrefixSpace_(addPrefixSpace),
          useRegex_(useRegex),
          gpt2_(unicodeRegex(QStringLiteral(
              R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)"))) {}
    void split(std::vector<Piece>& pieces) const override {
        if (addPrefixSpace_) {
            for (Piece& piece : pieces)
                if (!piece.text.startsWith(QLatin1Char(' '))) piece.text.prepend(QLatin1Char(' '));
        }
        if (useRegex_) splitPieces(pieces, gpt2_, Behavior::Isolated);
        for (Piece& piece : pieces)
            piece.text = toByteCharacters(piece.text);
    }
    bool mapsBytes() const override { return true; }

private:
    bool addPrefixSpace_, useRegex_;
    QRegularExpression gpt2_;
};

class Metaspace : public PreTokenizer {
public:
    enum class Prepend { Always, First, Never };
    Metaspace(QChar replacement, Prepend prepend, bool splitWords)
        : replacement_(replacement),
          prepend_(prepend),
          splitWords_(splitWords),
          separator_(unicodeRegex(QRegularExpression::escape(QString(replacement)))) {}
    void split(std::vector<Piece>& pieces) const override {
        for (Piece& piece : pieces) {
            piece.text.replace(QLatin1Char(' '), replacement_);
            const bool prepend =
                prepend_ == Prepend::Always || (prepend_ == Prepend::First && piece.atStart);
            if (prepend && !piece.text.startsWith(replacement_)) piece.text.prepend(replacement_);
        }
        if (splitWords_) splitPieces(pieces, separator_, Behavior::MergedWithNext);
    }

private:
    QChar replacement_;
    Prepend prepend_;
    bool splitWords_;
    QRegularExpression separator_;
};

class Sequence : public PreTokenizer {
public:
    explicit Sequence(std::vector<std::unique_ptr<PreTokenizer>> parts)
        : parts_(std::move(parts)) {}
    void split(std::vector<Piece>& pieces) const override {
        for (const auto& part : parts_)
            part->split(pieces);
    }
    bool mapsBytes() const override {
        for (const auto& part : parts_)
            if (part->mapsBytes()) return true;
        return false;
    }

private:
    std::vector<std::unique_ptr<PreTokenizer>> parts_;
};

// BERT's: whitespace separates words and is dropped; each punctuation character (Unicode's P
// categories and every ASCII symbol) is a word of its own.
class BertPreTokenizer : public PreTokenizer {
public:
    BertPreTokenizer()
        : spaces_(unicodeRegex(QStringLiteral(R"(\s+)"))),
          punctuation_(
              unicodeRegex(QStringLiteral(R"([\p{P}\x21-\x2F\x3A-\x40\x5B-\x60\x7B-\x7E])"))) {}
    void split(std::vector<Piece>& pieces) const override {
        splitPieces(pieces, spaces_, Behavior::Removed);
        splitPieces(pieces, punctuation_, Behavior::Isolated);
    }

private:
    QRegularExpression spaces_, punctuation_;
};

Behavior parseBehavior(const JsonReader& json, const QJsonValue& value, const QString& field) {
    const QString name = json.string(value, field);
    if (name == "Removed") return Behavior::Removed;
    if (name == "Isolated") return Behavior::Isolated;
    if (name == "MergedWithPrevious") return Behavior::MergedWithPrevious;
    if (name == "MergedWithNext") return Behavior::MergedWithNext;
    if (name == "Contiguous") return Behavior::Contiguous;
    json.unsupported(field, name,
                     {"Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"});
}

std::unique_ptr<PreTokenizer> parseMetaspace(const JsonReader& json, const QJsonObject& object,
                                             const QString& field) {
    const QString replacement = json.optionalString(object, "replacement", field, "\u2581");
    if (replacement.size() != 1)
        json.fail(field + ".replacement", "expected one character, got \"" + replacement + "\"");
    Metaspace::Prepend prepend = Metaspace::Prepend::Always;
    if (object.contains("prepend_scheme") && !object.value("prepend_scheme").isNull()) {
        const QString scheme =
            json.string(object.value("prepend_scheme"), field + ".prepend_scheme");
        if (scheme == "always") {
            prepend = Metaspace::Prepend::Always;
        } else if (scheme == "first") {
            prepend = Metaspace::Prepend::First;
        } else if (scheme == "never") {
            prepend = Metaspace::Prepend::Never;
        } else {
            json.unsupported(field + ".prepend_scheme", scheme, {"always", "first", "never"});
        }
    } else if (!json.optionalBool(object, "add_prefix_space", field, true)) {
        prepend = Metaspace::Prepend::Never;  // the older files' spelling
    }
    return std::make_unique<Metaspace>(replacement.at(0), prepend,
                                       json.optionalBool(object, "split", field, true));
}

}  // namespace

std::unique_ptr<PreTokenizer> makeBertPreTokenizer() {
    return std::make_unique<BertPreTokenizer>();
}

std::unique_ptr<PreTokenizer> makeByteLevelPreTokenizer(bool addPrefixSpace) {
    return std::make_unique<ByteLevel>(addPrefixSpace, true);
}

std::unique_ptr<PreTokenizer> parsePreTokenizer(const JsonReader& json, const QJsonValue& value,
                                                const QString& field) {
    if (value.isNull() || value.isUndefined()) return nullptr;
    const QJsonObject object = json.object(value, field);
    const QString type = json.string(object.value("type"), field + ".type");
    if (type == "Split") {
        return std::make_unique<PatternSplit>(
            parsePattern(json, object.value("pattern"), field + ".pattern"),
            parseBehavior(json, object.value("behavior"), field + ".behavior"),
            json.optionalBool(object, "invert", field, false));
    }
    if (type == "ByteLevel") {
        return std::make_unique<ByteLevel>(
            json.optionalBool(object, "add_prefix_space", field, true),
            json.optionalBool(object, "use_regex", field, true));
    }
    if (type == "Metaspace") return parseMetaspace(json, object, field);
    if (type == "WhitespaceSplit") {
        // Split on Unicode White_Space, which is dropped (Rust's char::is_whitespace).
        return std::make_unique<PatternSplit>(
            unicodeRegex("[\\x{0009}-\\x{000D}\\x{0020}\\x{0085}\\x{00A0}\\x{1680}"
                         "\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}]+"),
            Behavior::Removed, false);
    }
    if (type == "BertPreTokenizer") return makeBertPreTokenizer();
    if (type == "Punctuation") {
        // Each punctuation character (Unicode's P categories and every ASCII symbol) is a
        // match; the behaviour, Isolated by default, decides what becomes of them.
        const Behavior behavior =
            object.contains("behavior")
                ? parseBehavior(json, object.value("behavior"), field + ".behavior")
                : Behavior::Isolated;
        return std::make_unique<PatternSplit>(
            unicodeRegex(QStringLiteral("[\\p{P}\\x21-\\x2F\\x3A-\\x40\\x5B-\\x60\\x7B-\\x7E]")),
            behavior, false);
    }
    if (type == "Digits") {
        const bool individual = json.optionalBool(object, "individual_digits", field, false);
        return std::make_unique<PatternSplit>(unicodeRegex(individual ? "\\p{N}" : "\\p{N}+"),
                                              Behavior::Isolated, false);
    }
    if (type == "Sequence") {
        const QJsonArray list = json.array(object.value("pretokenizers"), field + ".pretokenizers");
        std::vector<std::unique_ptr<PreTokenizer>> parts;
        for (int i = 0; i < list.size(); ++i) {
            auto part = parsePreTokenizer(json, list.at(i),
                                          QStringLiteral("%1.pretokenizers[%2]").arg(field).arg(i));
            if (part) parts.push_back(std::move(part));
        }
        return std::make_unique<Sequence>(std::move(parts));
    }
    json.unsupported(field + ".type", type,
                     {"Split", "ByteLevel", "Metaspace", "WhitespaceSplit", "BertPreTokenizer",
                      "Punctuation", "Digits", "Sequence"});
}

}  // namespace ae::io::tok
