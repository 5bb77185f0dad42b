// The tokenizer.json forms the decoder families' checkpoints ship, held to Hugging Face's own
// library: each committed tokenizer's `expected-hf.jsonl` (tests/data/tokenizers/README.md) holds
// the library's ids, with and without special tokens, and its decoded text, for every string of
// strings.jsonl and strings-forms.jsonl. Also the files without `model.type`, Unigram's among
// them (tests/io/tokenizer/test_unigram_kit.cpp holds Unigram to the library).

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "io/tokenizer/tokenizer.h"

using ae::io::Tokenizer;
using ae::io::TokenizerError;

namespace {

const QString kData = QStringLiteral(AE_TEST_DATA_DIR "/tokenizers");

struct Case {
    QString text, decoded;
    std::vector<int> ids, idsNoSpecial;
};

std::vector<int> toIds(const QJsonValue& value) {
    std::vector<int> ids;
    for (const QJsonValue& id : value.toArray())
        ids.push_back(id.toInt());
    return ids;
}

std::vector<Case> readCases(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) qFatal("cannot open %s", qPrintable(path));
    std::vector<Case> cases;
    for (const QByteArray& line : file.readAll().split('\n')) {
        if (line.isEmpty()) continue;
        // Some texts start with U+FEFF, which Qt's reader would drop.
        const QJsonObject c = QJsonDocument::fromJson(ae::io::escapeByteOrderMarks(line)).object();
        cases.push_back({c.value("text").toString(), c.value("decoded").toString(),
                         toIds(c.value("ids")), toIds(c.value("ids_no_special"))});
    }
    return cases;
}

QString idsText(const std::vector<int>& ids) {
    QStringList parts;
    for (const int id : ids)
        parts << QString::number(id);
    return "[" + parts.join(",") + "]";
}

// The text with its control characters and non-ASCII escaped, for a failure message.
QString shown(const QString& text) {
    return QString::fromUtf8(QJsonDocument(QJsonArray{text}).toJson(QJsonDocument::Compact));
}

QString refusal(const std::function<void()>& action) {
    try {
        action();
    } catch (const TokenizerError& error) {
        return QString::fromUtf8(error.what());
    }
    return "no error";
}

Tokenizer fromJson(const QByteArray& json) {
    return Tokenizer::fromJson(json, {}, "tokenizer.json", "tokenizer_config.json");
}

}  // namespace

class TestTokenizerForms : public QObject {
    Q_OBJECT

private slots:
    void matchesHuggingFace_data();
    void matchesHuggingFace();
    void losslessFormsDecodeBack_data();
    void losslessFormsDecodeBack();
    void stringsHoldTheTrickyCases();
    void formsAreWhatTheirNamesSay();
    void unknownsFuseWhereBytesAreMissing();
    void brokenUtf8DecodesAsTheLibraryDoes_data();
    void brokenUtf8DecodesAsTheLibraryDoes();
    void modelTypeInferredFromFields();
    void unigramWithoutTypeIsRead();
    void unsupportedDecoderRefusesOnlyDecoding();
};

void TestTokenizerForms::matchesHuggingFace_data() {
    QTest::addColumn<QString>("tokenizer");
    QTest::addColumn<QString>("expected");
    const auto row = [](const char* name, const QString& tokenizer, const QString& expected) {
        QTest::newRow(name) << tokenizer << expected + "/expected-hf.jsonl";
    };
    row("Qwen2, Qwen2.5, Qwen3: NFC, Split, ByteLevel without regex", "qwen3", "qwen3");
    row("legacy Llama, Mistral, TinyLlama, Phi-3", "llama-legacy-form", "llama-legacy-form");
    row("Metaspace, prepend_scheme first, no split", "metaspace-first-form",
        "metaspace-first-form");
    row("Gemma: Replace, Split merged with previous", "gemma-form", "gemma-form");
    row("GPT-NeoX-20B (Pythia, OLMo 1): ByteLevel with regex", "neox-form", "neox-form");
    row("Llama 3, OLMo 2: Split in threes, ByteLevel", "tiktoken-split-form",
        "tiktoken-split-form");
    row("old WordPiece without type", "old-wordpiece-no-type", "old-wordpiece-no-type");
    row("old BPE without type", "old-bpe-no-type", "old-bpe-no-type");
    row("GPT-2 classic files", "gpt2", "gpt2");
    row("NFKC + Metaspace in a Sequence", "metaspace", "metaspace");
    row("WordPiece", "wordpiece", "wordpiece");
    row("WordPiece as a classic vocab.txt", "wordpiece-classic", "wordpiece");
    row("NFKD, StripAccents, Lowercase, Replace, Strip; WhitespaceSplit, Punctuation",
        "accents-punctuation-form", "accents-punctuation-form");
}

