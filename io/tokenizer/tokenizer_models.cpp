// Models: BPE (byte-level, or on characters with byte fallback) and WordPiece.

#include <QStringList>
#include <queue>

#include "io/tokenizer/tokenizer_parts.h"

namespace ae::io::tok {
namespace {

// The characters of a word: code points, so that an emoji's surrogate pair stays one symbol.
std::vector<QStringView> codePoints(const QString& word) {
    std::vector<QStringView> characters;
    characters.reserve(word.size());
    for (qsizetype i = 0; i < word.size();) {
        const qsizetype length =
            (word.at(i).isHighSurrogate() && i + 1 < word.size() && word.at(i + 1).isLowSurrogate())
                ? 2
                : 1;
        characters.push_back(QStringView(word).mid(i, length));
        i += length;
    }
    return characters;
}

class Bpe : public Model {
public:
    struct Options {
        int unknownId = -1;  // -1: unknown characters are dropped, as in the reference library
        bool fuseUnknown = false;
        bool byteFallback = false;
        bool ignoreMerges = false;
        QString continuingPrefix, endOfWordSuffix;
    };

    Bpe(QHash<QString, int> vocabulary, Options options)
        : vocabulary_(std::move(vocabulary)), options_(std::move(options)) {
        if (options_.byteFallback) {
            for (int byte = 0; byte < 256; ++byte) {
                const auto found = vocabulary_.find(QString::asprintf("<0x%02X>", byte));
                byteIds_[byte] = found == vocabulary_.end() ? -1 : found.value();
            }
        }
    }

    // Returns the merge's index, or -1 when a token is missing from the vocabulary (`which`
    // then names it).
    int addMerge(const QString& left, const QString& right, int rank, QString& missing) {
        const auto leftId = vocabulary_.find(left), rightId = vocabulary_.find(right);
        QString joined = left;
        joined +=
            !options_.continuingPrefix.isEmpty() && right.startsWith(options_.continuingPrefix)
                ? right.mid(options_.continuingPrefix.size())
                : right;
        const auto joinedId = vocabulary_.find(joined);
        if (leftId == vocabulary_.end() || rightId == vocabulary_.end() ||
            joinedId == vocabulary_.end()) {
            missing = leftId == vocabulary_.end()    ? left
                      : rightId == vocabulary_.end() ? right
                                                     : joined;
            return -1;
        }
        merges_[pairKey(leftId.value(), rightId.value())] = {rank, joinedId.value()};
        return rank;
    }

    const QHash<QString, int>& vocabulary() const override { return vocabulary_; }
    void reserveMerges(qsizetype count) { merges_.reserve(count); }

    void tokenize(const QString& word, std::vector<int>& ids) const override {
        if (options_.ignoreMerges) {
            const auto whole = vocabulary_.find(word);
            if (whole != vocabulary_.end()) {
                ids.push_back(whole.value());
                return;
            }
        }
        std::vector<int> symbols = initialSymbols(word);
        mergeAll(symbols);
        ids.insert(ids.end(), symbols.begin(), symbols.end());
    }

private:
    struct Merge {
        int rank, id;
    };
    static quint64 pairKey(int left, int right) {
        return (quint64(quint32(left)) << 32) | quint32(right);
    }

    std::vector<int> initialSymbols(const QString& word) const {
        std::vector<int> symbols;
        const std::vector<QStringView> characters = codePoints(word);
        bool pendingUnknown = false;
        const auto flushUnknown = [&] {
            if (pendingUnknown) symbols.push_back(options_.unknownId);
            pendingUnknown = false;
        };
        for (size_t i = 0; i < characters.size(); ++i) {
            QString symbol;
            if (i > 0) symbol += options_.continuingPrefix;
            symbol += characters[i];
            if (i + 1 == characters.size()) symbol += options_.endOfWordSuffix;
            const auto found = vocabulary_.find(symbol);
            if (found != vocabulary_.end()) {
                flushUnknown();
                symbols.push_back(found.value());
                continue;
            }
            if (options_.byteFallback) {
                const QByteArray bytes = characters[i].toUtf8();
                bool all = true;
                for (const char byte : bytes)
                    all = all && byteIds_[quint8(byte)] >= 0;
                if (all) {
                    flushUnknown();
                    for (const char byte : bytes)
                        symbols.push_back(byteIds_[quint8(byte)]);
                    continue;
                }
            }
            if (options_.unknownId < 0) continue;
            if (!options_.fuseUnknown) flushUnknown();
            pendingUnknown = true;
        }
        flushUnknown();
        return symbols;
    }

