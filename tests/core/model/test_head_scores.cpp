// The table of head scores (core/model/head_scores.h): every row's measure gives, to the bit, the
// number the summaries gave before the scores were a table (summarizeHeads's one loop over the
// rows of a head and inductionScores's diagonal, kept below as they were), on golden models in
// float and double, with bert's padding; summarizeHeads and addRepeatedRunScores fill each row's
// field with its measure; and the rows are well formed (unique keys, every text given).
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <set>
#include <string>

#include "core/model/head_scores.h"
#include "core/model/model_analysis.h"
#include "io/model/model_folder.h"
#include "support/model_checks.h"

using namespace ae;
using namespace ae::testing;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Before the table: the four one-run scores of a head summed in one pass over its rows, and
// induction over the second copy's rows, each into its own double in this order.
struct PreviousScores {
    double entropy = 0, firstToken = 0, previousToken = 0, self = 0, induction = 0;
};

template <typename Scalar>
PreviousScores previousCodePath(const model::ModelRun<Scalar>& run,
                                const model::ModelRun<Scalar>& repeatedRun, int layer, int head,
                                int prefixLength, int period) {
    const auto isToken = [](const std::vector<int>& mask, int i) {
        return mask.empty() || mask[static_cast<size_t>(i)] != 0;
    };
    const auto meanOf = [](double sum, int count) { return count > 0 ? sum / count : kNaN; };
    const int T = static_cast<int>(run.tokens.size());
    const model::Matrix<Scalar>& w = run.layers[layer].weights[head];
    double entropy = 0, first = 0, previous = 0, self = 0;
    int rows = 0, previousRows = 0;
    for (int i = 0; i < T; ++i) {
        if (!isToken(run.attentionMask, i)) continue;
        ++rows;
        for (int j = 0; j < T; ++j) {
            const double p = static_cast<double>(w(i, j));
            if (p > 0) entropy -= p * std::log(p);
        }
        first += static_cast<double>(w(i, 0));
        self += static_cast<double>(w(i, i));
        if (i >= 1) {
            previous += static_cast<double>(w(i, i - 1));
            ++previousRows;
        }
    }
    PreviousScores s;
    s.entropy = meanOf(entropy, rows);
    s.firstToken = meanOf(first, rows);
    s.previousToken = meanOf(previous, previousRows);
    s.self = meanOf(self, rows);
    const int P = prefixLength, N = period;
    const model::Matrix<Scalar>& r = repeatedRun.layers[layer].weights[head];
    double sum = 0;
    int inductionRows = 0;
    for (int i = 0; i < N; ++i) {
        if (!isToken(repeatedRun.attentionMask, P + N + i)) continue;
        sum += static_cast<double>(r(P + N + i, P + i + 1));
        ++inductionRows;
    }
    s.induction = meanOf(sum, inductionRows);
    return s;
}

// The scores the previous code path had, by key.
const std::vector<std::string> kPreviousKeys = {"entropy", "first_token", "previous_token", "self",
                                                "induction"};

// The previous code path's number for the score `key`; nothing for a score added since.
std::optional<double> previousScore(const PreviousScores& s, const std::string& key) {
    if (key == "entropy") return s.entropy;
    if (key == "first_token") return s.firstToken;
    if (key == "previous_token") return s.previousToken;
    if (key == "self") return s.self;
    if (key == "induction") return s.induction;
    return std::nullopt;
}

// The same bits, NaN included.
bool identical(double a, double b) {
    return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
}

QString mismatch(const char* key, int layer, int head, double got, double expected) {
    return QStringLiteral("%1 of L%2 H%3: %4, previously %5")
        .arg(QString::fromUtf8(key))
        .arg(layer)
        .arg(head)
        .arg(got, 0, 'g', 17)
        .arg(expected, 0, 'g', 17);
}

// Every row measured on every head of `run` (and, for a repeated-run row, of `repeatedRun`,
// prefix + `period` tokens twice) against the previous code path, and summarizeHeads +
// addRepeatedRunScores against the rows.
template <typename Scalar>
void checkEveryRow(const model::ModelRun<Scalar>& run, const model::ModelRun<Scalar>& repeatedRun,
                   int prefixLength, int period) {
    std::vector<model::HeadSummary> summaries = model::summarizeHeads(run);
    for (const model::HeadSummary& s : summaries) {
        for (const model::HeadScore& score : model::headScores()) {
            if (score.needsRepeatedRun) QVERIFY(std::isnan(s.*score.value));
        }
    }
    model::addRepeatedRunScores(summaries, repeatedRun, prefixLength, period);
    const int heads = run.config.heads;
    QCOMPARE(int(summaries.size()), run.config.layers * heads);
    for (int layer = 0; layer < run.config.layers; ++layer) {
        for (int head = 0; head < heads; ++head) {
            const PreviousScores previous =
                previousCodePath(run, repeatedRun, layer, head, prefixLength, period);
            const model::HeadSummary& summary = summaries[size_t(layer * heads + head)];
            QCOMPARE(summary.layer, layer);
            QCOMPARE(summary.head, head);
            for (const model::HeadScore& score : model::headScores()) {
                const double measured =
                    score.needsRepeatedRun
                        ? score.measure(model::HeadWeights(repeatedRun.layers[layer].weights[head],
                                                           repeatedRun.attentionMask,
                                                           {prefixLength, period}))
                        : score.measure(model::HeadWeights(run.layers[layer].weights[head],
                                                           run.attentionMask));
                const std::optional<double> expected = previousScore(previous, score.key);
                if (expected) {
                    QVERIFY2(identical(measured, *expected),
                             qPrintable(mismatch(score.key, layer, head, measured, *expected)));
                }
                QVERIFY2(
                    identical(summary.*score.value, measured),
                    qPrintable(mismatch(score.key, layer, head, summary.*score.value, measured)));
            }
        }
    }
}

