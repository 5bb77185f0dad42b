// The .safetensors reader: exact values for each float dtype, every refusal with its own message,
// and a 100 MB file that opens and lists quickly because only its header is read.
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QtTest>
#include <functional>
#include <limits>

#include "io/formats/safetensors.h"
#include "support/safetensors_writer.h"

using namespace ae;
using namespace ae::testing;

namespace {

QString refusal(const std::function<void()>& read) {
    try {
        read();
    } catch (const io::MatrixFileError& error) {
        return QString::fromUtf8(error.what());
    }
    return QStringLiteral("(accepted)");
}

// Numbers every dtype holds exactly: small integers, halves and quarters, powers of two.
MatrixD representable() {
    MatrixD m(2, 4);
    m << 1.0, -2.5, 0.0, 0.125, 1024.0, -0.75, 3.0, 0.00006103515625;  // the last is 2^-14
    return m;
}

}  // namespace

class SafetensorsTest : public QObject {
    Q_OBJECT
private:
    QTemporaryDir dir_;
    QString path(const QString& name) const { return dir_.filePath(name); }

    // Writes `bytes` and returns the reader's refusal for opening it and reading `tensorName`.
    QString refusalFor(const QByteArray& bytes, const QString& tensorName = {}) {
        const QString file = path("case.safetensors");
        if (!writeBytes(file, bytes)) return "(cannot write)";
        return refusal([&] {
            io::SafetensorsFile f(file);
            if (!tensorName.isEmpty()) f.matrix(tensorName);
        });
    }

private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    void readsEachFloatDtypeExactly_data() {
        QTest::addColumn<QString>("dtype");
        QTest::newRow("F32") << "F32";
        QTest::newRow("F16") << "F16";
        QTest::newRow("BF16") << "BF16";
    }
    void readsEachFloatDtypeExactly() {
        QFETCH(QString, dtype);
        const MatrixD m = representable();
        VectorD v(3);
        v << -1.0, 0.5, 256.0;
        const QString file = path("values.safetensors");
        QVERIFY(writeSafetensors(file, {tensor("w", m, dtype), vectorTensor("b", v, dtype)}));
        io::SafetensorsFile f(file);
        QCOMPARE(f.tensors().size(), std::size_t(2));
        QCOMPARE(f.tensors()[0].name, QString("w"));
        QCOMPARE(f.tensors()[0].dtype, dtype);
        QCOMPARE(f.tensors()[0].shape, (std::vector<long long>{2, 4}));
        QCOMPARE(f.tensors()[1].shape, (std::vector<long long>{3}));
        QVERIFY(f.matrix("w") == m);
        const MatrixD row = f.matrix("b");
        QCOMPARE(row.rows(), 1);
        QVERIFY(row == MatrixD(v.transpose()));
    }

    // Rows picked by id are the matrix's rows, in the order asked, for every float dtype; a row
    // that is not asked for is not read (its infinity goes unnoticed).
    void readsChosenRowsOnly_data() { readsEachFloatDtypeExactly_data(); }
    void readsChosenRowsOnly() {
        QFETCH(QString, dtype);
        MatrixD m(4, 4);
        m << representable(), representable().colwise().reverse();
        const QString file = path("rows.safetensors");
        TestTensor t = tensor("table", m, dtype);
        QVERIFY(writeSafetensors(file, {t}));
        io::SafetensorsFile f(file);
        QCOMPARE(f.matrixShape("table"), (std::pair<long long, long long>(4, 4)));
        const MatrixD picked = f.rows("table", {3, 0, 3});
        QCOMPARE(picked.rows(), 3);
        QVERIFY(picked.row(0) == m.row(3) && picked.row(1) == m.row(0) &&
                picked.row(2) == m.row(3));
        QCOMPARE(refusal([&] { f.rows("table", {4}); }),
                 file + ": tensor table: row 4 is past the end of [4, 4]");

        // Row 2 holds an infinity: reading row 1 is fine, reading row 2 names the element.
        m(2, 1) = std::numeric_limits<double>::infinity();
        QVERIFY(writeSafetensors(file, {tensor("table", m, dtype == "F16" ? "F32" : dtype)}));
        io::SafetensorsFile g(file);
        QVERIFY(g.rows("table", {1}).row(0) == m.row(1));
        QVERIFY2(refusal([&] { g.rows("table", {2}); }).contains("element [2][1] of [4, 4] is inf"),
                 qPrintable(refusal([&] { g.rows("table", {2}); })));
    }

