// Built-in models (io/model/builtin_models.h): where they are looked for (AE_MODELS_PATH, the build
// tree's folder beside the binary, the install tree's share/attention-explorer/models), which of
// two folders of one name wins, the refusal of an unknown name, and about.json. And every model
// that ships in resources/models/: it opens, has a tokenizer, is small, and its about.json reads
// and names a head the model has.
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "core/model/model.h"
#include "io/model/builtin_models.h"
#include "io/model/model_folder.h"
#include "io/tokenizer/tokenizer.h"

using namespace ae;

namespace {

// A folder that counts as a model: the registry needs only its config.json to list it.
void makeModel(const QString& folder, const QByteArray& about = {}) {
    QVERIFY(QDir().mkpath(folder));
    QFile config(QDir(folder).filePath(QStringLiteral("config.json")));
    QVERIFY(config.open(QIODevice::WriteOnly));
    config.write("{\"model_type\": \"gpt2\"}");
    if (!about.isEmpty()) {
        QFile file(QDir(folder).filePath(QStringLiteral("about.json")));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(about);
    }
}

QStringList names(const std::vector<io::BuiltInModel>& models) {
    QStringList list;
    for (const io::BuiltInModel& m : models)
        list << m.name;
    return list;
}

// AE_MODELS_PATH for one test, restored after.
struct ModelsPath {
    explicit ModelsPath(const QString& value) { qputenv("AE_MODELS_PATH", value.toLocal8Bit()); }
    ~ModelsPath() { qunsetenv("AE_MODELS_PATH"); }
};

}  // namespace

class TestBuiltinModels : public QObject {
    Q_OBJECT
private slots:
    void init() { qunsetenv("AE_MODELS_PATH"); }
    void buildTreeBesideTheBinary();
    void installTreeUnderShare();
    void environmentComesFirst();
    void foldersWithoutConfigAreNotModels();
    void namesCannotReachOutside();
    void argumentResolution();
    void unknownNameListsTheAvailableOnes();
    void aboutJson();
    void aboutJsonProblems();
    void shippedModelsOpen();
};

void TestBuiltinModels::buildTreeBesideTheBinary() {
    // build/app/attention-explorer and build/app/models/NAME, as resources/CMakeLists.txt copies.
    QTemporaryDir build;
    const QString app = build.filePath(QStringLiteral("app"));
    makeModel(app + QStringLiteral("/models/tiny"));
    const QStringList directories = io::builtInModelDirectories(app);
    QCOMPARE(directories, QStringList{QDir::cleanPath(app + QStringLiteral("/models"))});
    const std::vector<io::BuiltInModel> models = io::builtInModels(directories);
    QCOMPARE(names(models), QStringList{QStringLiteral("tiny")});
    QCOMPARE(models[0].folder, QDir::cleanPath(app + QStringLiteral("/models/tiny")));
    QVERIFY(QDir::isAbsolutePath(models[0].folder));
}

void TestBuiltinModels::installTreeUnderShare() {
    // PREFIX/bin/attention-explorer and PREFIX/share/attention-explorer/models/NAME.
    QTemporaryDir prefix;
    QVERIFY(QDir().mkpath(prefix.filePath(QStringLiteral("bin"))));
    const QString shared = prefix.filePath(QStringLiteral("share/attention-explorer/models"));
    makeModel(shared + QStringLiteral("/tiny"));
    const QStringList directories =
        io::builtInModelDirectories(prefix.filePath(QStringLiteral("bin")));
    QCOMPARE(directories, QStringList{QDir::cleanPath(shared)});
    const std::optional<io::BuiltInModel> found = io::findBuiltInModel("tiny", directories);
    QVERIFY(found);
    QCOMPARE(found->folder, QDir::cleanPath(shared + QStringLiteral("/tiny")));
    // Nothing there: no folders, no models, no failure.
    QTemporaryDir empty;
    QVERIFY(io::builtInModelDirectories(empty.path()).isEmpty());
    QVERIFY(io::builtInModels(io::builtInModelDirectories(empty.path())).empty());
}

