// Typing in a decoder's text: model::rerunModel runs only the positions from the first changed
// token on, taking the rows before it from the previous run (with or without its maps), and gives
// what a fresh runModel gives, to rounding. Where nothing can be reused (bert, padding,
// mean ablation, a what-if run) it is runModel itself.
#include <QtTest>

#include "io/model/model_folder.h"
#include "support/model_checks.h"

using namespace ae;
using namespace ae::testing;

namespace {

// The reused rows are the previous run's own numbers; the new rows come from products on fewer
// rows, whose sums may be grouped differently: agreement to double rounding, not bit for bit.
constexpr double kDoubleTolerance = 1e-12;
// The same in float, relative to 1 + |b| as everywhere in these tests.
constexpr double kFloatTolerance = 2e-5;

// `ids` with the token at `position` replaced by another valid one.
std::vector<long long> replaced(std::vector<long long> ids, std::size_t position, int vocab) {
    ids[position] = (ids[position] + 1) % vocab;
    return ids;
}

double worstOverRun(const model::ModelRun<double>& a, const model::ModelRun<double>& b) {
    double worst = finalDifference(a, b);
    for (int l = 0; l < a.config.layers; ++l)
        worst = std::max(worst, layerDifference(a, b, l));
    return worst;
}

const QStringList kDecoders = {"gpt2-tiny",  "gpt2-tiny-orig",  "llama-tiny-gqa",
                               "qwen3-tiny", "llama-tiny-bf16", "llama-tiny-rope-scaled"};

}  // namespace

