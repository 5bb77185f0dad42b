// builtin:NAME in place of MODEL_DIR (io/model/builtin_models.h): `run`, `heads`, `scene`, `render`
// and `tokenize` open the built-in model of that name, with the same results as its folder; an
// unknown name is refused with exit status 2 and one line listing the built-in models; and the
// installed binary finds the models installed under PREFIX/share/attention-explorer/models.
//
// The built-in model here is a test one: a copy of the golden gpt2-tiny (tests/data/models) in a
// temporary folder that AE_MODELS_PATH points at, never a model of resources/models.
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "support/model_checks.h"
#include "support/run_binary.h"

using namespace ae;

namespace {

const char* const kName = "test-tiny";

void copyFolder(const QString& from, const QString& to) {
    QDir().mkpath(to);
    for (const QString& name : QDir(from).entryList(QDir::Files))
        QFile::copy(QDir(from).filePath(name), QDir(to).filePath(name));
}

QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool oneLine(const QByteArray& text) {
    return text.endsWith('\n') && text.count('\n') == 1;
}

}  // namespace

class TestBuiltinCommands : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void runOpensTheBuiltInModel();
    void headsOpensTheBuiltInModel();
    void sceneAndRenderOpenTheBuiltInModel();
    void unknownNameIsRefused_data();
    void unknownNameIsRefused();
    void installedBinaryFindsInstalledModels();

private:
    QTemporaryDir dir_;
    QString folder_;  // the test built-in model's folder
};

void TestBuiltinCommands::initTestCase() {
    QVERIFY(dir_.isValid());
    folder_ = dir_.filePath(QStringLiteral("models/") + kName);
    copyFolder(testing::goldenModelDir(QStringLiteral("gpt2-tiny")), folder_);
    qputenv("AE_MODELS_PATH", dir_.filePath(QStringLiteral("models")).toLocal8Bit());
}

void TestBuiltinCommands::runOpensTheBuiltInModel() {
    const QString byName = dir_.filePath(QStringLiteral("by-name.json"));
    const QString byFolder = dir_.filePath(QStringLiteral("by-folder.json"));
    const auto named = test::runBinary(
        {"run", QStringLiteral("builtin:") + kName, "--ids", "3,1,4,1,5", "-o", byName});
    QVERIFY2(named.exitCode == 0, named.err.constData());
    const auto direct = test::runBinary({"run", folder_, "--ids", "3,1,4,1,5", "-o", byFolder});
    QVERIFY2(direct.exitCode == 0, direct.err.constData());
    QVERIFY(!readAll(byName).isEmpty());
    QCOMPARE(readAll(byName), readAll(byFolder));
}

void TestBuiltinCommands::headsOpensTheBuiltInModel() {
    const auto named = test::runBinary(
        {"heads", QStringLiteral("builtin:") + kName, "--ids", "3,1,4,1,5,9,2", "--json"});
    QVERIFY2(named.exitCode == 0, named.err.constData());
    const auto direct = test::runBinary({"heads", folder_, "--ids", "3,1,4,1,5,9,2", "--json"});
    QVERIFY2(direct.exitCode == 0, direct.err.constData());
    // gpt2-tiny: 2 layers of 4 heads, one line a head.
    QCOMPARE(named.out.count('\n'), 8);
    QCOMPARE(named.out, direct.out);
}

void TestBuiltinCommands::sceneAndRenderOpenTheBuiltInModel() {
    const QString byName = dir_.filePath(QStringLiteral("layer-by-name.json"));
    const QString byFolder = dir_.filePath(QStringLiteral("layer-by-folder.json"));
    const auto named = test::runBinary({"scene", QStringLiteral("builtin:") + kName, "--ids",
                                        "3,1,4", "--layer", "1", "-o", byName});
    QVERIFY2(named.exitCode == 0, named.err.constData());
    const auto direct =
        test::runBinary({"scene", folder_, "--ids", "3,1,4", "--layer", "1", "-o", byFolder});
    QVERIFY2(direct.exitCode == 0, direct.err.constData());
    QCOMPARE(readAll(byName), readAll(byFolder));

    const QString png = dir_.filePath(QStringLiteral("model.png"));
    const auto render = test::runBinary({"render", QStringLiteral("builtin:") + kName, "--ids",
                                         "3,1,4", "--view", "model", "-o", png});
    QVERIFY2(render.exitCode == 0, render.err.constData());
    QVERIFY(readAll(png).startsWith("\x89PNG"));
}