    // Bit patterns the encoders above do not produce: F16 subnormals and extremes, raw BF16.
    void convertsHalfAndBfloat16Bits() {
        const auto bits = [](std::initializer_list<quint16> values) {
            QByteArray bytes;
            for (quint16 v : values) {
                const quint16 le = qToLittleEndian(v);
                bytes.append(reinterpret_cast<const char*>(&le), 2);
            }
            return bytes;
        };
        const std::vector<TestTensor> tensors = {
            TestTensor{"half", "F16", {4}, bits({0x0001, 0x03ff, 0xfbff, 0x8000})},
            TestTensor{"brain", "BF16", {3}, bits({0x3f80, 0xc2f7, 0x0001})}};
        const QString file = path("bits.safetensors");
        QVERIFY(writeSafetensors(file, tensors));
        io::SafetensorsFile f(file);
        const MatrixD half = f.matrix("half");
        QCOMPARE(half(0, 0), std::ldexp(1.0, -24));     // smallest subnormal
        QCOMPARE(half(0, 1), std::ldexp(1023.0, -24));  // largest subnormal
        QCOMPARE(half(0, 2), -65504.0);                 // most negative finite
        QVERIFY(half(0, 3) == 0.0 && std::signbit(half(0, 3)));
        const MatrixD brain = f.matrix("brain");
        QCOMPARE(brain(0, 0), 1.0);
        QCOMPARE(brain(0, 1), -123.5);
        QCOMPARE(brain(0, 2), std::ldexp(1.0, -133));  // a float32 subnormal
    }

    void readsMetadataAndSkipsOtherDtypesUntilRead() {
        QJsonObject header = headerFor({tensor("w", representable())});
        header.insert("__metadata__", QJsonObject{{"format", "pt"}});
        // An integer tensor after the float one: listed, but refused when read as a matrix.
        QByteArray ints(8 * 3, '\0');
        header.insert("ids", QJsonObject{{"dtype", "I64"},
                                         {"shape", QJsonArray{3}},
                                         {"data_offsets", QJsonArray{32, 56}}});
        const QString file = path("meta.safetensors");
        QVERIFY(writeBytes(file, fileBytes(QJsonDocument(header).toJson(),
                                           tensor("w", representable()).bytes + ints)));
        io::SafetensorsFile f(file);
        QCOMPARE(f.metadata().value("format"), QString("pt"));
        QCOMPARE(f.tensors().size(), std::size_t(2));
        const QString message = refusal([&] { f.matrix("ids"); });
        QVERIFY2(message.contains("tensor ids: unsupported dtype I64"), qPrintable(message));
        QVERIFY(refusal([&] { f.matrix("nope"); }).contains("no tensor named nope"));
    }

