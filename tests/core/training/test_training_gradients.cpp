// Hand-written gradients against central finite differences, for every parameter group, with and
// without masks, one and two heads, separate / shared_qk / identity; then the toy tasks: the loss
// falls and the attention concentrates, as the real engine computes it.
//
// Relative error per entry: |a − n| / max(|a| + |n|, 1e-6), a analytic, n numeric. The floor is
// there because some gradients are exactly zero in exact arithmetic (b_K without a finite fill:
// softmax ignores a constant added to a whole row) and both sides are then rounding noise; the
// loss is O(1) and the gradients O(0.01..1), so 1e-6 is far below any real entry.
#include <QtTest>
#include <cmath>
#include <map>

#include "core/attention_engine.h"
#include "core/init_draw.h"
#include "core/training/attention_training.h"
#include "io/scene/scene_file.h"

using namespace ae;

namespace {

enum class MaskKind { None, Causal, CausalFiniteFill, BlindRow };

// L = 5, dModel = 4, dProj = 4, dOut = 3, every optional part switched on: learned positions
// (one spare row, which must get a zero gradient), layer norm with non-trivial γ and β, biases.
Scene gradientScene(ProjectionMode mode, int heads, MaskKind maskKind, std::uint64_t seed) {
    SplitMix64 rng(seed);
    InitSpec spec;
    spec.std = 0.6;
    const int L = 5, d = 4, dOut = 3;
    Scene s;
    for (int i = 0; i < L; ++i)
        s.tokens.push_back("t" + std::to_string(i));
    s.embeddings = drawMatrix(rng, spec, L, d);
    s.positional.kind = PositionalKind::Learned;
    s.positional.table = drawMatrix(rng, spec, L + 1, d);
    s.norm.enabled = true;
    s.norm.weight = (1.0 + 0.3 * drawMatrix(rng, spec, d, 1).array()).matrix();
    s.norm.bias = drawMatrix(rng, spec, d, 1);
    Projections& p = s.projections;
    p.mode = mode;
    if (mode != ProjectionMode::Identity) {
        p.query = drawMatrix(rng, spec, d, d);
        p.value = drawMatrix(rng, spec, d, d);
        p.queryBias = drawMatrix(rng, spec, d, 1);
        p.valueBias = drawMatrix(rng, spec, d, 1);
        if (mode == ProjectionMode::Separate) {
            p.key = drawMatrix(rng, spec, d, d);
            p.keyBias = drawMatrix(rng, spec, d, 1);
        } else {
            p.keyBias = p.queryBias;
        }
    }
    p.hasOutput = true;
    p.output = drawMatrix(rng, spec, d, dOut);
    p.outputBias = drawMatrix(rng, spec, dOut, 1);
    s.heads = heads;
    switch (maskKind) {
        case MaskKind::None:
            break;
        case MaskKind::Causal:
            s.mask.causal = true;
            break;
        case MaskKind::CausalFiniteFill:
            // Mild enough that masked keys keep real weight, so the fill path is exercised.
            s.mask.causal = true;
            s.maskFill = -1.5;
            break;
        case MaskKind::BlindRow: {
            BoolMatrix allowed = BoolMatrix::Constant(L, L, true);
            allowed.row(2).setConstant(false);  // a query that sees nothing: −inf gives it zeros
            allowed(0, 3) = allowed(4, 1) = false;
            s.mask.allowed = allowed;
            break;
        }
    }
    return s;
}

struct LossSetup {
    MatrixD target;
    VectorD rowWeight;
};

double lossAt(const Scene& config, const LayerParameters& p, const LossSetup& setup) {
    return maskedMeanSquaredError(forwardPass(config, p).output, setup.target, setup.rowWeight);
}

// Largest relative error seen per group over all data rows, printed at the end.
std::map<std::string, double>& worstErrors() {
    static std::map<std::string, double> worst;
    return worst;
}

}  // namespace

Q_DECLARE_METATYPE(ProjectionMode)
Q_DECLARE_METATYPE(MaskKind)