class TestModelRerun : public QObject {
    Q_OBJECT
private slots:
    void editsGiveTheFreshRun_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("edit");
        for (const QString& name : kDecoders) {
            for (const char* edit : {"middle", "append", "truncate", "last"})
                QTest::newRow(qPrintable(name + " " + edit)) << name << QString(edit);
        }
    }

    // A changed token in the middle, a token typed at the end, the last two deleted, the last
    // one changed: every layer's records and every logit as a fresh run on the new ids, and the
    // rows before the edit reused (the prefix is what was expected).
    void editsGiveTheFreshRun() {
        QFETCH(QString, name);
        QFETCH(QString, edit);
        const io::ModelFolder folder(goldenModelDir(name));
        const model::Model& m = folder.model();
        const std::vector<long long> ids = goldenInput(name).ids;
        QVERIFY(ids.size() >= 4);
        const std::size_t T = ids.size();
        std::vector<long long> edited;
        long long expectedPrefix = 0;
        if (edit == "middle") {
            edited = replaced(ids, T / 2, m.config.vocab);
            expectedPrefix = static_cast<long long>(T / 2);
        } else if (edit == "append") {
            edited = ids;
            edited.push_back(ids[1]);
            expectedPrefix = static_cast<long long>(T);
        } else if (edit == "truncate") {
            edited.assign(ids.begin(), ids.end() - 2);
            expectedPrefix = static_cast<long long>(T - 3);  // the last row is always run
        } else {
            edited = replaced(ids, T - 1, m.config.vocab);
            expectedPrefix = static_cast<long long>(T - 1);
        }
        const auto previous = model::runModel<double>(m, ids);
        QCOMPARE(model::reusablePrefix<double>(m, previous, edited), expectedPrefix);
        const auto rerun = model::rerunModel<double>(m, previous, edited);
        const auto fresh = model::runModel<double>(m, edited);
        QCOMPARE(rerun.tokens, edited);
        QCOMPARE(rerun.logitsFrom, fresh.logitsFrom);
        const double worst = worstOverRun(rerun, fresh);
        QVERIFY2(worst <= kDoubleTolerance, qPrintable(QString::number(worst)));
    }

    // The rows before the edit really are the previous run's: a number planted there comes
    // through (so a rerun that silently ran everything again would fail here).
    void theRowsBeforeTheEditAreTakenFromThePreviousRun() {
        const io::ModelFolder folder(goldenModelDir("llama-tiny-gqa"));
        const model::Model& m = folder.model();
        const std::vector<long long> ids = goldenInput("llama-tiny-gqa").ids;
        auto previous = model::runModel<double>(m, ids);
        previous.layers[1].weights[0](1, 0) = 42.0;
        previous.layers[0].query(0, 0) = -7.0;
        const auto rerun =
            model::rerunModel<double>(m, previous, replaced(ids, ids.size() - 1, m.config.vocab));
        QCOMPARE(rerun.layers[1].weights[0](1, 0), 42.0);
        QCOMPARE(rerun.layers[0].query(0, 0), -7.0);
    }

    // Every logit row kept: the prefix rows come from the previous run, the rest are new, and
    // all agree with a fresh run's.
    void everyPositionsLogits() {
        const io::ModelFolder folder(goldenModelDir("gpt2-tiny"));
        const model::Model& m = folder.model();
        const std::vector<long long> ids = goldenInput("gpt2-tiny").ids;
        model::RunOptions lastOnly;
        lastOnly.logitsForEveryPosition = false;
        const std::vector<long long> edited = replaced(ids, ids.size() / 2, m.config.vocab);
        for (const model::RunOptions& options : {model::RunOptions{}, lastOnly}) {
            const auto previous = model::runModel<double>(m, ids, options);
            const auto rerun = model::rerunModel<double>(m, previous, edited, options);
            const auto fresh = model::runModel<double>(m, edited, options);
            QCOMPARE(rerun.logits.rows(), fresh.logits.rows());
            QVERIFY(worstOverRun(rerun, fresh) <= kDoubleTolerance);
            QVERIFY(worstRelative(rerun.finalHidden, fresh.finalHidden) <= kDoubleTolerance);
        }
    }

    // Heads switched off by zeroing stay off in the new rows too.
    void zeroAblationIsReused() {
        const io::ModelFolder folder(goldenModelDir("qwen3-tiny"));
        const model::Model& m = folder.model();
        const std::vector<long long> ids = goldenInput("qwen3-tiny").ids;
        model::RunOptions options;
        options.ablations = {{0, 1}, {1, 0}};
        const auto previous = model::runModel<double>(m, ids, options);
        const std::vector<long long> edited = replaced(ids, ids.size() / 2, m.config.vocab);
        QVERIFY(model::reusablePrefix<double>(m, previous, edited, options) > 0);
        const auto rerun = model::rerunModel<double>(m, previous, edited, options);
        QVERIFY(worstOverRun(rerun, model::runModel<double>(m, edited, options)) <=
                kDoubleTolerance);
    }

    // A run that dropped its maps (the window's planned memory on a long text) still lends its
    // rows: each layer's residual input, q, k and v before the edit are the previous run's own
    // (a number planted there comes through), the maps are attended again, and the digests, the
    // kept records and the logits are a fresh run's.
    void aRunWithoutMapsLendsItsRows() {
        for (const QString& name : kDecoders) {
            const io::ModelFolder folder(goldenModelDir(name));
            const model::Model& m = folder.model();
            const std::vector<long long> ids = goldenInput(name).ids;
            model::RunOptions options;
            options.keptMaps = model::RunOptions::KeptMaps::Chosen;
            options.keepDigest = true;
            options.logitsForEveryPosition = false;
            const std::vector<long long> edited = replaced(ids, ids.size() / 2, m.config.vocab);
            auto previous = model::runModel<double>(m, ids, options);
            QCOMPARE(model::reusablePrefix<double>(m, previous, edited, options),
                     static_cast<long long>(ids.size() / 2));
            const auto rerun = model::rerunModel<double>(m, previous, edited, options);
            const auto fresh = model::runModel<double>(m, edited, options);
            QVERIFY2(finalDifference(rerun, fresh) <= kDoubleTolerance, qPrintable(name));
            for (int l = 0; l < m.config.layers; ++l) {
                const auto& x = rerun.layers[static_cast<std::size_t>(l)];
                const auto& y = fresh.layers[static_cast<std::size_t>(l)];
                QVERIFY(!x.hasMaps());
                QVERIFY2(layerDifference(rerun, fresh, l) <= kDoubleTolerance, qPrintable(name));
                QVERIFY2(worstRelative(x.digest.weightSum, y.digest.weightSum) <= kDoubleTolerance,
                         qPrintable(name));
                QCOMPARE(x.digest.heads.size(), y.digest.heads.size());
                for (std::size_t h = 0; h < y.digest.heads.size(); ++h) {
                    const model::HeadDigest& a = x.digest.heads[h];
                    const model::HeadDigest& b = y.digest.heads[h];
                    QCOMPARE(a.pooled.size(), b.pooled.size());
                    for (std::size_t i = 0; i < b.pooled.size(); ++i)
                        QVERIFY(std::abs(a.pooled[i] - b.pooled[i]) <= 1e-6);
                    QVERIFY(std::abs(a.summary.entropy - b.summary.entropy) <= kDoubleTolerance);
                    QVERIFY(std::abs(a.summary.previousToken - b.summary.previousToken) <=
                            kDoubleTolerance);
                }
            }
            previous.layers[1].key(0, 0) = -7.0;
            previous.layers[0].hiddenIn(1, 0) = 5.0;
            const auto planted = model::rerunModel<double>(m, previous, edited, options);
            QCOMPARE(planted.layers[1].key(0, 0), -7.0);
            QCOMPARE(planted.layers[0].hiddenIn(1, 0), 5.0);
        }
    }

    void nothingIsReusedWhereEarlierRowsChange_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("why");
        QTest::newRow("bert sees every key") << "bert-tiny"
                                             << "encoder";
        QTest::newRow("padding") << "gpt2-tiny"
                                 << "padding";
        QTest::newRow("mean ablation") << "gpt2-tiny"
                                       << "mean";
        QTest::newRow("other ablations") << "llama-tiny-gqa"
                                         << "ablations";
        QTest::newRow("a what-if run") << "llama-tiny-gqa"
                                       << "what-if";
        QTest::newRow("edit at 0") << "gpt2-tiny"
                                   << "first";
    }

    // Then rerunModel is runModel, bit for bit.
    void nothingIsReusedWhereEarlierRowsChange() {
        QFETCH(QString, name);
        QFETCH(QString, why);
        const io::ModelFolder folder(goldenModelDir(name));
        const model::Model& m = folder.model();
        const GoldenInput input = goldenInput(name);
        std::vector<long long> ids = input.ids;
        model::RunOptions before = input.options, after = input.options;
        std::size_t at = ids.size() / 2;
        if (why == "padding") {
            before.attentionMask.assign(ids.size(), 1);
            before.attentionMask.back() = 0;
            after.attentionMask = before.attentionMask;
        } else if (why == "mean") {
            before.ablations = {{0, 0}};
            before.ablationMode = model::AblationMode::Mean;
            after = before;
        } else if (why == "ablations") {
            after.ablations = {{1, 1}};
        } else if (why == "first") {
            at = 0;
        }
        auto previous = model::runModel<double>(m, ids, before);
        if (why == "what-if") {
            model::Matrix<double> attentionOut =
                model::Matrix<double>::Zero(static_cast<Eigen::Index>(ids.size()), m.config.hidden);
            model::resumeAfterAttention<double>(m, previous, 0, previous.layers[0].hiddenIn,
                                                attentionOut, before);
        }
        const std::vector<long long> edited = replaced(ids, at, m.config.vocab);
        QCOMPARE(model::reusablePrefix<double>(m, previous, edited, after), 0LL);
        const auto rerun = model::rerunModel<double>(m, previous, edited, after);
        const auto fresh = model::runModel<double>(m, edited, after);
        for (int l = 0; l < m.config.layers; ++l)
            QVERIFY(bitIdentical(rerun.layers[static_cast<std::size_t>(l)],
                                 fresh.layers[static_cast<std::size_t>(l)]));
        QVERIFY(finalDifference(rerun, fresh) == 0.0);
    }

    // The window's precision.
    void floatAgreesToFloatRounding() {
        for (const QString& name : kDecoders) {
            const io::ModelFolder folder(goldenModelDir(name));
            const model::Model& m = folder.model();
            const std::vector<long long> ids = goldenInput(name).ids;
            const std::vector<long long> edited = replaced(ids, ids.size() / 2, m.config.vocab);
            const auto previous = model::runModel<float>(m, ids);
            const auto rerun = model::rerunModel<float>(m, previous, edited);
            const auto fresh = model::runModel<float>(m, edited);
            const MatrixR a = rerun.logits.cast<double>(), b = fresh.logits.cast<double>();
            QVERIFY2(worstRelative(a, b) <= kFloatTolerance, qPrintable(name));
            for (int l = 0; l < m.config.layers; ++l) {
                for (std::size_t h = 0; h < fresh.layers[l].weights.size(); ++h) {
                    const MatrixR x = rerun.layers[l].weights[h].cast<double>();
                    const MatrixR y = fresh.layers[l].weights[h].cast<double>();
                    QVERIFY2(worstRelative(x, y) <= kFloatTolerance, qPrintable(name));
                }
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestModelRerun)
#include "test_model_rerun.moc"
