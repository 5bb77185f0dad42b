// The command line, run as a real process (AE_BINARY): export in every format, presets, help and
// version, and the contract for failures (exit status 2, one stderr line, no partial output).
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <QXmlStreamReader>
#include <cstring>
#include <map>

#include "support/result_check.h"
#include "support/run_binary.h"

using ae::MatrixD;

namespace {

constexpr double kTolerance = 1e-12;  // the export is the double engine, like the reference

using Run = ae::test::BinaryRun;

Run run(const QStringList& arguments, const QString& workingDirectory = QString()) {
    return ae::test::runBinary(arguments, {workingDirectory, 30000, {}});
}

QString describe(const Run& r) {
    return QStringLiteral("exit %1, stdout <%2>, stderr <%3>")
        .arg(r.exitCode)
        .arg(QString::fromUtf8(r.out.left(300)), QString::fromUtf8(r.err.left(300)));
}

void writeText(const QString& path, const QByteArray& text) {
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(text) != text.size()) {
        throw std::runtime_error("cannot write " + path.toStdString());
    }
}

QString scenePath(const QString& name) {
    return aetest::dataPath(name + ".scene.json");
}

// A strict reader for what export writes: NPY 1.0, '<f8', C order, two dimensions.
struct Npy {
    MatrixD matrix;
    QString error;
};

Npy readNpy(const QByteArray& bytes) {
    Npy npy;
    const auto fail = [&](const QString& why) {
        npy.error = why;
        return npy;
    };
    if (bytes.size() < 10 || !bytes.startsWith(QByteArray("\x93NUMPY", 6)))
        return fail("bad magic");
    if (bytes[6] != 1 || bytes[7] != 0) return fail("not version 1.0");
    const int headerLength =
        static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    if (bytes.size() < 10 + headerLength) return fail("header cut short");
    if ((10 + headerLength) % 64 != 0) return fail("data not aligned to 64 bytes");
    const QString header = QString::fromLatin1(bytes.mid(10, headerLength));
    static const QRegularExpression layout(QStringLiteral(
        R"(^\{'descr': '<f8', 'fortran_order': False, 'shape': \((\d+), (\d+)\), \} *\n$)"));
    const QRegularExpressionMatch m = layout.match(header);
    if (!m.hasMatch()) return fail("unexpected header " + header);
    const qsizetype rows = m.captured(1).toLongLong(), cols = m.captured(2).toLongLong();
    const QByteArray data = bytes.mid(10 + headerLength);
    if (data.size() != rows * cols * 8)
        return fail(QStringLiteral("%1 data bytes for %2x%3").arg(data.size()).arg(rows).arg(cols));
    npy.matrix.resize(rows, cols);
    for (qsizetype i = 0; i < rows * cols; ++i) {
        std::uint64_t bits = 0;
        for (int b = 0; b < 8; ++b) {
            bits |= static_cast<std::uint64_t>(static_cast<unsigned char>(data[i * 8 + b]))
                    << (8 * b);
        }
        double value;
        std::memcpy(&value, &bits, sizeof value);
        npy.matrix.data()[i] = value;  // row-major: C order
    }
    return npy;
}

// "heads[2].q" <-> "head2_q"; other names are the same in both.
QString fileStem(const QString& resultName) {
    static const QRegularExpression head(QStringLiteral(R"(^heads\[(\d+)\]\.(\w+)$)"));
    const QRegularExpressionMatch m = head.match(resultName);
    return m.hasMatch() ? QStringLiteral("head%1_%2").arg(m.captured(1), m.captured(2))
                        : resultName;
}

// The files a matrix directory must hold for this expected result, without the suffix.
QStringList expectedStems(const aetest::Result& expected) {
    QStringList stems;
    for (const auto& [name, m] : expected.matrices)
        stems << fileStem(name);
    stems << QStringLiteral("allowed");
    stems.sort();
    return stems;
}

QStringList filesIn(const QString& directory, const QString& suffix) {
    QStringList stems;
    for (const QString& f : QDir(directory).entryList(QDir::Files)) {
        stems << (f.endsWith(suffix) ? f.chopped(suffix.size()) : f + "(unexpected)");
    }
    stems.sort();
    return stems;
}

