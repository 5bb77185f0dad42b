#pragma once
// Tokenizers as Hugging Face's `tokenizers` library defines them in `tokenizer.json`, plus the
// classic files (GPT-2's vocab.json + merges.txt, BERT's vocab.txt). Text goes through the same
// stages in the same order as there: added and special tokens are split out of the raw text,
// the rest is normalized, split into words by the pre-tokenizer, each word becomes ids through
// the model (byte-level BPE, BPE with byte fallback, WordPiece), and the post-processor adds the
// special tokens around them.
//
// Anything the files ask for that is not implemented is refused by name, never approximated:
// `tokenizer.json: pre_tokenizer.type: "Whitespace" is not supported (supported: ...)`.

#include <QByteArray>
#include <QString>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace ae::io {

// A tokenizer file (or folder) that cannot be read: missing, not JSON, a field of the wrong type,
// or a component that is not supported. The message is one line, `FILE: FIELD: PROBLEM`.
class TokenizerError : public std::runtime_error {
public:
    explicit TokenizerError(const QString& message) : std::runtime_error(message.toStdString()) {}
};

namespace tok {
struct Pipeline;
}

// JSON text with every U+FEFF written as the escape `\ufeff` (a leading byte order mark
// dropped). Qt's JSON reader takes a U+FEFF at the start of a string for a byte order mark and
// loses it; Gemma's vocabulary has tokens that start with one.
QByteArray escapeByteOrderMarks(const QByteArray& json);

class Tokenizer {
public:
    // A model folder (tokenizer.json preferred, else vocab.json + merges.txt, else vocab.txt; a
    // tokenizer_config.json next to them is read too) or one of those files. Throws
    // TokenizerError.
    static Tokenizer load(const QString& path);
    // The target side's tokenizer of an encoder–decoder model folder: Marian's target.spm
    // (MarianTokenizer with text_target), else the folder's one tokenizer (T5's and BART's serve
    // both sides). Throws TokenizerError.
    static Tokenizer loadTarget(const QString& folder);
    // tokenizer.json's content; `config` is tokenizer_config.json's content or empty. `fileName`
    // and `configName` are what error messages name. Throws TokenizerError.
    static Tokenizer fromJson(const QByteArray& tokenizerJson, const QByteArray& config,
                              const QString& fileName, const QString& configName);

    // From stages already built (io/tokenizer/tokenizer_parts.h; for the fuzzers and the loaders).
    static Tokenizer fromPipeline(std::unique_ptr<tok::Pipeline> pipeline);

    Tokenizer(Tokenizer&&) noexcept;
    Tokenizer& operator=(Tokenizer&&) noexcept;
    ~Tokenizer();

    // The ids of `text`. With `addSpecialTokens`, the post-processor's tokens (BOS, [CLS] ...
    // [SEP]) are added as the tokenizer's files say; added tokens inside the text (`<|im_end|>`)
    // are recognised either way, as in the reference library.
    std::vector<int> encode(const QString& text, bool addSpecialTokens = true) const;
    // A pair of texts (sentence A and sentence B) as the post-processor's pair form joins them:
    // BERT's [CLS] A [SEP] B [SEP] with token types 0 … 0 1 … 1, RoBERTa's <s> A </s></s> B
    // </s> all of type 0, a template's pair with its type_ids. Without special tokens, A then B
    // (types 0 and 1). Throws TokenizerError when the post-processor adds tokens around one text
    // and has no pair form.
    struct Encoded {
        std::vector<int> ids;
        std::vector<int> typeIds;
        int secondStart = 0;  // the first id of sentence B's part (the pair's boundary)
    };
    Encoded encodePair(const QString& first, const QString& second,
                       bool addSpecialTokens = true) const;

    // The text of `ids` as the tokenizer's decoder writes it (the reference library's
    // `decode(ids, skip_special_tokens=false)`): byte-level tokens back to their bytes, byte
    // fallback tokens joined into characters, `▁` back to spaces. Ids the tokenizer does not
    // know are skipped. Throws TokenizerError for a decoder that is not implemented.
    QString decode(const std::vector<int>& ids) const;

    // One more than the largest id the tokenizer knows (vocabulary and added tokens).
    int idCount() const;
    // The id of the token a masked-LM model fills in, BERT's [MASK] or RoBERTa's <mask> (an
    // added token first, else the vocabulary's), or -1 when the tokenizer has neither.
    int maskToken() const;
    // The separator between sentences, BERT's [SEP] or RoBERTa's </s>, or -1.
    int separatorToken() const;
    // The token as stored in the vocabulary (`Ġworld`, `▁world`, `##ing`, `<0x0A>`), or an
    // empty string for an id the tokenizer does not know.
    QString tokenText(int id) const;
    // The token as a reader would write it: byte-level tokens decoded to their text (`Ġworld` ->
    // ` world`; a piece of a multi-byte character as `<0xE2>`), `▁` as a space, and control
    // characters escaped as in C (`\n`, `\t`, `\x14`). For labels.
    QString displayText(int id) const;

private:
    void appendIds(const QString& text, std::vector<int>& ids) const;  // no special tokens
    QString readableText(int id) const;  // displayText before its control characters are escaped
    explicit Tokenizer(std::unique_ptr<tok::Pipeline> pipeline);
    std::unique_ptr<tok::Pipeline> pipeline_;
};

}  // namespace ae::io