    // The lowest-ranked adjacent pair merges first (the leftmost among equals), until no pair
    // of neighbours is a merge. A heap of candidate pairs keeps a long word (a whole text, for
    // tokenizers without a pre-tokenizer) from costing the square of its length.
    void mergeAll(std::vector<int>& symbols) const {
        const int n = static_cast<int>(symbols.size());
        if (n < 2) return;
        std::vector<int> next(n), previous(n);
        for (int i = 0; i < n; ++i) {
            next[i] = i + 1 < n ? i + 1 : -1;
            previous[i] = i - 1;
        }
        struct Candidate {
            int rank, left, leftId, rightId;
            bool operator>(const Candidate& other) const {
                return rank != other.rank ? rank > other.rank : left > other.left;
            }
        };
        std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> queue;
        const auto push = [&](int left) {
            if (left < 0 || next[left] < 0) return;
            const auto found = merges_.find(pairKey(symbols[left], symbols[next[left]]));
            if (found != merges_.end())
                queue.push({found->rank, left, symbols[left], symbols[next[left]]});
        };
        for (int i = 0; i + 1 < n; ++i)
            push(i);
        while (!queue.empty()) {
            const Candidate candidate = queue.top();
            queue.pop();
            const int left = candidate.left, right = next[left];
            // Stale: the left symbol was absorbed, or either side has changed since.
            if (symbols[left] != candidate.leftId || right < 0 ||
                symbols[right] != candidate.rightId)
                continue;
            symbols[left] = merges_.value(pairKey(candidate.leftId, candidate.rightId)).id;
            symbols[right] = -1;
            next[left] = next[right];
            if (next[right] >= 0) previous[next[right]] = left;
            push(previous[left]);
            push(left);
        }
        int kept = 0;
        for (int i = 0; i >= 0; i = next[i])
            symbols[kept++] = symbols[i];
        symbols.resize(kept);
    }

    QHash<QString, int> vocabulary_;
    Options options_;
    QHash<quint64, Merge> merges_;
    int byteIds_[256] = {};
};

class WordPiece : public Model {
public:
    WordPiece(QHash<QString, int> vocabulary, int unknownId, QString prefix, int maxChars)
        : vocabulary_(std::move(vocabulary)),
          unknownId_(unknownId),
          prefix_(std::move(prefix)),
          maxChars_(maxChars) {}

    const QHash<QString, int>& vocabulary() const override { return vocabulary_; }

