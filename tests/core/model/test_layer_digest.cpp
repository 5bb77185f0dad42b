// Layer digests (core/model/layer_digest.h): what a run keeps of every head when it drops the
// maps. On every golden model and input, in float and double, a run that keeps no maps has the
// same digests, bit for bit, as one that keeps them all, and those digests are what the views
// measured from the full maps before: summarizeHeads's scores, the grid's pooled maps, rollout's
// sum over heads. Induction measured by the pass equals inductionScores on the kept maps.
#include <QJsonArray>
#include <QJsonObject>
#include <QtTest>
#include <cmath>

#include "core/model/model.h"
#include "core/model/model_analysis.h"
#include "io/model/model_folder.h"
#include "support/model_checks.h"

using namespace ae;
using namespace ae::testing;

namespace {

// Equal, NaN included (a score no row defines is NaN in both).
bool same(double a, double b) {
    return (std::isnan(a) && std::isnan(b)) || a == b;
}

bool sameSummary(const model::HeadSummary& a, const model::HeadSummary& b) {
    if (a.layer != b.layer || a.head != b.head) return false;
    for (const model::HeadScore& score : model::headScores())
        if (!same(a.*score.value, b.*score.value)) return false;
    return true;
}

template <typename Scalar>
void digestsMatchTheMaps(const QString& name, const QString& expectedFile) {
    const io::ModelFolder folder(goldenModelDir(name));
    const model::Model& m = folder.model();
    const GoldenInput input = goldenInput(name, expectedFile);
    const std::vector<long long>& ids = input.ids;
    model::RunOptions plain;
    plain.attentionMask = input.options.attentionMask;
    const model::ModelRun<Scalar> full = model::runModel<Scalar>(m, ids, plain);

    model::RunOptions every = plain;
    every.keepDigest = true;
    const model::ModelRun<Scalar> withMaps = model::runModel<Scalar>(m, ids, every);
    model::RunOptions none = every;
    none.keptMaps = model::RunOptions::KeptMaps::Chosen;
    const model::ModelRun<Scalar> planned = model::runModel<Scalar>(m, ids, none);

    const bool causal = m.config.isDecoder();
    const std::vector<model::HeadSummary> measured = model::summarizeHeads(full);
    const std::vector<model::HeadSummary> fromDigests = model::summarizeHeads(planned);
    QCOMPARE(fromDigests.size(), measured.size());
    for (std::size_t l = 0; l < full.layers.size(); ++l) {
        const model::LayerDigest& a = withMaps.layers[l].digest;
        const model::LayerDigest& b = planned.layers[l].digest;
        QVERIFY(full.layers[l].digest.empty());
        QVERIFY(!planned.layers[l].hasMaps());
        QCOMPARE(b.heads.size(), std::size_t(m.config.heads));
        QVERIFY2(a.weightSum == b.weightSum, qPrintable(QStringLiteral("layer %1 sum").arg(l)));
        // The digest of the full maps, made whole afterwards, is the pass's, bit for bit.
        const model::LayerDigest after = model::digestLayer(
            full.layers[l].weights, plain.attentionMask, causal, static_cast<int>(l));
        QVERIFY(after.weightSum == b.weightSum);
        for (std::size_t h = 0; h < b.heads.size(); ++h) {
            const QByteArray where = QStringLiteral("layer %1 head %2").arg(l).arg(h).toUtf8();
            QVERIFY2(sameSummary(a.heads[h].summary, b.heads[h].summary), where);
            QVERIFY2(sameSummary(after.heads[h].summary, b.heads[h].summary), where);
            QVERIFY2(a.heads[h].pooled == b.heads[h].pooled, where);
            QVERIFY2(after.heads[h].pooled == b.heads[h].pooled, where);
            QCOMPARE(a.heads[h].largest, b.heads[h].largest);
            QCOMPARE(after.heads[h].largest, b.heads[h].largest);
            const std::size_t n = l * static_cast<std::size_t>(m.config.heads) + h;
            QVERIFY2(sameSummary(fromDigests[n], measured[n]), where);
        }
    }
    // Rollout from the digests' sums is rollout from the maps.
    const std::vector<Eigen::MatrixXd> rolloutFull = model::attentionRollout(full);
    const std::vector<Eigen::MatrixXd> rolloutPlanned = model::attentionRollout(planned);
    QCOMPARE(rolloutPlanned.size(), rolloutFull.size());
    for (std::size_t l = 0; l < rolloutFull.size(); ++l)
        QVERIFY2(rolloutPlanned[l] == rolloutFull[l], qPrintable(QString::number(l)));
}

}  // namespace

