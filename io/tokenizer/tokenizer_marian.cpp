// Marian (opus-mt) folders: no tokenizer.json, but source.spm (a SentencePiece model) and
// vocab.json, read as transformers' MarianTokenizer reads them. SentencePiece's own library does
// the normalization and segmentation (its charsmap, whitespace rules and Viterbi), so the pieces
// are exactly SentencePiece's; vocab.json numbers them, independently of the model's own ids.
#include <sentencepiece_processor.h>

#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

#include "io/tokenizer/tokenizer_parts.h"

namespace ae::io::tok {
namespace {

// A leading language code (">>fr<<") is a token of its own, looked up in the vocabulary; every
// such span is then removed from the text, and SentencePiece encodes the rest
// (MarianTokenizer.remove_language_code and _tokenize).
class MarianModel : public Model {
public:
    MarianModel(std::unique_ptr<sentencepiece::SentencePieceProcessor> processor,
                QHash<QString, int> vocabulary, int unknownId)
        : processor_(std::move(processor)),
          vocabulary_(std::move(vocabulary)),
          unknownId_(unknownId),
          languageCode_(QStringLiteral(">>.+<<")) {}

    void tokenize(const QString& text, std::vector<int>& ids) const override {
        const QRegularExpressionMatch code =
            languageCode_.match(text, 0, QRegularExpression::NormalMatch,
                                QRegularExpression::AnchorAtOffsetMatchOption);
        if (code.hasMatch()) ids.push_back(vocabulary_.value(code.captured(0), unknownId_));
        QString rest = text;
        rest.remove(languageCode_);
        std::vector<std::string> pieces;
        // Encode fails only on a processor that did not load, which load() refused.
        (void)processor_->Encode(rest.toStdString(), &pieces);
        for (const std::string& piece : pieces)
            ids.push_back(vocabulary_.value(QString::fromStdString(piece), unknownId_));
    }
    const QHash<QString, int>& vocabulary() const override { return vocabulary_; }

private:
    std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
    QHash<QString, int> vocabulary_;
    int unknownId_;
    QRegularExpression languageCode_;
};

// `▁` back to spaces, the first one dropped (SentencePiece's DecodePieces).
class MetaspaceJoin : public Decoder {
public:
    QStringList decode(const QStringList& tokens) const override {
        QString text = tokens.join(QString());
        text.replace(QChar(0x2581), QLatin1Char(' '));
        if (text.startsWith(QLatin1Char(' '))) text.remove(0, 1);
        return {text};
    }
};

}  // namespace

bool isMarianFolder(const QString& folder) {
    const QDir dir(folder);
    return QFileInfo(dir.filePath("source.spm")).isFile() &&
           QFileInfo(dir.filePath("vocab.json")).isFile() &&
           !QFileInfo(dir.filePath("tokenizer.json")).isFile();
}

std::unique_ptr<Pipeline> loadMarian(const QString& folder, MarianSide side) {
    const QDir dir(folder);
    const bool target = side == MarianSide::Target;
    const QString modelName = dir.filePath(target ? "target.spm" : "source.spm");
    const QString vocabName = target && QFileInfo(dir.filePath("target_vocab.json")).isFile()
                                  ? dir.filePath("target_vocab.json")
                                  : dir.filePath("vocab.json");
    if (!QFileInfo(modelName).isFile())
        throw TokenizerError(modelName + ": missing (a Marian folder's " +
                             (target ? "target" : "source") + " side needs it)");
    auto processor = std::make_unique<sentencepiece::SentencePieceProcessor>();
    const QByteArray model = readFile(modelName);
    const auto status = processor->LoadFromSerializedProto(
        std::string_view(model.constData(), static_cast<std::size_t>(model.size())));
    if (!status.ok()) {
        throw TokenizerError(QStringLiteral("%1: not a SentencePiece model (%2)")
                                 .arg(modelName, QString::fromStdString(status.ToString())));
    }
    const JsonReader vocabJson(vocabName);
    QHash<QString, int> vocabulary = parseVocabularyJson(readFile(vocabName), vocabName);
    for (const char* special : {"</s>", "<unk>"}) {
        if (!vocabulary.contains(QLatin1String(special)))
            vocabJson.fail(QLatin1String(special), "missing (MarianTokenizer needs it)");
    }
    auto pipeline = std::make_unique<Pipeline>();
    // The special tokens are split out of the text before anything else, wherever they stand.
    int added = 0;
    for (const char* special : {"</s>", "<unk>", "<pad>"}) {
        const auto found = vocabulary.constFind(QLatin1String(special));
        if (found == vocabulary.constEnd()) continue;
        AddedToken token;
        token.content = found.key();
        token.id = found.value();
        token.special = true;
        pipeline->addedTokens.push_back(token);
        ++added;
    }
    pipeline->specials.suffix = {vocabulary.value(QStringLiteral("</s>"))};
    const int unknown = vocabulary.value(QStringLiteral("<unk>"));
    pipeline->model =
        std::make_unique<MarianModel>(std::move(processor), std::move(vocabulary), unknown);
    pipeline->decoder = std::make_unique<MetaspaceJoin>();
    pipeline->display = DisplayStyle::Metaspace;
    pipeline->finish();
    return pipeline;
}

}  // namespace ae::io::tok