void TestBuiltinCommands::unknownNameIsRefused_data() {
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("command");
    const QString out = QDir::tempPath() + QStringLiteral("/ae-never-written.json");
    QTest::newRow("run") << QStringList{"run", "builtin:nope", "--ids", "1", "-o", out}
                         << QStringLiteral("run");
    QTest::newRow("heads") << QStringList{"heads", "builtin:nope", "--ids", "1"}
                           << QStringLiteral("heads");
    QTest::newRow("scene") << QStringList{"scene", "builtin:nope", "--ids", "1", "--layer",
                                          "0",     "-o",           out}
                           << QStringLiteral("scene");
    QTest::newRow("render") << QStringList{"render", "builtin:nope", "--ids", "1",
                                           "--view", "model",        "-o",    out + ".png"}
                            << QStringLiteral("render");
    QTest::newRow("tokenize") << QStringList{"tokenize", "builtin:nope", "--text", "a"}
                              << QStringLiteral("tokenize");
}

void TestBuiltinCommands::unknownNameIsRefused() {
    QFETCH(QStringList, arguments);
    QFETCH(QString, command);
    const auto r = test::runBinary(arguments);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(oneLine(r.err), r.err.constData());
    const QString line = QString::fromUtf8(r.err).trimmed();
    // The names listed are every built-in model the binary sees: the test one, and whatever
    // resources/models ships (copied beside the binary).
    QVERIFY2(line.startsWith(command + QStringLiteral(": unknown built-in model \"nope\" "
                                                      "(built-in models: ")),
             qPrintable(line));
    QVERIFY2(line.contains(QLatin1String(kName)), qPrintable(line));
    QVERIFY(r.out.isEmpty());
    QVERIFY(!QFileInfo::exists(QDir::tempPath() + QStringLiteral("/ae-never-written.json")));
}

void TestBuiltinCommands::installedBinaryFindsInstalledModels() {
    // cmake --install of this build into a temporary prefix, then a model put where the
    // package puts them: the installed binary finds it by name with AE_MODELS_PATH unset.
    QTemporaryDir prefix;
    QProcess install;
    install.setProgram(QStringLiteral(AE_CMAKE_COMMAND));
    install.setArguments({"--install", QStringLiteral(AE_BUILD_DIR), "--prefix", prefix.path()});
    install.setProcessChannelMode(QProcess::MergedChannels);
    install.start();
    QVERIFY(install.waitForFinished(120000));
    QVERIFY2(install.exitCode() == 0, install.readAll().constData());
    const QString binary = prefix.filePath(QStringLiteral("bin/attention-explorer"));
    QVERIFY(QFileInfo(binary).isExecutable());
    const QString installed = prefix.filePath(QStringLiteral("share/attention-explorer/models"));
    // Only what resources/models ships is installed (never a test model).
    QVERIFY(!QFileInfo::exists(installed + QLatin1Char('/') + kName));
    copyFolder(folder_, installed + QLatin1Char('/') + kName);

    QProcess heads;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.remove(QStringLiteral("AE_MODELS_PATH"));
    heads.setProcessEnvironment(environment);
    heads.start(binary, {"heads", QStringLiteral("builtin:") + kName, "--ids", "3,1,4", "--json"});
    QVERIFY(heads.waitForFinished(120000));
    QVERIFY2(heads.exitCode() == 0, heads.readAllStandardError().constData());
    QCOMPARE(heads.readAllStandardOutput().count('\n'), 8);

    // Without it there, the name is unknown to the installed binary.
    QVERIFY(QDir(installed + QLatin1Char('/') + kName).removeRecursively());
    heads.start(binary, {"heads", QStringLiteral("builtin:") + kName, "--ids", "3,1,4"});
    QVERIFY(heads.waitForFinished(120000));
    QCOMPARE(heads.exitCode(), 2);
    QVERIFY(heads.readAllStandardError().startsWith("heads: unknown built-in model"));
}

QTEST_GUILESS_MAIN(TestBuiltinCommands)
#include "test_builtin_commands.moc"
