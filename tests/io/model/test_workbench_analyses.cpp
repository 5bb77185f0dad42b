// The workbench's analyses (core/model/workbench.h, written by io/model/analysis_result.h) against
// shared/reference/analysis_reference.py: every golden analysis of tests/data/analyses (its
// README has the arguments) within the reference's tolerance, computed in double; the
// identities the reference asserts (the attribution's parts sum to the logit difference, the lens
// at the last boundary is the model's logits); and the refusals, worded as the reference words
// them.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>
#include <algorithm>
#include <cmath>

#include "core/model/model_analysis.h"
#include "core/model/model_steps.h"
#include "core/model/workbench.h"
#include "io/model/analysis_result.h"
#include "io/model/model_folder.h"
#include "support/model_checks.h"

using namespace ae;
using namespace ae::testing;

namespace {

const std::vector<long long> kIds{7, 41, 3, 59, 22, 15, 36};
const std::vector<long long> kCorrupt{7, 41, 3, 12, 22, 15, 36};  // position 3 differs

// analysis_reference.compare: every number of `want` within |a − b| / (1 + |b|), every integer,
// string and structure exactly. Returns the first structural difference (and the worst number
// in `worst`, `where`).
QString compareJson(const QJsonValue& got, const QJsonValue& want, const QString& path,
                    double& worst, QString& where) {
    if (want.isObject()) {
        if (!got.isObject()) return path + ": expected an object";
        const QJsonObject g = got.toObject(), w = want.toObject();
        for (auto it = w.begin(); it != w.end(); ++it) {
            if (!g.contains(it.key())) return path + "." + it.key() + " missing";
            const QString why =
                compareJson(g[it.key()], it.value(), path + "." + it.key(), worst, where);
            if (!why.isEmpty()) return why;
        }
        return {};
    }
    if (want.isArray()) {
        const QJsonArray g = got.toArray(), w = want.toArray();
        if (!got.isArray() || g.size() != w.size())
            return path + QStringLiteral(": expected a list of %1").arg(w.size());
        for (qsizetype i = 0; i < w.size(); ++i) {
            const QString why =
                compareJson(g[i], w[i], path + QStringLiteral("[%1]").arg(i), worst, where);
            if (!why.isEmpty()) return why;
        }
        return {};
    }
    if (want.isDouble()) {
        if (!got.isDouble()) return path + ": expected a number";
        const double e =
            std::abs(got.toDouble() - want.toDouble()) / (1.0 + std::abs(want.toDouble()));
        if (!(e <= worst)) {
            worst = e;
            where = path;
        }
        return {};
    }
    return got == want ? QString() : path + ": differs";
}

QJsonObject parsed(const QByteArray& json) {
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &error);
    if (error.error != QJsonParseError::NoError)
        qFatal("result JSON: %s", qPrintable(error.errorString()));
    return doc.object();
}

QByteArray analysed(const QString& name, const QString& mode) {
    const io::ModelFolder folder(goldenModelDir(name));
    const model::Model& m = folder.model();
    if (mode == "composition") return io::compositionJson(m.config, model::compositionScores(m));
    const auto run = model::runModel<double>(m, kIds);
    if (mode == "lens") return io::lensJson(m.config, kIds, model::logitLens(m, run, {5, 9}, 5));
    if (mode == "dla")
        return io::attributionJson(m.config, kIds, model::directLogitAttribution(m, run, -1, 5, 9));
    if (mode == "patch")
        return io::patchingJson(m.config, kIds, kCorrupt,
                                model::activationPatching<double>(m, kIds, kCorrupt, -1, 5, 9));
    return io::valueNormsJson(m.config, kIds, model::valueNorms(m, run));
}

