// Pairs of texts (sentence A, sentence B) through the post-processor's pair form, held to
// Hugging Face's own library: tests/data/tokenizers/pairs-expected.jsonl holds its ids and token
// types, with and without special tokens (tests/data/tokenizers/README.md).
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

std::vector<int> toIds(const QJsonValue& value) {
    std::vector<int> ids;
    for (const QJsonValue& id : value.toArray())
        ids.push_back(id.toInt());
    return ids;
}

QString folderPath(const QString& folder) {
    return QFile::exists(kData + "/" + folder) ? kData + "/" + folder
                                               : kData + "/unigram/" + folder;
}

}  // namespace

class TestPairTemplates : public QObject {
    Q_OBJECT

private slots:
    void matchesTheLibrary_data() {
        QTest::addColumn<QJsonObject>("expected");
        QFile file(kData + "/pairs-expected.jsonl");
        QVERIFY(file.open(QIODevice::ReadOnly));
        int row = 0;
        for (const QByteArray& line : file.readAll().split('\n')) {
            if (line.isEmpty()) continue;
            const QJsonObject o = QJsonDocument::fromJson(line).object();
            QTest::newRow(
                qPrintable(QStringLiteral("%1 %2").arg(o.value("folder").toString()).arg(row++)))
                << o;
        }
        QCOMPARE(row, 35);
    }
    void matchesTheLibrary() {
        QFETCH(QJsonObject, expected);
        const Tokenizer t = Tokenizer::load(folderPath(expected.value("folder").toString()));
        const QString a = expected.value("a").toString(), b = expected.value("b").toString();
        const Tokenizer::Encoded with = t.encodePair(a, b);
        QCOMPARE(with.ids, toIds(expected.value("ids")));
        QCOMPARE(with.typeIds, toIds(expected.value("types")));
        const Tokenizer::Encoded without = t.encodePair(a, b, false);
        QCOMPARE(without.ids, toIds(expected.value("ids_no_special")));
        QCOMPARE(without.typeIds, toIds(expected.value("types_no_special")));
    }

    // The classic vocab.txt has BERT's pair form, as BertTokenizer builds it.
    void classicVocabularyPairsAsBert() {
        const Tokenizer classic = Tokenizer::load(kData + "/wordpiece-classic");
        const Tokenizer json = Tokenizer::load(kData + "/wordpiece");
        const Tokenizer::Encoded a = classic.encodePair("Hello world", "héllo  wörld!");
        const Tokenizer::Encoded b = json.encodePair("Hello world", "héllo  wörld!");
        QCOMPARE(a.ids, b.ids);
        QCOMPARE(a.typeIds, b.typeIds);
    }

    // A post-processor that adds tokens around one text but has no pair form is refused by name.
    void templateWithoutPairIsRefusedForPairs() {
        QFile file(kData + "/unigram/xlmr-identity/tokenizer.json");
        QVERIFY(file.open(QIODevice::ReadOnly));
        QJsonObject root = QJsonDocument::fromJson(file.readAll()).object();
        QJsonObject processor = root.value("post_processor").toObject();
        processor.remove("pair");
        root.insert("post_processor", processor);
        const Tokenizer t = Tokenizer::fromJson(QJsonDocument(root).toJson(), {}, "tokenizer.json",
                                                "tokenizer_config.json");
        QVERIFY(!t.encode("Hello").empty());
        try {
            t.encodePair("Hello", "world");
            QFAIL("not refused");
        } catch (const TokenizerError& e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains("no form for a pair"), e.what());
        }
        // Without special tokens a pair needs no template.
        QCOMPARE(t.encodePair("Hello", "world", false).ids.size(),
                 t.encode("Hello", false).size() + t.encode("world", false).size());
    }

    void malformedPairTemplatesAreRefused_data() {
        QTest::addColumn<QJsonArray>("pair");
        QTest::addColumn<QString>("message");
        const QJsonObject a{{"Sequence", QJsonObject{{"id", "A"}, {"type_id", 0}}}};
        const QJsonObject b{{"Sequence", QJsonObject{{"id", "B"}, {"type_id", 1}}}};
        QTest::newRow("no B") << QJsonArray{a} << "post_processor.pair: needs both";
        QTest::newRow("A twice") << QJsonArray{a, a, b} << "post_processor.pair[1].Sequence.id";
        QTest::newRow("unknown token")
            << QJsonArray{a, QJsonObject{{"SpecialToken", QJsonObject{{"id", "[X]"}}}}, b}
            << "post_processor.pair[1].SpecialToken.id";
        QTest::newRow("bad type")
            << QJsonArray{a, QJsonObject{{"Sequence", QJsonObject{{"id", "B"}, {"type_id", -1}}}}}
            << "post_processor.pair[1].Sequence.type_id";
    }
    void malformedPairTemplatesAreRefused() {
        QFETCH(QJsonArray, pair);
        QFETCH(QString, message);
        QFile file(kData + "/unigram/xlmr-identity/tokenizer.json");
        QVERIFY(file.open(QIODevice::ReadOnly));
        QJsonObject root = QJsonDocument::fromJson(file.readAll()).object();
        QJsonObject processor = root.value("post_processor").toObject();
        processor.insert("pair", pair);
        root.insert("post_processor", processor);
        try {
            Tokenizer::fromJson(QJsonDocument(root).toJson(), {}, "tokenizer.json",
                                "tokenizer_config.json");
            QFAIL("not refused");
        } catch (const TokenizerError& e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(message), e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestPairTemplates)
#include "test_pair_templates.moc"
