// The engine's threaded products (core/parallel_product.h): the same numbers as one Eigen
// product, whichever way the work is split, and a finiteness flag per product that names exactly
// the product that overflowed.

#include <QtTest>
#include <limits>

#include "core/parallel_product.h"

namespace {

using MatrixF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using VectorF = Eigen::Matrix<float, Eigen::Dynamic, 1>;
using MatrixD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using VectorD = Eigen::Matrix<double, Eigen::Dynamic, 1>;

// Largest |actual - expected| over the size of the terms summed, |in|·|w| + |b|: two summation
// orders of n terms may differ by about n·eps times that.
double worstRelativeError(const MatrixF& actual, const MatrixF& expected, const MatrixF& in,
                          const MatrixF& w, const VectorF& b) {
    const MatrixF size = (in.cwiseAbs() * w.cwiseAbs()).rowwise() + b.cwiseAbs().transpose();
    return ((actual - expected).cwiseAbs().array() / (size.array() + 1e-30f)).maxCoeff();
}

}  // namespace

class TestParallelProduct : public QObject {
    Q_OBJECT

private slots:
    void matchesOneProduct_data() {
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("inner");
        QTest::addColumn<int>("columns");
        // Too small to split; split by columns (fewer than 256 rows); split by rows.
        QTest::newRow("1x1x1, not split") << 1 << 1 << 1;
        QTest::newRow("3x5x7, not split") << 3 << 5 << 7;
        QTest::newRow("64x768x768, columns") << 64 << 768 << 768;
        QTest::newRow("65x300x301, columns, odd") << 65 << 300 << 301;
        QTest::newRow("300x257x129, rows") << 300 << 257 << 129;
        QTest::newRow("257x64x1, rows, one column") << 257 << 64 << 1;
    }

    void matchesOneProduct() {
        QFETCH(int, rows);
        QFETCH(int, inner);
        QFETCH(int, columns);
        std::srand(7);
        const MatrixF x = MatrixF::Random(rows, inner), wq = MatrixF::Random(inner, columns),
                      wv = MatrixF::Random(inner, columns);
        const VectorF bq = VectorF::Random(columns), bv = VectorF::Random(columns);
        MatrixF q, v;
        const std::vector<bool> finite =
            ae::affineBatch<MatrixF, VectorF>({{x, wq, &bq, q}, {x, wv, nullptr, v}});
        QCOMPARE(finite.size(), size_t(2));
        QVERIFY(finite[0] && finite[1]);
        const MatrixF expectedQ = (x * wq).rowwise() + bq.transpose();
        const MatrixF expectedV = x * wv;
        QCOMPARE(q.rows(), Eigen::Index(rows));
        QCOMPARE(q.cols(), Eigen::Index(columns));
        QCOMPARE(v.rows(), Eigen::Index(rows));
        QCOMPARE(v.cols(), Eigen::Index(columns));
        const double tolerance = (inner + 2) * std::numeric_limits<float>::epsilon();
        QVERIFY(worstRelativeError(q, expectedQ, x, wq, bq) <= tolerance);
        QVERIFY(worstRelativeError(v, expectedV, x, wv, VectorF::Zero(columns)) <= tolerance);

        // The single-product helpers give the same as the batch.
        MatrixF single;
        QVERIFY(ae::affine(x, wq, bq, single));
        QCOMPARE(single, q);
        QVERIFY(ae::product(x, wv, single));
        QCOMPARE(single, v);
    }

    // The flag belongs to the product that overflowed, wherever in its block the value lands.
    void flagsTheProductThatOverflowed_data() {
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("column");
        QTest::addColumn<float>("bad");
        const float inf = std::numeric_limits<float>::infinity();
        const float nan = std::numeric_limits<float>::quiet_NaN();
        for (int rows : {64, 300}) {
            for (int column : {0, 383, 384, 767}) {
                const QByteArray name =
                    QByteArray::number(rows) + " rows, column " + QByteArray::number(column);
                QTest::newRow((name + ", +inf").constData()) << rows << column << inf;
                QTest::newRow((name + ", -inf").constData()) << rows << column << -inf;
                QTest::newRow((name + ", NaN").constData()) << rows << column << nan;
            }
        }
    }

    void flagsTheProductThatOverflowed() {
        QFETCH(int, rows);
        QFETCH(int, column);
        QFETCH(float, bad);
        const int d = 768;
        const MatrixF x = MatrixF::Constant(rows, d, 0.5f);
        const MatrixF w = MatrixF::Constant(d, d, 0.25f);
        MatrixF broken = w;
        broken(d / 2, column) = bad;  // spoils that column of every output row
        const VectorF b = VectorF::Zero(d);
        MatrixF q, k, v;
        std::vector<bool> finite =
            ae::affineBatch<MatrixF, VectorF>({{x, w, &b, q}, {x, broken, &b, k}, {x, w, &b, v}});
        QVERIFY(finite[0]);
        QVERIFY(!finite[1]);
        QVERIFY(finite[2]);
        QVERIFY(!std::isfinite(k(rows - 1, column)));

        // Through the bias instead of the weights.
        VectorF brokenBias = b;
        brokenBias(column) = bad;
        finite = ae::affineBatch<MatrixF, VectorF>({{x, w, &brokenBias, q}, {x, w, &b, v}});
        QVERIFY(!finite[0]);
        QVERIFY(finite[1]);
    }

    // Values that are large, tiny or zero are finite; the check must not call them otherwise.
    void finiteExtremesAreFinite() {
        const float max = std::numeric_limits<float>::max();
        const float denormal = std::numeric_limits<float>::denorm_min();
        MatrixF m(3, 5);
        m << max, -max, denormal, -denormal, 0.0f,  //
            -0.0f, 1e-30f, 1e30f, 1.0f, -1.0f,      //
            max, max, max, max, max;
        QVERIFY(ae::allFiniteFast(m));
        QVERIFY(ae::allFiniteFast(m.middleCols(1, 3)));
        QVERIFY(ae::allFiniteFast(m.row(2)));
        const MatrixD big = MatrixD::Constant(4, 9, std::numeric_limits<double>::max());
        QVERIFY(ae::allFiniteFast(big.middleCols(2, 5)));
    }

    // Every position of a strided block, so the vectorised sum's tail is covered too.
    void anyNonFiniteValueIsFound() {
        const float inf = std::numeric_limits<float>::infinity();
        const float nan = std::numeric_limits<float>::quiet_NaN();
        for (float bad : {inf, -inf, nan}) {
            for (int i = 0; i < 5; ++i) {
                for (int j = 0; j < 37; ++j) {
                    MatrixF m = MatrixF::Constant(5, 41, 2.0f);
                    m(i, 2 + j) = bad;
                    if (ae::allFiniteFast(m.middleCols(2, 37))) {
                        QFAIL(qPrintable(QString("missed %1 at (%2, %3)").arg(bad).arg(i).arg(j)));
                    }
                    // Outside the bad value's columns the block is finite.
                    QVERIFY(ae::allFiniteFast(m.middleCols(0, 2)));
                    QVERIFY(ae::allFiniteFast(m.middleCols(39, 2)));
                }
            }
        }
    }
};

QTEST_APPLESS_MAIN(TestParallelProduct)
#include "test_parallel_product.moc"