class TestLayerDigest : public QObject {
    Q_OBJECT

private slots:
    void digestsAreTheMapsOwn_data() { addGoldenInputRows(); }
    void digestsAreTheMapsOwn() {
        QFETCH(QString, name);
        QFETCH(QString, expected);
        digestsMatchTheMaps<float>(name, expected);
        digestsMatchTheMaps<double>(name, expected);
    }

    // A pass told its text is repeated measures induction as each head's weights are made; a
    // run that keeps no maps then gives inductionScores from its digests, equal to the maps'.
    void inductionFromTheDigests() {
        const io::ModelFolder folder(goldenModelDir(QStringLiteral("gpt2-tiny")));
        const model::Model& m = folder.model();
        const std::vector<long long> text{7, 41, 3, 59, 22};
        std::vector<long long> twice = text;
        twice.insert(twice.end(), text.begin(), text.end());
        const int period = static_cast<int>(text.size());
        const model::ModelRun<float> full = model::runModel<float>(m, twice);
        model::RunOptions options;
        options.keptMaps = model::RunOptions::KeptMaps::Chosen;
        options.keepDigest = true;
        options.repeated = {0, period};
        const model::ModelRun<float> planned = model::runModel<float>(m, twice, options);
        const std::vector<double> expected = model::inductionScores(full, 0, period);
        const std::vector<double> fromDigests = model::inductionScores(planned, 0, period);
        QCOMPARE(fromDigests, expected);
        QCOMPARE(expected.size(), std::size_t(m.config.layers * m.config.heads));
        QVERIFY(
            std::none_of(expected.begin(), expected.end(), [](double s) { return std::isnan(s); }));
        // A run whose digests were not measured on the repeated text is refused, not misread.
        model::RunOptions unmeasured = options;
        unmeasured.repeated = {};
        const model::ModelRun<float> without = model::runModel<float>(m, twice, unmeasured);
        QVERIFY_THROWS_EXCEPTION(model::ModelError, model::inductionScores(without, 0, period));
    }

    // The memory plan counts the digests: per layer a T x T sum in double and every head's
    // pooled map of at most 64 x 64 floats.
    void memoryCountsTheDigests() {
        const io::ModelFolder folder(goldenModelDir(QStringLiteral("gpt2-tiny")));
        const model::Model& m = folder.model();
        for (const long long T : {5LL, 100LL}) {
            const double without = model::runMemory(m, T, 4, 0).kept;
            const double with = model::runMemory(m, T, 4, 0, true).kept;
            const double cells = static_cast<double>(std::min<long long>(T, 64));
            QCOMPARE(with - without,
                     m.config.layers * (8.0 * T * T + m.config.heads * cells * cells * 4));
        }
    }

    // The pooled map is the grid's: each shown cell the maximum of its block of weights.
    void pooledMapsAreBlockMaxima() {
        model::Matrix<float> weights(130, 130);
        for (Eigen::Index i = 0; i < weights.rows(); ++i)
            for (Eigen::Index j = 0; j < weights.cols(); ++j)
                weights(i, j) = static_cast<float>((i * 131 + j * 7) % 97) / 97.0f;
        weights(129, 129) = std::numeric_limits<float>::quiet_NaN();
        const model::HeadDigest d = model::poolHead(weights, true);
        const PoolShape shape = poolShape(130, 130, model::kDigestCells, model::kDigestCells);
        QCOMPARE(shape.shownRows, 44);  // blocks of 3: at most 64 a side
        QCOMPARE(d.pooled.size(), std::size_t(44 * 44));
        for (int r = 0; r < shape.shownRows; ++r) {
            for (int c = 0; c < shape.shownColumns; ++c) {
                float largest = 0;
                for (int i = r * 3; i < std::min(130, r * 3 + 3); ++i)
                    for (int j = c * 3; j < std::min(130, c * 3 + 3); ++j)
                        if (std::isfinite(weights(i, j)))
                            largest = std::max(largest, weights(i, j));
                const float kept = d.pooled[static_cast<std::size_t>(r) * 44 + c];
                if (r == 43 && c == 43) {
                    QCOMPARE(kept, 0.0f);  // a NaN in the block: drawn as 0, not as NaN
                } else {
                    QCOMPARE(kept, largest);
                }
            }
        }
    }
};

QTEST_APPLESS_MAIN(TestLayerDigest)
#include "test_layer_digest.moc"
