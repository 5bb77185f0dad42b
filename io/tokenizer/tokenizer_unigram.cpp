// The Unigram model (SentencePiece's, as Hugging Face's tokenizers library runs it): the
// segmentation of a word whose pieces' scores (log-probabilities) sum highest, found left to
// right over a trie of every vocabulary entry. Where no entry is exactly the character at a
// position, that character is also a candidate, an unknown scored min(scores) − 10; consecutive
// unknowns fuse into one, which becomes its UTF-8 bytes as <0xNN> pieces with byte_fallback, or
// unk_id.
#include <QJsonArray>
#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "io/tokenizer/tokenizer_parts.h"

namespace ae::io::tok {
namespace {

constexpr double kUnknownPenalty = 10.0;

class Unigram : public Model {
public:
    Unigram(const JsonReader& json, const QJsonObject& object, const QString& field) {
        const QJsonArray entries = json.array(object.value("vocab"), field + ".vocab");
        scores_.reserve(entries.size());
        nodePiece_.push_back(-1);  // the root
        double lowest = std::numeric_limits<double>::infinity();
        for (qsizetype i = 0; i < entries.size(); ++i) {
            const QString at = QStringLiteral("%1.vocab[%2]").arg(field).arg(i);
            const QJsonArray entry = json.array(entries[i], at);
            if (entry.size() != 2 || !entry[1].isDouble())
                json.fail(at, QStringLiteral("expected [piece, score]"));
            const QString piece = json.string(entry[0], at + "[0]");
            if (piece.isEmpty()) json.fail(at + "[0]", QStringLiteral("an empty piece"));
            const double score = entry[1].toDouble();
            const int id = static_cast<int>(i);
            scores_.push_back(score);
            lowest = std::min(lowest, score);
            // A piece listed twice is the later one, as the library's map keeps it.
            vocabulary_.insert(piece, id);
            nodePiece_[static_cast<std::size_t>(nodeFor(piece))] = id;
        }
        if (scores_.empty()) json.fail(field + ".vocab", QStringLiteral("is empty"));
        unknownScore_ = lowest - kUnknownPenalty;
        const QJsonValue unknown = object.value("unk_id");
        if (!unknown.isNull() && !unknown.isUndefined()) {
            unknownId_ = json.id(unknown, field + ".unk_id");
            if (unknownId_ >= static_cast<int>(scores_.size()))
                json.fail(field + ".unk_id", QStringLiteral("%1 is not an id of the %2 pieces")
                                                 .arg(unknownId_)
                                                 .arg(scores_.size()));
        }
        byteFallback_ = json.optionalBool(object, "byte_fallback", field, false);
        fileName_ = json.fileName();
    }

    const QHash<QString, int>& vocabulary() const override { return vocabulary_; }

