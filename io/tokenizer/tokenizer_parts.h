#pragma once
// The stages of a tokenizer (see tokenizer.h), each built from its part of tokenizer.json or
// from the classic files. Internal to io/: tokenizer.cpp runs them in order.

#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QJsonValue>
#include <QRegularExpression>
#include <QString>
#include <QStringList>
#include <memory>
#include <vector>

#include "io/tokenizer/tokenizer.h"

namespace ae::io::tok {

// Names the file in every refusal and reads fields with their path (`model.vocab`), so that a
// wrong type is reported as `FILE: FIELD: expected a string`.
class JsonReader {
public:
    explicit JsonReader(QString fileName) : fileName_(std::move(fileName)) {}
    const QString& fileName() const { return fileName_; }

    [[noreturn]] void fail(const QString& field, const QString& problem) const;
    // `"X" is not supported (supported: A, B)`
    [[noreturn]] void unsupported(const QString& field, const QString& value,
                                  const QStringList& supported) const;

    QJsonObject object(const QJsonValue& value, const QString& field) const;
    QJsonArray array(const QJsonValue& value, const QString& field) const;
    QString string(const QJsonValue& value, const QString& field) const;
    bool boolean(const QJsonValue& value, const QString& field) const;
    // A whole number in [0, 2^30).
    int id(const QJsonValue& value, const QString& field) const;
    static bool isId(const QJsonValue& value);

    // Optional fields: absent or null gives the default.
    QString optionalString(const QJsonObject& object, const QString& key, const QString& field,
                           const QString& fallback = {}) const;
    bool optionalBool(const QJsonObject& object, const QString& key, const QString& field,
                      bool fallback) const;

private:
    QString fileName_;
};

// One stretch of text on its way through the stages. `atStart`: the stretch begins where the
// original text began (Metaspace's prepend_scheme "first" prepends only there).
struct Piece {
    QString text;
    bool atStart = false;
};

class Normalizer {
public:
    virtual ~Normalizer() = default;
    virtual QString normalize(const QString& text) const = 0;
};

class PreTokenizer {
public:
    virtual ~PreTokenizer() = default;
    // Replaces each piece by the pieces it splits into (empty ones dropped).
    virtual void split(std::vector<Piece>& pieces) const = 0;
    // True when the words leave this stage as GPT-2's byte characters (for display).
    virtual bool mapsBytes() const { return false; }
};

class Model {
public:
    virtual ~Model() = default;
    // Appends the ids of one word.
    virtual void tokenize(const QString& word, std::vector<int>& ids) const = 0;
    // token -> id, every token the model knows.
    virtual const QHash<QString, int>& vocabulary() const = 0;
};

class Decoder {
public:
    virtual ~Decoder() = default;
    // The tokens' strings after this stage; the decoded text is the last stage's list joined.
    virtual QStringList decode(const QStringList& tokens) const = 0;
};

// A regular expression as tokenizer.json's `{"Regex": ...}` or `{"String": ...}` gives it (a
// String is matched literally). Unicode properties on, as the library's Oniguruma has them.
QRegularExpression parsePattern(const JsonReader& json, const QJsonValue& value,
                                const QString& field);

std::unique_ptr<Normalizer> parseNormalizer(const JsonReader& json, const QJsonValue& value,
                                            const QString& field);
std::unique_ptr<PreTokenizer> parsePreTokenizer(const JsonReader& json, const QJsonValue& value,
                                                const QString& field);
// A decoder whose type is not implemented parses, and refuses (TokenizerError) when used.
std::unique_ptr<Decoder> parseDecoder(const JsonReader& json, const QJsonValue& value,
                                      const QString& field);
std::unique_ptr<Model> parseModel(const JsonReader& json, const QJsonValue& value,
                                  const QString& field);
// {"type": "Precompiled", "precompiled_charsmap": base64}: SentencePiece's charsmap.
std::unique_ptr<Normalizer> parsePrecompiled(const JsonReader& json, const QJsonObject& object,
                                             const QString& field);
// tokenizer.json's {"type": "Unigram", "vocab": [[piece, score], ...], "unk_id", "byte_fallback"}.
std::unique_ptr<Model> parseUnigram(const JsonReader& json, const QJsonObject& object,
                                    const QString& field);

// The classic files' components.
std::unique_ptr<Normalizer> makeBertNormalizer(bool cleanText, bool chineseChars, bool stripAccents,
                                               bool lowercase);
std::unique_ptr<PreTokenizer> makeBertPreTokenizer();
// GPT-2's: its regex, then bytes to characters.
std::unique_ptr<PreTokenizer> makeByteLevelPreTokenizer(bool addPrefixSpace);
std::unique_ptr<Decoder> makeByteLevelDecoder();
std::unique_ptr<Decoder> makeWordPieceDecoder(const QString& prefix, bool cleanup);
// Throws (via json.fail) when a merge names a token the vocabulary lacks.
// `mergeFields[i]` names merge i in a refusal ("line 3").
std::unique_ptr<Model> makeBpe(const JsonReader& json, QHash<QString, int> vocabulary,
                               const std::vector<std::pair<QString, QString>>& merges,
                               const QStringList& mergeFields);
std::unique_ptr<Model> makeWordPiece(QHash<QString, int> vocabulary, int unknownId, QString prefix,
                                     int maxCharsPerWord);

// GPT-2's table: byte b is written as the character byteCharacter(b) (printable bytes as
// themselves, the others moved to U+0100 and up).
QChar byteCharacter(unsigned char byte);
// The inverse, or -1 for a character that is not one of the 256.
int characterByte(QChar character);
// The text's UTF-8 bytes, each as its byte character.
QString toByteCharacters(const QString& text);
// Bytes read as UTF-8, each broken sequence replaced as the reference library (Rust) does.
QString decodeUtf8Lossy(const QByteArray& bytes);

// A token added to the vocabulary that is split out of the text before anything else sees it.
struct AddedToken {
    QString content;
    int id = 0;
    bool special = false;
    bool singleWord = false;
    bool leftStrip = false;
    bool rightStrip = false;
    bool normalized = false;  // matched in the normalized text (else in the raw text)
};

// A stretch of text, or (id >= 0) an added token found in it.
struct Split {
    Piece piece;
    int id = -1;
};

// Finds added tokens in text as the reference library does: leftmost first, the longest of
// those starting there, honouring single_word, lstrip and rstrip.
class AddedTokenMatcher {
public:
    // The tokens whose `normalized` flag equals `normalized`.
    void build(const std::vector<AddedToken>& tokens, bool normalized);
    std::vector<Split> split(const Piece& text) const;

private:
    std::vector<AddedToken> tokens_;
    QHash<QChar, std::vector<int>> byFirstUnit_;  // indices into tokens_, longest first
};

// What the post-processor puts around a single sequence.
// One part of a pair template: a special token's ids, or one of the two texts (sequence 0 is
// text A, 1 text B), with the token type its ids get.
struct TemplatePiece {
    int sequence = -1;  // -1: the special token `ids`
    std::vector<int> ids;
    int typeId = 0;
};
struct SpecialTokens {
    std::vector<int> prefix, suffix;  // around a single text
    // Around a pair of texts: the template's pieces in order. Empty: the post-processor gives
    // no pair form (then a pair is refused unless there are no special tokens at all).
    std::vector<TemplatePiece> pair;
};
SpecialTokens parsePostProcessor(const JsonReader& json, const QJsonValue& value,
                                 const QString& field);
// BERT's [CLS] A [SEP] and its pair form; RoBERTa's (allTypesZero) doubles the middle separator.
SpecialTokens bertLikeSpecials(int cls, int sep, bool allTypesZero);

// How ids are shown to a reader (Tokenizer::displayText).
enum class DisplayStyle { Plain, ByteLevel, Metaspace };

struct Pipeline {
    std::unique_ptr<Normalizer> normalizer;      // may be null
    std::unique_ptr<PreTokenizer> preTokenizer;  // may be null
    std::unique_ptr<Model> model;
    std::unique_ptr<Decoder> decoder;  // may be null: the tokens are joined with spaces
    std::vector<AddedToken> addedTokens;
    SpecialTokens specials;
    DisplayStyle display = DisplayStyle::Plain;

