// The Unigram tokenizer kit (tests/data/tokenizers/unigram, README.md there): each folder's
// tokenizer.json gives Hugging Face's ids for every one of its public strings, with and without
// the post-processor's special tokens.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "io/tokenizer/tokenizer.h"

using ae::io::Tokenizer;
using ae::io::TokenizerError;

namespace {

const QString kKit = QStringLiteral(AE_TEST_DATA_DIR "/tokenizers/unigram");

// One JSON value a line (`public-texts.jsonl`, `expected-ids*.jsonl`).
QList<QJsonValue> readLines(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) qFatal("cannot open %s", qPrintable(path));
    QList<QJsonValue> values;
    for (const QByteArray& line : file.readAll().split('\n')) {
        if (line.isEmpty()) continue;
        // Some texts start with U+FEFF, which Qt's reader would drop.
        const QByteArray wrapped = "[" + ae::io::escapeByteOrderMarks(line) + "]";
        values << QJsonDocument::fromJson(wrapped).array().at(0);
    }
    return values;
}

QString idsText(const std::vector<int>& ids) {
    QStringList parts;
    for (const int id : ids)
        parts << QString::number(id);
    return "[" + parts.join(",") + "]";
}

// A tokenizer.json of one Precompiled normalizer with `charsmap` and a one-piece Unigram model.
QByteArray withCharsmap(const QByteArray& charsmap) {
    const QJsonObject normalizer{{"type", "Precompiled"},
                                 {"precompiled_charsmap", QString::fromLatin1(charsmap)}};
    const QJsonObject model{{"type", "Unigram"}, {"vocab", QJsonArray{QJsonArray{"a", -1.0}}}};
    return QJsonDocument(QJsonObject{{"normalizer", normalizer}, {"model", model}}).toJson();
}

QString compact(const QJsonValue& value) {
    return QString::fromUtf8(QJsonDocument(QJsonArray{value}).toJson(QJsonDocument::Compact))
        .mid(1)
        .chopped(1);
}

}  // namespace

class TestUnigramKit : public QObject {
    Q_OBJECT

private slots:
    // Every folder: real-size nmt_nfkc and nfkc_cf charsmaps (Precompiled) in
    // today's converter form and the Hub's 2020 and 2022 forms, identity normalization with
    // prepend_scheme "first", byte fallback in both id layouts, DeBERTa-v3's lowercasing.
    void matchesHuggingFace_data() {
        QTest::addColumn<QString>("folder");
        QTest::addColumn<bool>("special");
        const QStringList folders =
            QDir(kKit).entryList({"*"}, QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name);
        QCOMPARE(folders.size(), 11);
        // Marian's folder has no tokenizer.json: source.spm and vocab.json, through
        // libsentencepiece, as MarianTokenizer reads them (the kit's README).
        for (const QString& folder : folders) {
            QTest::newRow(qPrintable(folder + " special")) << folder << true;
            QTest::newRow(qPrintable(folder + " no-special")) << folder << false;
        }
    }
    void matchesHuggingFace() {
        QFETCH(QString, folder);
        QFETCH(bool, special);
        const QString dir = kKit + "/" + folder;
        const Tokenizer tokenizer = Tokenizer::load(dir);
        const QList<QJsonValue> texts = readLines(dir + "/public-texts.jsonl");
        const QList<QJsonValue> expected =
            readLines(dir + (special ? "/expected-ids.jsonl" : "/expected-ids-no-special.jsonl"));
        QCOMPARE(texts.size(), 156);
        QCOMPARE(expected.size(), texts.size());
        for (qsizetype i = 0; i < texts.size(); ++i) {
            const QString got = idsText(tokenizer.encode(texts[i].toString(), special));
            const QString want = compact(expected[i]);
            QVERIFY2(got == want, qPrintable(QString("line %1 %2: got %3, expected %4")
                                                 .arg(i + 1)
                                                 .arg(compact(texts[i]), got, want)));
        }
    }

