// `attention-explorer heads` end to end: its JSON lines (exactly the keys, one a head, layer by
// layer) hold the library's numbers (core/model/model_analysis.h) on the sequences the command says
// it measures; --induction-random is reproducible and follows its documented draw; the table is
// readable; and bad input is refused with exit status 2 and one line.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <random>

#include "core/model/model_analysis.h"
#include "core/model/workbench.h"
#include "io/model/model_folder.h"
#include "support/model_checks.h"
#include "support/run_binary.h"

using namespace ae;
using namespace ae::testing;

namespace {

const QStringList kKeys = {"entropy",        "first_token", "head",      "induction",   "layer",
                           "previous_token", "self",        "sink_norm", "to_separator"};

// Every stdout line as a JSON object; fails the test on a line that is not one.
std::vector<QJsonObject> jsonLines(const QByteArray& out) {
    std::vector<QJsonObject> objects;
    for (const QByteArray& line : out.split('\n')) {
        if (line.isEmpty()) continue;
        QJsonParseError error;
        const QJsonDocument document = QJsonDocument::fromJson(line, &error);
        if (error.error != QJsonParseError::NoError || !document.isObject()) {
            qWarning("not a JSON object: %s", line.constData());
            return {};
        }
        objects.push_back(document.object());
    }
    return objects;
}

double score(const QJsonObject& o, const char* key) {
    const QJsonValue v = o.value(key);
    return v.isNull() ? std::nan("") : v.toDouble();
}

bool same(double a, double b) {
    return (std::isnan(a) && std::isnan(b)) || a == b;
}

// The command's lines against summarizeHeads(`ids`) and inductionScores(`repeated`), in float.
void checkAgainstLibrary(const QByteArray& out, const QString& dir,
                         const std::vector<long long>& ids, const std::vector<long long>& repeated,
                         int prefix, int period) {
    const io::ModelFolder folder(dir);
    const auto run = model::runModel<float>(folder.model(), ids);
    auto summaries = model::summarizeHeads(run);
    model::addValueNormScores(summaries, folder.model(), run);
    const auto induction =
        model::inductionScores(model::runModel<float>(folder.model(), repeated), prefix, period);
    const std::vector<QJsonObject> lines = jsonLines(out);
    const int heads = folder.model().config.heads;
    QCOMPARE(int(lines.size()), folder.model().config.layers * heads);
    for (size_t n = 0; n < lines.size(); ++n) {
        const QJsonObject& o = lines[n];
        QCOMPARE(o.keys(), kKeys);
        QCOMPARE(o.value("layer").toInt(), int(n) / heads);
        QCOMPARE(o.value("head").toInt(), int(n) % heads);
        const model::HeadSummary& s = summaries[n];
        QVERIFY(same(score(o, "entropy"), s.entropy));
        QVERIFY(same(score(o, "first_token"), s.firstToken));
        QVERIFY(same(score(o, "previous_token"), s.previousToken));
        QVERIFY(same(score(o, "self"), s.self));
        QVERIFY(same(score(o, "induction"), induction[n]));
        QVERIFY(same(score(o, "sink_norm"), s.sinkNorm));
        QVERIFY(std::isfinite(s.sinkNorm));
    }
}

// heads/cli: the draw documented in cli/heads_command.h, written out again.
std::vector<long long> documentedRandomIds(int count, long long vocab, long long bos,
                                           unsigned long long seed) {
    std::mt19937_64 random(seed);
    const unsigned long long choices = vocab - (bos >= 0 ? 1 : 0);
    const unsigned long long limit = random.max() - random.max() % choices;
    std::vector<long long> ids;
    while (int(ids.size()) < count) {
        const unsigned long long draw = random();
        if (draw >= limit) continue;
        long long id = static_cast<long long>(draw % choices);
        if (bos >= 0 && id >= bos) ++id;
        ids.push_back(id);
    }
    return ids;
}

// A golden model copied with a whitespace tokenizer over `words` (id = position + 1, [UNK] 0),
// whose post-processor puts `bosWord` first when it is given.
struct ModelWithTokenizer {
    QTemporaryDir temp;
    QString dir;
    ModelWithTokenizer(const QString& name, const QStringList& words, const QString& bosWord)
        : dir(temp.path()) {
        for (const QString& f : QDir(goldenModelDir(name)).entryList(QDir::Files))
            QFile::copy(goldenModelDir(name) + "/" + f, dir + "/" + f);
        QJsonObject vocabulary{{"[UNK]", 0}};
        for (int i = 0; i < words.size(); ++i)
            vocabulary.insert(words[i], i + 1);
        QJsonValue post;
        if (!bosWord.isEmpty()) {
            post = QJsonObject{
                {"type", "TemplateProcessing"},
                {"single", QJsonArray{QJsonObject{{"SpecialToken", QJsonObject{{"id", bosWord}}}},
                                      QJsonObject{{"Sequence", QJsonObject{{"id", "A"}}}}}},
                {"special_tokens",
                 QJsonObject{
                     {bosWord, QJsonObject{{"ids", QJsonArray{words.indexOf(bosWord) + 1}}}}}}};
        }
        const QJsonObject tokenizer{
            {"normalizer", QJsonValue()},
            {"pre_tokenizer", QJsonObject{{"type", "Split"},
                                          {"pattern", QJsonObject{{"Regex", "\\s+"}}},
                                          {"behavior", "Removed"},
                                          {"invert", false}}},
            {"post_processor", post},
            {"added_tokens", QJsonArray{}},
            {"model",
             QJsonObject{{"type", "WordPiece"}, {"unk_token", "[UNK]"}, {"vocab", vocabulary}}}};
        QFile file(dir + "/tokenizer.json");
        if (file.open(QIODevice::WriteOnly)) file.write(QJsonDocument(tokenizer).toJson());
    }
};

}  // namespace

