// The .npy and CSV readers: every layout the fixtures hold reads back the same matrix, and every
// refusal path gives its own message.
#include <QFile>
#include <QtTest>

#include "io/formats/matrix_files.h"
#include "io/formats/result_export.h"

using namespace ae;

namespace {
QString fixture(const QString& name) {
    return QStringLiteral(AE_TEST_DATA_DIR "/matrices/") + name;
}

MatrixD expectedMatrix() {
    MatrixD m(3, 4);
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 4; ++c)
            m(r, c) = r - 0.25 * c + 0.5;
    return m;
}

QString refusal(const std::function<void()>& read) {
    try {
        read();
    } catch (const io::MatrixFileError& error) {
        return QString::fromUtf8(error.what());
    }
    return QStringLiteral("(accepted)");
}
}  // namespace

class MatrixFilesTest : public QObject {
    Q_OBJECT
private slots:
    void readsEveryLayout_data() {
        QTest::addColumn<QString>("file");
        for (const char* name : {"m_le_f4_C.npy", "m_le_f4_F.npy", "m_be_f4_C.npy", "m_be_f4_F.npy",
                                 "m_le_f8_C.npy", "m_le_f8_F.npy", "m_be_f8_C.npy", "m_be_f8_F.npy",
                                 "m_comma.csv", "m_semicolon_decimal_comma.csv"}) {
            QTest::newRow(name) << QString::fromLatin1(name);
        }
    }
    void readsEveryLayout() {
        QFETCH(QString, file);
        const MatrixD m = io::readMatrixFile(fixture(file));
        QCOMPARE(m.rows(), 3);
        QCOMPARE(m.cols(), 4);
        QVERIFY2(m == expectedMatrix(), qPrintable(file));
    }

    void readsVectorAsOneRow() {
        const MatrixD m = io::readMatrixFile(fixture("vector_f8.npy"));
        QCOMPARE(m.rows(), 1);
        QVERIFY(m.row(0) == expectedMatrix().row(0));
    }

    // The header alone gives what the model import dialog lists; the same refusals as reading.
    void npyInfoFromTheHeader() {
        const io::NpyInfo m = io::readNpyInfo(fixture("m_be_f4_F.npy"));
        QCOMPARE(m.dtype, QString("float32"));
        QCOMPARE(m.shape, (std::vector<long long>{3, 4}));
        const io::NpyInfo v = io::readNpyInfo(fixture("vector_f8.npy"));
        QCOMPARE(v.dtype, QString("float64"));
        QCOMPARE(v.shape, (std::vector<long long>{4}));
        const QString cube = refusal([] { io::readNpyInfo(fixture("cube_f8.npy")); });
        QVERIFY2(cube.endsWith("cube_f8.npy: npy: expected a matrix or a vector, got 3 dimensions"),
                 qPrintable(cube));
        const QString ints = refusal([] { io::readNpyInfo(fixture("int64.npy")); });
        QVERIFY2(ints.contains("unsupported dtype '<i8'"), qPrintable(ints));
        const QString csv = refusal([] { io::readNpyInfo(fixture("m_comma.csv")); });
        QVERIFY2(csv.contains("not an .npy file"), qPrintable(csv));
    }

    void roundTripsOwnNpyAndCsv() {
        MatrixD m(2, 3);
        m << 0.1, -2.5e-300, 3.0, 1.0 / 3.0, 7e22, -0.0;
        QVERIFY(io::parseNpy(io::npyBytes(m)) == m);
        QVERIFY(io::parseCsv(io::csvBytes(m)) == m);
    }

    void refusesBadFiles_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("message");
        QTest::newRow("int64")
            << "int64.npy"
            << "int64.npy: npy: unsupported dtype '<i8' (float32 or float64 expected)";
        QTest::newRow("cube")
            << "cube_f8.npy"
            << "cube_f8.npy: npy: expected a matrix or a vector, got 3 dimensions";
        QTest::newRow("nan") << "nan_f8.npy"
                             << "nan_f8.npy: npy: [0][1]: expected a finite number";
        QTest::newRow("missing") << "missing.npy"
                                 << "missing.npy: cannot open: No such file or directory";
    }
    void refusesBadFiles() {
        QFETCH(QString, file);
        QFETCH(QString, message);
        const QString got = refusal([&] { io::readMatrixFile(fixture(file)); });
        QCOMPARE(got, fixture(message.section(':', 0, 0)) + ":" + message.section(':', 1));
    }

    void refusesMalformedBytes_data() {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("message");
        const QByteArray good = io::npyBytes(expectedMatrix());
        QTest::newRow("magic") << QByteArray("PK\x03\x04 not npy")
                               << "npy: not an .npy file (bad magic)";
        QTest::newRow("version") << QByteArray(good).replace(6, 1, "\x07")
                                 << "npy: unsupported format version 7";
        QTest::newRow("truncated data")
            << good.left(good.size() - 8) << "npy: expected 96 bytes of data for 3x4, found 88";
        QTest::newRow("trailing data")
            << good + QByteArray(8, '\0') << "npy: expected 96 bytes of data for 3x4, found 104";
        QTest::newRow("header length")
            << good.left(9) + QByteArray("\xff\xff", 2) << "npy: truncated header";
        QByteArray badKey = good;
        badKey.replace("'descr'", "'dtype'");
        QTest::newRow("key") << badKey << "npy: unexpected header key 'dtype'";
        QByteArray badOrder = good;
        badOrder.replace("False", "Maybe");
        QTest::newRow("order") << badOrder
                               << "npy: malformed header (fortran_order must be True or False)";
        QByteArray empty = good;
        empty.replace("(3, 4)", "(0, 4)");
        QTest::newRow("empty") << empty << "npy: the matrix is empty";
        QByteArray huge = good;
        huge.replace("(3, 4)", "(99999, 99999)");
        QTest::newRow("huge") << huge << "npy: too large: 99999x99999";
    }
    void refusesMalformedBytes() {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, message);
        QCOMPARE(refusal([&] { io::parseNpy(bytes); }), message);
    }

    void refusesBadCsv_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("message");
        QTest::newRow("empty") << QByteArray("\n\n") << "csv: no numbers";
        QTest::newRow("ragged") << QByteArray("1,2\n3\n")
                                << "csv: line 2: expected 2 values, got 1";
        QTest::newRow("word") << QByteArray("1,abc\n")
                              << "csv: line 1, value 2: 'abc' is not a finite number";
        QTest::newRow("inf") << QByteArray("1;inf\n")
                             << "csv: line 1, value 2: 'inf' is not a finite number";
        QTest::newRow("header") << QByteArray("a,b\n1,2\n")
                                << "csv: line 1, value 1: 'a' is not a finite number";
        QTest::newRow("blank field")
            << QByteArray("1,,2\n") << "csv: line 1, value 2: '' is not a finite number";
    }
    void refusesBadCsv() {
        QFETCH(QByteArray, text);
        QFETCH(QString, message);
        QCOMPARE(refusal([&] { io::parseCsv(text); }), message);
    }

    void refusesShapesThatDoNotFit() {
        QCOMPARE(refusal([&] { io::requireShape(expectedMatrix(), 3, 2, "W_Q"); }),
                 QStringLiteral("W_Q: expected 3x2, got 3x4"));
        io::requireShape(expectedMatrix(), 3, -1, "embeddings");  // any width fits
    }
};

QTEST_GUILESS_MAIN(MatrixFilesTest)
#include "test_matrix_files.moc"