void TestBuiltinModels::environmentComesFirst() {
    QTemporaryDir dir;
    const QString first = dir.filePath(QStringLiteral("first"));
    const QString second = dir.filePath(QStringLiteral("second"));
    const QString app = dir.filePath(QStringLiteral("app"));
    makeModel(first + QStringLiteral("/shared"));
    makeModel(second + QStringLiteral("/shared"));
    makeModel(second + QStringLiteral("/beta"));
    makeModel(app + QStringLiteral("/models/shared"));
    makeModel(app + QStringLiteral("/models/alpha"));
    // A missing folder in the list is skipped; an empty entry too.
    const ModelsPath path(first + QStringLiteral("::") + dir.filePath(QStringLiteral("gone")) +
                          QLatin1Char(':') + second);
    const QStringList directories = io::builtInModelDirectories(app);
    QCOMPARE(directories, (QStringList{QDir::cleanPath(first), QDir::cleanPath(second),
                                       QDir::cleanPath(app + QStringLiteral("/models"))}));
    const std::vector<io::BuiltInModel> models = io::builtInModels(directories);
    QCOMPARE(names(models), (QStringList{"alpha", "beta", "shared"}));
    QCOMPARE(models[2].folder, QDir::cleanPath(first + QStringLiteral("/shared")));
    QCOMPARE(models[1].folder, QDir::cleanPath(second + QStringLiteral("/beta")));
    // Beside this test's binary (build/tests) there are neither models/ nor ../share/…: the
    // environment's folders alone.
    QCOMPARE(io::builtInModelDirectories(),
             (QStringList{QDir::cleanPath(first), QDir::cleanPath(second)}));
}

void TestBuiltinModels::foldersWithoutConfigAreNotModels() {
    QTemporaryDir dir;
    makeModel(dir.filePath(QStringLiteral("real")));
    QVERIFY(QDir().mkpath(dir.filePath(QStringLiteral("half/nested"))));
    QFile stray(dir.filePath(QStringLiteral("README.md")));
    QVERIFY(stray.open(QIODevice::WriteOnly));
    QCOMPARE(names(io::builtInModels({dir.path()})), QStringList{QStringLiteral("real")});
}

void TestBuiltinModels::namesCannotReachOutside() {
    QTemporaryDir dir;
    makeModel(dir.filePath(QStringLiteral("models/inside")));
    makeModel(dir.filePath(QStringLiteral("outside")));
    const QStringList directories{dir.filePath(QStringLiteral("models"))};
    QVERIFY(io::findBuiltInModel("inside", directories));
    QVERIFY(!io::findBuiltInModel("../outside", directories));
    QVERIFY(!io::findBuiltInModel(dir.filePath(QStringLiteral("outside")), directories));
    QVERIFY(!io::findBuiltInModel("", directories));
}

void TestBuiltinModels::argumentResolution() {
    QTemporaryDir dir;
    makeModel(dir.filePath(QStringLiteral("tiny")));
    const ModelsPath path(dir.path());
    QVERIFY(io::isBuiltInArgument("builtin:tiny"));
    QVERIFY(!io::isBuiltInArgument("models/builtin:tiny"));
    QCOMPARE(io::builtInName("builtin:tiny"), QStringLiteral("tiny"));
    QCOMPARE(io::resolveModelArgument("builtin:tiny"),
             QDir::cleanPath(dir.filePath(QStringLiteral("tiny"))));
    // A path is a path, even one that happens to name a built-in model's folder.
    QCOMPARE(io::resolveModelArgument("tiny"), QStringLiteral("tiny"));
    QCOMPARE(io::resolveModelArgument("/some/where"), QStringLiteral("/some/where"));
}

void TestBuiltinModels::unknownNameListsTheAvailableOnes() {
    QTemporaryDir dir;
    makeModel(dir.filePath(QStringLiteral("tiny")));
    makeModel(dir.filePath(QStringLiteral("small")));
    {
        const ModelsPath path(dir.path());
        try {
            io::resolveModelArgument("builtin:huge");
            QFAIL("an unknown name was resolved");
        } catch (const model::ModelError& error) {
            QCOMPARE(QString::fromStdString(error.what()),
                     QStringLiteral("unknown built-in model \"huge\" (built-in models: small, "
                                    "tiny)"));
        }
    }
    QCOMPARE(io::unknownBuiltInMessage("x", {}),
             QStringLiteral("unknown built-in model \"x\" (no built-in models are installed)"));
}