class TestHeadsCommand : public QObject {
    Q_OBJECT

private slots:
    // --ids: taken as given; induction on them twice, no prefix.
    void idsGiveTheLibrarysNumbers() {
        const QString dir = goldenModelDir("gpt2-tiny");
        const auto r = test::runBinary({"heads", dir, "--ids", "7,41,3,59,22,15,36", "--json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY(r.err.isEmpty());
        const std::vector<long long> ids = {7, 41, 3, 59, 22, 15, 36};
        std::vector<long long> twice = ids;
        twice.insert(twice.end(), ids.begin(), ids.end());
        checkAgainstLibrary(r.out, dir, ids, twice, 0, 7);
    }

    // A llama whose tokenizer puts BOS (id 1, config bos_token_id 1) first: induction on
    // BOS t t; a gpt2 whose tokenizer adds nothing: on t t.
    void textRepeatsAfterTheTokenizersBos() {
        const ModelWithTokenizer llama("llama-tiny-gqa", {"<s>", "the", "cat", "sat", "on", "mat"},
                                       "<s>");
        auto r =
            test::runBinary({"heads", llama.dir, "--text", "the cat sat on the mat", "--json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        checkAgainstLibrary(r.out, llama.dir, {1, 2, 3, 4, 5, 2, 6},
                            {1, 2, 3, 4, 5, 2, 6, 2, 3, 4, 5, 2, 6}, 1, 6);

        const ModelWithTokenizer gpt2("gpt2-tiny", {"the", "cat", "sat"}, "");
        r = test::runBinary({"heads", gpt2.dir, "--text", "the cat sat", "--json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        checkAgainstLibrary(r.out, gpt2.dir, {1, 2, 3}, {1, 2, 3, 1, 2, 3}, 0, 3);
    }

    // Every score on BOS + N seeded ids + the same N ids: reproducible, and those ids.
    void inductionRandomIsReproducible() {
        const QString dir = goldenModelDir("gpt2-tiny");
        const QStringList arguments = {"heads", dir,     "--induction-random", "12", "--seed",
                                       "3",     "--json"};
        const auto first = test::runBinary(arguments);
        const auto second = test::runBinary(arguments);
        QVERIFY2(first.exitCode == 0, first.err.constData());
        QCOMPARE(first.out, second.out);
        const auto other =
            test::runBinary({"heads", dir, "--induction-random", "12", "--seed", "4", "--json"});
        QVERIFY(other.out != first.out);

        const io::ModelFolder folder(dir);
        QCOMPARE(folder.model().config.bosToken, 63LL);
        const std::vector<long long> r = documentedRandomIds(12, 64, 63, 3);
        std::vector<long long> ids = {63};
        ids.insert(ids.end(), r.begin(), r.end());
        ids.insert(ids.end(), r.begin(), r.end());
        checkAgainstLibrary(first.out, dir, ids, ids, 1, 12);
        for (const QJsonObject& o : jsonLines(first.out)) {
            const double induction = o.value("induction").toDouble();
            QVERIFY(induction >= 0 && induction <= 1);
        }

        // bert has no BOS: the ids are repeated with nothing before them.
        const QString bert = goldenModelDir("bert-tiny");
        const auto b = test::runBinary({"heads", bert, "--induction-random", "5", "--json"});
        QVERIFY2(b.exitCode == 0, b.err.constData());
        const std::vector<long long> rb = documentedRandomIds(5, 64, -1, 0);
        std::vector<long long> twice = rb;
        twice.insert(twice.end(), rb.begin(), rb.end());
        checkAgainstLibrary(b.out, bert, twice, twice, 0, 5);
    }

    // Each decoder family puts its own BOS first: the config's bos_token_id (Gemma's 2,
    // Pythia's 0, the others' 1 in these goldens; the wrapped Gemma 3 has none at the top level
    // and takes Gemma 3's default, 2). The scores are the library's on those ids.
    void inductionStartsWithEachFamilysBos_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<long long>("bos");
        QTest::newRow("qwen2") << "qwen2-tiny" << 1LL;
        QTest::newRow("mistral") << "mistral-tiny-window" << 1LL;
        QTest::newRow("gemma") << "gemma-tiny" << 2LL;
        QTest::newRow("gemma2") << "gemma2-tiny" << 2LL;
        QTest::newRow("gemma3") << "gemma3-tiny" << 2LL;
        QTest::newRow("gemma3 wrapped") << "gemma3-wrapped-tiny" << 2LL;
        QTest::newRow("phi3") << "phi3-tiny-window" << 1LL;
        QTest::newRow("pythia") << "pythia-tiny" << 0LL;
        QTest::newRow("olmo2") << "olmo2-tiny" << 1LL;
        QTest::newRow("smollm3") << "smollm3-tiny" << 1LL;
    }
    void inductionStartsWithEachFamilysBos() {
        QFETCH(QString, model);
        QFETCH(long long, bos);
        const QString dir = goldenModelDir(model);
        const io::ModelFolder folder(dir);
        QCOMPARE(folder.model().config.bosToken, bos);
        const auto r =
            test::runBinary({"heads", dir, "--induction-random", "6", "--seed", "2", "--json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const std::vector<long long> drawn = documentedRandomIds(6, 64, bos, 2);
        QVERIFY(std::find(drawn.begin(), drawn.end(), bos) == drawn.end());
        std::vector<long long> ids = {bos};
        ids.insert(ids.end(), drawn.begin(), drawn.end());
        ids.insert(ids.end(), drawn.begin(), drawn.end());
        checkAgainstLibrary(r.out, dir, ids, ids, 1, 6);
    }

    void tableIsOneLineAHead() {
        const QString dir = goldenModelDir("gpt2-tiny");
        const auto r = test::runBinary({"heads", dir, "--ids", "7,41,3"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QList<QByteArray> lines = r.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 2 + 2 * 4);  // what was measured, the column names, 8 heads
        QVERIFY(lines[0].contains("induction on 6 (3 repeated twice)"));
        QCOMPARE(lines[1].simplified(),
                 QByteArray("layer head entropy first_token previous_token self induction "
                            "to_separator sink_norm"));
        const io::ModelFolder folder(dir);
        const auto s = model::summarizeHeads(model::runModel<float>(folder.model(), {7, 41, 3}));
        for (int n = 0; n < 8; ++n) {
            const QList<QByteArray> cells = lines[2 + n].simplified().split(' ');
            QCOMPARE(cells.size(), 9);
            QCOMPARE(cells[7], QByteArray("n/a"));   // gpt2-tiny's folder has no tokenizer
            QVERIFY(cells[8] != QByteArray("n/a"));  // the sink share: measured with the values
            QCOMPARE(cells[0].toInt(), n / 4);
            QCOMPARE(cells[1].toInt(), n % 4);
            QVERIFY(std::fabs(cells[2].toDouble() - s[n].entropy) <= 5e-5);
            QVERIFY(std::fabs(cells[5].toDouble() - s[n].self) <= 5e-5);
        }
        // Columns line up: every line as long as the header.
        for (int n = 2; n < lines.size(); ++n)
            QCOMPARE(lines[n].size(), lines[1].size());
    }

    // One token: no row defines the previous-token score; JSON says null, the table n/a.
    void undefinedScoreIsNull() {
        const QString dir = goldenModelDir("gpt2-tiny");
        const auto r = test::runBinary({"heads", dir, "--ids", "5", "--json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const auto lines = jsonLines(r.out);
        QCOMPARE(int(lines.size()), 8);
        for (const QJsonObject& o : lines) {
            QVERIFY(o.value("previous_token").isNull());
            QCOMPARE(o.value("self").toDouble(), 1.0);
            // Twice: [5, 5]; row 1's weight on key 1, a probability.
            QVERIFY(o.value("induction").toDouble() >= 0 && o.value("induction").toDouble() <= 1);
        }
        const auto table = test::runBinary({"heads", dir, "--ids", "5"});
        QVERIFY(table.out.contains("n/a"));
    }

    void badInputIsRefused_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("message");
        const QString gpt2 = goldenModelDir("gpt2-tiny");
        QTest::newRow("no input") << QStringList{gpt2}
                                  << "heads: give one of --text TEXT, --ids 1,2,3 or "
                                     "--induction-random N";
        QTest::newRow("two inputs")
            << QStringList{gpt2, "--ids", "1", "--induction-random", "3"} << "heads: give one of";
        QTest::newRow("no model") << QStringList{"--ids", "1"} << "heads: give one MODEL_DIR";
        QTest::newRow("seed alone") << QStringList{gpt2, "--ids", "1", "--seed", "2"}
                                    << "heads: --seed goes with --induction-random";
        QTest::newRow("zero random") << QStringList{gpt2, "--induction-random", "0"}
                                     << "heads: --induction-random: expected a positive integer";
        QTest::newRow("bad seed") << QStringList{gpt2, "--induction-random", "3", "--seed", "-1"}
                                  << "heads: --seed: expected a non-negative integer";
        QTest::newRow("bad ids") << QStringList{gpt2, "--ids", "1,x"}
                                 << "heads: --ids: expected comma-separated integers";
        QTest::newRow("id outside the vocabulary")
            << QStringList{gpt2, "--ids", "1,64"} << gpt2 + ": token ids[1]: 64";
        // 20 tokens fit the 32 positions; repeated twice they do not.
        QTest::newRow("repeated too long")
            << QStringList{gpt2, "--ids", "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20"}
            << gpt2 + ": the induction score runs the tokens repeated twice: token ids: 40";
        QTest::newRow("random too long") << QStringList{gpt2, "--induction-random", "16"}
                                         << gpt2 +
                                                ": the induction score runs the tokens "
                                                "repeated twice: token ids: 33";
        QTest::newRow("not a model")
            << QStringList{"/nonexistent", "--ids", "1"} << "/nonexistent: not a folder";
        QTest::newRow("text without tokenizer") << QStringList{gpt2, "--text", "hello"} << gpt2;
        QTest::newRow("unknown option")
            << QStringList{gpt2, "--ids", "1", "--colour"} << "heads: Unknown option 'colour'.";
    }
    void badInputIsRefused() {
        QFETCH(QStringList, arguments);
        QFETCH(QString, message);
        const auto r = test::runBinary(QStringList{"heads"} + arguments);
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.out.isEmpty());
        QVERIFY2(QString::fromUtf8(r.err).startsWith(message), r.err.constData());
        QCOMPARE(r.err.count('\n'), 1);
    }

    void helpListsHeads() {
        const auto r = test::runBinary({"--help"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.contains("attention-explorer heads MODEL_DIR"));
        const auto own = test::runBinary({"heads", "--help"});
        QCOMPARE(own.exitCode, 0);
        QVERIFY(own.out.contains("--induction-random"));
    }
};

QTEST_GUILESS_MAIN(TestHeadsCommand)
#include "test_heads_command.moc"