QString refusal(const QString& name, model::Analysis analysis) {
    const io::ModelFolder folder(goldenModelDir(name));
    try {
        model::requireAnalysis(folder.model().config, analysis);
    } catch (const model::ModelError& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

}  // namespace

class TestWorkbenchAnalyses : public QObject {
    Q_OBJECT

private slots:
    void goldenAnalysesMatch_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("mode");
        // Every file of tests/data/analyses: the shared kit's five models, and the families
        // added here (encoders: value_norms and composition only).
        const QDir root(QStringLiteral(AE_TEST_DATA_DIR "/analyses"));
        int files = 0;
        for (const QString& name : root.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name))
            for (const char* mode : {"lens", "dla", "patch", "value_norms", "composition"})
                if (QFileInfo::exists(root.filePath(name + "/" + mode + ".json"))) {
                    QTest::newRow(qPrintable(name + "/" + mode)) << name << QString(mode);
                    ++files;
                }
        QVERIFY(files >= 52);
    }
    void goldenAnalysesMatch() {
        QFETCH(QString, name);
        QFETCH(QString, mode);
        const QJsonObject want =
            readJsonFile(QStringLiteral(AE_TEST_DATA_DIR "/analyses/%1/%2.json").arg(name, mode));
        double worst = 0;
        QString where;
        const QString why = compareJson(parsed(analysed(name, mode)), want, mode, worst, where);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        qInfo("%s %s: worst relative error %.3g at %s", qPrintable(name), qPrintable(mode), worst,
              qPrintable(where));
        QVERIFY2(worst <= 1e-4, qPrintable(where));
    }

    // On every decoder golden: the attribution's parts sum to the logit difference (to 1e-9, as
    // the reference asserts), and the lens at the last boundary is the model's logits.
    void identitiesHold() {
        int decoders = 0;
        for (const QString& name : kGoldenModels) {
            const io::ModelFolder folder(goldenModelDir(name));
            const model::Model& m = folder.model();
            if (!m.config.isDecoder()) continue;
            ++decoders;
            const auto run = model::runModel<double>(m, kIds);
            for (long long foil : {-1LL, 9LL}) {
                const model::AttributionResult a =
                    model::directLogitAttribution(m, run, 4, 5, foil);
                QVERIFY2(
                    std::abs(a.sum - a.logitDifference) / (1 + std::abs(a.logitDifference)) <= 1e-9,
                    qPrintable(name));
                const double expected = run.logits(4, 5) - (foil >= 0 ? run.logits(4, 9) : 0.0);
                QVERIFY2(std::abs(a.logitDifference - expected) <= 1e-12 * (1 + std::abs(expected)),
                         qPrintable(name));
            }
            const model::LensResult lens = model::logitLens(m, run, {5}, 3);
            const auto& last = lens.topIds.back();
            for (Eigen::Index t = 0; t < run.logits.rows(); ++t) {
                Eigen::Index best = 0;
                run.logits.row(t).maxCoeff(&best);
                QCOMPARE(last[static_cast<std::size_t>(t)].front(), static_cast<long long>(best));
            }
            const model::Matrix<double> again = model::finalHeadLogits(
                m, model::layerOutput(m, m.config.layers - 1, run.layers.back().hiddenIn,
                                      run.options));
            QVERIFY2((again - run.logits).cwiseAbs().maxCoeff() <= 1e-12, qPrintable(name));
        }
        QVERIFY(decoders >= 10);
    }

    // Patching every row entering layer 0 restores the clean metric (effect 1), patching nothing
    // leaves the corrupted one (0); a row the two texts share, at layer 0, changes nothing; equal
    // texts and texts of different lengths are refused.
    void patchingIdentities() {
        const io::ModelFolder folder(goldenModelDir("llama-tiny-gqa"));
        const model::Model& m = folder.model();
        const model::PatchingResult p =
            model::activationPatching<double>(m, kIds, kCorrupt, -1, 5, 9);
        const auto clean = model::runModel<double>(m, kIds);
        const auto corrupt = model::runModel<double>(m, kCorrupt);
        const double all = model::metricAfter(m, 0, clean.layers[0].hiddenIn, -1, 5, 9);
        const double none = model::metricAfter(m, 0, corrupt.layers[0].hiddenIn, -1, 5, 9);
        const double span = p.cleanMetric - p.corruptMetric;
        QVERIFY(std::abs((all - p.corruptMetric) / span - 1.0) <= 1e-12);
        QVERIFY(std::abs((none - p.corruptMetric) / span) <= 1e-12);
        for (int t = 0; t < 7; ++t) {
            if (t == 3) continue;
            QCOMPARE(p.residual[0][static_cast<std::size_t>(t)], 0.0);
        }
        QVERIFY(p.residual[0][3] != 0.0);
        QVERIFY_THROWS_EXCEPTION(model::ModelError,
                                 model::activationPatching<double>(m, kIds, kIds, -1, 5, 9));
        QVERIFY_THROWS_EXCEPTION(model::ModelError,
                                 model::activationPatching<double>(m, kIds, {7, 41}, -1, 5, 9));
        QVERIFY_THROWS_EXCEPTION(model::ModelError,
                                 model::activationPatching<double>(m, kIds, kCorrupt, -1, 5, 5));
    }

    // The sweep reports its progress after every patched run, ending at 1, and stops when asked;
    // a sweep of the head outputs alone leaves the other lists empty and gives the same numbers.
    void patchingProgressAndCancel() {
        const io::ModelFolder folder(goldenModelDir("gpt2-tiny"));
        const model::Model& m = folder.model();
        std::vector<double> seen;
        const model::PatchingResult all =
            model::activationPatching<double>(m, kIds, kCorrupt, -1, 5, 9, [&](double done) {
                seen.push_back(done);
                return true;
            });
        const std::size_t runs = 2 * 2 * 4 + 2 * 7;  // L·H heads, L·H patterns, L·T rows
        QCOMPARE(seen.size(), runs);
        QVERIFY(std::is_sorted(seen.begin(), seen.end()));
        QCOMPARE(seen.back(), 1.0);
        int calls = 0;
        QVERIFY_THROWS_EXCEPTION(model::RunCancelled, model::activationPatching<double>(
                                                          m, kIds, kCorrupt, -1, 5, 9,
                                                          [&](double) { return ++calls < 3; }));
        QCOMPARE(calls, 3);
        const model::PatchingResult heads = model::activationPatching<double>(
            m, kIds, kCorrupt, -1, 5, 9, {}, model::PatchingSweeps{true, false, false});
        for (std::size_t l = 0; l < all.heads.size(); ++l)
            for (std::size_t h = 0; h < all.heads[l].size(); ++h)
                QVERIFY(std::abs(heads.heads[l][h] - all.heads[l][h]) <= 1e-12);
        QVERIFY(heads.pattern[0].empty() && heads.residual[0].empty());
    }

    // Scores lie in [0, 1], and a head composes only with the later layers' heads.
    void compositionIsBoundedAndForward() {
        const io::ModelFolder folder(goldenModelDir("gemma3-tiny"));
        const model::CompositionResult c = model::compositionScores(folder.model());
        const int H = folder.model().config.heads, N = static_cast<int>(c.q.rows());
        for (const model::Matrix<double>* s : {&c.q, &c.k, &c.v}) {
            QVERIFY(s->minCoeff() >= 0 && s->maxCoeff() <= 1 + 1e-12);
            for (int i = 0; i < N; ++i)
                for (int j = 0; j < N; ++j)
                    if (i / H >= j / H) QCOMPARE((*s)(i, j), 0.0);
            QVERIFY(s->maxCoeff() > 0);
        }
    }

    // Heads switched off (the edited model of a what-if) are off in both runs: the metrics are
    // the ablated runs', and patching such a head changes nothing.
    void patchingAnEditedModel() {
        const io::ModelFolder folder(goldenModelDir("gpt2-tiny"));
        const model::Model& m = folder.model();
        const std::vector<model::HeadAblation> off{{0, 1}, {1, 3}};
        const model::PatchingResult p =
            model::activationPatching<double>(m, kIds, kCorrupt, -1, 5, 9, {}, {}, off);
        model::RunOptions options;
        options.ablations = off;
        const auto clean = model::runModel<double>(m, kIds, options);
        const auto corrupt = model::runModel<double>(m, kCorrupt, options);
        QVERIFY(std::abs(p.cleanMetric - (clean.logits(6, 5) - clean.logits(6, 9))) <= 1e-12);
        QVERIFY(std::abs(p.corruptMetric - (corrupt.logits(6, 5) - corrupt.logits(6, 9))) <= 1e-12);
        QVERIFY(std::abs(p.heads[0][1]) <= 1e-12 && std::abs(p.pattern[1][3]) <= 1e-12);
        QVERIFY(std::abs(p.heads[0][0]) > 1e-6);
        const model::PatchingResult unedited =
            model::activationPatching<double>(m, kIds, kCorrupt, -1, 5, 9);
        QVERIFY(std::abs(unedited.heads[0][1]) > 1e-6);
        QVERIFY_THROWS_EXCEPTION(
            model::ModelError,
            model::activationPatching<double>(m, kIds, kCorrupt, -1, 5, 9, {}, {}, {{2, 0}}));
    }

    // The heads table's sink_norm (a row of the scores' table, measured with the values) is the
    // reference's value_norms sink_norm, for every golden decoder; without the values it is NaN.
    void sinkNormScoreIsTheAnalysis() {
        int checked = 0;
        for (const char* name :
             {"gpt2-tiny", "llama-tiny-gqa", "qwen3-tiny", "gemma2-tiny", "pythia-tiny"}) {
            const io::ModelFolder folder(goldenModelDir(name));
            const model::Model& m = folder.model();
            const auto run = model::runModel<double>(m, kIds);
            std::vector<model::HeadSummary> summaries = model::summarizeHeads(run);
            QVERIFY(std::isnan(summaries.front().sinkNorm));
            model::addValueNormScores(summaries, m, run);
            const model::ValueNormsResult expected = model::valueNorms(m, run);
            QCOMPARE(static_cast<int>(summaries.size()), m.config.layers * m.config.heads);
            for (const model::HeadSummary& s : summaries) {
                const double want = expected.sinkNorm[static_cast<std::size_t>(s.layer)]
                                                     [static_cast<std::size_t>(s.head)];
                QVERIFY2(std::abs(s.sinkNorm - want) <= 1e-12, name);
                ++checked;
            }
        }
        QVERIFY(checked > 0);
    }

    // Random heads' composition is about 1/sqrt(d) (a rotation-invariant factor keeps about 1/d
    // of the squared norm of a product), the same for the same seed, and refused for no shape.
    void compositionBaselineOfRandomWeights() {
        for (const auto& [d, hd] : {std::pair{64, 16}, std::pair{256, 32}}) {
            const double baseline = model::randomCompositionBaseline(d, hd);
            QVERIFY2(baseline > 0.8 / std::sqrt(d) && baseline < 1.25 / std::sqrt(d),
                     qPrintable(QString::number(baseline)));
            QCOMPARE(model::randomCompositionBaseline(d, hd), baseline);
            QVERIFY(model::randomCompositionBaseline(d, hd, 16, 2) != baseline);
        }
        QVERIFY_THROWS_EXCEPTION(model::ModelError, model::randomCompositionBaseline(0, 8));
    }

    void refusedAsTheReferenceRefuses() {
        QCOMPARE(refusal("bert-tiny", model::Analysis::Attribution),
                 QStringLiteral("dla is not defined for bert: it is post-norm (a LayerNorm follows "
                                "every residual add and rescales all earlier components together), "
                                "so no component reaches the output through one frozen norm"));
        QCOMPARE(refusal("modernbert-tiny", model::Analysis::Lens),
                 QStringLiteral("lens is not defined for modernbert: it reads a causal LM head's "
                                "logits, and modernbert is an encoder (its result ends in "
                                "last_hidden; masked-LM heads are not covered by the analyses "
                                "yet)"));
        QVERIFY(refusal("deberta-v2-tiny", model::Analysis::ValueNorms).isEmpty());
        QVERIFY(refusal("mpnet-tiny", model::Analysis::Composition).isEmpty());
        const io::ModelFolder gpt2(goldenModelDir("gpt2-tiny"));
        const auto run = model::runModel<double>(gpt2.model(), kIds);
        QVERIFY_THROWS_EXCEPTION(model::ModelError,
                                 model::directLogitAttribution(gpt2.model(), run, -1, 5, 5));
        QVERIFY_THROWS_EXCEPTION(model::ModelError,
                                 model::directLogitAttribution(gpt2.model(), run, 7, 5, -1));
        QVERIFY_THROWS_EXCEPTION(model::ModelError, model::logitLens(gpt2.model(), run, {64}, 5));
    }
};

QTEST_GUILESS_MAIN(TestWorkbenchAnalyses)
#include "test_workbench_analyses.moc"
