// The "why √d_k" figures come from the engine and behave as the argument says: the raw scores'
// variance grows like d_k, the scaled scores' stays near 1, and unscaled softmax saturates.
#include <QtTest>

#include "core/scaling_study.h"

class ScalingStudyTest : public QObject {
    Q_OBJECT
private slots:
    void varianceGrowsLikeDkAndScalingUndoesIt() {
        const std::vector<int> dks = {1, 4, 16, 64, 256, 1024};
        const auto points = ae::scalingStudy(dks, 16, 16, 7);
        QCOMPARE(points.size(), dks.size());
        for (const ae::ScalingPoint& p : points) {
            // 4096 products per d_k: the sample variance of q·k / d_k has a standard error of
            // about sqrt(2/4096) ≈ 2.2% for large d_k (more for d_k = 1, where q·k is
            // heavy-tailed), so ±15% is several standard errors wide yet far tighter than the
            // growth checked.
            const QString where = QStringLiteral("d_k = %1: raw %2, scaled %3")
                                      .arg(p.dk)
                                      .arg(p.rawVariance)
                                      .arg(p.scaledVariance);
            QVERIFY2(std::abs(p.rawVariance / p.dk - 1.0) < 0.15, qPrintable(where));
            QVERIFY2(std::abs(p.scaledVariance - 1.0) < 0.15, qPrintable(where));
        }
        // Without scaling, large d_k makes the softmax nearly one-hot; with it, it does not.
        const ae::ScalingPoint& widest = points.back();
        QVERIFY2(widest.rawMaxWeight > 0.9, qPrintable(QString::number(widest.rawMaxWeight)));
        QVERIFY2(widest.scaledMaxWeight < 0.6, qPrintable(QString::number(widest.scaledMaxWeight)));
        QVERIFY(widest.rawEntropy < widest.scaledEntropy);
        QVERIFY(points.front().rawEntropy > points.back().rawEntropy);
    }

    void sameSeedSameFigures() {
        const auto a = ae::scalingStudy({8, 32}, 8, 4, 1);
        const auto b = ae::scalingStudy({8, 32}, 8, 4, 1);
        QCOMPARE(a[1].rawVariance, b[1].rawVariance);
        QCOMPARE(a[0].scaledEntropy, b[0].scaledEntropy);
    }
};

QTEST_GUILESS_MAIN(ScalingStudyTest)
#include "test_scaling_study.moc"
