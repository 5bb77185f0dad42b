// `attention-explorer analyse` end to end: each mode writes the library's result in the
// reference's format (the golden analyses, within the reference's tolerance, in double), with
// the reference's arguments; bad arguments and analyses a family does not define exit with 2 and
// one line.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

#include "support/model_checks.h"
#include "support/run_binary.h"

using namespace ae::testing;
using ae::test::runBinary;

namespace {

// The worst |a − b| / (1 + |b|) over the numbers of two results of the same shape; infinity when
// their structure or an integer differs.
double worstDifference(const QJsonValue& got, const QJsonValue& want) {
    if (want.isObject() || want.isArray()) {
        const bool object = want.isObject();
        if (object != got.isObject() || want.isArray() != got.isArray()) return INFINITY;
        double worst = 0;
        if (object) {
            const QJsonObject w = want.toObject(), g = got.toObject();
            for (auto it = w.begin(); it != w.end(); ++it)
                worst = std::max(worst, g.contains(it.key()) ? worstDifference(g[it.key()], *it)
                                                             : double(INFINITY));
            return worst;
        }
        const QJsonArray w = want.toArray(), g = got.toArray();
        if (w.size() != g.size()) return INFINITY;
        for (qsizetype i = 0; i < w.size(); ++i)
            worst = std::max(worst, worstDifference(g[i], w[i]));
        return worst;
    }
    if (want.isDouble() && got.isDouble())
        return std::abs(got.toDouble() - want.toDouble()) / (1 + std::abs(want.toDouble()));
    return got == want ? 0.0 : INFINITY;
}

}  // namespace

class TestAnalyseCommand : public QObject {
    Q_OBJECT

private slots:
    void writesTheGoldenAnalyses_data() {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<QStringList>("arguments");
        const QString ids = "7,41,3,59,22,15,36";
        QTest::newRow("lens") << "lens" << QStringList{"--ids", ids, "--target", "5,9"};
        QTest::newRow("dla") << "dla" << QStringList{"--ids", ids, "--target", "5", "--foil", "9"};
        QTest::newRow("value_norms") << "value_norms" << QStringList{"--ids", ids};
        QTest::newRow("patch") << "patch" << QStringList{"--ids",         ids,
                                                         "--corrupt-ids", "7,41,3,12,22,15,36",
                                                         "--target",      "5",
                                                         "--foil",        "9"};
        QTest::newRow("composition") << "composition" << QStringList{};
    }
    void writesTheGoldenAnalyses() {
        QFETCH(QString, mode);
        QFETCH(QStringList, arguments);
        QTemporaryDir dir;
        const QString out = dir.filePath("out.json");
        const auto r = runBinary(QStringList{"analyse", mode, goldenModelDir("gemma2-tiny")} +
                                 arguments + QStringList{"--double", "-o", out});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonObject want = readJsonFile(
            QStringLiteral(AE_TEST_DATA_DIR "/analyses/gemma2-tiny/%1.json").arg(mode));
        const double worst = worstDifference(readJsonFile(out), want);
        QVERIFY2(worst <= 1e-4, qPrintable(QString::number(worst)));
    }

    // The built-in model that learned induction: its previous-token head (layer 0 head 1)
    // K-composes with both induction heads (layer 1 heads 2 and 3) more than any other layer-0
    // head does, as Elhage et al. describe the circuit. And texts go through its tokenizer.
    void inductionCircuitComposes() {
        QTemporaryDir dir;
        const QString out = dir.filePath("composition.json");
        auto r = runBinary({"analyse", "composition", "builtin:tiny-induction", "-o", out});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonArray k = readJsonFile(out).value("k").toArray();
        for (int induction : {2, 3}) {
            int best = -1;
            double most = -1;
            for (int h = 0; h < 4; ++h) {
                const double score = k[0].toArray()[h].toArray()[1].toArray()[induction].toDouble();
                if (score > most) {
                    most = score;
                    best = h;
                }
            }
            QCOMPARE(best, 1);
        }
        const QString lens = dir.filePath("lens.json");
        r = runBinary(
            {"analyse", "lens", "builtin:tiny-induction", "--text", "a b c a b", "-o", lens});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY(!readJsonFile(lens).value("tokens").toArray().isEmpty());
        r = runBinary({"analyse", "patch", "builtin:tiny-induction", "--text", "a b c a b",
                       "--corrupt-text", "a b c a", "--target", "5", "-o",
                       dir.filePath("patch.json")});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("differ in length"), r.err.constData());
    }

    void refusals_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("message");
        const QString gpt2 = goldenModelDir("gpt2-tiny");
        QTest::newRow("mode")
            << QStringList{"analyse", "lenz", gpt2, "--ids", "1", "-o", "x"}
            << "analyse: MODE must be lens, dla, patch, value_norms or composition";
        QTest::newRow("no ids") << QStringList{"analyse", "lens", gpt2, "-o", "x"}
                                << "analyse: give --ids 1,2,3 or --text TEXT";
        QTest::newRow("dla target")
            << QStringList{"analyse", "dla", gpt2, "--ids", "1,2", "-o", "x"}
            << "analyse: dla needs one --target token";
        QTest::newRow("foil for lens")
            << QStringList{"analyse", "lens", gpt2, "--ids", "1,2", "--foil", "3", "-o", "x"}
            << "analyse: --foil is for dla and patch";
        QTest::newRow("patch corrupt")
            << QStringList{"analyse", "patch", gpt2, "--ids", "1,2", "--target", "5", "-o", "x"}
            << "analyse: patch needs --corrupt-ids 1,2,3 or --corrupt-text TEXT";
        QTest::newRow("patch equal")
            << QStringList{"analyse", "patch",    gpt2, "--ids", "1,2", "--corrupt-ids",
                           "1,2",     "--target", "5",  "-o",    "x"}
            << "the clean and corrupted metrics are equal";
        QTest::newRow("composition ids")
            << QStringList{"analyse", "composition", gpt2, "--ids", "1", "-o", "x"}
            << "analyse: composition reads the weights alone";
        QTest::newRow("position") << QStringList{"analyse", "dla",      gpt2, "--ids",
                                                 "1,2",     "--target", "5",  "--position",
                                                 "2",       "-o",       "x"}
                                  << "position 2 is outside the 2 tokens";
        QTest::newRow("target") << QStringList{"analyse",  "lens", gpt2, "--ids", "1,2",
                                               "--target", "64",   "-o", "x"}
                                << "target 64 is not a token id in [0, 64)";
        QTest::newRow("encoder")
            << QStringList{"analyse", "lens", goldenModelDir("roberta-tiny"), "--ids", "5,6",
                           "-o",      "x"}
            << "lens is not defined for roberta: it reads a causal LM head's logits";
    }
    void refusals() {
        QFETCH(QStringList, arguments);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const auto r = runBinary(arguments, {dir.path()});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(QString::fromUtf8(r.err).contains(message), r.err.constData());
        QCOMPARE(r.err.count('\n'), 1);
        QVERIFY(!QFileInfo::exists(dir.filePath("x")));
    }
};

QTEST_GUILESS_MAIN(TestAnalyseCommand)
#include "test_analyse_command.moc"
