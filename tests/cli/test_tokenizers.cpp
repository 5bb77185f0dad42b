// Tokenizers (io/tokenizer/tokenizer.h) against ids from independent implementations (fixtures in
// tests/data/tokenizers/, see its README), each component on small tokenizers written here, every
// refusal, and the `tokenize` command.

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <ctime>

#include "io/tokenizer/tokenizer.h"
#include "support/run_binary.h"

using ae::io::Tokenizer;
using ae::io::TokenizerError;

namespace {

const QString kData = QStringLiteral(AE_TEST_DATA_DIR "/tokenizers");

QJsonObject readJson(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) qFatal("cannot open %s", qPrintable(path));
    // The fixtures hold texts that start with U+FEFF, which Qt's reader would drop.
    return QJsonDocument::fromJson(ae::io::escapeByteOrderMarks(file.readAll())).object();
}

std::vector<int> toIds(const QJsonArray& array) {
    std::vector<int> ids;
    for (const QJsonValue& v : array)
        ids.push_back(v.toInt());
    return ids;
}

QString idsText(const std::vector<int>& ids) {
    QStringList parts;
    for (const int id : ids)
        parts << QString::number(id);
    return "[" + parts.join(",") + "]";
}

// A tokenizer.json from its parts; the model is a WordPiece over `words` (id = position, [UNK]
// first) unless `model` is given, so that how a component splits the text shows in the ids.
QByteArray tokenizerJson(const QJsonValue& normalizer, const QJsonValue& preTokenizer,
                         const QStringList& words, const QJsonValue& postProcessor = QJsonValue(),
                         const QJsonArray& addedTokens = {},
                         const QJsonValue& model = QJsonValue()) {
    QJsonObject vocabulary;
    vocabulary.insert("[UNK]", 0);
    for (int i = 0; i < words.size(); ++i)
        vocabulary.insert(words[i], i + 1);
    QJsonObject root{{"normalizer", normalizer},
                     {"pre_tokenizer", preTokenizer},
                     {"post_processor", postProcessor},
                     {"added_tokens", addedTokens},
                     {"model", model.isObject() ? model
                                                : QJsonValue(QJsonObject{{"type", "WordPiece"},
                                                                         {"unk_token", "[UNK]"},
                                                                         {"vocab", vocabulary}})}};
    return QJsonDocument(root).toJson();
}

Tokenizer make(const QByteArray& json, const QByteArray& config = {}) {
    return Tokenizer::fromJson(json, config, "tokenizer.json", "tokenizer_config.json");
}

QJsonObject split(const QString& regex, const QString& behavior, bool invert = false) {
    return {{"type", "Split"},
            {"pattern", QJsonObject{{"Regex", regex}}},
            {"behavior", behavior},
            {"invert", invert}};
}

QJsonObject addedToken(int id, const QString& content, bool special, bool normalized,
                       bool lstrip = false, bool rstrip = false, bool singleWord = false) {
    return {{"id", id},
            {"content", content},
            {"special", special},
            {"lstrip", lstrip},
            {"rstrip", rstrip},
            {"normalized", normalized},
            {"single_word", singleWord}};
}

// The refusal's message, or "no error".
QString refusal(const std::function<void()>& action) {
    try {
        action();
    } catch (const TokenizerError& error) {
        return QString::fromUtf8(error.what());
    }
    return "no error";
}

const Tokenizer& qwen3() {
    static const Tokenizer tokenizer = Tokenizer::load(kData + "/qwen3");
    return tokenizer;
}

}  // namespace

class TestTokenizers : public QObject {
    Q_OBJECT

private slots:
    void matchesIndependentImplementation_data();
    void matchesIndependentImplementation();
    void classicVocabTxtMatchesTokenizerJson();
    void fixturesCoverWhatTheIssueAsks();
    void splitBehaviors_data();
    void splitBehaviors();
    void normalizers_data();
    void normalizers();
    void byteLevelPrefixSpaceAndDigits();
    void metaspacePrependSchemes();
    void postProcessors();
    void addedTokenFlags();
    void configOverridesPostProcessor();
    void displayText();
    void byteOrderMarkInTokens();
    void loadAndEncodeSpeed();
    void refusals_data();
    void refusals();
    void classicFileRefusals();
    void tokenizeCommand();
    void tokenizeCommandRefusals();
};