    // Filled by finish(), which is called once everything above is set.
    QHash<int, QString> tokenById;
    int idCount = 0;
    AddedTokenMatcher rawMatcher, normalizedMatcher;
    void finish();
};

// Reads tokenizer.json (and tokenizer_config.json when not empty).
std::unique_ptr<Pipeline> parseTokenizerJson(const QByteArray& data, const QByteArray& config,
                                             const QString& fileName, const QString& configName);
// Reads the classic files; a missing merges.txt or a bad line is refused naming the file.
std::unique_ptr<Pipeline> loadGpt2Files(const QString& vocabFile, const QString& mergesFile,
                                        const QString& configFile);
std::unique_ptr<Pipeline> loadBertVocabulary(const QString& vocabFile, const QString& configFile);
// A vocab.json (GPT-2's, Marian's): an object of token: id, refused naming `fileName` and the
// token when it is not.
QHash<QString, int> parseVocabularyJson(const QByteArray& bytes, const QString& fileName);
// The whole file; TokenizerError naming it when it cannot be read.
QByteArray readFile(const QString& path);
// A Marian folder: source.spm and vocab.json, no tokenizer.json
// (io/tokenizer/tokenizer_marian.cpp).
bool isMarianFolder(const QString& folder);
// The source side (source.spm, vocab.json), or the target side (target.spm, with
// target_vocab.json when the folder has one: MarianTokenizer's separate_vocabs).
enum class MarianSide { Source, Target };
std::unique_ptr<Pipeline> loadMarian(const QString& folder, MarianSide side = MarianSide::Source);
// Parsers for the classic formats from memory (for the loaders and the fuzzers).
std::unique_ptr<Pipeline> parseGpt2Files(const QByteArray& vocab, const QByteArray& merges,
                                         const QByteArray& config, const QString& vocabName,
                                         const QString& mergesName, const QString& configName);
std::unique_ptr<Pipeline> parseBertVocabulary(const QByteArray& vocab, const QByteArray& config,
                                              const QString& vocabName, const QString& configName);

// tokenizer_config.json: add_bos_token / add_eos_token override the post-processor's choice,
// as transformers' fast tokenizers do; a malformed config is refused naming the field.
void applyTokenizerConfig(Pipeline& pipeline, const QByteArray& config, const QString& configName);

}  // namespace ae::io::tok
