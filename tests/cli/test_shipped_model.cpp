// The trained model that ships with the app (resources/models/tiny-induction, made by
// scripts/train-builtin-model.sh): `attention-explorer heads builtin:tiny-induction
// --induction-random 20 --json`, the very command docs/models.md quotes, finds a previous-token
// head (score ≥ 0.8) and an induction head (score ≥ 0.5) on the shipped files, and they are the
// heads its about.json names, best of all heads at what it names them for. And the circuit is
// real: with the previous-token head switched off (`run --ablate`) the induction head's weight on
// the stripe of the repeated sequence falls to less than half.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "support/run_binary.h"

using namespace ae;

namespace {

const QString kModel = QStringLiteral("builtin:tiny-induction");

QJsonObject readJson(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

std::vector<QJsonObject> jsonLines(const QByteArray& out) {
    std::vector<QJsonObject> objects;
    for (const QByteArray& line : out.split('\n')) {
        if (line.isEmpty()) continue;
        const QJsonDocument document = QJsonDocument::fromJson(line);
        if (!document.isObject()) return {};
        objects.push_back(document.object());
    }
    return objects;
}

// The weights of (layer, head) from a `run` result file: T rows of T.
std::vector<std::vector<double>> headWeights(const QJsonObject& result, int layer, int head) {
    std::vector<std::vector<double>> rows;
    const QJsonArray layers = result.value("layers").toArray();
    if (layer >= layers.size()) return rows;
    const QJsonArray heads = layers[layer].toObject().value("heads").toArray();
    if (head >= heads.size()) return rows;
    for (const QJsonValue& row : heads[head].toObject().value("weights").toArray()) {
        std::vector<double> values;
        for (const QJsonValue& v : row.toArray())
            values.push_back(v.toDouble());
        rows.push_back(values);
    }
    return rows;
}

}  // namespace

class TestShippedModel : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void headsFindsTheHeadsAboutJsonNames();
    void switchingThePreviousTokenHeadOffFadesTheInductionHead();

private:
    QJsonObject about_;
    int previousLayer_ = -1, previousHead_ = -1, inductionLayer_ = -1, inductionHead_ = -1;
};

void TestShippedModel::initTestCase() {
    // The files in the source tree, not a copy the build made.
    qputenv("AE_MODELS_PATH", QByteArray(AE_SHIPPED_MODELS_DIR));
    about_ = readJson(QStringLiteral(AE_SHIPPED_MODELS_DIR "/tiny-induction/about.json"));
    QVERIFY2(!about_.isEmpty(), "resources/models/tiny-induction/about.json is missing");
    const QJsonObject tour = about_.value("tour").toObject();
    const QJsonArray previous = tour.value("previous_token").toArray();
    const QJsonArray induction = tour.value("induction").toArray();
    QCOMPARE(previous.size(), 2);
    QCOMPARE(induction.size(), 2);
    previousLayer_ = previous[0].toInt();
    previousHead_ = previous[1].toInt();
    inductionLayer_ = induction[0].toInt();
    inductionHead_ = induction[1].toInt();
    // The head the model opens on is the induction head.
    QCOMPARE(about_.value("layer").toInt(), inductionLayer_);
    QCOMPARE(about_.value("head").toInt(), inductionHead_);
}

void TestShippedModel::headsFindsTheHeadsAboutJsonNames() {
    const test::BinaryRun r =
        test::runBinary({"heads", kModel, "--induction-random", "20", "--json"});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const std::vector<QJsonObject> heads = jsonLines(r.out);
    QVERIFY(!heads.empty());
    double bestPrevious = -1, bestInduction = -1, previous = -1, induction = -1;
    for (const QJsonObject& h : heads) {
        const int layer = h.value("layer").toInt(), head = h.value("head").toInt();
        const double p = h.value("previous_token").toDouble();
        const double i = h.value("induction").toDouble();
        bestPrevious = std::max(bestPrevious, p);
        bestInduction = std::max(bestInduction, i);
        if (layer == previousLayer_ && head == previousHead_) previous = p;
        if (layer == inductionLayer_ && head == inductionHead_) induction = i;
    }
    qInfo("previous-token head %d.%d: %.4f; induction head %d.%d: %.4f", previousLayer_,
          previousHead_, previous, inductionLayer_, inductionHead_, induction);
    QVERIFY2(previous >= 0.8, qPrintable(QString::number(previous)));
    QVERIFY2(induction >= 0.5, qPrintable(QString::number(induction)));
    QCOMPARE(previous, bestPrevious);
    QCOMPARE(induction, bestInduction);
    // The gallery's note quotes these very scores, naming the measure and the text.
    const QString note = about_.value("note").toString();
    for (const QString& quoted :
         {QStringLiteral("previous-token score %1 on 20 random tokens repeated")
              .arg(previous, 0, 'f', 2),
          QStringLiteral("induction score %1 on the same text").arg(induction, 0, 'f', 2)})
        QVERIFY2(note.contains(quoted), qPrintable(quoted));
}

void TestShippedModel::switchingThePreviousTokenHeadOffFadesTheInductionHead() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QStringList ids;
    for (const QJsonValue& v : about_.value("ids").toArray())
        ids << QString::number(v.toInteger());
    QVERIFY(ids.size() >= 4 && ids.size() % 2 == 0);
    const int period = static_cast<int>(ids.size() / 2);
    QCOMPARE(ids.mid(0, period), ids.mid(period));  // the default ids are a period repeated
    const QString on = dir.filePath(QStringLiteral("on.json"));
    const QString off = dir.filePath(QStringLiteral("off.json"));
    test::BinaryRun r = test::runBinary({"run", kModel, "--ids", ids.join(','), "-o", on});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    r = test::runBinary({"run", kModel, "--ids", ids.join(','), "--ablate",
                         QStringLiteral("%1.%2").arg(previousLayer_).arg(previousHead_), "-o",
                         off});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const auto stripe = [&](const QString& file) {
        const std::vector<std::vector<double>> w =
            headWeights(readJson(file), inductionLayer_, inductionHead_);
        if (static_cast<int>(w.size()) != 2 * period) return -1.0;
        double sum = 0;
        for (int i = period; i < 2 * period; ++i)
            sum += w[i][i - period + 1];
        return sum / period;
    };
    const double before = stripe(on), after = stripe(off);
    qInfo("induction stripe: %.4f with every head, %.4f with %d.%d off", before, after,
          previousLayer_, previousHead_);
    QVERIFY2(before >= 0.5, qPrintable(QString::number(before)));
    QVERIFY2(after >= 0 && after < 0.5 * before, qPrintable(QString::number(after)));
    // The note quotes this measure by name, on this text.
    const QString quoted =
        QStringLiteral("its mean weight in the second copy of the opening text, %1 to %2")
            .arg(before, 0, 'f', 2)
            .arg(after, 0, 'f', 2);
    QVERIFY2(about_.value("note").toString().contains(quoted), qPrintable(quoted));
}

QTEST_GUILESS_MAIN(TestShippedModel)
#include "test_shipped_model.moc"