// A small valid scene (d_model 3, d_proj 2) as a JSON object, to be broken by each case.
QJsonObject smallScene() {
    return QJsonDocument::fromJson(R"({"format": "attention-explorer/scene", "version": 1,
        "tokens": ["a", "b", "c"], "embeddings": [[1, 0, 0], [0, 1, 0], [1, 1, 0]],
        "projections": {"query": [[1, 0], [0, 1], [1, 1]], "key": [[1, 1], [0, 1], [1, 0]],
                        "value": [[1, 0], [0, 1], [0, 0]]}})")
        .object();
}

QByteArray json(const QJsonObject& o) {
    return QJsonDocument(o).toJson();
}

}  // namespace

class TestCli : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY2(QFile::exists(QStringLiteral(AE_BINARY)), AE_BINARY); }

    // ------------------------------------------------------------ export, three formats
    void exportJson_data() { addGolden(); }
    void exportJson() {
        QFETCH(QString, name);
        QTemporaryDir dir;
        const QString out = dir.filePath("result.json");
        const Run r = run({"export", scenePath(name), "-o", out});
        QVERIFY2(r.exitCode == 0 && r.err.isEmpty() && r.out.isEmpty(), qPrintable(describe(r)));
        const QJsonObject result = aetest::readJson(out).object();
        QCOMPARE(result["format"].toString(), QStringLiteral("attention-explorer/result"));
        QCOMPARE(result["version"].toInt(), 1);
        const aetest::Comparison c =
            aetest::compareResults(aetest::resultFromJson(result), aetest::expectedResult(name));
        QVERIFY2(c.within(kTolerance), qPrintable(c.report(kTolerance)));
    }

    void exportNpy_data() { addGolden(); }
    void exportNpy() {
        QFETCH(QString, name);
        QTemporaryDir dir;
        const QString out = dir.filePath("npy");
        const Run r = run({"export", scenePath(name), "--format", "npy", "-o", out});
        QVERIFY2(r.exitCode == 0 && r.err.isEmpty(), qPrintable(describe(r)));
        const aetest::Result expected = aetest::expectedResult(name);
        QCOMPARE(filesIn(out, ".npy"), expectedStems(expected));
        const bool hasSource = expected.find("x_source") != nullptr;
        QCOMPARE(QFile::exists(out + "/x_source.npy"), hasSource);
        QCOMPARE(QFile::exists(out + "/output.npy"), expected.find("output") != nullptr);

        aetest::Result got;
        for (const auto& [resultName, m] : expected.matrices) {
            const QString file = out + "/" + fileStem(resultName) + ".npy";
            const Npy npy = readNpy(aetest::readFile(file));
            QVERIFY2(npy.error.isEmpty(), qPrintable(file + ": " + npy.error));
            got.matrices.emplace_back(resultName, npy.matrix);
        }
        const Npy allowed = readNpy(aetest::readFile(out + "/allowed.npy"));
        QVERIFY2(allowed.error.isEmpty(), qPrintable(allowed.error));
        got.allowed = allowed.matrix;
        got.divisor = expected.divisor;  // not a matrix file
        got.fullyMaskedRows = expected.fullyMaskedRows;
        const aetest::Comparison c = aetest::compareResults(got, expected);
        QVERIFY2(c.within(kTolerance), qPrintable(c.report(kTolerance)));
    }

    void exportCsv_data() { addGolden(); }
    void exportCsv() {
        QFETCH(QString, name);
        QTemporaryDir dir;
        const Run j = run({"export", scenePath(name), "-o", dir.filePath("r.json")});
        const Run r =
            run({"export", scenePath(name), "--format", "csv", "-o", dir.filePath("csv")});
        QVERIFY2(j.exitCode == 0 && r.exitCode == 0 && r.err.isEmpty(), qPrintable(describe(r)));
        const aetest::Result fromJson =
            aetest::resultFromJson(aetest::readJson(dir.filePath("r.json")).object());
        QCOMPARE(filesIn(dir.filePath("csv"), ".csv"), expectedStems(fromJson));
        std::vector<std::pair<QString, MatrixD>> wanted = fromJson.matrices;
        wanted.emplace_back("allowed", fromJson.allowed);
        for (const auto& [resultName, m] : wanted) {
            const QString file = dir.filePath("csv/" + fileStem(resultName) + ".csv");
            const QByteArray text = aetest::readFile(file);
            QVERIFY2(text.endsWith('\n'), qPrintable(file));
            const QList<QByteArray> lines = text.chopped(1).split('\n');
            QCOMPARE(lines.size(), m.rows());
            for (qsizetype i = 0; i < lines.size(); ++i) {
                const QList<QByteArray> fields = lines[i].split(',');
                QCOMPARE(fields.size(), m.cols());
                for (qsizetype k = 0; k < fields.size(); ++k) {
                    bool ok = false;
                    const double value = fields[k].toDouble(&ok);
                    QVERIFY2(ok && fields[k].trimmed() == fields[k],
                             qPrintable(file + ": field " + fields[k]));
                    // Bit for bit the number of the JSON export: both are shortest round-trip.
                    QVERIFY2(value == m(i, k) && std::signbit(value) == std::signbit(m(i, k)),
                             qPrintable(QStringLiteral("%1[%2][%3]: csv %4, json %5")
                                            .arg(file)
                                            .arg(i)
                                            .arg(k)
                                            .arg(QString::fromLatin1(fields[k]))
                                            .arg(m(i, k), 0, 'g', 17)));
                }
            }
        }
    }

    // The NPY reader is strict: it refuses what export must not write.
    void npyReaderIsStrict() {
        QTemporaryDir dir;
        const Run r = run({"export", scenePath("journey"), "--format", "npy", "-o", dir.path()});
        QCOMPARE(r.exitCode, 0);
        const QByteArray good = aetest::readFile(dir.filePath("x.npy"));
        QVERIFY(readNpy(good).error.isEmpty());
        QByteArray bad = good;
        bad.replace("<f8", "<f4");
        QVERIFY(!readNpy(bad).error.isEmpty());
        bad = good;
        bad.replace("False", "True ");
        QVERIFY(!readNpy(bad).error.isEmpty());
        QVERIFY(!readNpy(good.chopped(1)).error.isEmpty());
    }

    // ------------------------------------------------------------ presets, help, version
    void presets() {
        const Run r = run({"presets"});
        QVERIFY2(r.exitCode == 0 && r.err.isEmpty(), qPrintable(describe(r)));
        QVERIFY(r.out.endsWith('\n'));
        QStringList names;
        for (const QByteArray& line : r.out.chopped(1).split('\n')) {
            const QList<QByteArray> parts = line.split('\t');
            QVERIFY2(parts.size() == 2 && !parts[0].isEmpty() && !parts[1].trimmed().isEmpty(),
                     line.constData());
            names << QString::fromUtf8(parts[0]);
        }
        for (const char* required : {"journey", "four-words", "bert-base"}) {
            QVERIFY2(names.contains(QLatin1String(required)), required);
        }
        QCOMPARE(names.removeDuplicates(), 0);
    }

    void exportPreset_data() {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QString>("golden");
        QTest::newRow("journey") << "journey"
                                 << "journey";
        QTest::newRow("bert-base") << "bert-base"
                                   << "init-bert-base";
        QTest::newRow("four-words") << "four-words"
                                    << "four-words";
        QTest::newRow("cross") << "cross"
                               << "cross";
    }
    void exportPreset() {
        QFETCH(QString, preset);
        QFETCH(QString, golden);
        QTemporaryDir dir;
        const Run r = run({"export", "--preset", preset, "-o", dir.filePath("r.json")});
        QVERIFY2(r.exitCode == 0 && r.err.isEmpty(), qPrintable(describe(r)));
        const aetest::Comparison c = aetest::compareResults(
            aetest::resultFromJson(aetest::readJson(dir.filePath("r.json")).object()),
            aetest::expectedResult(golden));
        QVERIFY2(c.within(kTolerance), qPrintable(c.report(kTolerance)));
    }

    void helpAndVersion() {
        const Run help = run({"--help"});
        QVERIFY2(help.exitCode == 0 && help.err.isEmpty(), qPrintable(describe(help)));
        QVERIFY(help.out.contains("export") && help.out.contains("presets"));
        const Run version = run({"--version"});
        QVERIFY2(version.exitCode == 0 && version.err.isEmpty(), qPrintable(describe(version)));
        QVERIFY2(QRegularExpression(R"(^attention-explorer \d+\.\d+\.\d+\n$)")
                     .match(QString::fromUtf8(version.out))
                     .hasMatch(),
                 version.out.constData());
    }

    // ------------------------------------------------------------ failures
    void invalidInput_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QByteArray>("sceneText");  // written to scene.json when not empty
        QTest::addColumn<QString>("line");          // the stderr line, a regular expression

        const QStringList exportScene = {"export", "scene.json", "-o", "out"};
        QJsonObject wrongKey = smallScene();
        QJsonObject projections = wrongKey["projections"].toObject();
        projections["key"] =
            QJsonArray{QJsonArray{1, 0, 0}, QJsonArray{0, 1, 0}, QJsonArray{0, 0, 1}};
        wrongKey["projections"] = projections;
        QTest::newRow("wrong key shape")
            << exportScene << json(wrongKey)
            << R"(scene\.json: projections\.key: expected 3x2, got 3x3)";
        QJsonObject heads = smallScene();
        heads.remove("projections");
        heads["embeddings"] = QJsonArray{QJsonArray{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}};
        heads["tokens"] = QJsonArray{"only"};
        heads["projections"] = QJsonObject{{"mode", "identity"}};
        heads["heads"] = 5;
        QTest::newRow("heads do not divide")
            << exportScene << json(heads)
            << R"(scene\.json: heads: 5 does not divide the projection width 12)";
        QTest::newRow("missing file")
            << QStringList{"export", "missing.json", "-o", "out"} << QByteArray()
            << R"(missing\.json: cannot open: No such file or directory)";
        QTest::newRow("invalid JSON") << exportScene << QByteArray("{\"format\": ")
                                      << R"(scene\.json: invalid JSON at byte \d+: .+)";
        QTest::newRow("NaN in the text")
            << exportScene
            << QByteArray(
                   R"({"format": "attention-explorer/scene", "version": 1, "tokens": ["a"], "embeddings": [[1, NaN]], "projections": {"mode": "identity"}})")
            << R"(scene\.json: embeddings\[0\]\[1\]: expected a finite number)";
        QTest::newRow("not an object")
            << exportScene << QByteArray("[1, 2]") << R"(scene\.json: expected an object)";
        QTest::newRow("unknown export option")
            << QStringList{"export", "scene.json", "--colour", "-o", "out"} << json(smallScene())
            << R"(export: .*colour.*)";
        QTest::newRow("unknown top-level option") << QStringList{"--colour"} << QByteArray()
                                                  << R"(unknown option --colour \(see --help\))";
        QTest::newRow("missing -o") << QStringList{"export", "scene.json"} << json(smallScene())
                                    << R"(export: -o OUT is required)";
        QTest::newRow("unknown preset")
            << QStringList{"export", "--preset", "nope", "-o", "out"} << QByteArray()
            << R"(preset nope: .*unknown preset nope.*)";
        QTest::newRow("scene and preset")
            << QStringList{"export", "scene.json", "--preset", "journey", "-o", "out"}
            << json(smallScene()) << R"(export: give one SCENE\.json or --preset NAME)";
        QTest::newRow("unknown format")
            << QStringList{"export", "scene.json", "--format", "xml", "-o", "out"}
            << json(smallScene()) << R"(export: --format: expected json, npy or csv, got xml)";
        QTest::newRow("presets with an argument")
            << QStringList{"presets", "extra"} << QByteArray() << R"(presets: .+)";
        QJsonObject overflow = smallScene();
        overflow["embeddings"] =
            QJsonArray{QJsonArray{1e200, 0, 0}, QJsonArray{0, 1e200, 0}, QJsonArray{1, 1, 0}};
        QTest::newRow("overflow")
            << exportScene << json(overflow)
            << R"(scene\.json: scores: overflow \(values too large to represent\))";
        QTest::newRow("overflow, npy")
            << QStringList{"export", "scene.json", "--format", "npy", "-o", "out"} << json(overflow)
            << R"(scene\.json: scores: overflow \(values too large to represent\))";
        const QStringList render = {"render", "--preset", "default", "-o", "out.png"};
        QTest::newRow("render: range not a form")
            << render + QStringList{"--range", "x"} << QByteArray()
            << R"(render: --range: expected auto, shared or MIN:MAX, got "x")";
        QTest::newRow("render: range upside down")
            << render + QStringList{"--range", "1:0"} << QByteArray()
            << R"(render: --range: expected MIN below MAX, got "1:0")";
        QTest::newRow("render: decimals")
            << render + QStringList{"--decimals", "9"} << QByteArray()
            << R"(render: --decimals: expected 0 to 6 or auto, got "9")";
        QTest::newRow("render: size") << render + QStringList{"--size", "letter"} << QByteArray()
                                      << R"(render: --size: expected column or page, got "letter")";
        QTest::newRow("render: size and width")
            << render + QStringList{"--size", "column", "--width", "400"} << QByteArray()
            << R"(render: --size: give --size or --width/--height, not both)";
        QTest::newRow("render: empty title")
            << render + QStringList{"--title", ""} << QByteArray()
            << R"(render: --title: expected none or a title, got an empty text)";
        QTest::newRow("output directory missing")
            << QStringList{"export", "scene.json", "-o", "no/such/dir/out"} << json(smallScene())
            << R"(no/such/dir/out: cannot write: .+)";
    }
    void invalidInput() {
        QFETCH(QStringList, arguments);
        QFETCH(QByteArray, sceneText);
        QFETCH(QString, line);
        QTemporaryDir dir;
        if (!sceneText.isEmpty()) writeText(dir.filePath("scene.json"), sceneText);
        const Run r = run(arguments, dir.path());
        QVERIFY2(r.exitCode == 2, qPrintable(describe(r)));  // 1 is for internal errors only
        QVERIFY2(r.out.isEmpty(), qPrintable(describe(r)));
        QVERIFY2(r.err.endsWith('\n') && r.err.count('\n') == 1, qPrintable(describe(r)));
        const QString got = QString::fromUtf8(r.err.chopped(1));
        QVERIFY2(
            QRegularExpression(QRegularExpression::anchoredPattern(line)).match(got).hasMatch(),
            qPrintable("stderr: " + got + "\nexpected: " + line));
        // Nothing written: no output file, no directory, no temporary left behind.
        QStringList left =
            QDir(dir.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden);
        left.removeAll("scene.json");
        QVERIFY2(left.isEmpty(), qPrintable(left.join(' ')));
    }

    // ------------------------------------------------------------ render: figures for a paper
    // Each figure option changes what the SVG holds: its texts are the titles, labels, colour bar
    // ticks and cell numbers.
    void renderFigureOptions() {
        QTemporaryDir dir;
        const auto texts = [&dir](const QStringList& options) {
            const QString out = dir.filePath("figure.svg");
            QFile::remove(out);
            const Run r = run(QStringList{"render", "-o", out} + options, dir.path());
            if (r.exitCode != 0) return QStringList{"failed: " + describe(r)};
            QXmlStreamReader xml(aetest::readFile(out));
            QStringList found;
            while (!xml.atEnd()) {
                xml.readNext();
                if (xml.isStartElement() && xml.name() == QLatin1String("text"))
                    found << xml.readElementText(QXmlStreamReader::IncludeChildElements).trimmed();
            }
            return found;
        };
        const QStringList head0 = {"--preset", "default", "--head", "0"};
        const QStringList own = texts(head0);
        QVERIFY2(own.contains("softmax weights · head 0"), qPrintable(own.join('|')));
        QVERIFY(own.contains("H bits"));
        QVERIFY(!texts(head0 + QStringList{"--title", "none"}).join('|').contains("softmax"));
        const QStringList given = texts(head0 + QStringList{"--title", "Head 0, layer 1"});
        QVERIFY(given.contains("Head 0, layer 1") && !given.join('|').contains("softmax"));
        QVERIFY(!texts(head0 + QStringList{"--no-entropy"}).contains("H bits"));
        QVERIFY(!own.contains("attention weight"));
        QVERIFY(texts(head0 + QStringList{"--colorbar-label", "attention weight"})
                    .contains("attention weight"));

        // The colour bar runs from MIN to MAX, its labels all with one count of decimals.
        const QStringList scores = {"--preset", "default", "--stage", "scores", "--head", "1"};
        const QStringList fixed = texts(scores + QStringList{"--range=-0.5:1.5"});
        // Auto ranges are symmetric about 0: 1.5 without -1.5 is the fixed range's end.
        QVERIFY2(fixed.contains("-0.5") && fixed.contains("1.5") && !fixed.contains("-1.5") &&
                     fixed.contains("0.0"),
                 qPrintable(fixed.join('|')));
        const QStringList shared =
            texts({"--preset", "default", "--stage", "scores", "--range", "shared"});
        QVERIFY2(!shared.isEmpty() && !shared.first().startsWith("failed"),
                 qPrintable(shared.join('|')));

        // Every number in a cell has the same decimals: masked zeros read 0.00, never 0.
        static const QRegularExpression number(QStringLiteral(R"(^-?\d+(\.\d+)?$)"));
        const QStringList causal =
            texts({"--preset", "journey-causal", "--head", "0", "--values", "--no-entropy"});
        int twoDecimals = 0;
        for (const QString& t : causal) {
            if (!number.match(t).hasMatch()) continue;
            QVERIFY2(t.contains('.'), qPrintable(causal.join('|')));  // no bare "0" or "1"
            if (t.section('.', 1).size() == 2) ++twoDecimals;
        }
        QCOMPARE(twoDecimals, 36);  // the 6 x 6 cells; the colour bar has one decimal
        QVERIFY(causal.join('|').contains("masked"));
        int threeDecimals = 0;
        for (const QString& t :
             texts({"--preset", "journey-causal", "--head", "0", "--values", "--decimals", "3"})) {
            if (number.match(t).hasMatch() && t.section('.', 1).size() == 3) ++threeDecimals;
        }
        QCOMPARE(threeDecimals, 36);
    }

    // A PDF without a size fits a column (3.5 in = 252 pt); --size page is 7 in (504 pt); an
    // explicit size keeps 1 pixel = 0.75 pt.
    void renderPdfPageSizes() {
        QTemporaryDir dir;
        const auto pageWidth = [&dir](const QStringList& options) {
            const QString out = dir.filePath("figure.pdf");
            const Run r =
                run(QStringList{"render", "--preset", "default", "-o", out} + options, dir.path());
            if (r.exitCode != 0) return -1.0;
            const QRegularExpressionMatch box =
                QRegularExpression(QStringLiteral(R"(/MediaBox \[0 0 ([\d.]+) ([\d.]+)\])"))
                    .match(QString::fromLatin1(aetest::readFile(out)));
            return box.hasMatch() ? box.captured(1).toDouble() : -2.0;
        };
        QCOMPARE(qRound(pageWidth({})), 252);
        QCOMPARE(qRound(pageWidth({"--size", "column"})), 252);
        QCOMPARE(qRound(pageWidth({"--size", "page"})), 504);
        QCOMPARE(qRound(pageWidth({"--width", "800", "--height", "600"})), 600);
    }

    // A failed export leaves an existing output as it was.
    void failureKeepsExistingOutput_data() {
        QTest::addColumn<QString>("format");
        QTest::newRow("json") << "json";
        QTest::newRow("npy") << "npy";
        QTest::newRow("csv") << "csv";
    }
    void failureKeepsExistingOutput() {
        QFETCH(QString, format);
        QTemporaryDir dir;
        QJsonObject bad = smallScene();
        bad["heads"] = 3;
        writeText(dir.filePath("scene.json"), json(bad));
        const QString out = dir.filePath(format == "json" ? "out.json" : "out");
        const QString keep = format == "json" ? out : out + "/x." + format;
        if (format != "json") QVERIFY(QDir().mkpath(out));
        writeText(keep, "keep me\n");
        const Run r = run({"export", "scene.json", "--format", format, "-o", out}, dir.path());
        QVERIFY2(r.exitCode == 2, qPrintable(describe(r)));
        QCOMPARE(aetest::readFile(keep), QByteArray("keep me\n"));
        if (format != "json")
            QCOMPARE(QDir(out).entryList(QDir::Files), QStringList{"x." + format});
        // And a successful export replaces it.
        writeText(dir.filePath("scene.json"), json(smallScene()));
        const Run ok = run({"export", "scene.json", "--format", format, "-o", out}, dir.path());
        QVERIFY2(ok.exitCode == 0, qPrintable(describe(ok)));
        QVERIFY(aetest::readFile(keep) != QByteArray("keep me\n"));
    }

    // Writing over a directory with the json format fails cleanly, leaving the directory alone.
    void jsonOntoDirectory() {
        QTemporaryDir dir;
        QVERIFY(QDir().mkpath(dir.filePath("taken/inner")));
        const Run r = run({"export", scenePath("journey"), "-o", "taken"}, dir.path());
        QVERIFY2(r.exitCode == 2 && r.err.count('\n') == 1 && r.err.startsWith("taken: "),
                 qPrintable(describe(r)));
        QVERIFY(QFileInfo(dir.filePath("taken/inner")).isDir());
    }

private:
    static void addGolden() {
        QTest::addColumn<QString>("name");
        for (const QString& name : aetest::goldenNames())
            QTest::newRow(qPrintable(name)) << name;
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
