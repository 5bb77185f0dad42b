// `attention-explorer train --model`: the folder it writes is one `heads` and `run` accept (and
// `run` gives the logits the saved weights give in process); bad options are refused with one
// line and exit status 2; `train` without --model is still the one-layer trainer.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "core/model/model.h"
#include "io/model/model_folder.h"
#include "support/run_binary.h"

using ae::test::BinaryRun;
using ae::test::runBinary;

namespace {
QString describe(const BinaryRun& r) {
    return QStringLiteral("exit %1\nstdout: %2\nstderr: %3")
        .arg(r.exitCode)
        .arg(QString::fromUtf8(r.out), QString::fromUtf8(r.err));
}
}  // namespace

class TestTrainModel : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    void writesAFolderThatHeadsAndRunAccept_data() {
        QTest::addColumn<QStringList>("options");
        QTest::newRow("llama, attention only")
            << QStringList{"--family", "llama", "--previous-token-every", "2"};
        QTest::newRow("gpt2 (learned positions), mlp")
            << QStringList{"--positions", "learned", "--mlp"};
    }
    void writesAFolderThatHeadsAndRunAccept() {
        QFETCH(QStringList, options);
        const QString folder = dir_.filePath(QString::number(qHash(options.join(' '))));
        const BinaryRun train = runBinary(
            QStringList{"train", "--model", "2", "--heads", "2", "--d-model", "16", "--length",
                        "40", "--steps", "4", "--batch", "2", "--seed", "3", "-o", folder} +
            options);
        QVERIFY2(train.exitCode == 0, qPrintable(describe(train)));
        QVERIFY(train.out.contains("step 4  loss "));
        QVERIFY(train.out.contains("previous-token head "));
        QVERIFY(train.out.contains("induction head "));
        QVERIFY(train.out.contains("wrote " + folder.toUtf8()));
        for (const char* file : {"config.json", "model.safetensors", "vocab.json", "merges.txt"})
            QVERIFY2(QFile::exists(folder + "/" + file), file);

        const BinaryRun heads = runBinary({"heads", folder, "--induction-random", "20", "--json"});
        QVERIFY2(heads.exitCode == 0, qPrintable(describe(heads)));
        QCOMPARE(heads.out.trimmed().split('\n').size(), 4);  // 2 layers x 2 heads

        // `run` on a text the byte tokenizer reads: its logits are the folder's weights' logits.
        const QString result = folder + "/result.json";
        const BinaryRun run =
            runBinary({"run", folder, "--text", "Alice was", "-o", result, "--double"});
        QVERIFY2(run.exitCode == 0, qPrintable(describe(run)));
        QFile file(result);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QJsonObject json = QJsonDocument::fromJson(file.readAll()).object();
        const QJsonArray ids = json.value("tokens").toArray();
        QCOMPARE(ids.size(), 9);
        QCOMPARE(ids.at(0).toInt(), int('A'));
        const ae::io::ModelFolder model(folder);
        std::vector<long long> tokens;
        for (const QJsonValue& id : ids)
            tokens.push_back(id.toInteger());
        const auto inProcess = ae::model::runModel<double>(model.model(), tokens);
        const QJsonArray logits = json.value("logits").toArray();
        QCOMPARE(logits.size(), 9);
        const QJsonArray last = logits.at(8).toArray();
        QCOMPARE(last.size(), 128);
        for (int v = 0; v < 128; ++v)
            QCOMPARE(last.at(v).toDouble(), inProcess.logits(8, v));
    }

    void refusesBadOptions_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("message");
        const QString out = "-o";
        QTest::newRow("no layers") << QStringList{"--model", "0", out, "x"} << "--model";
        QTest::newRow("heads do not divide d")
            << QStringList{"--model", "2", "--heads", "3", "--d-model", "16", out, "x"}
            << "not a multiple of --heads";
        QTest::newRow("unknown task")
            << QStringList{"--model", "2", "--task", "sorting", out, "x"} << "--task";
        QTest::newRow("family and positions disagree")
            << QStringList{"--model", "2", "--family", "llama", "--positions", "learned", out, "x"}
            << "does not go with";
        QTest::newRow("copy-next on a small vocabulary")
            << QStringList{"--model", "2", "--task", "copy-next", "--vocab", "50", out, "x"}
            << "--vocab";
        QTest::newRow("no output") << QStringList{"--model", "2"} << "-o FOLDER";
        QTest::newRow("too large for memory")
            << QStringList{"--model", "2",       "--d-model", "2048",           "--heads",
                           "16",      "--vocab", "65536",     "--length",       "4096",
                           "--batch", "4096",    "--task",    "previous-token", out,
                           "x"}
            << "more than this machine";
        QTest::newRow("negative mix")
            << QStringList{"--model", "2", "--previous-token-every", "-1", out, "x"}
            << "--previous-token-every";
        QTest::newRow("rope theta on gpt2")
            << QStringList{"--model", "2", "--family", "gpt2", "--rope-theta", "100", out, "x"}
            << "--rope-theta";
        QTest::newRow("bad family")
            << QStringList{"--model", "2", "--family", "bert", out, "x"} << "--family";
    }
    void refusesBadOptions() {
        QFETCH(QStringList, arguments);
        QFETCH(QString, message);
        const BinaryRun r = runBinary(QStringList{"train"} + arguments);
        QVERIFY2(r.exitCode == 2, qPrintable(describe(r)));
        QVERIFY2(r.err.contains(message.toUtf8()), qPrintable(describe(r)));
        QCOMPARE(r.err.trimmed().count('\n'), 0);  // one line
        QVERIFY(!QFile::exists("x"));
    }

    void oneLayerTrainingIsUnchanged() {
        const QString trained = dir_.filePath("journey.trained.json");
        const BinaryRun r = runBinary({"train", "--preset", "journey-causal", "--task",
                                       "previous-token", "--steps", "5", "-o", trained});
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        QVERIFY(QFile::exists(trained));
        QVERIFY(r.out.contains("mean weight on the target keys"));
    }

private:
    QTemporaryDir dir_;
};

QTEST_GUILESS_MAIN(TestTrainModel)
#include "test_train_model.moc"
