// `export` through the real binary: a process killed while writing leaves the old file, a bad
// scene is refused with the message the window shows, the window's matrix export writes the
// command's bytes, and overflow is refused with exit status 2.

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QProcess>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include "document/attention_document.h"
#include "io/scene/scene_file.h"
#include "support/extreme_scenes.h"
#include "support/file_bytes.h"
#include "support/run_binary.h"
#include "ui/files/file_actions.h"
#include "ui/window/main_window.h"

using namespace ae;
using namespace ae::ui;

namespace {

using Run = ae::test::BinaryRun;
using ae::test::runBinary;

using ae::test::readAll;
using ae::test::writeAll;

}  // namespace

class TestExportCommand : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void interruptedSaveKeepsTheOldFile();
    void badSceneRefusedWithTheWindowsMessage();
    void exportMatricesMatchTheExportCommand();
    void exportRefusesOverflowWithStatus2();

private:
    QTemporaryDir dir_;
};

void TestExportCommand::initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
    QVERIFY(dir_.isValid());
    QVERIFY2(QFile::exists(QStringLiteral(AE_BINARY)), AE_BINARY);
}

void TestExportCommand::interruptedSaveKeepsTheOldFile() {
    // A process killed in the middle of writing (SIGXFSZ at 8 KiB of a ~1 MB result) leaves the
    // old file as it was: the writer only ever renames a complete file over it.
    const QString file = dir_.filePath(QStringLiteral("interrupted.json"));
    writeAll(file, "old contents");
    QProcess process;
    process.start(QStringLiteral("/bin/sh"),
                  {"-c", QStringLiteral("ulimit -f 8; exec '%1' export --preset bert-base -o '%2'")
                             .arg(QStringLiteral(AE_BINARY), file)});
    QVERIFY(process.waitForFinished(60000));
    QVERIFY(process.exitStatus() == QProcess::CrashExit || process.exitCode() != 0);
    QCOMPARE(readAll(file), QByteArray("old contents"));
}

// The window refuses this file with the same line (tests/ui/test_sharing,
// badSceneLeavesTheCurrentSceneUntouched).
void TestExportCommand::badSceneRefusedWithTheWindowsMessage() {
    const QString bad = dir_.filePath(QStringLiteral("wide.json"));
    writeAll(bad, R"({"format": "attention-explorer/scene", "version": 1, "tokens": ["a", "b"],
                      "init": {"seed": 1, "d_model": 8}, "heads": 3})");
    const QString expected =
        bad + QStringLiteral(": heads: 3 does not divide the projection width 8");
    const Run run = runBinary({"export", bad, "-o", dir_.filePath("r.json")});
    QCOMPARE(QString::fromUtf8(run.err).trimmed(), expected);
}

void TestExportCommand::exportMatricesMatchTheExportCommand() {
    // The window's scene after File › Open preset.
    MainWindow window;
    window.openPreset(QStringLiteral("default"));
    const Scene scene = window.document()->scene();
    const QString folder = dir_.filePath(QStringLiteral("weights-csv"));
    const QStringList files =
        FileActions::exportMatrices(scene, Stage::Weights, MatrixExportFormat::Csv, folder);
    QCOMPARE(files.size(), 4);
    const QString cli = dir_.filePath(QStringLiteral("cli-csv"));
    QCOMPARE(runBinary({"export", "--preset", "default", "--format", "csv", "-o", cli}).exitCode,
             0);
    for (int h = 0; h < 4; ++h) {
        const QString name = QStringLiteral("head%1_weights.csv").arg(h);
        QCOMPARE(files[h], QDir(folder).filePath(name));
        QCOMPARE(readAll(files[h]), readAll(QDir(cli).filePath(name)));
    }
    QCOMPARE(QDir(folder).entryList(QDir::Files).size(), 4);  // nothing but that stage

    const QString json = dir_.filePath(QStringLiteral("result.json"));
    FileActions::exportMatrices(scene, std::nullopt, MatrixExportFormat::ResultJson, json);
    const QString cliJson = dir_.filePath(QStringLiteral("cli-result.json"));
    QCOMPARE(runBinary({"export", "--preset", "default", "-o", cliJson}).exitCode, 0);
    QCOMPARE(readAll(json), readAll(cliJson));

    const QString npy = dir_.filePath(QStringLiteral("all-npy"));
    const QStringList all =
        FileActions::exportMatrices(scene, std::nullopt, MatrixExportFormat::Npy, npy);
    QVERIFY(all.contains(QDir(npy).filePath(QStringLiteral("concat.npy"))));
    for (const QString& f : all)
        QVERIFY2(QFile::exists(f), qPrintable(f));
}

void TestExportCommand::exportRefusesOverflowWithStatus2() {
    QTemporaryDir dir;
    Scene scene = test::plainScene();
    test::setTarget(scene, test::Target::Embeddings, 1e160, false);
    const QString file = dir.filePath("overflow.scene.json");
    {
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(io::sceneToJson(scene));
    }
    const QString out = dir.filePath("out.json");
    const Run r = runBinary({"export", file, "-o", out});
    QCOMPARE(r.exitCode, 2);
    QCOMPARE(QString::fromUtf8(r.err).trimmed(), file + ": scores: " + test::kOverflow);
    QVERIFY(!QFileInfo::exists(out));

    // 1e30 is finite in double: exported, every number finite.
    test::setTarget(scene, test::Target::Embeddings, 1e30, true);
    test::setTarget(scene, test::Target::Value, 1e30, false);
    {
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(io::sceneToJson(scene));
    }
    const Run ok = runBinary({"export", file, "-o", out});
    QVERIFY2(ok.exitCode == 0, ok.err.constData());
    QFile result(out);
    QVERIFY(result.open(QIODevice::ReadOnly));
    const QByteArray text = result.readAll();
    QVERIFY(!QJsonDocument::fromJson(text).isNull());  // JSON has no inf or NaN to hide
    QVERIFY(!text.contains("inf") && !text.contains("nan"));
}

QTEST_MAIN(TestExportCommand)
#include "test_export_command.moc"