void TestTokenizers::matchesIndependentImplementation_data() {
    QTest::addColumn<QString>("tokenizer");
    QTest::addColumn<QString>("fixture");
    QTest::newRow("gpt2 classic files, gpt-3-encoder") << "gpt2"
                                                       << "gpt2/expected-gpt-3-encoder.json";
    QTest::newRow("gpt2 classic files, lenml") << "gpt2"
                                               << "gpt2/expected.json";
    QTest::newRow("gpt2 vocab.json alone") << "gpt2/vocab.json"
                                           << "gpt2/expected.json";
    QTest::newRow("qwen3") << "qwen3"
                           << "qwen3/expected.json";
    QTest::newRow("metaspace byte fallback") << "metaspace"
                                             << "metaspace/expected.json";
    QTest::newRow("wordpiece") << "wordpiece/tokenizer.json"
                               << "wordpiece/expected.json";
}

void TestTokenizers::matchesIndependentImplementation() {
    QFETCH(QString, tokenizer);
    QFETCH(QString, fixture);
    std::unique_ptr<Tokenizer> loaded;
    if (tokenizer != "qwen3")
        loaded = std::make_unique<Tokenizer>(Tokenizer::load(kData + "/" + tokenizer));
    const Tokenizer& t = loaded ? *loaded : qwen3();
    const QJsonArray cases = readJson(kData + "/" + fixture).value("cases").toArray();
    QVERIFY(cases.size() >= 40);
    for (const QJsonValue& value : cases) {
        const QJsonObject c = value.toObject();
        const QString text = c.value("text").toString();
        const std::vector<int> ids = t.encode(text, true), plain = t.encode(text, false);
        QVERIFY2(ids == toIds(c.value("ids").toArray()),
                 qPrintable(text + ": got " + idsText(ids) + ", expected " +
                            idsText(toIds(c.value("ids").toArray()))));
        QVERIFY2(plain == toIds(c.value("ids_no_special").toArray()),
                 qPrintable(text + " (no special): got " + idsText(plain)));
    }
}

void TestTokenizers::classicVocabTxtMatchesTokenizerJson() {
    const Tokenizer classic = Tokenizer::load(kData + "/wordpiece-classic");
    const QJsonArray cases = readJson(kData + "/wordpiece/expected.json").value("cases").toArray();
    for (const QJsonValue& value : cases) {
        const QJsonObject c = value.toObject();
        QCOMPARE(idsText(classic.encode(c.value("text").toString(), true)),
                 idsText(toIds(c.value("ids").toArray())));
    }
}

// The fixtures hold what the issue lists: Unicode, emoji, digits, runs of whitespace (U+00A0,
// U+3000, tabs, newlines), contractions and special tokens; and those strings really produce
// several tokens, so a tokenizer that got them wrong would fail above.
void TestTokenizers::fixturesCoverWhatTheIssueAsks() {
    QStringList texts;
    for (const QJsonValue& v : readJson(kData + "/qwen3/expected.json").value("cases").toArray())
        texts << v.toObject().value("text").toString();
    const QString all = texts.join('\n');
    for (const QString& needle :
         {QStringLiteral("\u00a0\u00a0"), QStringLiteral("\u3000"), QStringLiteral("\t\t"),
          QStringLiteral("\n\n"), QStringLiteral("😀"), QStringLiteral("12345"),
          QStringLiteral("don't"), QStringLiteral("<|im_start|>"), QStringLiteral("こんにちは"),
          QStringLiteral("<s>"), QStringLiteral("[MASK]")})
        QVERIFY2(all.contains(needle), qPrintable(needle));
    QCOMPARE(idsText(qwen3().encode("<|im_start|>user<|im_end|>", true)), "[151644,872,151645]");
}

void TestTokenizers::splitBehaviors_data() {
    QTest::addColumn<QString>("behavior");
    QTest::addColumn<bool>("invert");
    QTest::addColumn<QString>("expected");
    // Text "ab-cd--ef", split on "-": words ab=1 cd=2 ef=3 -=4 ab-=5 -cd=6 cd-=7 --=8 -ef=9
    // cd--=10 --ef=11
    QTest::newRow("Removed") << "Removed" << false << "[1,2,3]";
    QTest::newRow("Isolated") << "Isolated" << false << "[1,4,2,4,4,3]";
    QTest::newRow("MergedWithPrevious") << "MergedWithPrevious" << false << "[5,7,4,3]";
    QTest::newRow("MergedWithNext") << "MergedWithNext" << false << "[1,6,4,9]";
    QTest::newRow("Contiguous") << "Contiguous" << false << "[1,4,2,8,3]";
    QTest::newRow("Removed, inverted") << "Removed" << true << "[4,4,4]";
}

