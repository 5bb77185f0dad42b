// `run` on encoder–decoder models, through the real binary: teacher forced on --decoder-ids it
// writes the reference's result (every number of tests/data/seq2seq-models' expected files, to
// the reference's 1e-4), --generate prints and runs the reference's greedy ids, --target-text
// becomes decoder_start_token_id and the target's ids, and what is refused says why.
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <cstring>

#include "io/scene/scene_file.h"
#include "io/tokenizer/tokenizer.h"
#include "support/model_checks.h"
#include "support/run_binary.h"

using namespace ae;
using namespace ae::testing;
using ae::test::runBinary;

namespace {

QString commaList(const QJsonArray& values) {
    QStringList parts;
    for (const QJsonValue& v : values)
        parts << QString::number(v.toInteger());
    return parts.join(',');
}

// The worst |a − b| / (1 + |b|) over every number of two JSON documents of the same shape, and
// in `where` the path of that number; infinity, with `where`, at the first key, length or type
// that differs.
double jsonDifference(const QJsonValue& a, const QJsonValue& b, const QString& path,
                      QString& where) {
    if (a.type() != b.type()) {
        where = path + ": type differs";
        return INFINITY;
    }
    if (a.isDouble()) {
        where = path;
        return std::fabs(a.toDouble() - b.toDouble()) / (1.0 + std::fabs(b.toDouble()));
    }
    if (a.isArray() || a.isObject()) {
        QStringList keys;
        const QJsonArray x = a.toArray(), y = b.toArray();
        const QJsonObject ox = a.toObject(), oy = b.toObject();
        if (a.isArray() && x.size() != y.size()) {
            where = path + QStringLiteral(": %1 entries, expected %2").arg(x.size()).arg(y.size());
            return INFINITY;
        }
        if (a.isObject() && ox.keys() != oy.keys()) {
            where = path + ": keys " + ox.keys().join(',') + ", expected " + oy.keys().join(',');
            return INFINITY;
        }
        double worst = 0;
        const int count = a.isArray() ? static_cast<int>(x.size()) : static_cast<int>(ox.size());
        for (int i = 0; i < count; ++i) {
            QString inner;
            const double e =
                a.isArray()
                    ? jsonDifference(x[i], y[i], path + QStringLiteral("[%1]").arg(i), inner)
                    : jsonDifference(ox.value(ox.keys()[i]), oy.value(ox.keys()[i]),
                                     path + "." + ox.keys()[i], inner);
            if (e > worst || (worst == 0 && where.isEmpty())) {
                worst = std::max(worst, e);
                where = inner;
            }
            if (std::isinf(e)) return e;
        }
        return worst;
    }
    if (a != b) {
        where = path + ": differs";
        return INFINITY;
    }
    return 0;
}

const QStringList kModels = {"bart-tiny", "flan-t5-tiny", "marian-tiny", "t5-tiny"};

}  // namespace

