// Planned memory in the window (document/run_analysis.h, windowRunOptions): a run that would need
// more than the map budget keeps only each layer's digest. Everything the window shows of it is
// what a run keeping every map shows: the summaries, induction, rollout, a head's weights
// (recomputed), an opened head's layer, and a what-if flowing forward.

#include <QSignalSpy>
#include <QtTest>

#include "core/model/model.h"
#include "core/model/model_analysis.h"
#include "support/model_session_fixture.h"

using namespace ae;
using namespace ae::document;
using namespace ae::testing;

namespace {

constexpr double kTinyBudget = 1.0;  // bytes: no run fits, so every run keeps digests only

// The scores of the run itself agree exactly. Induction is measured on a second run of the text
// repeated, which takes the first copy's rows from the run (model::rerunModel): a run keeping its
// maps lends them too, one without attends every row again, so the products are summed in another
// order and the scores agree to float rounding.
bool sameSummaries(const std::vector<model::HeadSummary>& a,
                   const std::vector<model::HeadSummary>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        for (const model::HeadScore& score : model::headScores()) {
            const double x = a[i].*score.value, y = b[i].*score.value;
            if (std::isnan(x) || std::isnan(y)) {
                if (std::isnan(x) != std::isnan(y)) return false;
            } else if (score.needsRepeatedRun ? std::abs(x - y) > 1e-6 : x != y) {
                return false;
            }
        }
    }
    return true;
}

}  // namespace

class TestModelSessionPlanned : public QObject {
    Q_OBJECT
private slots:
    // The budget decides: the default keeps every map of a small model, a budget below the
    // run's need keeps digests only, and the options say so.
    void budgetChoosesTheMode() {
        Opened o;
        QVERIFY(o.open(modelDir("gpt2-tiny")));
        QVERIFY(o.session.mapBudget() > 1e9);
        QVERIFY(!o.session.keepsOnlyDigests());
        QVERIFY(o.session.currentRun()->layers[0].hasMaps());
        QVERIFY(!o.session.currentRun()->layers[0].digest.empty());

        const model::Model& m = *o.session.model();
        const ModelInput input{QString(), {1, 2, 3, 4}, {}};
        const double need = model::runMemory(m, 4, sizeof(float), -1, true).total();
        QVERIFY(windowRunOptions(m, input, need).keptMaps == model::RunOptions::KeptMaps::Every);
        QVERIFY(windowRunOptions(m, input, need - 1).keptMaps ==
                model::RunOptions::KeptMaps::Chosen);
        QVERIFY(windowRunOptions(m, input, need - 1).keepDigest);
    }

    // The same text, run with every map and with digests only: the view's numbers agree exactly,
    // and a head's weights recomputed on demand are the full run's.
    void digestsOnlyShowTheSame() {
        const std::vector<long long> ids{7, 41, 3, 59, 22, 15, 36};
        Opened full;
        QVERIFY(full.openOn(modelDir("gpt2-tiny"), ids));
        full.session.measureInduction();
        full.settle();
        Opened planned;
        planned.session.setMapBudget(kTinyBudget);
        QVERIFY(planned.openOn(modelDir("gpt2-tiny"), ids));
        planned.session.measureInduction();
        planned.settle();
        QVERIFY(planned.session.keepsOnlyDigests());
        const RunF& a = *full.session.currentRun();
        const RunF& b = *planned.session.currentRun();
        QCOMPARE(b.tokens, a.tokens);
        for (const auto& layer : b.layers)
            QVERIFY(!layer.hasMaps());
        QVERIFY(b.logits == a.logits);
        QCOMPARE(planned.session.analysis().induction, model::InductionState::Measured);
        QCOMPARE(full.session.analysis().induction, model::InductionState::Measured);
        QVERIFY(
            sameSummaries(planned.session.analysis().summaries, full.session.analysis().summaries));
        QVERIFY(!std::isnan(planned.session.analysis().summaries.back().induction));
        const std::vector<Eigen::MatrixXd> rolloutA = model::attentionRollout(a);
        const std::vector<Eigen::MatrixXd> rolloutB = model::attentionRollout(b);
        QVERIFY(rolloutA.back() == rolloutB.back());
        const int last = static_cast<int>(a.layers.size()) - 1;
        QVERIFY(planned.session.headWeights(b, last, 1) == a.layers.back().weights[1]);
        QVERIFY(full.session.headWeights(a, last, 1) == a.layers.back().weights[1]);
    }

    // Opening a head of a run without maps gives the explorer the layer as the model has it;
    // a what-if there flows forward, the later layers keep digests only, and the changed heads
    // are found from the pooled maps.
    void openedHeadAndWhatIfWithoutMaps() {
        Opened full;
        QVERIFY(full.open(modelDir("gpt2-tiny")));
        Opened o;
        o.session.setMapBudget(kTinyBudget);
        QVERIFY(o.open(modelDir("gpt2-tiny")));
        QVERIFY(o.session.keepsOnlyDigests());
        o.session.openHead(1, 0);
        o.settle();
        full.session.openHead(1, 0);
        full.settle();
        QVERIFY(o.document.errorText().isEmpty());
        const RunF& reference = *full.session.baseRun();
        for (int h = 0; h < reference.config.heads; ++h)
            QVERIFY(largestDifference(o.document.engine().weights(h),
                                      reference.layers[1].weights[static_cast<std::size_t>(h)]) <=
                    1e-5);
        divideScoresBy(o.document, 0.25);
        o.settle();
        divideScoresBy(full.document, 0.25);
        full.settle();
        QVERIFY(o.session.currentRun() != o.session.baseRun());
        const RunF& after = *o.session.currentRun();
        QVERIFY(after.layers[1].hasMaps());  // the edited layer: the explorer's own maps
        QVERIFY(!after.layers[0].hasMaps());
        QVERIFY(largestDifference(after.logits, full.session.currentRun()->logits) <= 1e-5);
        const auto changed = o.session.changedHeads(0.01);
        QVERIFY(!changed.empty());
        QCOMPARE(changed.front().first, 1);
        QVERIFY(sameSummaries(o.session.analysis().summaries, full.session.analysis().summaries));
    }
};

QTEST_MAIN(TestModelSessionPlanned)
#include "test_model_session_planned.moc"