void TestTokenizers::splitBehaviors() {
    QFETCH(QString, behavior);
    QFETCH(bool, invert);
    QFETCH(QString, expected);
    const QStringList words{"ab",  "cd", "ef",  "-",    "ab-", "-cd",
                            "cd-", "--", "-ef", "cd--", "--ef"};
    const Tokenizer t = make(tokenizerJson(QJsonValue(), split("-", behavior, invert), words));
    QCOMPARE(idsText(t.encode("ab-cd--ef", false)), expected);
}

void TestTokenizers::normalizers_data() {
    QTest::addColumn<QJsonObject>("normalizer");
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("expected");  // the normalized text, which is one word of the vocab
    const auto type = [](const char* name) { return QJsonObject{{"type", name}}; };
    QTest::newRow("NFC") << type("NFC") << "A\u0301"
                         << "\u00c1";
    QTest::newRow("NFKC") << type("NFKC") << "\ufb01x\u2460"
                          << "fix1";
    QTest::newRow("Lowercase") << type("Lowercase") << "ÉCOLE"
                               << "école";
    QTest::newRow("Prepend") << QJsonObject{{"type", "Prepend"}, {"prepend", "\u2581"}} << "x"
                             << "\u2581x";
    QTest::newRow("Replace string") << QJsonObject{{"type", "Replace"},
                                                   {"pattern", QJsonObject{{"String", " "}}},
                                                   {"content", "\u2581"}}
                                    << "a b"
                                    << "a\u2581b";
    QTest::newRow("Replace regex, literal content")
        << QJsonObject{{"type", "Replace"},
                       {"pattern", QJsonObject{{"Regex", "\\d+"}}},
                       {"content", "\\1"}}
        << "a12b3"
        << "a\\1b\\1";
    QTest::newRow("Sequence") << QJsonObject{{"type", "Sequence"},
                                             {"normalizers",
                                              QJsonArray{type("NFKC"), type("Lowercase")}}}
                              << "\uff21B"
                              << "ab";
    QTest::newRow("BertNormalizer")
        << QJsonObject{{"type", "BertNormalizer"}, {"lowercase", true}} << "Ca\u0301fé\u0007"
        << "cafe";
}

void TestTokenizers::normalizers() {
    QFETCH(QJsonObject, normalizer);
    QFETCH(QString, text);
    QFETCH(QString, expected);
    const Tokenizer t = make(tokenizerJson(normalizer, QJsonValue(), {expected}));
    QCOMPARE(idsText(t.encode(text, false)), "[1]");
    // And the unnormalized text is not that word (the test would pass with no normalizer).
    const Tokenizer plain = make(tokenizerJson(QJsonValue(), QJsonValue(), {expected}));
    QCOMPARE(idsText(plain.encode(text, false)), "[0]");
}

void TestTokenizers::byteLevelPrefixSpaceAndDigits() {
    // GPT-2's regex and a prefix space: "Hi 42" -> "ĠHi", "Ġ42"; Digits splits one by one.
    const QJsonObject byteLevel{{"type", "ByteLevel"}, {"add_prefix_space", true}};
    const Tokenizer t = make(tokenizerJson(QJsonValue(), byteLevel, {"\u0120Hi", "\u012042"}));
    QCOMPARE(idsText(t.encode("Hi 42", false)), "[1,2]");
    const QJsonObject digits{{"type", "Digits"}, {"individual_digits", true}};
    const Tokenizer d =
        make(tokenizerJson(QJsonValue(), digits, {"x", "4", "2", "\u0663", "\u00bd"}));
    QCOMPARE(idsText(d.encode("x42", false)), "[1,2,3]");
    // Every Unicode number is a digit here (Arabic-Indic three, one half), as in the library.
    QCOMPARE(idsText(d.encode("x\u0663\u00bd", false)), "[1,4,5]");
    const QJsonObject runs{{"type", "Digits"}, {"individual_digits", false}};
    const Tokenizer r = make(tokenizerJson(QJsonValue(), runs, {"x", "42"}));
    QCOMPARE(idsText(r.encode("x42", false)), "[1,2]");
}