    void tokenize(const QString& word, std::vector<int>& ids) const override {
        const QList<uint> text = word.toUcs4();
        const auto n = static_cast<std::size_t>(text.size());
        // best[e]: the best segmentation of text[0, e): its score, where its last piece starts,
        // and that piece's id (−1: an unknown character).
        struct End {
            double score = 0;
            long long start = -1;
            int id = -1;
        };
        std::vector<End> best(n + 1);
        best[0].start = 0;
        const auto offer = [&best](std::size_t end, double score, std::size_t start, int id) {
            End& e = best[end];
            if (e.start < 0 || score > e.score) e = {score, static_cast<long long>(start), id};
        };
        for (std::size_t start = 0; start < n; ++start) {
            if (best[start].start < 0) continue;  // unreachable: never, as unknowns cover all
            const double before = best[start].score;
            bool wholeCharacter = false;
            int node = 0;
            for (std::size_t end = start; end < n; ++end) {
                node = child(node, text[static_cast<qsizetype>(end)]);
                if (node < 0) break;
                const int id = nodePiece_[static_cast<std::size_t>(node)];
                if (id < 0) continue;
                offer(end + 1, before + scores_[static_cast<std::size_t>(id)], start, id);
                if (end == start) wholeCharacter = true;
            }
            if (!wholeCharacter) offer(start + 1, before + unknownScore_, start, -1);
        }
        // Back from the end; a run of unknowns becomes one piece.
        std::vector<std::pair<std::size_t, std::size_t>> spans;  // [start, end) of each piece
        std::vector<int> pieceIds;
        for (std::size_t end = n; end > 0;) {
            const End& e = best[end];
            const auto start = static_cast<std::size_t>(e.start);
            if (e.id < 0 && !pieceIds.empty() && pieceIds.back() < 0) {
                spans.back().first = start;
            } else {
                spans.emplace_back(start, end);
                pieceIds.push_back(e.id);
            }
            end = start;
        }
        for (std::size_t i = spans.size(); i-- > 0;) {
            if (pieceIds[i] >= 0) {
                ids.push_back(pieceIds[i]);
                continue;
            }
            const auto [start, end] = spans[i];
            // Character by character: QString::fromUcs4 would drop a leading U+FEFF as a
            // byte order mark, and with it the bytes byte fallback must give.
            QString unknown;
            for (std::size_t k = start; k < end; ++k)
                unknown += QChar::fromUcs4(text[static_cast<qsizetype>(k)]);
            appendUnknown(unknown, ids);
        }
    }

private:
    static quint64 edgeKey(int node, uint codePoint) {
        return (static_cast<quint64>(node) << 21) | codePoint;
    }
    int child(int node, uint codePoint) const {
        const auto found = edges_.find(edgeKey(node, codePoint));
        return found == edges_.end() ? -1 : found->second;
    }
    int nodeFor(const QString& piece) {
        int node = 0;
        for (const uint codePoint : piece.toUcs4()) {
            const quint64 key = edgeKey(node, codePoint);
            const auto found = edges_.find(key);
            if (found != edges_.end()) {
                node = found->second;
                continue;
            }
            const int added = static_cast<int>(nodePiece_.size());
            nodePiece_.push_back(-1);
            edges_.emplace(key, added);
            node = added;
        }
        return node;
    }

    // A fused run of unknown characters: the piece itself if the vocabulary has it, else its
    // UTF-8 bytes (with byte_fallback, when every <0xNN> is a piece), else unk_id.
    void appendUnknown(const QString& unknown, std::vector<int>& ids) const {
        const auto whole = vocabulary_.constFind(unknown);
        if (whole != vocabulary_.constEnd()) {
            ids.push_back(*whole);
            return;
        }
        if (byteFallback_) {
            std::vector<int> bytes;
            for (const char byte : unknown.toUtf8()) {
                const auto found = vocabulary_.constFind(
                    QString::asprintf("<0x%02X>", static_cast<unsigned char>(byte)));
                if (found == vocabulary_.constEnd()) {
                    bytes.clear();
                    break;
                }
                bytes.push_back(*found);
            }
            if (!bytes.empty()) {
                ids.insert(ids.end(), bytes.begin(), bytes.end());
                return;
            }
        }
        if (unknownId_ < 0)
            throw TokenizerError(QStringLiteral("%1: model.unk_id: none is given, but \"%2\" is "
                                                "not in the vocabulary")
                                     .arg(fileName_, unknown));
        ids.push_back(unknownId_);
    }

    QHash<QString, int> vocabulary_;
    std::vector<double> scores_;              // by id
    std::vector<int> nodePiece_;              // the trie: a node's piece id, or −1
    std::unordered_map<quint64, int> edges_;  // (node, code point) → child
    double unknownScore_ = 0;
    int unknownId_ = -1;
    bool byteFallback_ = false;
    QString fileName_;
};

}  // namespace

std::unique_ptr<Model> parseUnigram(const JsonReader& json, const QJsonObject& object,
                                    const QString& field) {
    return std::make_unique<Unigram>(json, object, field);
}

}  // namespace ae::io::tok