    void refusesMalformedFiles_data() {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("tensor");
        QTest::addColumn<QString>("expected");
        const TestTensor w = tensor("w", representable());  // 2x4 F32 = 32 bytes
        const auto withEntry = [&](const QJsonObject& entry) {
            return fileBytes(QJsonDocument(QJsonObject{{"w", entry}}).toJson(), w.bytes);
        };
        QTest::newRow("shorter than 8 bytes") << QByteArray("abc") << ""
                                              << "truncated: 3 bytes";
        QTest::newRow("absurd header length")
            << QByteArray("\xff\xff\xff\xff\xff\xff\xff\x7f{}", 10) << ""
            << "header length 9223372036854775807 is absurd";
        QTest::newRow("header past the end")
            << fileBytes(QByteArray("{}"), {}).replace(0, 1, "\x40") << ""
            << "header length 64 is past the end of the file (10 bytes)";
        QTest::newRow("header not JSON") << fileBytes(QByteArray("{nope"), {}) << ""
                                         << "header: not JSON";
        QTest::newRow("header an array") << fileBytes(QByteArray("[1, 2]"), {}) << ""
                                         << "header: expected a JSON object";
        QTest::newRow("unknown dtype") << withEntry({{"dtype", "Q4"},
                                                     {"shape", QJsonArray{2, 4}},
                                                     {"data_offsets", QJsonArray{0, 32}}})
                                       << ""
                                       << "tensor w: unknown dtype Q4";
        QTest::newRow("offsets past the end")
            << withEntry({{"dtype", "F32"},
                          {"shape", QJsonArray{2, 5}},
                          {"data_offsets", QJsonArray{0, 40}}})
            << ""
            << "tensor w: data_offsets [0, 40) past the end of the data (32 bytes)";
        QTest::newRow("offsets not matching the shape")
            << withEntry({{"dtype", "F32"},
                          {"shape", QJsonArray{2, 3}},
                          {"data_offsets", QJsonArray{0, 32}}})
            << ""
            << "tensor w: data_offsets [0, 32) hold 32 bytes, but F32 [2, 3] needs 24";
        QTest::newRow("shape larger than the file")
            << withEntry({{"dtype", "F32"},
                          {"shape", QJsonArray{100000, 100000}},
                          {"data_offsets", QJsonArray{0, 32}}})
            << ""
            << "tensor w: shape [100000, 100000] needs more bytes";
        QTest::newRow("bad offsets")
            << withEntry({{"dtype", "F32"},
                          {"shape", QJsonArray{2, 4}},
                          {"data_offsets", QJsonArray{16, 8}}})
            << ""
            << "tensor w: data_offsets: expected integers 0 <= begin <= end";
        {
            QJsonObject header{{"a", QJsonObject{{"dtype", "F32"},
                                                 {"shape", QJsonArray{4}},
                                                 {"data_offsets", QJsonArray{0, 16}}}},
                               {"b", QJsonObject{{"dtype", "F32"},
                                                 {"shape", QJsonArray{4}},
                                                 {"data_offsets", QJsonArray{8, 24}}}}};
            QTest::newRow("overlapping tensors")
                << fileBytes(QJsonDocument(header).toJson(), w.bytes) << ""
                << "tensors a [0, 16) and b [8, 24) overlap";
        }
        {
            MatrixD bad = representable();
            bad(1, 2) = std::numeric_limits<double>::infinity();
            const TestTensor t = tensor("w", bad);
            QTest::newRow("infinite value") << fileBytes(headerFor({t}), {t}) << "w"
                                            << "tensor w: element [1][2] of [2, 4] is inf";
            bad(1, 2) = std::numeric_limits<double>::quiet_NaN();
            const TestTensor n = tensor("w", bad, "BF16");
            QTest::newRow("NaN value") << fileBytes(headerFor({n}), {n}) << "w"
                                       << "tensor w: element [1][2] of [2, 4] is nan";
        }
        {
            const TestTensor t{"cube", "F32", {2, 2, 2}, QByteArray(32, '\0')};
            QTest::newRow("three dimensions") << fileBytes(headerFor({t}), {t}) << "cube"
                                              << "tensor cube: shape [2, 2, 2] has 3 dimensions";
        }
    }
    void refusesMalformedFiles() {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, tensor);
        QFETCH(QString, expected);
        const QString message = refusalFor(bytes, tensor);
        QVERIFY2(message.contains(expected), qPrintable(message + " | expected: " + expected));
    }

    // A 100 MB file (a 5000 x 5000 F32 matrix and a few small tensors): opening maps it and
    // parses only the header. The time is printed as a measurement for docs/models.md (the issue's
    // 2 s budget), not asserted: the machine is shared, and speed belongs in benchmarks.
    void largeFileOpensQuickly() {
        const long long n = 5000;
        QByteArray big(n * n * 4, '\0');
        const std::vector<TestTensor> tensors = {TestTensor{"big", "F32", {n, n}, big},
                                                 tensor("small", representable())};
        const QString file = path("large.safetensors");
        QVERIFY(writeSafetensors(file, tensors));
        big.clear();
        QVERIFY(QFileInfo(file).size() >= 100'000'000);

        QElapsedTimer timer;
        timer.start();
        io::SafetensorsFile f(file);
        QCOMPARE(f.tensors().size(), std::size_t(2));
        QCOMPARE(f.find("big")->shape, (std::vector<long long>{n, n}));
        const MatrixD small = f.matrix("small");
        const double ms = timer.nsecsElapsed() / 1e6;
        qInfo("100 MB safetensors file: opened, listed and read one small tensor in %.3f ms", ms);
        QVERIFY(small == representable());

        // Not part of the budget, but worth knowing: converting all 25 M values to double.
        timer.restart();
        const MatrixD all = f.matrix("big");
        qInfo("reading the 5000 x 5000 F32 tensor as doubles: %lld ms", timer.elapsed());
        QCOMPARE(all.rows(), n);
    }
};

QTEST_MAIN(SafetensorsTest)
#include "test_safetensors.moc"