void TestTokenizers::metaspacePrependSchemes() {
    const QStringList words{"\u2581a", "\u2581b", "a", "<s>"};
    const QJsonArray added{addedToken(4, "<s>", true, false)};
    const auto metaspace = [](const char* scheme) {
        return QJsonObject{{"type", "Metaspace"},
                           {"replacement", "\u2581"},
                           {"prepend_scheme", scheme},
                           {"split", true}};
    };
    // "first": only where the text begins, not after a special token.
    const Tokenizer first =
        make(tokenizerJson(QJsonValue(), metaspace("first"), words, QJsonValue(), added));
    QCOMPARE(idsText(first.encode("a b<s>a", false)), "[1,2,4,3]");
    const Tokenizer always =
        make(tokenizerJson(QJsonValue(), metaspace("always"), words, QJsonValue(), added));
    QCOMPARE(idsText(always.encode("a b<s>a", false)), "[1,2,4,1]");
    const Tokenizer never =
        make(tokenizerJson(QJsonValue(), metaspace("never"), words, QJsonValue(), added));
    QCOMPARE(idsText(never.encode("a b", false)), "[3,2]");
}

void TestTokenizers::postProcessors() {
    const QStringList words{"x", "<s>", "</s>"};
    const QJsonObject roberta{{"type", "RobertaProcessing"},
                              {"cls", QJsonArray{"<s>", 2}},
                              {"sep", QJsonArray{"</s>", 3}}};
    QCOMPARE(idsText(make(tokenizerJson(QJsonValue(), QJsonValue(), words, roberta)).encode("x")),
             "[2,1,3]");
    const QJsonObject special{{"ids", QJsonArray{3}}};
    const QJsonObject eosOnly{
        {"type", "TemplateProcessing"},
        {"single", QJsonArray{QJsonObject{{"Sequence", QJsonObject{{"id", "A"}}}},
                              QJsonObject{{"SpecialToken", QJsonObject{{"id", "</s>"}}}}}},
        {"special_tokens", QJsonObject{{"</s>", special}}}};
    const QJsonObject sequence{
        {"type", "Sequence"},
        {"processors", QJsonArray{QJsonObject{{"type", "ByteLevel"}}, roberta, eosOnly}}};
    QCOMPARE(idsText(make(tokenizerJson(QJsonValue(), QJsonValue(), words, sequence)).encode("x")),
             "[2,1,3,3]");
    QCOMPARE(
        idsText(
            make(tokenizerJson(QJsonValue(), QJsonValue(), words, sequence)).encode("x", false)),
        "[1]");
}

void TestTokenizers::addedTokenFlags() {
    const QJsonObject whitespaceSplit = split("\\s+", "Removed");
    const QStringList words{"a", "b", "<m>", "ab"};
    // rstrip takes the spaces after; single_word refuses a match inside a word; a normalized
    // token is found after the normalizer (here: lowercase) ran.
    const QJsonArray added{addedToken(3, "<m>", true, false, false, true),
                           addedToken(5, "<w>", false, false, false, false, true),
                           addedToken(6, "<n>", false, true)};
    const Tokenizer t = make(tokenizerJson(QJsonObject{{"type", "Lowercase"}}, whitespaceSplit,
                                           words, QJsonValue(), added));
    QCOMPARE(idsText(t.encode("a<m>   b", false)), "[1,3,2]");
    QCOMPARE(idsText(t.encode("a <w> b", false)), "[1,5,2]");
    QCOMPARE(idsText(t.encode("a<w>b", false)), "[0]");  // "a<w>b" stays one unknown word
    QCOMPARE(idsText(t.encode("a <N> b", false)), "[1,6,2]");
}

