// The tokenizer as a whole: finding its files, running the stages in order, showing ids.

#include "io/tokenizer/tokenizer.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <algorithm>
#include <array>

#include "io/tokenizer/tokenizer_parts.h"

namespace ae::io {
namespace tok {
namespace {

// GPT-2's byte-to-character table: printable Latin-1 bytes stand for themselves, the other 68
// bytes take the characters from U+0100 on, in byte order.
struct ByteTable {
    std::array<QChar, 256> character;
    std::array<int, 0x200> byteOf;
    ByteTable() {
        byteOf.fill(-1);
        int shifted = 0;
        for (int byte = 0; byte < 256; ++byte) {
            const bool printable = (byte >= '!' && byte <= '~') || (byte >= 0xA1 && byte <= 0xAC) ||
                                   (byte >= 0xAE && byte <= 0xFF);
            const int code = printable ? byte : 0x100 + shifted++;
            character[byte] = QChar(code);
            byteOf[code] = byte;
        }
    }
};

const ByteTable& byteTable() {
    static const ByteTable table;
    return table;
}

bool isWordCharacter(QChar c) {
    return c.isLetterOrNumber() || c == QLatin1Char('_');
}

}  // namespace

QChar byteCharacter(unsigned char byte) {
    return byteTable().character[byte];
}

int characterByte(QChar character) {
    return character.unicode() < 0x200 ? byteTable().byteOf[character.unicode()] : -1;
}

QString toByteCharacters(const QString& text) {
    const QByteArray bytes = text.toUtf8();
    QString result(bytes.size(), Qt::Uninitialized);
    for (qsizetype i = 0; i < bytes.size(); ++i)
        result[i] = byteCharacter(quint8(bytes[i]));
    return result;
}

void AddedTokenMatcher::build(const std::vector<AddedToken>& tokens, bool normalized) {
    tokens_.clear();
    byFirstUnit_.clear();
    for (const AddedToken& token : tokens)
        if (token.normalized == normalized) tokens_.push_back(token);
    for (int i = 0; i < static_cast<int>(tokens_.size()); ++i)
        byFirstUnit_[tokens_[i].content.at(0)].push_back(i);
    for (auto& candidates : byFirstUnit_) {
        std::stable_sort(candidates.begin(), candidates.end(), [&](int a, int b) {
            return tokens_[a].content.size() > tokens_[b].content.size();
        });
    }
}

std::vector<Split> AddedTokenMatcher::split(const Piece& text) const {
    const QString& s = text.text;
    std::vector<Split> splits;
    qsizetype done = 0;  // everything before this is in `splits`
    qsizetype position = 0;
    const auto pushText = [&](qsizetype begin, qsizetype end) {
        if (end > begin)
            splits.push_back({{s.mid(begin, end - begin), text.atStart && begin == 0}});
    };
    while (!byFirstUnit_.isEmpty() && position < s.size()) {
        const auto candidates = byFirstUnit_.constFind(s.at(position));
        const AddedToken* match = nullptr;
        if (candidates != byFirstUnit_.constEnd()) {
            for (const int index : *candidates) {
                if (QStringView(s).mid(position).startsWith(tokens_[index].content)) {
                    match = &tokens_[index];
                    break;
                }
            }
        }
        if (!match) {
            ++position;
            continue;
        }
        qsizetype begin = position, end = position + match->content.size();
        position = end;
        if (match->singleWord) {
            const bool wordBefore = begin > 0 && isWordCharacter(s.at(begin - 1));
            const bool wordAfter = end < s.size() && isWordCharacter(s.at(end));
            if (wordBefore || wordAfter) continue;
        }
        if (match->leftStrip) {
            while (begin > done && s.at(begin - 1).isSpace())
                --begin;
        }
        if (match->rightStrip) {
            while (end < s.size() && s.at(end).isSpace())
                ++end;
            position = end;
        }
        pushText(done, begin);
        splits.push_back({{match->content, text.atStart && begin == 0}, match->id});
        done = end;
    }
    pushText(done, s.size());
    return splits;
}

void Pipeline::finish() {
    tokenById.clear();
    const QHash<QString, int>& vocabulary = model->vocabulary();
    tokenById.reserve(vocabulary.size() + qsizetype(addedTokens.size()));
    idCount = 0;
    for (auto it = vocabulary.begin(); it != vocabulary.end(); ++it) {
        tokenById.insert(it.value(), it.key());
        idCount = std::max(idCount, it.value() + 1);
    }
    for (const AddedToken& token : addedTokens) {
        tokenById.insert(token.id, token.content);
        idCount = std::max(idCount, token.id + 1);
    }
    rawMatcher.build(addedTokens, false);
    normalizedMatcher.build(addedTokens, true);
}

QByteArray readFile(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw TokenizerError(path + ": cannot open: " + file.errorString());
    return file.readAll();
}

std::unique_ptr<Pipeline> loadGpt2Files(const QString& vocabFile, const QString& mergesFile,
                                        const QString& configFile) {
    const QByteArray vocab = readFile(vocabFile), merges = readFile(mergesFile);
    const QByteArray config = QFileInfo(configFile).isFile() ? readFile(configFile) : QByteArray();
    return parseGpt2Files(vocab, merges, config, vocabFile, mergesFile, configFile);
}

std::unique_ptr<Pipeline> loadBertVocabulary(const QString& vocabFile, const QString& configFile) {
    const QByteArray vocab = readFile(vocabFile);
    const QByteArray config = QFileInfo(configFile).isFile() ? readFile(configFile) : QByteArray();
    return parseBertVocabulary(vocab, config, vocabFile, configFile);
}

}  // namespace tok

QByteArray escapeByteOrderMarks(const QByteArray& json) {
    static const QByteArray mark("\xEF\xBB\xBF");
    QByteArray text = json.startsWith(mark) ? json.mid(mark.size()) : json;
    if (text.contains(mark)) text.replace(mark, "\\ufeff");
    return text;
}

Tokenizer::Tokenizer(std::unique_ptr<tok::Pipeline> pipeline) : pipeline_(std::move(pipeline)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

Tokenizer Tokenizer::fromJson(const QByteArray& tokenizerJson, const QByteArray& config,
                              const QString& fileName, const QString& configName) {
    return Tokenizer(tok::parseTokenizerJson(tokenizerJson, config, fileName, configName));
}

Tokenizer Tokenizer::fromPipeline(std::unique_ptr<tok::Pipeline> pipeline) {
    return Tokenizer(std::move(pipeline));
}

Tokenizer Tokenizer::load(const QString& path) {
    const QFileInfo info(path);
    if (!info.exists()) throw TokenizerError(path + ": no such file or folder");
    QString configName;
    if (info.isDir()) {
        const QDir folder(path);
        configName = folder.filePath("tokenizer_config.json");
        const auto has = [&](const char* name) {
            return QFileInfo(folder.filePath(name)).isFile();
        };
        const QByteArray config =
            QFileInfo(configName).isFile() ? tok::readFile(configName) : QByteArray();
        if (has("tokenizer.json")) {
            const QString file = folder.filePath("tokenizer.json");
            return fromJson(tok::readFile(file), config, file, configName);
        }
        if (tok::isMarianFolder(path)) return Tokenizer(tok::loadMarian(path));
        if (has("vocab.json") && has("merges.txt"))
            return Tokenizer(tok::loadGpt2Files(folder.filePath("vocab.json"),
                                                folder.filePath("merges.txt"), configName));
        if (has("vocab.txt"))
            return Tokenizer(tok::loadBertVocabulary(folder.filePath("vocab.txt"), configName));
        if (has("tokenizer.model"))
            throw TokenizerError(path +
                                 ": only tokenizer.model (SentencePiece), which is not read; write "
                                 "a tokenizer.json with transformers: "
                                 "AutoTokenizer.from_pretrained(DIR).save_pretrained(DIR)");
        throw TokenizerError(path +
                             ": no tokenizer.json, vocab.json + merges.txt, vocab.txt, or Marian's "
                             "source.spm + vocab.json in this folder");
    }
    const QString name = info.fileName();
    const QDir folder = info.dir();
    configName = folder.filePath("tokenizer_config.json");
    if (name == "merges.txt" || name == "vocab.json" || name.endsWith(".bpe")) {
        const QString vocab = name == "vocab.json" ? path : folder.filePath("vocab.json");
        const QString merges = name == "vocab.json" ? folder.filePath("merges.txt") : path;
        if (!QFileInfo(vocab).isFile() || !QFileInfo(merges).isFile())
            throw TokenizerError(path + ": GPT-2's files come in pairs: " + vocab + " and " +
                                 merges + " are both needed");
        return Tokenizer(tok::loadGpt2Files(vocab, merges, configName));
    }
    if (name.endsWith(".txt")) return Tokenizer(tok::loadBertVocabulary(path, configName));
    const QByteArray config = path != configName && QFileInfo(configName).isFile()
                                  ? tok::readFile(configName)
                                  : QByteArray();
    return fromJson(tok::readFile(path), config, path, configName);
}

Tokenizer Tokenizer::loadTarget(const QString& folder) {
    if (QFileInfo(folder).isDir() && tok::isMarianFolder(folder))
        return Tokenizer(tok::loadMarian(folder, tok::MarianSide::Target));
    return load(folder);
}

std::vector<int> Tokenizer::encode(const QString& text, bool addSpecialTokens) const {
    const tok::Pipeline& p = *pipeline_;
    std::vector<int> ids;
    if (addSpecialTokens) ids = p.specials.prefix;
    appendIds(text, ids);
    if (addSpecialTokens) ids.insert(ids.end(), p.specials.suffix.begin(), p.specials.suffix.end());
    return ids;
}

Tokenizer::Encoded Tokenizer::encodePair(const QString& first, const QString& second,
                                         bool addSpecialTokens) const {
    const tok::Pipeline& p = *pipeline_;
    // Each text is encoded on its own, as the reference library encodes a pair.
    std::vector<int> texts[2];
    appendIds(first, texts[0]);
    appendIds(second, texts[1]);
    Encoded out;
    out.secondStart = -1;
    auto append = [&](const std::vector<int>& ids, int type) {
        out.ids.insert(out.ids.end(), ids.begin(), ids.end());
        out.typeIds.insert(out.typeIds.end(), ids.size(), type);
    };
    const bool hasSpecials = !p.specials.prefix.empty() || !p.specials.suffix.empty();
    if (!addSpecialTokens || (!hasSpecials && p.specials.pair.empty())) {
        // The texts one after the other, each with the template's type for it (the library
        // sets them before it decides whether to add the special tokens); without a template
        // A is of type 0 and B of type 1.
        int types[2] = {0, 1};
        for (const tok::TemplatePiece& piece : p.specials.pair)
            if (piece.sequence >= 0) types[piece.sequence] = piece.typeId;
        append(texts[0], types[0]);
        out.secondStart = static_cast<int>(out.ids.size());
        append(texts[1], types[1]);
        return out;
    }
    if (p.specials.pair.empty()) {
        throw TokenizerError(QStringLiteral(
            "tokenizer: its post-processor adds special tokens around one text but gives no "
            "form for a pair of texts"));
    }
    for (const tok::TemplatePiece& piece : p.specials.pair) {
        if (piece.sequence == 1) out.secondStart = static_cast<int>(out.ids.size());
        append(piece.sequence < 0 ? piece.ids : texts[piece.sequence], piece.typeId);
    }
    return out;
}

void Tokenizer::appendIds(const QString& text, std::vector<int>& ids) const {
    const tok::Pipeline& p = *pipeline_;
    std::vector<tok::Piece> words;
    for (const tok::Split& raw : p.rawMatcher.split({text, true})) {
        if (raw.id >= 0) {
            ids.push_back(raw.id);
            continue;
        }
        const QString normalized =
            p.normalizer ? p.normalizer->normalize(raw.piece.text) : raw.piece.text;
        if (normalized.isEmpty()) continue;
        for (const tok::Split& split : p.normalizedMatcher.split({normalized, raw.piece.atStart})) {
            if (split.id >= 0) {
                ids.push_back(split.id);
                continue;
            }
            words.assign(1, split.piece);
            if (p.preTokenizer) p.preTokenizer->split(words);
            for (const tok::Piece& word : words)
                p.model->tokenize(word.text, ids);
        }
    }
}

QString Tokenizer::decode(const std::vector<int>& ids) const {
    QStringList tokens;
    for (const int id : ids) {
        const auto found = pipeline_->tokenById.constFind(id);
        if (found != pipeline_->tokenById.constEnd()) tokens << found.value();
    }
    if (!pipeline_->decoder) return tokens.join(QLatin1Char(' '));
    return pipeline_->decoder->decode(tokens).join(QString());
}

int Tokenizer::idCount() const {
    return pipeline_->idCount;
}

namespace {

// The id of the first of `names` an added token has, else the lowest vocabulary id that is one
// of them, else -1.
int tokenNamed(const tok::Pipeline& pipeline, const QStringList& names) {
    for (const tok::AddedToken& added : pipeline.addedTokens)
        if (names.contains(added.content)) return added.id;
    int found = -1;
    for (auto it = pipeline.tokenById.begin(); it != pipeline.tokenById.end(); ++it)
        if (names.contains(it.value()) && (found < 0 || it.key() < found)) found = it.key();
    return found;
}

}  // namespace

int Tokenizer::separatorToken() const {
    return tokenNamed(*pipeline_, {QStringLiteral("[SEP]"), QStringLiteral("</s>")});
}

int Tokenizer::maskToken() const {
    return tokenNamed(*pipeline_, {QStringLiteral("[MASK]"), QStringLiteral("<mask>")});
}

QString Tokenizer::tokenText(int id) const {
    return pipeline_->tokenById.value(id);
}

namespace {

// Control characters escaped as in C (\n, \t, \r, else \xNN): a newline token reads \n on a
// chip or a heatmap label instead of breaking the line, a tab \t instead of a gap. (The Unicode
// Control Pictures, ␊ and ␉, are missing from common UI fonts and showed as empty boxes.)
QString withVisibleControls(const QString& text) {
    QString shown;
    shown.reserve(text.size());
    for (const QChar c : text) {
        const char16_t u = c.unicode();
        if (u == u'\n')
            shown += QStringLiteral("\\n");
        else if (u == u'\t')
            shown += QStringLiteral("\\t");
        else if (u == u'\r')
            shown += QStringLiteral("\\r");
        else if (u < 0x20 || u == 0x7F)
            shown += QString::asprintf("\\x%02X", unsigned(u));
        else
            shown += c;
    }
    return shown;
}

}  // namespace

QString Tokenizer::displayText(int id) const {
    return withVisibleControls(readableText(id));
}

QString Tokenizer::readableText(int id) const {
    const QString token = tokenText(id);
    for (const tok::AddedToken& added : pipeline_->addedTokens)
        if (added.id == id) return token;
    switch (pipeline_->display) {
        case tok::DisplayStyle::Plain:
            return token;
        case tok::DisplayStyle::Metaspace:
            return QString(token).replace(QChar(0x2581), QLatin1Char(' '));
        case tok::DisplayStyle::ByteLevel: {
            QByteArray bytes;
            for (const QChar c : token) {
                const int byte = tok::characterByte(c);
                if (byte < 0) return token;  // not a byte-level token after all
                bytes += char(byte);
            }
            const QString text = QString::fromUtf8(bytes);
            if (text.toUtf8() == bytes) return text;
            // Part of a multi-byte character: its bytes, as byte-fallback vocabularies write them.
            QString hex;
            for (const char byte : bytes)
                hex += QString::asprintf("<0x%02X>", quint8(byte));
            return hex;
        }
    }
    return token;
}

}  // namespace ae::io
