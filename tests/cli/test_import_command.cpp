// `import` through the real binary: the scene it writes is the one io::importModel makes for
// the same choices (and so the one File › Import model weights… gives: tests/ui/
// test_model_import_dialog), `--list` shows the tensors, and every refusal is one line with exit
// status 2.
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "io/formats/result_export.h"
#include "io/formats/safetensors.h"
#include "io/model/model_import.h"
#include "io/scene/scene_file.h"
#include "support/model_files.h"
#include "support/run_binary.h"

using namespace ae;
using namespace ae::testing;

namespace {

using Run = ae::test::BinaryRun;
using ae::test::runBinary;

// `import` of layer 0 of a GPT-2-style file, every tensor named: the choices of gpt2Spec().
QStringList gpt2ImportArguments(const QString& file, const QString& rows, const QString& out) {
    return {"import",
            file,
            "--qkv",
            "h.0.attn.c_attn.weight",
            "--qkv-bias",
            "h.0.attn.c_attn.bias",
            "--output",
            "h.0.attn.c_proj.weight",
            "--output-bias",
            "h.0.attn.c_proj.bias",
            "--embeddings",
            "wte.weight",
            "--rows",
            rows,
            "--positions",
            "wpe.weight",
            "--norm-weight",
            "h.0.ln_1.weight",
            "--norm-bias",
            "h.0.ln_1.bias",
            "--heads",
            "2",
            "--causal",
            "-o",
            out};
}

QString json(const Scene& scene) {
    return QString::fromUtf8(io::sceneToJson(scene));
}

}  // namespace

class TestImportCommand : public QObject {
    Q_OBJECT
private:
    QTemporaryDir dir_;
    QString smallFile_, twoLayersFile_;

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        QVERIFY2(QFile::exists(QStringLiteral(AE_BINARY)), AE_BINARY);
        // The same names as the files of the in-process tests: the title names the file.
        QVERIFY(QDir().mkpath(dir_.filePath("small")));
        QVERIFY(QDir().mkpath(dir_.filePath("two-layers")));
        smallFile_ = dir_.filePath("small/gpt2.safetensors");
        twoLayersFile_ = dir_.filePath("two-layers/gpt2.safetensors");
        QVERIFY(writeSafetensors(smallFile_, small_gpt2::gpt2Tensors(small_gpt2::Layer())));
        QVERIFY(writeSafetensors(twoLayersFile_, two_gpt2_layers::gpt2Tensors()));
    }

    void commandLineImportsGpt2() {
        const QString out = dir_.filePath("cli.scene.json");
        const Run run = runBinary(gpt2ImportArguments(smallFile_, "3,1,4,1", out));
        QVERIFY2(run.exitCode == 0, run.err.constData());
        const io::SafetensorsFile f(smallFile_);
        QCOMPARE(QString(io::sceneToJson(io::loadSceneFile(out))), QString(io::sceneToJson([&] {
                     Scene s = io::importModel(io::tensorReader(f), small_gpt2::gpt2Spec());
                     s.title = "Imported from gpt2.safetensors";
                     return s;
                 }())));

        const Run list = runBinary({"import", smallFile_, "--list"});
        QCOMPARE(list.exitCode, 0);
        QVERIFY(QString::fromUtf8(list.out).contains("h.0.attn.c_attn.weight\tF32\t[4, 12]"));
    }

    void commandLineRefusals_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("expected");
        const QStringList base = {"--embeddings", "wte.weight", "--rows", "1,2",
                                  "--heads",      "2",          "-o",     "unused.json"};
        QTest::newRow("wrong shape")
            << (QStringList{"--qkv", "wte.weight"} + base) << "tensor wte.weight: expected [4, 3p]";
        QTest::newRow("missing tensor")
            << (QStringList{"--qkv", "nope"} + base) << "no tensor named nope";
        QTest::newRow("bad layout")
            << (QStringList{"--qkv", "h.0.attn.c_attn.weight", "--layout", "yx"} + base)
            << "--layout: expected xw or linear, got yx";
        QTest::newRow("no projections") << base << "give either --qkv NAME or all of --query";
    }
    void commandLineRefusals() {
        QFETCH(QStringList, arguments);
        QFETCH(QString, expected);
        const Run run = runBinary(QStringList{"import", smallFile_} + arguments);
        const QString err = QString::fromUtf8(run.err);
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(err.contains(expected), qPrintable(err));
        QCOMPARE(err.trimmed().count('\n'), 0);  // one line
    }

    void commandLineRefusesATruncatedFile() {
        QFile source(smallFile_);
        QVERIFY(source.open(QIODevice::ReadOnly));
        const QByteArray bytes = source.readAll();
        const QString file = dir_.filePath("truncated.safetensors");
        QVERIFY(writeBytes(file, bytes.left(bytes.size() - 20)));
        const Run run = runBinary({"import", file, "--list"});
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.contains("past the end of the data"), run.err.constData());
    }

    // The choices File › Import model weights… makes for the two-layer file, on the command line.
    void commandLineImportsTheDialogsChoices() {
        const QString out = dir_.filePath("two-layers.scene.json");
        const Run cli = runBinary(gpt2ImportArguments(twoLayersFile_, "3,1,4,1,5", out));
        QCOMPARE(cli.exitCode, 0);
        const io::SafetensorsFile file(twoLayersFile_);
        const Scene expected = io::importModel(io::tensorReader(file), two_gpt2_layers::gpt2Spec());
        QCOMPARE(json(io::loadSceneFile(out)), json(expected));
    }
};

QTEST_MAIN(TestImportCommand)
#include "test_import_command.moc"
