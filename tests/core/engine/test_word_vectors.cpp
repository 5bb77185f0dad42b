// Word -> vector (core, no Qt in the code under test): the hash, the draw, and the properties the
// sentence field relies on (same text, same vector; widening d_model only appends).
#include <QtTest>

#include "core/init_draw.h"
#include "core/word_vectors.h"

using namespace ae;

class TestWordVectors : public QObject {
    Q_OBJECT
private slots:
    void fnvKnownValues_data();
    void fnvKnownValues();
    void vectorMatchesReferenceDraw();
    void sameTextSameVector();
    void differentTextDifferentVector();
    void widerModelOnlyAppends();
};

void TestWordVectors::fnvKnownValues_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<quint64>("hash");
    // Published FNV-1a 64 test vectors, plus a multi-byte UTF-8 word (hashed as its bytes).
    QTest::newRow("empty") << QByteArray("") << quint64(0xcbf29ce484222325ULL);
    QTest::newRow("a") << QByteArray("a") << quint64(0xaf63dc4c8601ec8cULL);
    QTest::newRow("foobar") << QByteArray("foobar") << quint64(0x85944171f73967e8ULL);
    QTest::newRow("café") << QString::fromUtf8("café").toUtf8() << quint64(0x48e8823acfa40d89ULL);
}

void TestWordVectors::fnvKnownValues() {
    QFETCH(QByteArray, text);
    QFETCH(quint64, hash);
    QCOMPARE(quint64(fnv1a64(std::string_view(text.constData(), text.size()))), hash);
}

void TestWordVectors::vectorMatchesReferenceDraw() {
    // Computed independently (Python, the generator as docs/scene-format.md describes it).
    const VectorD cat = wordVector("cat", 4);
    QCOMPARE(cat.size(), 4);
    QCOMPARE(cat(0), 0.30238651391704247);
    QCOMPARE(cat(1), 0.012226892641341674);
    QCOMPARE(cat(2), -0.03413185594526773);
    QCOMPARE(cat(3), -0.46088780712289856);
    const VectorD cafe = wordVector(QString::fromUtf8("café").toUtf8().toStdString(), 2);
    QCOMPARE(cafe(0), 0.6780802197319389);
    QCOMPARE(cafe(1), -1.0881704384070146);
    // And it is the init draw: normal, std 1, from SplitMix64(fnv1a64(text)).
    SplitMix64 rng(fnv1a64("cat"));
    const MatrixD drawn = drawMatrix(rng, InitSpec{}, 1, 4);
    for (int i = 0; i < 4; ++i)
        QCOMPARE(cat(i), drawn(0, i));
}

void TestWordVectors::sameTextSameVector() {
    const VectorD first = wordVector("attention", 16);
    const VectorD second = wordVector("attention", 16);
    QVERIFY(first == second);  // exactly, not approximately
}

void TestWordVectors::differentTextDifferentVector() {
    QVERIFY(wordVector("cat", 8) != wordVector("cats", 8));
    QVERIFY(wordVector("Cat", 8) != wordVector("cat", 8));  // case matters: texts are tokens
}

void TestWordVectors::widerModelOnlyAppends() {
    const VectorD narrow = wordVector("river", 3);
    const VectorD wide = wordVector("river", 7);
    QVERIFY(wide.head(3) == narrow);
}

QTEST_GUILESS_MAIN(TestWordVectors)
#include "test_word_vectors.moc"