void TestBuiltinModels::aboutJson() {
    QTemporaryDir dir;
    makeModel(dir.filePath(QStringLiteral("tiny")), R"({
        "title": "Two layers that copy",
        "note": "Look at layer 1, head 2: it attends to the token after the earlier copy.",
        "text": "a b c a b",
        "ids": [3, 1, 4, 1, 5],
        "layer": 1, "head": 2,
        "unknown_key": "is ignored"})");
    makeModel(dir.filePath(QStringLiteral("plain")));
    const std::vector<io::BuiltInModel> models = io::builtInModels({dir.path()});
    QCOMPARE(models.size(), std::size_t(2));
    const io::BuiltInAbout& about = models[1].about;
    QCOMPARE(about.title, QStringLiteral("Two layers that copy"));
    QVERIFY(about.note.startsWith(QStringLiteral("Look at layer 1")));
    QCOMPARE(about.text, QStringLiteral("a b c a b"));
    QCOMPARE(about.ids, (std::vector<long long>{3, 1, 4, 1, 5}));
    QCOMPARE(about.layer, 1);
    QCOMPARE(about.head, 2);
    QVERIFY2(about.problem.isEmpty(), qPrintable(about.problem));
    // No about.json: every default, and nothing wrong.
    const io::BuiltInAbout& plain = models[0].about;
    QVERIFY(plain.title.isEmpty() && plain.note.isEmpty() && plain.text.isEmpty());
    QVERIFY(plain.ids.empty());
    QCOMPARE(plain.layer, 0);
    QCOMPARE(plain.head, 0);
    QVERIFY(plain.problem.isEmpty());
}

void TestBuiltinModels::aboutJsonProblems() {
    QTemporaryDir dir;
    const QString folder = dir.filePath(QStringLiteral("tiny"));
    makeModel(folder, R"({"title": "Fine", "layer": -1, "ids": [1, "two"]})");
    io::BuiltInAbout about = io::readBuiltInAbout(folder);
    QCOMPARE(about.title, QStringLiteral("Fine"));  // what could be read is kept
    QCOMPARE(about.layer, 0);
    QVERIFY(about.ids.empty());
    QVERIFY2(
        about.problem.endsWith(QStringLiteral("about.json: layer: expected an integer from 0")),
        qPrintable(about.problem));

    QFile broken(QDir(folder).filePath(QStringLiteral("about.json")));
    QVERIFY(broken.open(QIODevice::WriteOnly | QIODevice::Truncate));
    broken.write("{\"title\": ");
    broken.close();
    about = io::readBuiltInAbout(folder);
    QVERIFY(about.title.isEmpty());
    QVERIFY2(about.problem.contains(QStringLiteral("about.json: ")), qPrintable(about.problem));

    QVERIFY(broken.open(QIODevice::WriteOnly | QIODevice::Truncate));
    broken.write("[1, 2]");
    broken.close();
    QVERIFY(io::readBuiltInAbout(folder).problem.endsWith(QStringLiteral("expected an object")));
}

void TestBuiltinModels::shippedModelsOpen() {
    // "A few MB at most" (issue 17): the package carries every one of them.
    constexpr qint64 kMostBytes = 10 * 1000 * 1000;
    const std::vector<io::BuiltInModel> shipped = io::builtInModels({AE_SHIPPED_MODELS_DIR});
    if (shipped.empty()) QSKIP("resources/models/ holds no model yet");
    for (const io::BuiltInModel& m : shipped) {
        QVERIFY2(m.about.problem.isEmpty(), qPrintable(m.about.problem));
        QVERIFY2(!m.about.title.isEmpty() && !m.about.note.isEmpty(),
                 qPrintable(m.name + ": about.json needs a title and a note for the gallery"));
        qint64 bytes = 0;
        QDirIterator files(m.folder, QDir::Files, QDirIterator::Subdirectories);
        while (files.hasNext()) {
            files.next();
            bytes += files.fileInfo().size();
        }
        QVERIFY2(bytes <= kMostBytes,
                 qPrintable(QStringLiteral("%1: %2 bytes").arg(m.name).arg(bytes)));
        try {
            const io::ModelFolder folder(m.folder);
            const model::Config& c = folder.model().config;
            QVERIFY2(m.about.layer < c.layers && m.about.head < c.heads,
                     qPrintable(m.name + ": about.json's layer or head is not in the model"));
            const io::Tokenizer tokenizer = io::Tokenizer::load(m.folder);
            const QString text =
                m.about.text.isEmpty() ? QStringLiteral("the cat sat on the mat") : m.about.text;
            const std::vector<int> ids = tokenizer.encode(text);
            QVERIFY(!ids.empty());
            std::vector<long long> run(ids.begin(), ids.end());
            model::checkInputs(c, run, {});
            for (long long id : m.about.ids)
                QVERIFY2(id < c.vocab,
                         qPrintable(m.name + ": about.json's ids are not in the vocabulary"));
        } catch (const model::ModelError& error) {
            QFAIL(qPrintable(m.name + ": " + QString::fromStdString(error.what())));
        } catch (const io::TokenizerError& error) {
            QFAIL(qPrintable(m.name + ": " + QString::fromStdString(error.what())));
        }
    }
}

QTEST_GUILESS_MAIN(TestBuiltinModels)
#include "test_builtin_models.moc"