void TestTokenizers::configOverridesPostProcessor() {
    const QStringList words{"x", "<s>", "</s>"};
    const QJsonObject special{{"ids", QJsonArray{2}}};
    const QJsonObject bos{
        {"type", "TemplateProcessing"},
        {"single", QJsonArray{QJsonObject{{"SpecialToken", QJsonObject{{"id", "<s>"}}}},
                              QJsonObject{{"Sequence", QJsonObject{{"id", "A"}}}}}},
        {"special_tokens", QJsonObject{{"<s>", special}}}};
    const QByteArray json = tokenizerJson(QJsonValue(), QJsonValue(), words, bos);
    QCOMPARE(idsText(make(json).encode("x")), "[2,1]");
    QCOMPARE(idsText(make(json, R"({"add_bos_token": false})").encode("x")), "[1]");
    QCOMPARE(
        idsText(
            make(json, R"({"add_eos_token": true, "eos_token": {"content": "</s>"}})").encode("x")),
        "[2,1,3]");
    QCOMPARE(idsText(make(json, R"({"tokenizer_class": "X"})").encode("x")), "[2,1]");
}

void TestTokenizers::displayText() {
    const Tokenizer gpt2 = Tokenizer::load(kData + "/gpt2");
    const std::vector<int> ids = gpt2.encode(" world 😀", false);
    QCOMPARE(gpt2.tokenText(ids[0]), "\u0120world");
    QCOMPARE(gpt2.displayText(ids[0]), " world");
    QString joined;
    for (size_t i = 1; i < ids.size(); ++i)
        joined += gpt2.displayText(int(ids[i]));
    QVERIFY2(joined.contains("<0x"), qPrintable(joined));  // the emoji is split in bytes
    QCOMPARE(gpt2.displayText(50256), "<|endoftext|>");
    // Control characters are shown, not obeyed: a newline token never breaks a label's line.
    QCOMPARE(gpt2.tokenText(198), "\u010a");  // Ċ: the byte 0x0A
    QCOMPARE(gpt2.displayText(198), "\\n");
    QCOMPARE(gpt2.displayText(197), "\\t");
    QCOMPARE(gpt2.displayText(gpt2.encode("\x7f", false).at(0)), "\\x7F");
    QCOMPARE(gpt2.displayText(gpt2.encode("a\x14", false).at(1)), "\\x14");
    QCOMPARE(gpt2.idCount(), 50257);
    QCOMPARE(gpt2.tokenText(-1), QString());

    const Tokenizer metaspace = Tokenizer::load(kData + "/metaspace");
    const std::vector<int> m = metaspace.encode("the", false);
    QCOMPARE(m.size(), size_t(1));
    QCOMPARE(metaspace.tokenText(m[0]), "\u2581the");
    QCOMPARE(metaspace.displayText(m[0]), " the");
    const Tokenizer wordpiece = Tokenizer::load(kData + "/wordpiece");
    const std::vector<int> w = wordpiece.encode("teaching", false);
    QCOMPARE(wordpiece.displayText(w.back()), "##ing");
}

// Gemma's vocabulary has tokens that start with U+FEFF; Qt's JSON reader alone loses that
// character at the start of a string.
void TestTokenizers::byteOrderMarkInTokens() {
    const QString mark = QStringLiteral("\ufeff");
    const QByteArray json =
        tokenizerJson(QJsonValue(), QJsonValue(), {mark, mark + mark, QStringLiteral("x")});
    QVERIFY(json.contains("\xEF\xBB\xBF\xEF\xBB\xBF"));
    const Tokenizer t = make(json);
    QCOMPARE(idsText(t.encode(mark + mark, false)), "[2]");
    QCOMPARE(idsText(t.encode(mark, false)), "[1]");
    QCOMPARE(t.tokenText(2), mark + mark);
}

// A measurement, not a timed test: prints what loading and tokenizing take here.
void TestTokenizers::loadAndEncodeSpeed() {
    // Wall time and this process's CPU time: on a shared machine the first can be several times
    // the second.
    QElapsedTimer timer;
    timer.start();
    const std::clock_t cpuStart = std::clock();
    const Tokenizer t = Tokenizer::load(kData + "/qwen3");
    const qint64 loadMs = timer.elapsed();
    const double loadCpuMs = 1000.0 * double(std::clock() - cpuStart) / CLOCKS_PER_SEC;
    QString text;
    while (text.size() < 5000)
        text += "Attention heads, 12345 tokens; naïve café 😀 — ";
    timer.restart();
    const std::vector<int> ids = t.encode(text, true);
    qInfo(
        "Qwen3 tokenizer.json loads in %lld ms (%.0f ms of CPU); %lld characters -> %zu tokens "
        "in %.2f ms",
        loadMs, loadCpuMs, static_cast<long long>(text.size()), ids.size(),
        timer.nsecsElapsed() / 1e6);
    QVERIFY(ids.size() > 500);
}

