// The whole-model trainer (core/training/model_training.h): hand-written gradients of every
// parameter tensor against central finite differences, in both families, with and without the MLP;
// its forward pass against core/model/model.h's runModel on the same tensors (the trained model IS
// that model); an attention-only model's MLP adding exactly 0; the tasks' targets; determinism; and
// the loss falling.
//
// Fourth-order central differences (h = 1e-3), as tests/core/training/test_training_gradients.cpp
// does, and the same measure: relative error per entry |a − n| / max(|a| + |n|, 1e-6), a analytic,
// n numeric. The floor covers entries that are zero in exact arithmetic (a key bias: softmax
// ignores what it adds to a whole row), where both sides are rounding noise (ε·loss/h ≈ 5e-13
// here); real entries are 1e-3 to 1.
#include <QtTest>
#include <cmath>
#include <set>

#include "core/init_draw.h"
#include "core/model/model.h"
#include "core/training/model_training.h"

using namespace ae;
using namespace ae::model;

namespace {

ModelTrainingOptions smallOptions(Family family, bool mlp) {
    ModelTrainingOptions o;
    o.family = model::familyName(family);
    o.layers = 2;
    o.heads = 2;
    o.hidden = 8;
    o.mlp = mlp;
    o.vocab = 11;
    o.length = 7;
    o.task = ModelTask::PreviousToken;
    o.seed = 5;
    o.initStd = 0.4;  // large enough that every path carries a gradient well above the floor
    return o;
}

// Norm weights and biases away from 1 and 0, so their gradients and the paths through them are
// not a special case.
void perturbNorms(ModelTrainer& trainer) {
    SplitMix64 rng(77);
    for (std::size_t i = 0; i < trainer.parameters().size(); ++i) {
        const std::string& name = trainer.parameterNames()[i];
        const bool norm =
            name.find("ln_") != std::string::npos || name.find("norm") != std::string::npos;
        if (!norm || !trainer.trained(i)) continue;
        for (Eigen::Index k = 0; k < trainer.parameters()[i].size(); ++k)
            trainer.parameters()[i].data()[k] += 0.5 * (rng.uniform01() - 0.5);
    }
}

// Random ids and a random target at every position but one.
TrainingExample randomExample(int length, int vocab, std::uint64_t seed) {
    SplitMix64 rng(seed);
    TrainingExample e;
    for (int i = 0; i < length; ++i) {
        e.ids.push_back(static_cast<long long>(rng.uniform01() * vocab));
        e.targets.push_back(i == 2 ? -1 : static_cast<long long>(rng.uniform01() * vocab));
    }
    return e;
}

double maxRelativeDifference(const MatrixD& a, const MatrixD& b) {
    return (a - b).cwiseAbs().maxCoeff() / std::max(a.cwiseAbs().maxCoeff(), 1e-300);
}

}  // namespace

class TestModelTraining : public QObject {
    Q_OBJECT
private slots:
    void gradientsMatchFiniteDifferences_data() {
        QTest::addColumn<int>("family");
        QTest::addColumn<bool>("mlp");
        QTest::newRow("gpt2, learned positions, attention only")
            << static_cast<int>(Family::Gpt2) << false;
        QTest::newRow("gpt2, learned positions, mlp") << static_cast<int>(Family::Gpt2) << true;
        QTest::newRow("llama, rotary, attention only") << static_cast<int>(Family::Llama) << false;
        QTest::newRow("llama, rotary, mlp") << static_cast<int>(Family::Llama) << true;
    }

    void gradientsMatchFiniteDifferences() {
        QFETCH(int, family);
        QFETCH(bool, mlp);
        ModelTrainer trainer(smallOptions(static_cast<Family>(family), mlp));
        perturbNorms(trainer);
        const TrainingExample e = randomExample(7, 11, 3);
        std::vector<MatrixD>& params = trainer.parameters();
        std::vector<MatrixD> analytic;
        for (const MatrixD& p : params)
            analytic.push_back(MatrixD::Zero(p.rows(), p.cols()));
        const double loss = trainer.lossAndGradient(e, &analytic);
        QVERIFY(std::isfinite(loss) && loss > 0);

        const double h = 1e-3;
        int checkedTensors = 0;
        for (std::size_t i = 0; i < params.size(); ++i) {
            if (!trainer.trained(i)) {
                // Attention-only: the MLP's zeros (and its norm) are never moved.
                QVERIFY(!mlp);
                const std::string& name = trainer.parameterNames()[i];
                if (name.find("mlp.") != std::string::npos)
                    QVERIFY2(params[i].isZero(0), name.c_str());
                continue;
            }
            double worst = 0;
            Eigen::Index worstAt = 0;
            double worstA = 0, worstN = 0;
            for (Eigen::Index k = 0; k < params[i].size(); ++k) {
                double& x = params[i].data()[k];
                const double saved = x;
                const auto at = [&](double offset) {
                    x = saved + offset;
                    return trainer.lossAndGradient(e, nullptr);
                };
                const double numeric =
                    (-at(2 * h) + 8 * at(h) - 8 * at(-h) + at(-2 * h)) / (12 * h);
                x = saved;
                const double a = analytic[i].data()[k];
                const double error =
                    std::abs(a - numeric) / std::max(std::abs(a) + std::abs(numeric), 1e-6);
                if (error > worst) {
                    worst = error;
                    worstAt = k;
                    worstA = a;
                    worstN = numeric;
                }
            }
            QVERIFY2(worst <= 1e-5, qPrintable(QStringLiteral("%1[%2]: analytic %3, numeric %4, "
                                                              "relative error %5")
                                                   .arg(trainer.parameterNames()[i].c_str())
                                                   .arg(worstAt)
                                                   .arg(worstA, 0, 'g', 12)
                                                   .arg(worstN, 0, 'g', 12)
                                                   .arg(worst)));
            qInfo("%-45s max relative error %.2e", trainer.parameterNames()[i].c_str(), worst);
            // A gradient check of zeros proves nothing: every checked tensor has a real one.
            QVERIFY2(analytic[i].cwiseAbs().maxCoeff() > 1e-4, trainer.parameterNames()[i].c_str());
            ++checkedTensors;
        }
        // Every tensor the family has, but the untrained MLP.
        const int perLayer =
            static_cast<Family>(family) == Family::Gpt2 ? (mlp ? 12 : 6) : (mlp ? 9 : 5);
        const int outside = static_cast<Family>(family) == Family::Gpt2 ? 4 : 3;
        QCOMPARE(checkedTensors, 2 * perLayer + outside);
    }

