// The Unigram tokenizer kit (tests/data/tokenizers/unigram, README.md there): each folder's
// tokenizer.json gives Hugging Face's ids for every one of its public strings, with and without
// the post-processor's special tokens.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QtTest>

#include "io/tokenizer/tokenizer.h"

using ae::io::Tokenizer;

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

QString compact(const QJsonValue& value) {
    return QString::fromUtf8(QJsonDocument(QJsonArray{value}).toJson(QJsonDocument::Compact))
        .mid(1)
        .chopped(1);
}

}  // namespace

class TestUnigramKit : public QObject {
    Q_OBJECT

private slots:
    // The folders without a Precompiled charsmap (identity normalization): XLM-R's, T5's with
    // prepend_scheme "first", byte fallback in both id layouts, DeBERTa-v3's lowercasing.
    void matchesHuggingFace_data() {
        QTest::addColumn<QString>("folder");
        QTest::addColumn<bool>("special");
        for (const char* folder : {"xlmr-identity", "t5-identity-first", "xlmr-byte-fallback",
                                   "t5-byte-fallback", "debertav3-identity-lower"}) {
            QTest::newRow(qPrintable(QString("%1 special").arg(folder))) << folder << true;
            QTest::newRow(qPrintable(QString("%1 no-special").arg(folder))) << folder << false;
        }
    }
    void matchesHuggingFace() {
        QFETCH(QString, folder);
        QFETCH(bool, special);
        const QString dir = kKit + "/" + folder;
        const Tokenizer tokenizer = Tokenizer::load(dir + "/tokenizer.json");
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
};

QTEST_MAIN(TestUnigramKit)
#include "test_unigram_kit.moc"