void TestTokenizers::refusals_data() {
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("expected");
    const QStringList w{"a"};
    const auto type = [](const char* name) { return QJsonObject{{"type", name}}; };
    QTest::newRow("pre-tokenizer")
        << tokenizerJson(QJsonValue(), type("Whitespace"), w)
        << "tokenizer.json: pre_tokenizer.type: \"Whitespace\" is not "
           "supported (supported: Split, ByteLevel, Metaspace, "
           "WhitespaceSplit, BertPreTokenizer, Punctuation, Digits, Sequence)";
    QTest::newRow("normalizer") << tokenizerJson(type("Nmt"), QJsonValue(), w)
                                << "tokenizer.json: normalizer.type: \"Nmt\" is not "
                                   "supported (supported: NFC, NFD, NFKC, NFKD, Lowercase, "
                                   "StripAccents, BertNormalizer, Prepend, Replace, Strip, "
                                   "Precompiled, Sequence)";
    QTest::newRow("normalizer in a sequence")
        << tokenizerJson(QJsonObject{{"type", "Sequence"},
                                     {"normalizers", QJsonArray{type("NFC"), type("Nmt")}}},
                         QJsonValue(), w)
        << "tokenizer.json: normalizer.normalizers[1].type: \"Nmt\" is not supported "
           "(supported: NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, BertNormalizer, Prepend, "
           "Replace, Strip, Precompiled, Sequence)";
    QTest::newRow("model") << tokenizerJson(QJsonValue(), QJsonValue(), w, QJsonValue(), {},
                                            QJsonObject{{"type", "WordLevel"}})
                           << "tokenizer.json: model.type: \"WordLevel\" is not supported "
                              "(supported: BPE, WordPiece, Unigram)";
    QTest::newRow("post-processor")
        << tokenizerJson(QJsonValue(), QJsonValue(), w, type("Custom"))
        << "tokenizer.json: post_processor.type: \"Custom\" is not supported (supported: "
           "TemplateProcessing, ByteLevel, BertProcessing, RobertaProcessing, Sequence)";
    QTest::newRow("split behaviour")
        << tokenizerJson(QJsonValue(), split("x", "Merged"), w)
        << "tokenizer.json: pre_tokenizer.behavior: \"Merged\" is not supported (supported: "
           "Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous)";
    QTest::newRow("prepend scheme")
        << tokenizerJson(QJsonValue(),
                         QJsonObject{{"type", "Metaspace"}, {"prepend_scheme", "sometimes"}}, w)
        << "tokenizer.json: pre_tokenizer.prepend_scheme: \"sometimes\" is not supported "
           "(supported: always, first, never)";
    QTest::newRow("bad regex") << tokenizerJson(QJsonValue(), split("(a", "Isolated"), w)
                               << "tokenizer.json: pre_tokenizer.pattern: invalid regular "
                                  "expression at offset 2: missing closing parenthesis";
    QTest::newRow("not JSON") << QByteArray("{\"model\": ")
                              << "tokenizer.json: not valid JSON at byte 10: unterminated object";
    QTest::newRow("no model") << QByteArray("{}") << "tokenizer.json: model: is missing";
    QTest::newRow("vocab not an object")
        << tokenizerJson(
               QJsonValue(), QJsonValue(), w, QJsonValue(), {},
               QJsonObject{{"type", "BPE"}, {"vocab", QJsonArray{}}, {"merges", QJsonArray{}}})
        << "tokenizer.json: model.vocab: expected an object";
    QTest::newRow("vocab id not a number")
        << tokenizerJson(
               QJsonValue(), QJsonValue(), w, QJsonValue(), {},
               QJsonObject{
                   {"type", "BPE"}, {"vocab", QJsonObject{{"a", "0"}}}, {"merges", QJsonArray{}}})
        << "tokenizer.json: model.vocab.a: expected a token id (a whole number from 0 to 2^30 - 1)";
    QTest::newRow("merge not in the vocabulary")
        << tokenizerJson(QJsonValue(), QJsonValue(), w, QJsonValue(), {},
                         QJsonObject{{"type", "BPE"},
                                     {"vocab", QJsonObject{{"a", 0}, {"b", 1}}},
                                     {"merges", QJsonArray{"a b"}}})
        << "tokenizer.json: model.merges[0]: \"ab\" is not in the vocabulary";
    QTest::newRow("merge of three")
        << tokenizerJson(QJsonValue(), QJsonValue(), w, QJsonValue(), {},
                         QJsonObject{{"type", "BPE"},
                                     {"vocab", QJsonObject{{"a", 0}}},
                                     {"merges", QJsonArray{"a a a"}}})
        << "tokenizer.json: model.merges[0]: expected \"LEFT RIGHT\"";
    QTest::newRow("unknown token missing")
        << tokenizerJson(QJsonValue(), QJsonValue(), w, QJsonValue(), {},
                         QJsonObject{{"type", "WordPiece"}, {"vocab", QJsonObject{{"a", 0}}}})
        << "tokenizer.json: model.unk_token: \"[UNK]\" is not in the vocabulary";
    QTest::newRow("added token content")
        << tokenizerJson(QJsonValue(), QJsonValue(), w, QJsonValue(),
                         {QJsonObject{{"id", 1}, {"content", 5}}})
        << "tokenizer.json: added_tokens[0].content: expected a string";
    QTest::newRow("added token flag")
        << tokenizerJson(QJsonValue(), QJsonValue(), w, QJsonValue(),
                         {QJsonObject{{"id", 1}, {"content", "x"}, {"lstrip", "yes"}}})
        << "tokenizer.json: added_tokens[0].lstrip: expected true or false";
    QTest::newRow("template token")
        << tokenizerJson(
               QJsonValue(), QJsonValue(), w,
               QJsonObject{{"type", "TemplateProcessing"},
                           {"single",
                            QJsonArray{QJsonObject{{"SpecialToken", QJsonObject{{"id", "<s>"}}}}}},
                           {"special_tokens", QJsonObject{}}})
        << "tokenizer.json: post_processor.single[0].SpecialToken.id: \"<s>\" is not in "
           "special_tokens";
    QTest::newRow("normalizer not an object") << tokenizerJson("NFC", QJsonValue(), w)
                                              << "tokenizer.json: normalizer: expected an object";
}