    // Byte fallback spells an unknown character as its UTF-8 bytes, a leading U+FEFF too; the
    // same text without byte fallback is the one unknown id.
    // Marian: a leading language code is a token of its own (unknown to this vocabulary), the
    // special tokens written in the text are split out, and a broken model file is named.
    void marianReadsItsOwnWay() {
        const Tokenizer t = Tokenizer::load(kKit + "/marian-nmt-nfkc");
        const std::vector<int> coded = t.encode(QStringLiteral(">>de<< Hallo"), false);
        const std::vector<int> plain = t.encode(QStringLiteral("Hallo"), false);
        QCOMPARE(coded.size(), plain.size() + 1);
        QCOMPARE(coded.front(), t.encode(QStringLiteral("<unk>"), false).front());
        QCOMPARE(std::vector<int>(coded.begin() + 1, coded.end()), plain);
        QCOMPARE(t.encode(QStringLiteral("Hallo")).back(),
                 t.encode(QStringLiteral("</s>"), false).front());
        QTemporaryDir broken;
        QFile::copy(kKit + "/marian-nmt-nfkc/vocab.json", broken.filePath("vocab.json"));
        QFile spm(broken.filePath("source.spm"));
        QVERIFY(spm.open(QIODevice::WriteOnly));
        spm.write("not a model");
        spm.close();
        try {
            Tokenizer::load(broken.path());
            QFAIL("not refused");
        } catch (const TokenizerError& e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains("source.spm: not a SentencePiece model"),
                     e.what());
        }
    }

    // Marian's target side (MarianTokenizer's text_target) segments with target.spm, an identity
    // model of its own 1,500 pieces, numbered by the same vocab.json: other ids for most texts,
    // which decode to the same words, each closed by </s>. A folder without target.spm is named.
    void marianTargetSideUsesTargetSpm() {
        const QString folder = kKit + "/marian-nmt-nfkc";
        const Tokenizer source = Tokenizer::load(folder);
        const Tokenizer target = Tokenizer::loadTarget(folder);
        const int unknown = source.encode(QStringLiteral("<unk>"), false).front();
        const int end = source.encode(QStringLiteral("</s>"), false).front();
        int differing = 0, compared = 0;
        for (const char* text : {"The cat sat on the mat.", "Hello, my dog is cute",
                                 "Your journey starts with one step", "multiple internal spaces"}) {
            const std::vector<int> s = source.encode(QString::fromUtf8(text), false);
            const std::vector<int> t = target.encode(QString::fromUtf8(text), false);
            QCOMPARE(target.encode(QString::fromUtf8(text)).back(), end);
            if (std::find(t.begin(), t.end(), unknown) != t.end()) continue;
            ++compared;
            if (s != t) ++differing;
            QCOMPARE(target.decode(t), source.decode(s));
        }
        QVERIFY(compared >= 2);
        QVERIFY(differing >= 1);
        QTemporaryDir sourceOnly;
        for (const char* file : {"source.spm", "vocab.json"})
            QFile::copy(folder + "/" + file, sourceOnly.filePath(file));
        try {
            Tokenizer::loadTarget(sourceOnly.path());
            QFAIL("not refused");
        } catch (const TokenizerError& e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains("target.spm: missing"), e.what());
        }
    }

    void byteFallbackSpellsUnknownBytes() {
        const Tokenizer withBytes = Tokenizer::load(kKit + "/xlmr-byte-fallback/tokenizer.json");
        const std::vector<int> ids = withBytes.encode(QString(QChar(0xFEFF)), false);
        QCOMPARE(idsText(ids), QStringLiteral("[260,243,191,195]"));
    }

    // A vocabulary entry written in the text matches as itself, as in the library (not in
    // SentencePiece): "<0x41>" in a byte-fallback model is one token.
    void byteTokensInTheTextMatchWhole() {
        const Tokenizer t = Tokenizer::load(kKit + "/xlmr-byte-fallback/tokenizer.json");
        // ▁ (260), then <0x41> (69), not the five characters.
        QCOMPARE(idsText(t.encode(QStringLiteral("<0x41>"), false)), QStringLiteral("[260,69]"));
    }

    // The charsmap follows Hugging Face, not SentencePiece, where they differ: a grapheme
    // cluster under 6 bytes takes the shortest rule any prefix of it has, whole, so e + U+0301 +
    // U+0301 is é and the second mark goes (SentencePiece keeps it); CR LF is one cluster, one
    // space.
    void charsmapGoesByGraphemeCluster() {
        const Tokenizer t = Tokenizer::load(kKit + "/xlmr-nmt-nfkc/tokenizer.json");
        QCOMPARE(t.encode(QStringLiteral("cafe\u0301\u0301"), false),
                 t.encode(QStringLiteral("caf\u00e9"), false));
        QVERIFY(t.encode(QStringLiteral("cafe\u0301\u0301"), false) !=
                t.encode(QStringLiteral("caf\u00e9\u0301"), false));
        QCOMPARE(t.encode(QStringLiteral("a\r\nb"), false), t.encode(QStringLiteral("a b"), false));
    }

    // A damaged charsmap is refused naming the field, before any text is read.
    void badCharsmapsAreRefused_data() {
        QTest::addColumn<QByteArray>("charsmap");
        QTest::addColumn<QString>("problem");
        QTest::newRow("not base64") << QByteArray("@@@") << "not base64";
        QTest::newRow("too short")
            << QByteArray("AAA=") << "2 bytes, too short for the trie's size";
        // A trie of 64 bytes claimed in a blob of 8.
        QTest::newRow("trie past the end")
            << QByteArray("QAAAAAAAAAA=") << "a trie of 64 bytes in a blob of 8";
        QTest::newRow("strings not UTF-8")
            << QByteArray("BAAAAAAAAAD/") << "its replacement strings are not UTF-8";
    }
    void badCharsmapsAreRefused() {
        QFETCH(QByteArray, charsmap);
        QFETCH(QString, problem);
        const QByteArray json = withCharsmap(charsmap);
        try {
            Tokenizer::fromJson(json, {}, "tokenizer.json", {});
            QFAIL("accepted");
        } catch (const ae::io::TokenizerError& e) {
            QCOMPARE(QString::fromUtf8(e.what()),
                     "tokenizer.json: normalizer.precompiled_charsmap: " + problem);
        }
    }

    // A trie whose units point outside it is refused when the lookup meets them, never read.
    void aTrieThatPointsOutsideItselfIsRefused() {
        // Size 4: one unit 0x00000400 (offset 1): the first byte's child lies past the trie.
        const QByteArray blob = QByteArray::fromHex(
            "04000000"
            "00040000");
        const QByteArray json = withCharsmap(blob.toBase64());
        const Tokenizer t = Tokenizer::fromJson(json, {}, "tokenizer.json", {});
        try {
            t.encode(QStringLiteral("a"), false);
            QFAIL("accepted");
        } catch (const ae::io::TokenizerError& e) {
            QCOMPARE(QString::fromUtf8(e.what()),
                     QStringLiteral("tokenizer.json: normalizer.precompiled_charsmap: the trie "
                                    "points outside itself"));
        }
    }
};

QTEST_MAIN(TestUnigramKit)
#include "test_unigram_kit.moc"