    void forwardIsRunModel_data() { gradientsMatchFiniteDifferences_data(); }
    void forwardIsRunModel() {
        QFETCH(int, family);
        QFETCH(bool, mlp);
        ModelTrainer trainer(smallOptions(static_cast<Family>(family), mlp));
        perturbNorms(trainer);
        const std::vector<long long> ids{3, 1, 4, 1, 5, 9, 2};
        const MatrixD own = trainer.logits(ids);
        const ModelRun<double> run = runModel<double>(trainer.model(), ids);
        QCOMPARE(run.logits.rows(), own.rows());
        QCOMPARE(run.logits.cols(), 11);
        QVERIFY2(maxRelativeDifference(run.logits, own) <= 1e-12,
                 qPrintable(QString::number(maxRelativeDifference(run.logits, own))));
        // A few steps later the model still is what the trainer computes.
        for (int s = 0; s < 3; ++s)
            trainer.step();
        const ModelRun<double> later = runModel<double>(trainer.model(), ids);
        QVERIFY(maxRelativeDifference(later.logits, trainer.logits(ids)) <= 1e-12);
        QVERIFY(maxRelativeDifference(later.logits, run.logits) > 1e-6);  // it did change
    }

    // Attention-only: finishing layer 0 from its residual input with a zero attention output
    // must leave the stream exactly as it was, so the MLP (of zeros) adds exactly 0.
    void attentionOnlyMlpAddsExactlyZero_data() {
        QTest::addColumn<int>("family");
        QTest::newRow("gpt2") << static_cast<int>(Family::Gpt2);
        QTest::newRow("llama") << static_cast<int>(Family::Llama);
    }
    void attentionOnlyMlpAddsExactlyZero() {
        QFETCH(int, family);
        ModelTrainer trainer(smallOptions(static_cast<Family>(family), false));
        for (int s = 0; s < 2; ++s)
            trainer.step();
        const std::vector<long long> ids{3, 1, 4, 1, 5};
        ModelRun<double> run = runModel<double>(trainer.model(), ids);
        const Matrix<double> residual = run.layers[0].hiddenIn;
        QVERIFY(!residual.isZero(0));
        resumeAfterAttention<double>(trainer.model(), run, 0, residual,
                                     Matrix<double>::Zero(residual.rows(), residual.cols()));
        QVERIFY(run.layers[1].hiddenIn == residual);
        QCOMPARE(trainer.model().config.intermediate, 1);
    }

