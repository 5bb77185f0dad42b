// Reading tokenizer.json as a whole (added tokens, post-processor) and tokenizer_config.json;
// the field helpers every part's parser uses.

#include <QJsonDocument>
#include <QJsonParseError>
#include <cmath>

#include "io/tokenizer/tokenizer_parts.h"

namespace ae::io::tok {

void JsonReader::fail(const QString& field, const QString& problem) const {
    throw TokenizerError(fileName_ + ": " + (field.isEmpty() ? problem : field + ": " + problem));
}

void JsonReader::unsupported(const QString& field, const QString& value,
                             const QStringList& supported) const {
    fail(
        field,
        QStringLiteral("\"%1\" is not supported (supported: %2)").arg(value, supported.join(", ")));
}

QJsonObject JsonReader::object(const QJsonValue& value, const QString& field) const {
    if (!value.isObject()) fail(field, "expected an object");
    return value.toObject();
}

QJsonArray JsonReader::array(const QJsonValue& value, const QString& field) const {
    if (!value.isArray()) fail(field, "expected an array");
    return value.toArray();
}

QString JsonReader::string(const QJsonValue& value, const QString& field) const {
    if (!value.isString()) fail(field, "expected a string");
    return value.toString();
}

bool JsonReader::boolean(const QJsonValue& value, const QString& field) const {
    if (!value.isBool()) fail(field, "expected true or false");
    return value.toBool();
}

bool JsonReader::isId(const QJsonValue& value) {
    const double number = value.toDouble(-1);
    // 2^30 ids are far beyond any vocabulary, and id + 1 stays an int.
    return value.isDouble() && number >= 0 && number < 1073741824.0 && std::floor(number) == number;
}

int JsonReader::id(const QJsonValue& value, const QString& field) const {
    if (!isId(value)) fail(field, "expected a token id (a whole number from 0 to 2^30 - 1)");
    return static_cast<int>(value.toDouble());
}

QString JsonReader::optionalString(const QJsonObject& object, const QString& key,
                                   const QString& field, const QString& fallback) const {
    const QJsonValue value = object.value(key);
    if (value.isUndefined() || value.isNull()) return fallback;
    return string(value, field + "." + key);
}

bool JsonReader::optionalBool(const QJsonObject& object, const QString& key, const QString& field,
                              bool fallback) const {
    const QJsonValue value = object.value(key);
    if (value.isUndefined() || value.isNull()) return fallback;
    return boolean(value, field + "." + key);
}

QRegularExpression parsePattern(const JsonReader& json, const QJsonValue& value,
                                const QString& field) {
    const QJsonObject pattern = json.object(value, field);
    QString expression;
    if (pattern.contains("Regex")) {
        expression = json.string(pattern.value("Regex"), field + ".Regex");
    } else if (pattern.contains("String")) {
        expression =
            QRegularExpression::escape(json.string(pattern.value("String"), field + ".String"));
    } else {
        json.fail(field, "expected {\"Regex\": ...} or {\"String\": ...}");
    }
    QRegularExpression regex(expression, QRegularExpression::UseUnicodePropertiesOption);
    if (!regex.isValid()) {
        json.fail(field, QStringLiteral("invalid regular expression at offset %1: %2")
                             .arg(regex.patternErrorOffset())
                             .arg(regex.errorString()));
    }
    regex.optimize();
    return regex;
}

namespace {

// The ids a post-processor's `["[SEP]", 102]` pair names.
int tokenPairId(const JsonReader& json, const QJsonValue& value, const QString& field) {
    const QJsonArray pair = json.array(value, field);
    if (pair.size() != 2) json.fail(field, "expected [token, id]");
    json.string(pair.at(0), field + "[0]");
    return json.id(pair.at(1), field + "[1]");
}

SpecialTokens parseTemplate(const JsonReader& json, const QJsonObject& processor,
                            const QString& field) {
    const QJsonObject table =
        json.object(processor.value("special_tokens"), field + ".special_tokens");
    const QJsonArray single = json.array(processor.value("single"), field + ".single");
    SpecialTokens specials;
    bool sawSequence = false;
    for (int i = 0; i < single.size(); ++i) {
        const QString itemField = QStringLiteral("%1.single[%2]").arg(field).arg(i);
        const QJsonObject item = json.object(single.at(i), itemField);
        if (item.contains("Sequence")) {
            const QJsonObject sequence =
                json.object(item.value("Sequence"), itemField + ".Sequence");
            const QString id = json.string(sequence.value("id"), itemField + ".Sequence.id");
            if (id != "A" || sawSequence)
                json.fail(itemField + ".Sequence.id", "a single sequence has one part, \"A\"");
            sawSequence = true;
        } else if (item.contains("SpecialToken")) {
            const QString tokenField = itemField + ".SpecialToken";
            const QJsonObject token = json.object(item.value("SpecialToken"), tokenField);
            const QString name = json.string(token.value("id"), tokenField + ".id");
            if (!table.contains(name))
                json.fail(tokenField + ".id", "\"" + name + "\" is not in special_tokens");
            const QString entryField = field + ".special_tokens." + name;
            const QJsonObject entry = json.object(table.value(name), entryField);
            const QJsonArray ids = json.array(entry.value("ids"), entryField + ".ids");
            std::vector<int>& side = sawSequence ? specials.suffix : specials.prefix;
            for (int k = 0; k < ids.size(); ++k)
                side.push_back(
                    json.id(ids.at(k), QStringLiteral("%1.ids[%2]").arg(entryField).arg(k)));
        } else {
            json.fail(itemField, "expected {\"Sequence\": ...} or {\"SpecialToken\": ...}");
        }
    }
    if (!sawSequence) json.fail(field + ".single", "has no {\"Sequence\": {\"id\": \"A\"}}");
    // The pair form: "$A" and "$B" and special tokens, each with its type_id.
    if (!processor.contains("pair") || processor.value("pair").isNull()) return specials;
    const QJsonArray pair = json.array(processor.value("pair"), field + ".pair");
    bool sawA = false, sawB = false;
    for (int i = 0; i < pair.size(); ++i) {
        const QString itemField = QStringLiteral("%1.pair[%2]").arg(field).arg(i);
        const QJsonObject item = json.object(pair.at(i), itemField);
        TemplatePiece piece;
        const bool isSequence = item.contains("Sequence");
        if (!isSequence && !item.contains("SpecialToken"))
            json.fail(itemField, "expected {\"Sequence\": ...} or {\"SpecialToken\": ...}");
        const QString partField = itemField + (isSequence ? ".Sequence" : ".SpecialToken");
        const QJsonObject part =
            json.object(item.value(isSequence ? "Sequence" : "SpecialToken"), partField);
        const QString id = json.string(part.value("id"), partField + ".id");
        const QJsonValue typeId = part.value("type_id");
        if (!typeId.isUndefined()) {
            if (!typeId.isDouble() || typeId.toDouble() != std::floor(typeId.toDouble()) ||
                typeId.toDouble() < 0 || typeId.toDouble() > 1000)
                json.fail(partField + ".type_id", "expected a token type, an integer >= 0");
            piece.typeId = typeId.toInt();
        }
        if (isSequence) {
            if ((id != "A" && id != "B") || (id == "A" ? sawA : sawB))
                json.fail(partField + ".id", "a pair has the parts \"A\" and \"B\", once each");
            (id == "A" ? sawA : sawB) = true;
            piece.sequence = id == "A" ? 0 : 1;
        } else {
            if (!table.contains(id))
                json.fail(partField + ".id", "\"" + id + "\" is not in special_tokens");
            const QString entryField = field + ".special_tokens." + id;
            const QJsonArray ids = json.array(json.object(table.value(id), entryField).value("ids"),
                                              entryField + ".ids");
            for (int k = 0; k < ids.size(); ++k)
                piece.ids.push_back(
                    json.id(ids.at(k), QStringLiteral("%1.ids[%2]").arg(entryField).arg(k)));
        }
        specials.pair.push_back(std::move(piece));
    }
    if (!sawA || !sawB) json.fail(field + ".pair", "needs both \"A\" and \"B\"");
    return specials;
}

}  // namespace

SpecialTokens bertLikeSpecials(int cls, int sep, bool allTypesZero) {
    // BertProcessing: [CLS] A [SEP] B [SEP], B and its [SEP] of type 1. RobertaProcessing:
    // <s> A </s> </s> B </s>, every token of type 0.
    SpecialTokens s{{cls}, {sep}, {}};
    const int b = allTypesZero ? 0 : 1;
    s.pair = {{-1, {cls}, 0}, {0, {}, 0}, {-1, {sep}, 0}};
    if (allTypesZero) s.pair.push_back({-1, {sep}, 0});
    s.pair.push_back({1, {}, b});
    s.pair.push_back({-1, {sep}, b});
    return s;
}

SpecialTokens parsePostProcessor(const JsonReader& json, const QJsonValue& value,
                                 const QString& field) {
    if (value.isNull() || value.isUndefined()) return {};
    const QJsonObject processor = json.object(value, field);
    const QString type = json.string(processor.value("type"), field + ".type");
    if (type == "TemplateProcessing") return parseTemplate(json, processor, field);
    if (type == "ByteLevel") return {};  // changes offsets only
    if (type == "BertProcessing" || type == "RobertaProcessing") {
        const int cls = tokenPairId(json, processor.value("cls"), field + ".cls");
        const int sep = tokenPairId(json, processor.value("sep"), field + ".sep");
        return bertLikeSpecials(cls, sep, type == "RobertaProcessing");
    }
    if (type == "Sequence") {
        const QJsonArray processors =
            json.array(processor.value("processors"), field + ".processors");
        SpecialTokens all;
        int withPairs = 0;
        for (int i = 0; i < processors.size(); ++i) {
            // Each wraps what the ones before it produced.
            const SpecialTokens inner = parsePostProcessor(
                json, processors.at(i), QStringLiteral("%1.processors[%2]").arg(field).arg(i));
            all.prefix.insert(all.prefix.begin(), inner.prefix.begin(), inner.prefix.end());
            all.suffix.insert(all.suffix.end(), inner.suffix.begin(), inner.suffix.end());
            // The pair form of the one processor that adds tokens (a ByteLevel beside it adds
            // none); two that add tokens leave no pair form.
            if (!inner.prefix.empty() || !inner.suffix.empty() || !inner.pair.empty()) {
                ++withPairs;
                all.pair = inner.pair;
            }
        }
        if (withPairs > 1) all.pair.clear();
        return all;
    }
    json.unsupported(
        field + ".type", type,
        {"TemplateProcessing", "ByteLevel", "BertProcessing", "RobertaProcessing", "Sequence"});
}

namespace {

QJsonObject parseDocument(const QByteArray& data, const QString& fileName) {
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(escapeByteOrderMarks(data), &error);
    if (error.error != QJsonParseError::NoError) {
        throw TokenizerError(QStringLiteral("%1: not valid JSON at byte %2: %3")
                                 .arg(fileName)
                                 .arg(error.offset)
                                 .arg(error.errorString()));
    }
    if (!document.isObject()) throw TokenizerError(fileName + ": expected a JSON object");
    return document.object();
}

std::vector<AddedToken> parseAddedTokens(const JsonReader& json, const QJsonValue& value) {
    std::vector<AddedToken> tokens;
    if (value.isNull() || value.isUndefined()) return tokens;
    const QJsonArray list = json.array(value, "added_tokens");
    for (int i = 0; i < list.size(); ++i) {
        const QString field = QStringLiteral("added_tokens[%1]").arg(i);
        const QJsonObject entry = json.object(list.at(i), field);
        AddedToken token;
        token.id = json.id(entry.value("id"), field + ".id");
        token.content = json.string(entry.value("content"), field + ".content");
        if (token.content.isEmpty()) json.fail(field + ".content", "is empty");
        token.special = json.optionalBool(entry, "special", field, false);
        token.singleWord = json.optionalBool(entry, "single_word", field, false);
        token.leftStrip = json.optionalBool(entry, "lstrip", field, false);
        token.rightStrip = json.optionalBool(entry, "rstrip", field, false);
        token.normalized = json.optionalBool(entry, "normalized", field, !token.special);
        tokens.push_back(token);
    }
    return tokens;
}

// ByteLevel decoding when the decoder (or, without one, the pre-tokenizer) works on bytes;
// `▁` shown as a space when the decoder turns it back into one.
DisplayStyle displayStyle(const QJsonValue& decoder, const Pipeline& pipeline) {
    const QByteArray text = QJsonDocument(QJsonObject{{"d", decoder}}).toJson();
    if (text.contains("\"ByteLevel\"")) return DisplayStyle::ByteLevel;
    if (text.contains("\"Metaspace\"") || text.contains("\"\u2581\"") ||
        text.contains("\"\\u2581\""))
        return DisplayStyle::Metaspace;
    if (decoder.isNull() && pipeline.preTokenizer && pipeline.preTokenizer->mapsBytes())
        return DisplayStyle::ByteLevel;
    return DisplayStyle::Plain;
}

// tokenizer_config.json spells a token as a string or as {"content": ...}.
QString configToken(const JsonReader& json, const QJsonObject& config, const QString& key) {
    const QJsonValue value = config.value(key);
    if (value.isObject()) return json.string(value.toObject().value("content"), key + ".content");
    if (value.isNull() || value.isUndefined()) return {};
    return json.string(value, key);
}

}  // namespace

void applyTokenizerConfig(Pipeline& pipeline, const QByteArray& data, const QString& configName) {
    if (data.isEmpty()) return;
    const JsonReader json(configName);
    const QJsonObject config = parseDocument(data, configName);
    const auto side = [&](const QString& flag, const QString& tokenKey, std::vector<int>& ids) {
        if (!config.contains(flag) || config.value(flag).isNull()) return;
        ids.clear();
        if (!json.boolean(config.value(flag), flag)) return;
        const QString token = configToken(json, config, tokenKey);
        if (token.isEmpty()) json.fail(flag, "is true but " + tokenKey + " is not set");
        const auto found = pipeline.model->vocabulary().find(token);
        if (found != pipeline.model->vocabulary().end()) {
            ids.push_back(found.value());
            return;
        }
        for (const AddedToken& added : pipeline.addedTokens) {
            if (added.content == token) {
                ids.push_back(added.id);
                return;
            }
        }
        json.fail(tokenKey, "\"" + token + "\" is not a token of the tokenizer");
    };
    side("add_bos_token", "bos_token", pipeline.specials.prefix);
    side("add_eos_token", "eos_token", pipeline.specials.suffix);
}

std::unique_ptr<Pipeline> parseTokenizerJson(const QByteArray& data, const QByteArray& config,
                                             const QString& fileName, const QString& configName) {
    const JsonReader json(fileName);
    const QJsonObject root = parseDocument(data, fileName);
    auto pipeline = std::make_unique<Pipeline>();
    pipeline->addedTokens = parseAddedTokens(json, root.value("added_tokens"));
    pipeline->normalizer = parseNormalizer(json, root.value("normalizer"), "normalizer");
    pipeline->preTokenizer = parsePreTokenizer(json, root.value("pre_tokenizer"), "pre_tokenizer");
    if (!root.contains("model")) json.fail("model", "is missing");
    pipeline->model = parseModel(json, root.value("model"), "model");
    pipeline->specials = parsePostProcessor(json, root.value("post_processor"), "post_processor");
    pipeline->decoder = parseDecoder(json, root.value("decoder"), "decoder");
    pipeline->display = displayStyle(root.value("decoder"), *pipeline);
    applyTokenizerConfig(*pipeline, config, configName);
    pipeline->finish();
    return pipeline;
}

}  // namespace ae::io::tok
