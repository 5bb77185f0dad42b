// Relative-position buckets (core/model/relative_buckets.h) against the reference's
// encoder_families.mpnet_bucket (torch, float32 logs) on every relative position from −4096 to
// 4096 (tests/data/models/relative-buckets.json), and T5's one-directional form by its
// definition.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "core/model/relative_buckets.h"

using ae::model::relativePositionBucket;

class TestRelativeBuckets : public QObject {
    Q_OBJECT
private slots:
    void bidirectionalMatchesTheReference() {
        QFile file(QStringLiteral(AE_TEST_DATA_DIR "/models/relative-buckets.json"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QJsonObject o = QJsonDocument::fromJson(file.readAll()).object();
        const long long from = o.value("relative_from").toInteger();
        const QJsonArray expected = o.value("bucket").toArray();
        QCOMPARE(expected.size(), 8193);
        int mismatches = 0;
        QString first;
        for (int k = 0; k < expected.size(); ++k) {
            const long long relative = from + k;
            const int got = relativePositionBucket(relative, 32, 128, true);
            if (got != expected[k].toInt()) {
                if (mismatches++ == 0)
                    first = QStringLiteral("relative %1: %2, expected %3")
                                .arg(relative)
                                .arg(got)
                                .arg(expected[k].toInt());
            }
        }
        QVERIFY2(mismatches == 0, qPrintable(QString::number(mismatches) + " differ; " + first));
    }

    // DeBERTa's log buckets against encoder_families.log_bucket (torch, float32) for every
    // relative position from −4096 to 4096, at deberta-v3's 256 / 512 and two small settings
    // (tests/data/models/deberta-log-buckets.json).
    void logBucketsMatchTheReference() {
        QFile file(QStringLiteral(AE_TEST_DATA_DIR "/models/deberta-log-buckets.json"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QJsonObject o = QJsonDocument::fromJson(file.readAll()).object();
        const long long from = o.value("relative_from").toInteger();
        const QJsonArray cases = o.value("cases").toArray();
        QCOMPARE(cases.size(), 3);
        for (const QJsonValue& value : cases) {
            const QJsonObject c = value.toObject();
            const int buckets = c.value("position_buckets").toInt();
            const int maxPosition = c.value("max_relative_positions").toInt();
            const QJsonArray expected = c.value("position").toArray();
            QCOMPARE(expected.size(), 8193);
            for (int k = 0; k < expected.size(); ++k) {
                const long long relative = from + k;
                const long long got = ae::model::logBucketPosition(relative, buckets, maxPosition);
                if (got != expected[k].toInteger())
                    QFAIL(qPrintable(
                        QStringLiteral("buckets %1, max %2, relative %3: %4, expected %5")
                            .arg(buckets)
                            .arg(maxPosition)
                            .arg(relative)
                            .arg(got)
                            .arg(expected[k].toInteger())));
            }
        }
        QCOMPARE(ae::model::logBucketPosition(-3, 8, 32), -3LL);
        QCOMPARE(ae::model::logBucketPosition(4, 8, 32), 4LL);
    }

    // The exact and log-spaced ranges by hand: distances 0..7 are their own buckets, a later key
    // adds 16, 8 is the first log bucket, and 128 and beyond share the last.
    void bucketsByHand() {
        QCOMPARE(relativePositionBucket(0, 32, 128, true), 0);
        QCOMPARE(relativePositionBucket(-7, 32, 128, true), 7);
        QCOMPARE(relativePositionBucket(7, 32, 128, true), 23);
        QCOMPARE(relativePositionBucket(-8, 32, 128, true), 8);
        QCOMPARE(relativePositionBucket(-128, 32, 128, true), 15);
        QCOMPARE(relativePositionBucket(100000, 32, 128, true), 31);
        // One direction (T5's decoder): later keys all fall in bucket 0.
        QCOMPARE(relativePositionBucket(5, 32, 128, false), 0);
        QCOMPARE(relativePositionBucket(-5, 32, 128, false), 5);
        QCOMPARE(relativePositionBucket(-100000, 32, 128, false), 31);
    }
};

QTEST_GUILESS_MAIN(TestRelativeBuckets)
#include "test_relative_buckets.moc"