class TestEncoderDecoderCommands : public QObject {
    Q_OBJECT

private slots:
    void runWritesTheReferencesResult_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("file");
        for (const QString& name : kModels)
            for (const QString& file :
                 QDir(seq2seqDir(name)).entryList({"expected-ids-*.json"}, QDir::Files))
                QTest::newRow(qPrintable(name + "/" + file)) << name << file;
    }
    void runWritesTheReferencesResult() {
        QFETCH(QString, name);
        QFETCH(QString, file);
        const QJsonObject expected = readJsonFile(seq2seqDir(name) + "/" + file);
        QTemporaryDir temp;
        const QString out = temp.filePath("result.json");
        QStringList arguments{"run",
                              seq2seqDir(name),
                              "--ids",
                              commaList(expected.value("tokens").toArray()),
                              "--decoder-ids",
                              commaList(expected.value("decoder_tokens").toArray()),
                              "--double",
                              "-o",
                              out};
        if (expected.contains("attention_mask"))
            arguments << "--attention-mask"
                      << commaList(expected.value("attention_mask").toArray());
        const auto r = runBinary(arguments);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonObject result = readJsonFile(out);
        QString where;
        const double worst = jsonDifference(result, expected, "", where);
        qInfo("%s %s: worst relative error %.3g at %s", qPrintable(name), qPrintable(file), worst,
              qPrintable(where));
        QVERIFY2(worst <= 1e-4, qPrintable(where));
    }

    void generatePrintsAndRunsTheGreedyIds_data() {
        QTest::addColumn<QString>("name");
        for (const QString& name : kModels)
            QTest::newRow(qPrintable(name)) << name;
    }
    void generatePrintsAndRunsTheGreedyIds() {
        QFETCH(QString, name);
        const QJsonObject expected = readJsonFile(seq2seqDir(name) + "/expected-generate-A.json");
        QTemporaryDir temp;
        const QString out = temp.filePath("generated.json");
        const auto r = runBinary({"run", seq2seqDir(name), "--ids",
                                  commaList(expected.value("tokens").toArray()), "--generate",
                                  QString::number(expected.value("max_new_tokens").toInt()),
                                  "--double", "-o", out});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QString ids = commaList(expected.value("decoder_tokens").toArray());
        QCOMPARE(QString::fromUtf8(r.out).trimmed(), "decoder ids: " + ids);
        QCOMPARE(commaList(readJsonFile(out).value("decoder_tokens").toArray()), ids);
    }

    // --text and --target-text: the source as the tokenizer encodes it (with its </s>), the
    // decoder input decoder_start_token_id and the target's ids without the closing </s>, as
    // Hugging Face shifts labels right.
    void targetTextIsTheShiftedTarget() {
        const QString dir = seq2seqDir("t5-tiny");
        QTemporaryDir temp;
        const QString out = temp.filePath("text.json");
        const auto r = runBinary(
            {"run", dir, "--text", "the cat sat", "--target-text", "le chat est", "-o", out});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonObject result = readJsonFile(out);
        const io::Tokenizer tokenizer = io::Tokenizer::load(dir);
        std::vector<long long> source, target{0};
        for (int id : tokenizer.encode("the cat sat", true))
            source.push_back(id);
        for (int id : tokenizer.encode("le chat est", false))
            target.push_back(id);
        QCOMPARE(source.back(), 1LL);  // </s>
        QCOMPARE(jsonIds(result.value("tokens").toArray()), source);
        QCOMPARE(jsonIds(result.value("decoder_tokens").toArray()), target);
        QCOMPARE(target.size(), std::size_t(4));
        QCOMPARE(result.value("logits").toArray().size(), 4);
    }

    // `scene --stack cross` writes the cross-attention as a cross scene: the target's tokens
    // query the source's, whose embeddings are the encoder's output; --stack encoder and decoder
    // write those stacks' self-attention.
    void sceneWritesEachStack() {
        QTemporaryDir temp;
        const QString dir = seq2seqDir("t5-tiny");
        for (const char* stack : {"encoder", "decoder", "cross"}) {
            const QString out = temp.filePath(QString::fromLatin1(stack) + ".json");
            const auto s = runBinary({"scene", dir, "--text", "the cat sat", "--target-text",
                                      "le chat", "--stack", stack, "--layer", "1", "-o", out});
            QVERIFY2(s.exitCode == 0, s.err.constData());
            QFile file(out);
            QVERIFY(file.open(QIODevice::ReadOnly));
            const Scene scene = io::parseScene(file.readAll());
            const bool cross = QLatin1String(stack) == QLatin1String("cross");
            QCOMPARE(scene.hasSource, cross);
            QCOMPARE(scene.mask.causal, QLatin1String(stack) == QLatin1String("decoder"));
            QCOMPARE(scene.queryCount(), QLatin1String(stack) == QLatin1String("encoder") ? 4 : 3);
            if (cross) {
                QCOMPARE(scene.keyCount(), 4);                         // the cat sat </s>
                QCOMPARE(scene.tokens.front(), std::string("<pad>"));  // decoder_start_token_id
                QCOMPARE(scene.sourceTokens.back(), std::string("</s>"));
            }
        }
        const auto missing = runBinary({"scene", dir, "--ids", "7,41", "--decoder-ids", "0,5",
                                        "--layer", "0", "-o", temp.filePath("x.json")});
        QCOMPARE(missing.exitCode, 2);
        QVERIFY2(missing.err.contains("--stack encoder, decoder or cross is required"),
                 missing.err.constData());
    }

    // `render --view cross`: the alignment figure of one head, a layer's mean or every layer's,
    // at the size asked, in presentation mode too; the three differ.
    void renderDrawsTheAlignment() {
        QTemporaryDir temp;
        const QString dir = seq2seqDir("t5-tiny");
        const QStringList input{"--text", "the cat sat on the mat", "--target-text",
                                "le chat est sur le tapis"};
        QList<QImage> images;
        for (const QStringList& which :
             {QStringList{}, QStringList{"--layer", "1"},
              QStringList{"--layer", "1", "--head", "0"}, QStringList{"--presentation"}}) {
            const QString out = temp.filePath(QStringLiteral("cross%1.png").arg(images.size()));
            const auto r = runBinary(QStringList{"render", dir, "--view", "cross", "--width", "800",
                                                 "--height", "600", "-o", out} +
                                     input + which);
            QVERIFY2(r.exitCode == 0, r.err.constData());
            const QImage image(out);
            QCOMPARE(image.size(), QSize(800, 600));
            images << image;
        }
        QVERIFY(images[0] != images[1]);
        QVERIFY(images[1] != images[2]);
        QVERIFY(images[0] != images[3]);
        const auto headAlone = runBinary(QStringList{"render", dir, "--view", "cross", "--head",
                                                     "0", "-o", temp.filePath("x.png")} +
                                         input);
        QCOMPARE(headAlone.exitCode, 2);
        QVERIFY2(headAlone.err.contains("--head needs its --layer"), headAlone.err.constData());
        const auto otherView = runBinary(
            QStringList{"render", dir, "--view", "model", "-o", temp.filePath("x.png")} + input);
        QCOMPARE(otherView.exitCode, 2);
        QVERIFY2(otherView.err.contains("--view cross draws its alignment"),
                 otherView.err.constData());
        const auto decoderOnly =
            runBinary({"render", goldenModelDir("gpt2-tiny"), "--view", "cross", "--ids", "7,41",
                       "-o", temp.filePath("x.png")});
        QCOMPARE(decoderOnly.exitCode, 2);
        QVERIFY2(decoderOnly.err.contains("--view cross is for encoder-decoder models"),
                 decoderOnly.err.constData());
    }

    // `heads` summarises the three kinds of heads, each line with its stack: every head of the
    // encoder, the decoder and the cross-attention once, the cross heads' first-token weight the
    // mean of their maps' first column in `run`'s result, the position scores n/a.
    void headsCoversEveryKindOfHead() {
        QTemporaryDir temp;
        const QString dir = tinyTranslateDir();
        const QStringList input{"--text", "the red cat sees a big dog", "--target-text",
                                "le chat rouge voit un chien grand", "--double"};
        const auto r = runBinary(QStringList{"heads", dir, "--json"} + input);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QStringList stacks;
        QList<QJsonObject> cross;
        for (const QByteArray& line : r.out.trimmed().split('\n')) {
            const QJsonObject o = QJsonDocument::fromJson(line).object();
            QVERIFY2(line.startsWith("{\"stack\":\""), line.constData());  // its first key
            stacks << o.value("stack").toString();
            if (o.value("stack").toString() == QLatin1String("cross")) cross << o;
        }
        QCOMPARE(stacks.count("encoder"), 8);
        QCOMPARE(stacks.count("decoder"), 8);
        QCOMPARE(stacks.count("cross"), 8);
        QCOMPARE(stacks.first(), QStringLiteral("encoder"));
        QCOMPARE(stacks.last(), QStringLiteral("cross"));
        const QString out = temp.filePath("run.json");
        QVERIFY(runBinary(QStringList{"run", dir, "-o", out} + input).exitCode == 0);
        const QJsonArray layers = readJsonFile(out).value("decoder_layers").toArray();
        for (const QJsonObject& o : cross) {
            const QJsonArray rows = layers[o.value("layer").toInt()]
                                        .toObject()
                                        .value("cross_heads")
                                        .toArray()[o.value("head").toInt()]
                                        .toObject()
                                        .value("weights")
                                        .toArray();
            double first = 0;
            for (const QJsonValue& row : rows)
                first += row.toArray()[0].toDouble();
            QVERIFY(std::fabs(o.value("first_token").toDouble() - first / rows.size()) < 1e-12);
            QVERIFY(o.value("previous_token").isNull() && o.value("self").isNull() &&
                    o.value("induction").isNull());
        }
        const auto table = runBinary(QStringList{"heads", dir} + input);
        QVERIFY2(table.exitCode == 0, table.err.constData());
        QVERIFY(table.out.contains("stack    layer  head"));
        QVERIFY(table.out.contains("cross"));
        const auto random = runBinary({"heads", dir, "--induction-random", "5"});
        QCOMPARE(random.exitCode, 2);
        QVERIFY2(random.err.contains("--induction-random measures one sequence repeated twice"),
                 random.err.constData());
        const auto notSeq2seq = runBinary(
            {"heads", goldenModelDir("gpt2-tiny"), "--ids", "7,41", "--decoder-ids", "0,5"});
        QCOMPARE(notSeq2seq.exitCode, 2);
        QVERIFY(notSeq2seq.err.contains("are for encoder-decoder models"));
    }

    // --format npy writes every matrix of the JSON result as its own file, the same numbers.
    void npyHoldsTheJsonsNumbers() {
        QTemporaryDir temp;
        const QString dir = seq2seqDir("t5-tiny");
        const QStringList input{"--ids", "7,41,3,59", "--decoder-ids", "0,12,5", "--double"};
        const QString json = temp.filePath("run.json"), npy = temp.filePath("npy");
        QVERIFY(runBinary(QStringList{"run", dir, "-o", json} + input).exitCode == 0);
        const auto r = runBinary(QStringList{"run", dir, "--format", "npy", "-o", npy} + input);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QStringList files = QDir(npy).entryList({"*.npy"}, QDir::Files);
        // tokens, decoder_tokens, encoder_last_hidden, logits; per encoder layer hidden_in and 2
        // heads x 6 (q, k, v, scores, weights, position_bias); per decoder layer the same plus 2
        // cross heads x 5.
        QCOMPARE(files.size(), 4 + 2 * (1 + 12) + 2 * (1 + 12 + 10));
        const QJsonObject result = readJsonFile(json);
        const auto npyMatrix = [&](const QString& name) {
            QFile f(npy + "/" + name + ".npy");
            if (!f.open(QIODevice::ReadOnly)) return std::vector<double>();
            const QByteArray bytes = f.readAll();
            const int header = 10 + (static_cast<unsigned char>(bytes[8]) |
                                     (static_cast<unsigned char>(bytes[9]) << 8));
            std::vector<double> values(static_cast<std::size_t>((bytes.size() - header) / 8));
            std::memcpy(values.data(), bytes.constData() + header, values.size() * 8);
            return values;
        };
        const auto jsonFlat = [](const QJsonValue& m) {
            std::vector<double> values;
            for (const QJsonValue& row : m.toArray())
                for (const QJsonValue& x : row.toArray())
                    values.push_back(x.toDouble());
            return values;
        };
        const QJsonObject cross = result.value("decoder_layers")
                                      .toArray()[1]
                                      .toObject()
                                      .value("cross_heads")
                                      .toArray()[1]
                                      .toObject();
        QCOMPARE(npyMatrix("decoder_layer1_cross1_weights"), jsonFlat(cross.value("weights")));
        QCOMPARE(npyMatrix("decoder_layer1_cross1_k"), jsonFlat(cross.value("k")));
        QCOMPARE(npyMatrix("encoder_last_hidden"), jsonFlat(result.value("encoder_last_hidden")));
        QCOMPARE(npyMatrix("logits"), jsonFlat(result.value("logits")));
    }

    void refusals_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("message");
        const QString t5 = seq2seqDir("t5-tiny");
        QTest::newRow("no decoder input")
            << QStringList{"run", t5, "--ids", "7,41", "-o", "x.json"}
            << "t5 is an encoder-decoder model: give the decoder input once";
        QTest::newRow("two decoder inputs")
            << QStringList{"run", t5,           "--ids", "7,41", "--decoder-ids",
                           "0,5", "--generate", "2",     "-o",   "x.json"}
            << "give the decoder input once";
        QTest::newRow("not encoder-decoder")
            << QStringList{"run",
                           goldenModelDir("gpt2-tiny"),
                           "--ids",
                           "7,41",
                           "--decoder-ids",
                           "0,5",
                           "-o",
                           "x.json"}
            << "are for encoder-decoder models (t5, bart and marian); gpt2 is not one";
        QTest::newRow("token types")
            << QStringList{"run",           t5,    "--ids", "7,41",  "--decoder-ids", "0,5",
                           "--token-types", "0,1", "-o",    "x.json"}
            << "token types: t5 has no token-type embeddings";
        QTest::newRow("all padding")
            << QStringList{"run", t5,   "--ids", "7,41", "--decoder-ids", "0,5", "--attention-mask",
                           "0,0", "-o", "x.json"}
            << "attention mask: every encoder token is padding, so no query sees a key";
        QTest::newRow("decoder vocabulary")
            << QStringList{"run", t5, "--ids", "7,41", "--decoder-ids", "0,64", "-o", "x.json"}
            << "decoder ids[1]: 64 is not in [0, 64)";
        QTest::newRow("layers") << QStringList{"run", t5,         "--ids", "7,41", "--decoder-ids",
                                               "0,5", "--layers", "0",     "-o",   "x.json"}
                                << "--layers is not available for encoder-decoder models yet";
        QTest::newRow("generate zero")
            << QStringList{"run", t5, "--ids", "7,41", "--generate", "0", "-o", "x.json"}
            << "--generate: expected a number of tokens >= 1, got 0";
    }
    void refusals() {
        QFETCH(QStringList, arguments);
        QFETCH(QString, message);
        QTemporaryDir temp;
        const auto r = runBinary(arguments, {temp.path()});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(QString::fromUtf8(r.err).contains(message), r.err.constData());
        QVERIFY(QDir(temp.path()).isEmpty());  // nothing written
    }
};

QTEST_APPLESS_MAIN(TestEncoderDecoderCommands)
#include "test_encoder_decoder_commands.moc"
