// The classic files, read as transformers builds a fast tokenizer from them: GPT-2's vocab.json +
// merges.txt (byte-level BPE) and BERT's vocab.txt (WordPiece with BERT's normalizer).

#include <QJsonDocument>
#include <QJsonParseError>

#include "io/tokenizer/tokenizer_parts.h"

namespace ae::io::tok {
namespace {

QJsonObject parseConfig(const QByteArray& config, const QString& configName) {
    if (config.isEmpty()) return {};
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(escapeByteOrderMarks(config), &error);
    if (error.error != QJsonParseError::NoError || !document.isObject())
        throw TokenizerError(configName + ": not a JSON object: " + error.errorString());
    return document.object();
}

// The file's lines without their line ends; a final line end does not start another line.
QStringList lines(const QByteArray& data) {
    QStringList result = QString::fromUtf8(data).split(QLatin1Char('\n'));
    if (!result.isEmpty() && result.last().isEmpty()) result.removeLast();
    for (QString& line : result)
        if (line.endsWith(QLatin1Char('\r'))) line.chop(1);
    return result;
}

void addSpecialIfKnown(Pipeline& pipeline, const QString& token) {
    const auto found = pipeline.model->vocabulary().find(token);
    if (found == pipeline.model->vocabulary().end()) return;
    AddedToken added;
    added.content = token;
    added.id = found.value();
    added.special = true;
    pipeline.addedTokens.push_back(added);
}

}  // namespace

QHash<QString, int> parseVocabularyJson(const QByteArray& bytes, const QString& fileName) {
    const JsonReader vocabJson(fileName);
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(escapeByteOrderMarks(bytes), &error);
    if (error.error != QJsonParseError::NoError)
        vocabJson.fail({}, QStringLiteral("not valid JSON at byte %1: %2")
                               .arg(error.offset)
                               .arg(error.errorString()));
    if (!document.isObject()) vocabJson.fail({}, "expected an object of token: id");
    const QJsonObject table = document.object();
    QHash<QString, int> vocabulary;
    vocabulary.reserve(table.size());
    for (auto it = table.begin(); it != table.end(); ++it) {
        const QJsonValue id = it.value();
        vocabulary.insert(it.key(), JsonReader::isId(id) ? id.toInt() : vocabJson.id(id, it.key()));
    }
    return vocabulary;
}

std::unique_ptr<Pipeline> parseGpt2Files(const QByteArray& vocab, const QByteArray& merges,
                                         const QByteArray& config, const QString& vocabName,
                                         const QString& mergesName, const QString& configName) {
    const JsonReader vocabJson(vocabName), configJson(configName);
    QHash<QString, int> vocabulary = parseVocabularyJson(vocab, vocabName);

    std::vector<std::pair<QString, QString>> pairs;
    QStringList pairLines;
    const QStringList mergeLines = lines(merges);
    const JsonReader mergesFile(mergesName);
    for (qsizetype i = 0; i < mergeLines.size(); ++i) {
        const QString& line = mergeLines.at(i);
        if (line.isEmpty() || (i == 0 && line.startsWith("#version"))) continue;
        const QStringList parts = line.split(QLatin1Char(' '));
        if (parts.size() != 2)
            mergesFile.fail(QStringLiteral("line %1").arg(i + 1), "expected \"LEFT RIGHT\"");
        pairs.emplace_back(parts.at(0), parts.at(1));
        pairLines << QStringLiteral("line %1").arg(i + 1);
    }

    const QJsonObject settings = parseConfig(config, configName);
    auto pipeline = std::make_unique<Pipeline>();
    pipeline->model = makeBpe(mergesFile, std::move(vocabulary), pairs, pairLines);
    pipeline->preTokenizer = makeByteLevelPreTokenizer(
        configJson.optionalBool(settings, "add_prefix_space", "tokenizer_config", false));
    pipeline->decoder = makeByteLevelDecoder();
    pipeline->display = DisplayStyle::ByteLevel;
    addSpecialIfKnown(*pipeline, "<|endoftext|>");
    applyTokenizerConfig(*pipeline, config, configName);
    pipeline->finish();
    return pipeline;
}

std::unique_ptr<Pipeline> parseBertVocabulary(const QByteArray& vocab, const QByteArray& config,
                                              const QString& vocabName, const QString& configName) {
    const JsonReader vocabFile(vocabName), configJson(configName);
    QHash<QString, int> vocabulary;
    const QStringList tokens = lines(vocab);
    if (tokens.isEmpty()) vocabFile.fail({}, "has no tokens");
    for (qsizetype i = 0; i < tokens.size(); ++i)
        vocabulary.insert(tokens.at(i), int(i));

    const QJsonObject settings = parseConfig(config, configName);
    const QString field = "tokenizer_config";
    const bool lowercase = configJson.optionalBool(settings, "do_lower_case", field, true);
    const QString unknown = configJson.optionalString(settings, "unk_token", field, "[UNK]");
    const QString cls = configJson.optionalString(settings, "cls_token", field, "[CLS]");
    const QString sep = configJson.optionalString(settings, "sep_token", field, "[SEP]");
    for (const QString& token : {unknown, cls, sep}) {
        if (!vocabulary.contains(token))
            vocabFile.fail({}, "has no \"" + token + "\" token (BERT's unknown, CLS and SEP)");
    }

    auto pipeline = std::make_unique<Pipeline>();
    pipeline->normalizer = makeBertNormalizer(
        true, configJson.optionalBool(settings, "tokenize_chinese_chars", field, true),
        configJson.optionalBool(settings, "strip_accents", field, lowercase), lowercase);
    pipeline->preTokenizer = makeBertPreTokenizer();
    pipeline->decoder = makeWordPieceDecoder("##", true);
    pipeline->specials = bertLikeSpecials(vocabulary.value(cls), vocabulary.value(sep), false);
    const int unknownId = vocabulary.value(unknown);
    pipeline->model = makeWordPiece(std::move(vocabulary), unknownId, "##", 100);
    for (const QString& token :
         {QStringLiteral("[PAD]"), unknown, cls, sep, QStringLiteral("[MASK]")})
        addSpecialIfKnown(*pipeline, token);
    pipeline->finish();
    return pipeline;
}

}  // namespace ae::io::tok