    // Longest known prefix first, then the longest continuation (`##...`) of the rest; a word
    // with any part unknown is one unknown token.
    void tokenize(const QString& word, std::vector<int>& ids) const override {
        const std::vector<QStringView> characters = codePoints(word);
        if (static_cast<int>(characters.size()) > maxChars_) {
            ids.push_back(unknownId_);
            return;
        }
        std::vector<int> pieces;
        size_t start = 0;
        while (start < characters.size()) {
            int found = -1;
            size_t end = characters.size();
            for (; end > start; --end) {
                QString candidate = start > 0 ? prefix_ : QString();
                for (size_t i = start; i < end; ++i)
                    candidate += characters[i];
                const auto it = vocabulary_.find(candidate);
                if (it != vocabulary_.end()) {
                    found = it.value();
                    break;
                }
            }
            if (found < 0) {
                ids.push_back(unknownId_);
                return;
            }
            pieces.push_back(found);
            start = end;
        }
        ids.insert(ids.end(), pieces.begin(), pieces.end());
    }

private:
    QHash<QString, int> vocabulary_;
    int unknownId_;
    QString prefix_;
    int maxChars_;
};

QHash<QString, int> parseVocabulary(const JsonReader& json, const QJsonValue& value,
                                    const QString& field) {
    const QJsonObject object = json.object(value, field);
    QHash<QString, int> vocabulary;
    vocabulary.reserve(object.size());
    // The field's name is built only for a refusal: 150k names would cost a tenth of a second.
    for (auto it = object.begin(); it != object.end(); ++it) {
        const QJsonValue id = it.value();
        vocabulary.insert(it.key(),
                          JsonReader::isId(id) ? id.toInt() : json.id(id, field + "." + it.key()));
    }
    return vocabulary;
}

int unknownTokenId(const JsonReader& json, const QHash<QString, int>& vocabulary,
                   const QString& token, const QString& field) {
    const auto found = vocabulary.find(token);
    if (found == vocabulary.end()) json.fail(field, "\"" + token + "\" is not in the vocabulary");
    return found.value();
}

std::unique_ptr<Model> parseBpe(const JsonReader& json, const QJsonObject& object,
                                const QString& field) {
    const QJsonValue dropout = object.value("dropout");
    if (!dropout.isNull() && !dropout.isUndefined() && dropout.toDouble(1) != 0)
        json.fail(field + ".dropout", "BPE dropout is not supported (expected null)");
    QHash<QString, int> vocabulary = parseVocabulary(json, object.value("vocab"), field + ".vocab");
    Bpe::Options options;
    const QString unknown = json.optionalString(object, "unk_token", field);
    if (!unknown.isEmpty())
        options.unknownId = unknownTokenId(json, vocabulary, unknown, field + ".unk_token");
    options.fuseUnknown = json.optionalBool(object, "fuse_unk", field, false);
    options.byteFallback = json.optionalBool(object, "byte_fallback", field, false);
    options.ignoreMerges = json.optionalBool(object, "ignore_merges", field, false);
    options.continuingPrefix = json.optionalString(object, "continuing_subword_prefix", field);
    options.endOfWordSuffix = json.optionalString(object, "end_of_word_suffix", field);

    const QJsonArray list = json.array(object.value("merges"), field + ".merges");
    std::vector<std::pair<QString, QString>> merges;
    merges.reserve(list.size());
    const auto mergeField = [&](int i) {
        return QStringLiteral("%1.merges[%2]").arg(field).arg(i);
    };
    for (int i = 0; i < list.size(); ++i) {
        const QJsonValue merge = list.at(i);
        if (merge.isArray()) {
            const QJsonArray pair = merge.toArray();
            if (pair.size() != 2) json.fail(mergeField(i), "expected two tokens");
            if (!pair.at(0).isString()) json.string(pair.at(0), mergeField(i) + "[0]");
            if (!pair.at(1).isString()) json.string(pair.at(1), mergeField(i) + "[1]");
            merges.emplace_back(pair.at(0).toString(), pair.at(1).toString());
        } else {
            const QString text =
                merge.isString() ? merge.toString() : json.string(merge, mergeField(i));
            const qsizetype space = text.indexOf(QLatin1Char(' '));
            if (space < 0 || text.indexOf(QLatin1Char(' '), space + 1) >= 0)
                json.fail(mergeField(i), "expected \"LEFT RIGHT\"");
            merges.emplace_back(text.left(space), text.mid(space + 1));
        }
    }
    auto bpe = std::make_unique<Bpe>(std::move(vocabulary), std::move(options));
    bpe->reserveMerges(qsizetype(merges.size()));
    for (size_t i = 0; i < merges.size(); ++i) {
        QString missing;
        if (bpe->addMerge(merges[i].first, merges[i].second, static_cast<int>(i), missing) < 0)
            json.fail(QStringLiteral("%1.merges[%2]").arg(field).arg(i),
                      "\"" + missing + "\" is not in the vocabulary");
    }
    return bpe;
}

std::unique_ptr<Model> parseWordPiece(const JsonReader& json, const QJsonObject& object,
                                      const QString& field) {
    QHash<QString, int> vocabulary = parseVocabulary(json, object.value("vocab"), field + ".vocab");
    const QString unknown = json.optionalString(object, "unk_token", field, "[UNK]");
    const int unknownId = unknownTokenId(json, vocabulary, unknown, field + ".unk_token");
    const QString prefix = json.optionalString(object, "continuing_subword_prefix", field, "##");
    int maxChars = 100;
    const QJsonValue max = object.value("max_input_chars_per_word");
    if (!max.isNull() && !max.isUndefined())
        maxChars = json.id(max, field + ".max_input_chars_per_word");
    return makeWordPiece(std::move(vocabulary), unknownId, prefix, maxChars);
}

}  // namespace

std::unique_ptr<Model> makeBpe(const JsonReader& json, QHash<QString, int> vocabulary,
                               const std::vector<std::pair<QString, QString>>& merges,
                               const QStringList& mergeFields) {
    auto bpe = std::make_unique<Bpe>(std::move(vocabulary), Bpe::Options{});
    bpe->reserveMerges(qsizetype(merges.size()));
    for (size_t i = 0; i < merges.size(); ++i) {
        QString missing;
        if (bpe->addMerge(merges[i].first, merges[i].second, static_cast<int>(i), missing) < 0)
            json.fail(mergeFields.value(qsizetype(i)),
                      "\"" + missing + "\" is not in the vocabulary");
    }
    return bpe;
}

std::unique_ptr<Model> makeWordPiece(QHash<QString, int> vocabulary, int unknownId, QString prefix,
                                     int maxCharsPerWord) {
    return std::make_unique<WordPiece>(std::move(vocabulary), unknownId, std::move(prefix),
                                       maxCharsPerWord);
}

std::unique_ptr<Model> parseModel(const JsonReader& json, const QJsonValue& value,
                                  const QString& field) {
    const QJsonObject object = json.object(value, field);
    QString type = json.optionalString(object, "type", field);
    // Files from before `type` was written: the reference library tells the models apart by
    // their fields. Unigram's vocabulary is a list of [piece, score] and it names its unknown
    // by id.
    if (type.isEmpty()) {
        if (object.value("vocab").isArray() || object.contains("unk_id"))
            type = "Unigram";
        else
            type = object.contains("max_input_chars_per_word") ? "WordPiece" : "BPE";
    }
    if (type == "BPE") return parseBpe(json, object, field);
    if (type == "WordPiece") return parseWordPiece(json, object, field);
    if (type == "Unigram") return parseUnigram(json, object, field);
    json.unsupported(field + ".type", type, {"BPE", "WordPiece", "Unigram"});
}

}  // namespace ae::io::tok