void TestTokenizerForms::matchesHuggingFace() {
    QFETCH(QString, tokenizer);
    QFETCH(QString, expected);
    const Tokenizer t = Tokenizer::load(kData + "/" + tokenizer);
    const std::vector<Case> cases = readCases(kData + "/" + expected);
    QVERIFY(cases.size() >= 130);
    int wrong = 0;
    QStringList first;
    for (const Case& c : cases) {
        const std::vector<int> ids = t.encode(c.text, true), plain = t.encode(c.text, false);
        const QString decoded = t.decode(c.idsNoSpecial);
        if (ids == c.ids && plain == c.idsNoSpecial && decoded == c.decoded) continue;
        ++wrong;
        if (first.size() < 3)
            first << shown(c.text) + ": ids " + idsText(ids) + " (expected " + idsText(c.ids) +
                         "), decoded " + shown(decoded) + " (expected " + shown(c.decoded) + ")";
    }
    QVERIFY2(wrong == 0, qPrintable(QString::number(wrong) + " differ: " + first.join("; ")));
}

// Where the decoder gives back what the model saw, a text comes back whole from its ids: every
// string, composed first where the normalizer is NFC. Except, on `▁`, a text that holds `▁`
// itself (it comes back a space), and for the legacy form a text with a special token inside
// (the text after it was given its own `▁`, which comes back a space), as in the library.
void TestTokenizerForms::losslessFormsDecodeBack_data() {
    QTest::addColumn<QString>("tokenizer");
    QTest::addColumn<bool>("normalizesToNfc");
    QTest::addColumn<QStringList>("lossyWith");
    const QString metaspace = QStringLiteral("\u2581");
    QTest::newRow("qwen3") << "qwen3" << true << QStringList();
    QTest::newRow("llama legacy") << "llama-legacy-form" << false
                                  << QStringList{metaspace, "<s>", "</s>", "<unk>"};
    QTest::newRow("gemma") << "gemma-form" << false << QStringList{metaspace};
    QTest::newRow("neox") << "neox-form" << true << QStringList();
    QTest::newRow("tiktoken split") << "tiktoken-split-form" << false << QStringList();
    QTest::newRow("gpt2") << "gpt2" << false << QStringList();
}

void TestTokenizerForms::losslessFormsDecodeBack() {
    QFETCH(QString, tokenizer);
    QFETCH(bool, normalizesToNfc);
    QFETCH(QStringList, lossyWith);
    const Tokenizer t = Tokenizer::load(kData + "/" + tokenizer);
    int checked = 0;
    for (const Case& c : readCases(kData + "/" + tokenizer + "/expected-hf.jsonl")) {
        if (std::any_of(lossyWith.begin(), lossyWith.end(),
                        [&](const QString& s) { return c.text.contains(s); }))
            continue;
        const QString text =
            normalizesToNfc ? c.text.normalized(QString::NormalizationForm_C) : c.text;
        QVERIFY2(t.decode(t.encode(c.text, false)) == text, qPrintable(shown(c.text)));
        ++checked;
    }
    QVERIFY(checked >= 110);
}

// The strings hold what trips tokenizers of these forms up.
void TestTokenizerForms::stringsHoldTheTrickyCases() {
    QString all;
    for (const Case& c : readCases(kData + "/llama-legacy-form/expected-hf.jsonl"))
        all += c.text + QChar(0);
    for (const QString& needle :
         {QStringLiteral(" a"), QStringLiteral("a  b"), QStringLiteral("\n\n"),
          QStringLiteral("\r\n"), QStringLiteral("\t\t"), QStringLiteral("12345678"),
          QStringLiteral("cafe\u0301"), QStringLiteral("日本語"), QStringLiteral("😀"),
          QStringLiteral("\u0007"), QStringLiteral("\ue000"), QStringLiteral("\u2581"),
          QStringLiteral("<0x41>"), QStringLiteral("<s>Hello"), QStringLiteral("<bos>"),
          QStringLiteral("<start_of_turn>"), QStringLiteral("<|endoftext|>"),
          QStringLiteral("<|padding|>"), QStringLiteral("     y")})
        QVERIFY2(all.contains(needle), qPrintable(shown(needle)));
    // Unknown characters really fall back to bytes here: 😀 is four byte tokens after "▁".
    const Tokenizer llama = Tokenizer::load(kData + "/llama-legacy-form");
    QCOMPARE(llama.encode("😀", false).size(), size_t(5));
    QCOMPARE(llama.tokenText(llama.encode("😀", false).at(1)), "<0xF0>");
}