void TestTokenizers::refusals() {
    QFETCH(QByteArray, json);
    QFETCH(QString, expected);
    QCOMPARE(refusal([&] { make(json); }), expected);
}

void TestTokenizers::classicFileRefusals() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const auto write = [&](const QString& name, const QByteArray& content) {
        QFile file(dir.filePath(name));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(content);
    };
    QCOMPARE(refusal([&] { Tokenizer::load(dir.filePath("missing")); }),
             dir.filePath("missing") + ": no such file or folder");
    QCOMPARE(refusal([&] { Tokenizer::load(dir.path()); }),
             dir.path() +
                 ": no tokenizer.json, vocab.json + merges.txt, vocab.txt, or Marian's source.spm "
                 "+ vocab.json in this folder");
    write("tokenizer.model", "\n\x0f");
    QCOMPARE(
        refusal([&] { Tokenizer::load(dir.path()); }),
        dir.path() +
            ": only tokenizer.model (SentencePiece), which is not read; write a tokenizer.json "
            "with transformers: AutoTokenizer.from_pretrained(DIR).save_pretrained(DIR)");
    QVERIFY(QFile::remove(dir.filePath("tokenizer.model")));
    write("vocab.json", R"({"a": 0, "b": 1, "ab": 2})");
    QVERIFY(
        refusal([&] { Tokenizer::load(dir.filePath("vocab.json")); }).endsWith("are both needed"));
    write("merges.txt", "#version: 0.2\na b\nb c d\n");
    QCOMPARE(refusal([&] { Tokenizer::load(dir.path()); }),
             dir.filePath("merges.txt") + ": line 3: expected \"LEFT RIGHT\"");
    write("merges.txt", "#version: 0.2\na b\nb a\n");
    QCOMPARE(refusal([&] { Tokenizer::load(dir.path()); }),
             dir.filePath("merges.txt") + ": line 3: \"ba\" is not in the vocabulary");
    write("merges.txt", "a b\n");
    QCOMPARE(idsText(Tokenizer::load(dir.path()).encode("ab")), "[2]");
    write("tokenizer_config.json", R"({"add_bos_token": 1})");
    QCOMPARE(refusal([&] { Tokenizer::load(dir.path()); }),
             dir.filePath("tokenizer_config.json") + ": add_bos_token: expected true or false");
    write("vocab.json", "[1, 2]");
    QCOMPARE(refusal([&] { Tokenizer::load(dir.filePath("merges.txt")); }),
             dir.filePath("vocab.json") + ": expected an object of token: id");
    write("vocab.txt", "[CLS]\n[SEP]\nhello\n");
    QCOMPARE(refusal([&] { Tokenizer::load(dir.filePath("vocab.txt")); }),
             dir.filePath("vocab.txt") + ": has no \"[UNK]\" token (BERT's unknown, CLS and SEP)");
}