std::vector<long long> twice(const std::vector<long long>& prefix,
                             const std::vector<long long>& text) {
    std::vector<long long> ids = prefix;
    ids.insert(ids.end(), text.begin(), text.end());
    ids.insert(ids.end(), text.begin(), text.end());
    return ids;
}

}  // namespace

class TestHeadScores : public QObject {
    Q_OBJECT
private slots:
    void rowsAreWellFormed() {
        const std::vector<model::HeadScore>& rows = model::headScores();
        QVERIFY(!rows.empty());
        std::set<std::string> keys;
        std::vector<double model::HeadSummary::*> fields;  // member pointers have no order
        for (const model::HeadScore& score : rows) {
            QVERIFY(score.key && *score.key);
            QVERIFY2(score.label && *score.label, score.key);
            QVERIFY2(score.shortLabel && *score.shortLabel, score.key);
            QVERIFY2(score.help && *score.help, score.key);
            QVERIFY2(score.value && score.measure, score.key);
            // A key is a JSON key and a CSV column: lower case, digits and underscores.
            for (const char* c = score.key; *c; ++c)
                QVERIFY2((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_',
                         score.key);
            QVERIFY2(keys.insert(score.key).second, score.key);
            QVERIFY2(std::find(fields.begin(), fields.end(), score.value) == fields.end(),
                     score.key);
            fields.push_back(score.value);
            QCOMPARE(&model::headScore(score.key), &score);
        }
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, model::headScore("no_such_score"));
        // The previous scores come first, in their order: `heads --json`'s keys and the CSV's
        // columns stay as they were, and a new score is a key or column after them.
        QVERIFY(rows.size() >= kPreviousKeys.size());
        for (size_t i = 0; i < kPreviousKeys.size(); ++i)
            QCOMPARE(std::string(rows[i].key), kPreviousKeys[i]);
    }

    void measuresGiveThePreviousNumbers_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<bool>("padded");
        for (const char* name : {"gpt2-tiny", "llama-tiny-gqa", "qwen3-tiny", "bert-tiny"})
            QTest::newRow(name) << QString(name) << false;
        QTest::newRow("bert-tiny padded") << QString("bert-tiny") << true;
    }
    void measuresGiveThePreviousNumbers() {
        QFETCH(QString, model);
        QFETCH(bool, padded);
        const io::ModelFolder folder(goldenModelDir(model));
        const std::vector<long long> text = {7, 41, 3, 59, 22, 15, 36};
        model::RunOptions options;
        std::vector<long long> ids = text;
        if (padded) {
            ids = {7, 41, 3, 59, 22, 0, 0};
            options.attentionMask = {1, 1, 1, 1, 1, 0, 0};
        }
        // The repeated run after a one-token prefix, so that P is not 0.
        const std::vector<long long> repeated = twice({5}, {41, 3, 59});
        checkEveryRow(model::runModel<double>(folder.model(), ids, options),
                      model::runModel<double>(folder.model(), repeated), 1, 3);
        checkEveryRow(model::runModel<float>(folder.model(), ids, options),
                      model::runModel<float>(folder.model(), repeated), 1, 3);
        // And a text measured on its own repetition, as `heads --induction-random` does.
        checkEveryRow(model::runModel<double>(folder.model(), twice({}, text)),
                      model::runModel<double>(folder.model(), twice({}, text)), 0, 7);
    }

    // A what-if's summaries start at its layer; the repeated-run scores land on their heads.
    void repeatedRunScoresFollowTheSummariesHeads() {
        const io::ModelFolder folder(goldenModelDir("gpt2-tiny"));
        const auto run = model::runModel<double>(folder.model(), {7, 41, 3, 59});
        const auto repeated = model::runModel<double>(folder.model(), twice({}, {7, 41, 3, 59}));
        std::vector<model::HeadSummary> later = model::summarizeHeads(run, 1);
        model::addRepeatedRunScores(later, repeated, 0, 4);
        const std::vector<double> induction = model::inductionScores(repeated, 0, 4);
        const int heads = folder.model().config.heads;
        QCOMPARE(int(later.size()), (folder.model().config.layers - 1) * heads);
        for (const model::HeadSummary& s : later) {
            QVERIFY(s.layer >= 1);
            QVERIFY(identical(s.induction, induction[size_t(s.layer * heads + s.head)]));
        }
        QVERIFY_THROWS_EXCEPTION(model::ModelError,
                                 model::addRepeatedRunScores(later, repeated, 0, 3));
    }
};

QTEST_APPLESS_MAIN(TestHeadScores)
#include "test_head_scores.moc"