    void tasksHaveTheirTargets() {
        ModelTrainingOptions o = smallOptions(Family::Llama, false);
        o.length = 10;
        o.vocab = 50;
        o.task = ModelTask::Induction;
        {
            ModelTrainer t(o);
            std::set<int> periods;
            for (int draw = 0; draw < 40; ++draw) {
                const TrainingExample e = t.drawExample();
                const int n = static_cast<int>(e.ids.size()) / 2;
                QCOMPARE(e.ids.size(), std::size_t(2 * n));
                QVERIFY(n >= 2 && n <= 5);
                periods.insert(n);
                for (int i = 0; i < n; ++i)
                    QCOMPARE(e.ids[i + n], e.ids[i]);
                for (int i = 0; i < 2 * n; ++i)
                    QCOMPARE(e.targets[i], i >= n && i < 2 * n - 1 ? e.ids[i + 1] : -1);
            }
            QCOMPARE(periods.size(), std::size_t(4));  // 2, 3, 4 and 5 all occur
        }
        o.task = ModelTask::PreviousToken;
        {
            // The same, asked of an induction trainer (previousTokenEvery's steps).
            o.task = ModelTask::Induction;
            ModelTrainer t(o);
            const TrainingExample e = t.drawExample(nullptr, ModelTask::PreviousToken);
            QCOMPARE(e.ids.size(), std::size_t(10));
            QCOMPARE(e.targets[0], -1);
            for (int i = 1; i < 10; ++i)
                QCOMPARE(e.targets[i], e.ids[i - 1]);
        }
        o.task = ModelTask::FirstToken;
        {
            ModelTrainer t(o);
            const TrainingExample e = t.drawExample();
            for (int i = 0; i < 10; ++i)
                QCOMPARE(e.targets[i], e.ids[0]);
        }
        o.task = ModelTask::Match;
        o.vocab = 3;  // repeats for sure
        {
            ModelTrainer t(o);
            const TrainingExample e = t.drawExample();
            for (int i = 0; i < 10; ++i) {
                long long expected = -1;
                for (int j = i - 1; j >= 0 && expected < 0; --j)
                    if (e.ids[j] == e.ids[i]) expected = e.ids[j + 1];
                QCOMPARE(e.targets[i], expected);
            }
            QVERIFY(e.targets[9] >= 0);
        }
        o.task = ModelTask::CopyNext;
        o.vocab = 128;
        {
            ModelTrainer t(o);
            const TrainingExample e = t.drawExample();
            std::string window;
            for (long long id : e.ids)
                window.push_back(static_cast<char>(id));
            QVERIFY(trainingText().find(window) != std::string::npos);
            for (int i = 0; i < 9; ++i)
                QCOMPARE(e.targets[i], e.ids[i + 1]);
            QCOMPARE(e.targets[9], -1);
        }
    }

    void sameSeedSameRun() {
        ModelTrainingOptions o = smallOptions(Family::Gpt2, true);
        ModelTrainer a(o), b(o);
        for (int s = 0; s < 4; ++s)
            QCOMPARE(a.step(), b.step());
        QCOMPARE(a.stepCount(), 4);
        for (std::size_t i = 0; i < a.parameters().size(); ++i)
            QVERIFY(a.parameters()[i] == b.parameters()[i]);
        o.seed = 6;
        ModelTrainer c(o);
        QVERIFY(c.step() != ModelTrainer(smallOptions(Family::Gpt2, true)).step());
    }

    void lossFallsAndProbeRuns() {
        ModelTrainingOptions o = smallOptions(Family::Llama, false);
        o.initStd = 0.02;
        o.hidden = 16;
        o.length = 12;
        o.learningRate = 1e-2;
        ModelTrainer t(o);
        const double before = t.loss();
        for (int s = 0; s < 150; ++s)
            t.step();
        QVERIFY2(t.loss() < 0.7 * before,
                 qPrintable(QStringLiteral("%1 -> %2").arg(before).arg(t.loss())));
        const HeadScores scores = t.probeHeads();
        QCOMPARE(scores.previousToken.size(), std::size_t(4));
        QCOMPARE(scores.induction.size(), std::size_t(4));
        QCOMPARE(t.probeIds().size(), std::size_t(12));  // period min(20, 12/2) twice
        // Previous-token is learned by attending to i − 1: some head does it clearly.
        QVERIFY2(scores.previousToken[scores.bestPreviousToken] > 0.5,
                 qPrintable(QString::number(scores.previousToken[scores.bestPreviousToken])));
    }

    void refusesBadOptions() {
        ModelTrainingOptions o = smallOptions(Family::Llama, false);
        o.hidden = 6;
        o.heads = 4;
        QVERIFY(checkTrainingOptions(o).find("--d-model") == 0);
        o.heads = 3;  // head size 2: fine
        QVERIFY(checkTrainingOptions(o).empty());
        o.heads = 6;  // head size 1: no rotary pair
        QVERIFY(checkTrainingOptions(o).find("even head size") != std::string::npos);
        o = smallOptions(Family::Gpt2, false);
        o.task = ModelTask::CopyNext;
        QVERIFY(checkTrainingOptions(o).find("--vocab") == 0);
        QVERIFY_THROWS_EXCEPTION(ModelError, ModelTrainer{o});
        o.task = ModelTask::Induction;
        o.previousTokenEvery = -1;
        QVERIFY(checkTrainingOptions(o).find("--previous-token-every") == 0);
        o.previousTokenEvery = 0;
        o.ropeTheta = 1;
        QVERIFY(checkTrainingOptions(o).find("--rope-theta") == 0);
        o.ropeTheta = 10000;
        // Far beyond any machine: refused before anything is allocated.
        ModelTrainingOptions huge = smallOptions(Family::Llama, true);
        huge.hidden = 2048;
        huge.heads = 16;
        huge.vocab = 65536;
        huge.length = 4096;
        huge.batch = 4096;
        QVERIFY(trainerBytes(huge) > 1e13);
        QVERIFY_THROWS_EXCEPTION(ModelError, ModelTrainer{huge});
        o.family = "bert";
        QVERIFY(checkTrainingOptions(o).find("--family") == 0);
    }
};

QTEST_GUILESS_MAIN(TestModelTraining)
#include "test_model_training.moc"