class TrainingGradientsTest : public QObject {
    Q_OBJECT
private slots:
    void gradientsMatchFiniteDifferences_data() {
        QTest::addColumn<ProjectionMode>("mode");
        QTest::addColumn<int>("heads");
        QTest::addColumn<MaskKind>("mask");
        const std::pair<const char*, ProjectionMode> modes[] = {
            {"separate", ProjectionMode::Separate},
            {"shared_qk", ProjectionMode::SharedQK},
            {"identity", ProjectionMode::Identity}};
        const std::pair<const char*, MaskKind> masks[] = {
            {"no mask", MaskKind::None},
            {"causal", MaskKind::Causal},
            {"causal, fill -1.5", MaskKind::CausalFiniteFill},
            {"blind row", MaskKind::BlindRow}};
        for (const auto& [modeName, mode] : modes)
            for (int heads : {1, 2})
                for (const auto& [maskName, mask] : masks)
                    QTest::addRow("%s, %d head(s), %s", modeName, heads, maskName)
                        << mode << heads << mask;
    }

    void gradientsMatchFiniteDifferences() {
        QFETCH(ProjectionMode, mode);
        QFETCH(int, heads);
        QFETCH(MaskKind, mask);
        const Scene scene = gradientScene(mode, heads, mask, 7 + heads);
        LayerParameters p = parametersOf(scene);

        SplitMix64 rng(99);
        InitSpec spec;
        LossSetup setup;
        setup.target = drawMatrix(rng, spec, scene.queryCount(), scene.dOut());
        setup.rowWeight = VectorD::Ones(scene.queryCount());
        setup.rowWeight(1) = 0.0;  // a row outside the loss, as previous-token's row 0

        const ForwardPass f = forwardPass(scene, p);
        MatrixD outputGradient;
        maskedMeanSquaredError(f.output, setup.target, setup.rowWeight, &outputGradient);
        LayerParameters analytic = backwardPass(scene, p, f, outputGradient);

        std::vector<ParameterSpan> params = parameterSpans(p);
        std::vector<ParameterSpan> grads = parameterSpans(analytic);
        QCOMPARE(grads.size(), params.size());
        // Fourth-order central differences: truncation ~h⁴, rounding ~1e-16/h.
        const double h = 1e-3;
        for (size_t g = 0; g < params.size(); ++g) {
            QCOMPARE(grads[g].group, params[g].group);
            QCOMPARE(grads[g].size, params[g].size);
            double worst = 0.0;
            Eigen::Index worstIndex = 0;
            double worstA = 0, worstN = 0;
            for (Eigen::Index k = 0; k < params[g].size; ++k) {
                double& x = params[g].data[k];
                const double saved = x;
                auto at = [&](double offset) {
                    x = saved + offset;
                    return lossAt(scene, p, setup);
                };
                const double numeric =
                    (8.0 * (at(h) - at(-h)) - (at(2 * h) - at(-2 * h))) / (12.0 * h);
                x = saved;
                const double a = grads[g].data[k];
                const double error =
                    std::abs(a - numeric) / std::max(std::abs(a) + std::abs(numeric), 1e-6);
                if (error > worst) {
                    worst = error;
                    worstIndex = k;
                    worstA = a;
                    worstN = numeric;
                }
            }
            const std::string name = parameterGroupName(params[g].group);
            double& recorded = worstErrors()[name];
            recorded = std::max(recorded, worst);
            QVERIFY2(worst <= 1e-5, qPrintable(QStringLiteral("%1[%2]: analytic %3, numeric %4, "
                                                              "relative error %5")
                                                   .arg(QString::fromStdString(name))
                                                   .arg(worstIndex)
                                                   .arg(worstA, 0, 'g', 12)
                                                   .arg(worstN, 0, 'g', 12)
                                                   .arg(worst, 0, 'g', 3)));
        }
        // The spare row of the learned table is never read: exactly zero.
        QVERIFY(analytic.positions.bottomRows(1).isZero(0));
    }

    void cleanupTestCase() {
        for (const auto& [name, worst] : worstErrors())
            qInfo("max relative error %-12s %.2e", name.c_str(), worst);
    }