// Each small tokenizer has the components its name promises, so the rows above test the form.
void TestTokenizerForms::formsAreWhatTheirNamesSay() {
    const auto read = [](const QString& folder) {
        QFile file(kData + "/" + folder + "/tokenizer.json");
        if (!file.open(QIODevice::ReadOnly)) qFatal("cannot open %s", qPrintable(folder));
        return QJsonDocument::fromJson(file.readAll()).object();
    };
    const auto compact = [](const QJsonValue& value) {
        return QString::fromUtf8(QJsonDocument(QJsonArray{value}).toJson(QJsonDocument::Compact));
    };
    const QJsonObject llama = read("llama-legacy-form");
    QCOMPARE(compact(llama.value("normalizer")),
             R"([{"normalizers":[{"prepend":"▁","type":"Prepend"},{"content":"▁","pattern":)"
             R"({"String":" "},"type":"Replace"}],"type":"Sequence"}])");
    QVERIFY(llama.value("pre_tokenizer").isNull());
    QCOMPARE(llama.value("model")["byte_fallback"].toBool(), true);
    QCOMPARE(llama.value("model")["fuse_unk"].toBool(), true);
    QVERIFY(compact(llama.value("decoder")).contains(R"("start":1,"stop":0,"type":"Strip")"));
    const QJsonObject first = read("metaspace-first-form");
    QVERIFY(first.value("normalizer").isNull());
    QCOMPARE(first.value("pre_tokenizer")["prepend_scheme"].toString(), "first");
    QCOMPARE(first.value("pre_tokenizer")["split"].toBool(true), false);
    const QJsonObject gemma = read("gemma-form");
    QCOMPARE(gemma.value("normalizer")["type"].toString(), "Replace");
    QCOMPARE(gemma.value("pre_tokenizer")["behavior"].toString(), "MergedWithPrevious");
    const QJsonObject neox = read("neox-form");
    QCOMPARE(compact(neox.value("pre_tokenizer")),
             R"([{"add_prefix_space":false,"trim_offsets":true,"type":"ByteLevel"}])");
    const QJsonObject tiktoken = read("tiktoken-split-form");
    QVERIFY(compact(tiktoken.value("pre_tokenizer")).contains(R"(\\p{N}{1,3})"));
    QVERIFY(!read("old-bpe-no-type").value("model").toObject().contains("type"));
    QVERIFY(!read("old-wordpiece-no-type").value("model").toObject().contains("type"));
}

// The legacy form's unknowns: with byte tokens missing (<0xE0> and up here), a character that
// cannot fall back is <unk>, one per character or one per run under fuse_unk. The ids are
// Hugging Face's library's on this very file.
void TestTokenizerForms::unknownsFuseWhereBytesAreMissing() {
    QFile file(kData + "/llama-legacy-form/tokenizer.json");
    QVERIFY(file.open(QIODevice::ReadOnly));
    QJsonObject root = QJsonDocument::fromJson(file.readAll()).object();
    QJsonObject model = root.value("model").toObject();
    QJsonObject vocabulary = model.value("vocab").toObject();
    for (int byte = 0xE0; byte <= 0xFF; ++byte)
        vocabulary.remove(QString::asprintf("<0x%02X>", byte));
    model.insert("vocab", vocabulary);
    const QString text = QStringLiteral("日本語のテキスト");
    for (const bool fuse : {true, false}) {
        model.insert("fuse_unk", fuse);
        root.insert("model", model);
        const Tokenizer t = fromJson(QJsonDocument(root).toJson());
        const std::vector<int> ids = t.encode(text, false);
        QCOMPARE(idsText(ids), fuse ? "[259,0]" : "[259,0,0,0,0,0,0,0,0]");
        QCOMPARE(t.decode(ids), fuse ? "<unk>" : "<unk><unk><unk><unk><unk><unk><unk><unk>");
        QCOMPARE(idsText(t.encode("a😀b", false)), "[317,0,284]");
    }
}

// Byte-level ids that stop inside a character, or spell no character: each broken sequence is one
// U+FFFD, counted as Rust counts them (what Hugging Face's library gives for these Qwen3 ids).
void TestTokenizerForms::brokenUtf8DecodesAsTheLibraryDoes_data() {
    QTest::addColumn<std::vector<int>>("ids");
    QTest::addColumn<QString>("decoded");
    QTest::newRow("emoji cut after 3 of 4 bytes") << std::vector<int>{172, 253, 246} << "\ufffd";
    QTest::newRow("then x") << std::vector<int>{172, 253, 246, 87} << "\ufffdx";
    QTest::newRow("E0 80: overlong") << std::vector<int>{156, 222} << "\ufffd\ufffd";
    QTest::newRow("ED A0 80: a surrogate")
        << std::vector<int>{169, 254, 222} << "\ufffd\ufffd\ufffd";
    QTest::newRow("C3 alone") << std::vector<int>{127} << "\ufffd";
    QTest::newRow("FF, then A") << std::vector<int>{187, 32} << "\ufffdA";
    QTest::newRow("the whole emoji") << std::vector<int>{172, 253, 246, 222} << "😀";
}