void TestTokenizers::tokenizeCommand() {
    using ae::test::runBinary;
    const ae::test::BinaryRun text =
        runBinary({"tokenize", kData + "/metaspace", "--text", "the head"});
    QCOMPARE(text.exitCode, 0);
    const Tokenizer metaspace = Tokenizer::load(kData + "/metaspace");
    QCOMPARE(QString::fromUtf8(text.out), idsText(metaspace.encode("the head", true)) + "\n");
    const ae::test::BinaryRun plain =
        runBinary({"tokenize", kData + "/metaspace", "--text", "the head", "--no-special"});
    QCOMPARE(QString::fromUtf8(plain.out), idsText(metaspace.encode("the head", false)) + "\n");

    QTemporaryDir dir;
    QFile lines(dir.filePath("lines.jsonl"));
    QVERIFY(lines.open(QIODevice::WriteOnly));
    lines.write("\"Hello world\"\n\"two\\nlines \\u00a0 \\ud83d\\ude00\"\n\"\"\n");
    lines.close();
    const ae::test::BinaryRun many =
        runBinary({"tokenize", kData + "/gpt2", "--lines", lines.fileName()});
    QCOMPARE(many.exitCode, 0);
    const Tokenizer gpt2 = Tokenizer::load(kData + "/gpt2");
    QCOMPARE(QString::fromUtf8(many.out), idsText(gpt2.encode("Hello world")) + "\n" +
                                              idsText(gpt2.encode("two\nlines \u00a0 😀")) +
                                              "\n[]\n");
    QCOMPARE(idsText(gpt2.encode("Hello world")), "[15496,995]");
}

void TestTokenizers::tokenizeCommandRefusals() {
    using ae::test::runBinary;
    QTemporaryDir dir;
    QFile bad(dir.filePath("tokenizer.json"));
    QVERIFY(bad.open(QIODevice::WriteOnly));
    bad.write(R"({"model": {"type": "Unigram", "vocab": []}})");
    bad.close();
    const ae::test::BinaryRun unsupported = runBinary({"tokenize", dir.path(), "--text", "x"});
    QCOMPARE(unsupported.exitCode, 2);
    QCOMPARE(QString::fromUtf8(unsupported.err),
             "tokenize: " + dir.filePath("tokenizer.json") + ": model.vocab: is empty\n");
    QFile lines(dir.filePath("lines.txt"));
    QVERIFY(lines.open(QIODevice::WriteOnly));
    lines.write("\"ok\"\nnot json\n");
    lines.close();
    const ae::test::BinaryRun badLine =
        runBinary({"tokenize", kData + "/wordpiece", "--lines", lines.fileName()});
    QCOMPARE(badLine.exitCode, 2);
    QCOMPARE(QString::fromUtf8(badLine.err),
             "tokenize: " + lines.fileName() +
                 ": line 2: expected a JSON string such as \"Hello world\"\n");
    QCOMPARE(badLine.out, QByteArray());
    QCOMPARE(runBinary({"tokenize", kData + "/wordpiece"}).exitCode, 2);
    QCOMPARE(runBinary({"tokenize", kData + "/wordpiece", "--text", "a", "--lines", "x"}).exitCode,
             2);
    QCOMPARE(
        runBinary({"tokenize", dir.filePath("nothing"), "--text", "a"}).err,
        QByteArray("tokenize: " + dir.filePath("nothing").toUtf8() + ": no such file or folder\n"));
}

QTEST_GUILESS_MAIN(TestTokenizers)
#include "test_tokenizers.moc"