    // The training forward pass is the engine's, in the same order of operations.
    void forwardMatchesEngine() {
        for (MaskKind mask : {MaskKind::None, MaskKind::CausalFiniteFill, MaskKind::BlindRow}) {
            const Scene scene = gradientScene(ProjectionMode::Separate, 2, mask, 3);
            const ForwardPass f = forwardPass(scene, parametersOf(scene));
            AttentionEngine<double> engine(scene);
            engine.compute();
            for (int h = 0; h < 2; ++h)
                QVERIFY((f.weights[h] - engine.weights(h)).cwiseAbs().maxCoeff() < 1e-13);
            QVERIFY((f.output - engine.output()).cwiseAbs().maxCoeff() < 1e-12);
        }
    }

    // From the default seed, with the default step count and rate, each task's loss falls and one
    // head ends with a mean weight of at least 0.9 on the target keys, by the engine's numbers.
    void tasksAreLearned_data() {
        QTest::addColumn<QString>("task");
        QTest::addColumn<QString>("preset");
        QTest::newRow("previous-token, journey-causal") << "previous-token"
                                                        << "journey-causal";
        QTest::newRow("previous-token, journey") << "previous-token"
                                                 << "journey";
        QTest::newRow("match, journey-causal") << "match"
                                               << "journey-causal";
        QTest::newRow("first-token, journey") << "first-token"
                                              << "journey";
        QTest::newRow("first-token, four-words") << "first-token"
                                                 << "four-words";
    }
    void tasksAreLearned() {
        QFETCH(QString, task);
        QFETCH(QString, preset);
        const TrainingTask kind = *trainingTaskFromName(task.toStdString());
        TrainingOptions options;
        options.totalSteps = kDefaultTrainingSteps;
        Trainer trainer(io::loadPreset(preset), kind, options);
        const std::vector<int> targets = trainer.targets();
        const double before = trainer.loss();
        const double startWeight = bestHeadTargetAttention(trainer.scene(), targets).meanWeight;
        for (int s = 0; s < kDefaultTrainingSteps; ++s)
            trainer.step();
        const double after = trainer.loss();
        QVERIFY2(after < 0.1 * before,
                 qPrintable(QStringLiteral("loss %1 -> %2").arg(before).arg(after)));

        // Through the file format, as the CLI writes it and `export` reads it back.
        const Scene saved = io::parseScene(io::sceneToJson(trainer.scene()));
        const TargetAttention trained =
            bestHeadTargetAttention(saved, taskTargets(kind, saved.tokens));
        qInfo("%s on %s: target weight %.3f -> %.4f (head %d), loss %.3g -> %.3g", qPrintable(task),
              qPrintable(preset), startWeight, trained.meanWeight, trained.head, before, after);
        QVERIFY2(trained.meanWeight >= kSuccessWeight,
                 qPrintable(QString::number(trained.meanWeight)));
    }

    void resetRestartsTheSameRun() {
        TrainingOptions options;
        options.totalSteps = 50;
        Trainer trainer(io::loadPreset("journey-causal"), TrainingTask::Match, options);
        const MatrixD startQuery = trainer.scene().projections.query;
        std::vector<double> first;
        for (int s = 0; s < 20; ++s)
            first.push_back(trainer.step());
        trainer.reset();
        QCOMPARE(trainer.stepCount(), 0);
        QVERIFY(trainer.scene().projections.query == startQuery);
        for (int s = 0; s < 20; ++s)
            QCOMPARE(trainer.step(), first[s]);
    }

    void refusesWhatItCannotTrain() {
        QVERIFY_THROWS_EXCEPTION(SceneError, Trainer(io::loadPreset("cross"), TrainingTask::Match));
        Scene blind = io::loadPreset("journey");
        blind.mask.window = 0;  // every query sees only itself: key i-1 is hidden
        QVERIFY_THROWS_EXCEPTION(SceneError, Trainer(blind, TrainingTask::PreviousToken));
    }
};

QTEST_MAIN(TrainingGradientsTest)
#include "test_training_gradients.moc"