void TestTokenizerForms::brokenUtf8DecodesAsTheLibraryDoes() {
    QFETCH(std::vector<int>, ids);
    QFETCH(QString, decoded);
    static const Tokenizer qwen3 = Tokenizer::load(kData + "/qwen3");
    QCOMPARE(qwen3.decode(ids), decoded);
}

// Without `type`: WordPiece when max_input_chars_per_word is there, BPE otherwise.
void TestTokenizerForms::modelTypeInferredFromFields() {
    const QByteArray bpe = R"({"model": {"vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}})";
    QCOMPARE(idsText(fromJson(bpe).encode("ab")), "[2]");
    const QByteArray wordpiece =
        R"({"model": {"vocab": {"[UNK]": 0, "ab": 1, "##c": 2}, "unk_token": "[UNK]",
            "max_input_chars_per_word": 100}})";
    QCOMPARE(idsText(fromJson(wordpiece).encode("abc")), "[1,2]");
    // Neither merges nor max_input_chars_per_word: read as BPE, refused for what it lacks.
    QCOMPARE(refusal([] { fromJson(R"({"model": {"vocab": {"a": 0}}})"); }),
             "tokenizer.json: model.merges: expected an array");
}

void TestTokenizerForms::unigramWithoutTypeIsRead() {
    // A file from before `type` was written is Unigram when its vocabulary is a list of
    // [piece, score] or it names its unknown by id, as the library decides.
    const Tokenizer old = Tokenizer::load(kData + "/unigram-no-type/tokenizer.json");
    QVERIFY(!old.encode("hello").empty());
    QCOMPARE(refusal([] { fromJson(R"({"model": {"unk_id": 0, "vocab": {"a": 0}}})"); }),
             "tokenizer.json: model.vocab: expected an array");
    QCOMPARE(refusal([] { fromJson(R"({"model": {"type": "Unigram", "vocab": []}})"); }),
             "tokenizer.json: model.vocab: is empty");
    QCOMPARE(refusal([] { fromJson(R"({"model": {"type": "Unigram", "vocab": [["a", "x"]]}})"); }),
             "tokenizer.json: model.vocab[0]: expected [piece, score]");
    QCOMPARE(refusal([] {
                 fromJson(R"({"model": {"type": "Unigram", "vocab": [["a", -1]], "unk_id": 3}})");
             }),
             "tokenizer.json: model.unk_id: 3 is not an id of the 1 pieces");
    // Without unk_id, a character no piece covers cannot be tokenized: refused when met.
    const Tokenizer noUnknown = fromJson(R"({"model": {"type": "Unigram", "vocab": [["a", -1]]}})");
    QCOMPARE(refusal([&] { noUnknown.encode("ab"); }),
             "tokenizer.json: model.unk_id: none is given, but \"b\" is not in the vocabulary");
}

// Encoding needs no decoder, so a decoder that is not implemented only refuses to decode.
void TestTokenizerForms::unsupportedDecoderRefusesOnlyDecoding() {
    const Tokenizer t = fromJson(R"({"decoder": {"type": "CTC"},
        "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}})");
    QCOMPARE(idsText(t.encode("ab")), "[2]");
    QCOMPARE(refusal([&] { t.decode({2}); }),
             "tokenizer.json: decoder.type: \"CTC\" is not supported for decoding (supported: "
             "ByteLevel, ByteFallback, Fuse, Strip, Replace, Metaspace, WordPiece, Sequence)");
    QCOMPARE(refusal([] {
                 fromJson(R"({"decoder": {"type": "Strip", "content": "ab"},
                     "model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}})");
             }),
             "tokenizer.json: decoder.content: expected one character, got \"ab\"");
    QCOMPARE(refusal([] {
                 fromJson(R"({"decoder": {"type": "Metaspace", "prepend_scheme": "once"},
                     "model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}})");
             }),
             "tokenizer.json: decoder.prepend_scheme: \"once\" is not supported (supported: "
             "always, first, never)");
    // Without a decoder the tokens are joined with spaces, as in the library.
    const Tokenizer plain =
        fromJson(R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []}})");
    QCOMPARE(plain.decode({0, 1, 7}), "a b");
}

QTEST_GUILESS_MAIN(TestTokenizerForms)
#include "test_tokenizer_forms.moc"
