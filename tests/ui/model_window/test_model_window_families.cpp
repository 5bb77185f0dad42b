// A layer of each newer decoder family opened in the window: the explorer shows what the layer
// does (the capped stage of a soft-capped layer, a sliding window as its own part of the mask,
// which dimensions a partial rotation turns, a layer without rotary positions), and the
// walkthrough puts Gemma 2's scaled scores beside its capped ones.

#include <QAction>
#include <QDockWidget>
#include <QLabel>
#include <QtTest>

#include "document/attention_document.h"
#include "document/model_session.h"
#include "plot/heatmap_grid.h"
#include "plot/model_view.h"
#include "support/model_window_fixture.h"
#include "ui/classroom/classroom.h"
#include "ui/classroom/walkthrough_panel.h"
#include "ui/window/main_window.h"

using namespace ae;
using namespace ae::ui;
using namespace ae::plot;

namespace {

QString goldenModel(const QString& name) {
    return QStringLiteral(AE_TEST_DATA_DIR "/models/") + name;
}

}  // namespace

class TestModelWindowFamilies : public QObject, private test::ModelWindowFixture {
    Q_OBJECT
private slots:
    void initTestCase() {
        test::startModelWindowTests(QStringLiteral("test_model_window_families"));
    }
    void init() { openWindow(); }
    void cleanup() { closeWindow(); }
    void everyFamilysLayerOpens_data();
    void everyFamilysLayerOpens();
    void walkthroughShowsTheScaledBesideTheCapped();
    void anotherModelOpensOverAnOpenLayer();
    void tour();

private:
    void openLayer(const QString& model, int layer, int head) {
        openModel(goldenModel(model));
        QVERIFY2(session()->model(), qPrintable(model));
        emit window_->modelView()->headActivated(layer, head);
        settle();
        QCOMPARE(session()->layer(), layer);
    }
    QString features() const {
        return window_->findChild<QLabel*>(QStringLiteral("layerFeatures"))->text();
    }
};

void TestModelWindowFamilies::everyFamilysLayerOpens_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<int>("layer");
    QTest::addColumn<bool>("capped");
    QTest::addColumn<int>("window");  // the model's W, 0: none
    QTest::addColumn<QString>("positions");
    // qwen2-tiny: use_sliding_window with max_window_layers 1, so layer 1 alone is windowed.
    QTest::newRow("qwen2 full layer")
        << "qwen2-tiny" << 0 << false << 0 << "Positions: <b>rotary</b>, all 8 dimensions";
    QTest::newRow("qwen2 windowed layer")
        << "qwen2-tiny" << 1 << false << 3 << "Positions: <b>rotary</b>, all 8 dimensions";
    QTest::newRow("mistral") << "mistral-tiny-window" << 0 << false << 3
                             << "Positions: <b>rotary</b>, all 12 dimensions";
    QTest::newRow("gemma") << "gemma-tiny" << 1 << false << 0 << "Positions: <b>rotary</b>";
    QTest::newRow("gemma2") << "gemma2-tiny" << 0 << true << 3 << "Positions: <b>rotary</b>";
    // gemma3-tiny's layer_types: sliding, full, sliding.
    QTest::newRow("gemma3 sliding layer")
        << "gemma3-tiny" << 0 << false << 3 << "Positions: <b>rotary</b>";
    QTest::newRow("gemma3 full layer")
        << "gemma3-tiny" << 1 << false << 0 << "Positions: <b>rotary</b>";
    QTest::newRow("gemma3 wrapped")
        << "gemma3-wrapped-tiny" << 1 << false << 0 << "Positions: <b>rotary</b>";
    QTest::newRow("phi3") << "phi3-tiny" << 0 << false << 0
                          << "Positions: <b>partial rotary</b>, dimensions 0–3 of each head's 8 "
                             "turn; 4–7 carry no position";
    QTest::newRow("phi3 window") << "phi3-tiny-window" << 1 << false << 3
                                 << "Positions: <b>rotary</b>";
    QTest::newRow("pythia") << "pythia-tiny" << 1 << false << 0
                            << "Positions: <b>partial rotary</b>, dimensions 0–3";
    QTest::newRow("pythia sequential")
        << "pythia-tiny-sequential" << 0 << false << 0 << "Positions: <b>partial rotary</b>";
    QTest::newRow("olmo2") << "olmo2-tiny" << 1 << false << 0 << "Positions: <b>rotary</b>";
    QTest::newRow("smollm3 rotary layer")
        << "smollm3-tiny" << 0 << false << 0 << "Positions: <b>rotary</b>";
    QTest::newRow("mpnet") << "mpnet-tiny" << 1 << false << 0
                           << "Positions: added to the tokens before layer 0, already in X";
    QTest::newRow("modernbert local layer")
        << "modernbert-tiny" << 1 << false << 3 << "Positions: <b>rotary</b>, all 8 dimensions";
    QTest::newRow("deberta") << "deberta-v2-tiny" << 0 << false << 0 << "Positions: <b>none</b>";
    QTest::newRow("smollm3 NoPE layer") << "smollm3-tiny" << 1 << false << 0
                                        << "Positions: <b>none in this layer</b>: it has no "
                                           "rotary positions (NoPE)";
}

void TestModelWindowFamilies::everyFamilysLayerOpens() {
    QFETCH(QString, model);
    QFETCH(int, layer);
    QFETCH(bool, capped);
    QFETCH(int, window);
    QFETCH(QString, positions);
    openLayer(model, layer, 1);
    QVERIFY2(window_->document()->errorText().isEmpty(),
             qPrintable(window_->document()->errorText()));
    const Scene& scene = window_->document()->scene();
    // The layer as the model has it: its own results, not a what-if.
    QCOMPARE((scene.embeddings.cast<float>() -
              session()->baseRun()->layers[static_cast<size_t>(layer)].hiddenIn)
                 .cwiseAbs()
                 .maxCoeff(),
             0.0f);
    // ... and its weights: the explorer's engine reproduces the model's softmax, so whatever the
    // layer adds to its scores (MPNet's bias, DeBERTa's terms) reached the scene.
    const auto& record = session()->baseRun()->layers[static_cast<size_t>(layer)];
    QVERIFY(record.hasMaps());
    for (int h = 0; h < scene.heads; ++h) {
        const float apart =
            (window_->document()->engine().weights(h) - record.weights[static_cast<size_t>(h)])
                .cwiseAbs()
                .maxCoeff();
        QVERIFY2(apart < 1e-5f, qPrintable(QStringLiteral("head %1: %2").arg(h).arg(apart)));
    }
    QVERIFY2(features().startsWith(positions), qPrintable(features()));
    QCOMPARE(features().contains(QStringLiteral("Soft-cap")), capped);
    // One head, every stage: the capped stage is there exactly when the layer has a soft-cap.
    HeatmapGrid* grid = window_->grid();
    grid->setViewMode(ViewMode::AllStages);
    settle();
    bool cappedTile = false;
    for (const HeatmapTile& t : grid->tiles())
        cappedTile = cappedTile || t.stage == Stage::Capped;
    QCOMPARE(cappedTile, capped);
    QCOMPARE(scene.mask.window.has_value(), window > 0);
    if (window > 0) {
        QCOMPARE(*scene.mask.window, window - 1);
        // A decoder's window reaches back (the last W keys), an encoder's both ways.
        const bool causal = scene.mask.causal;
        const QString start = causal ? QStringLiteral("Sliding window") : QStringLiteral("Window");
        const QString says =
            causal ? QStringLiteral("W = %1").arg(window) : QStringLiteral("±%1").arg(window - 1);
        const QLabel* label = nullptr;
        for (const QLabel* l : window_->findChildren<QLabel*>()) {
            if (l->text().startsWith(start) && l->text().contains(says)) label = l;
        }
        QVERIFY2(label, qPrintable(says));
    }
}

void TestModelWindowFamilies::walkthroughShowsTheScaledBesideTheCapped() {
    openLayer(QStringLiteral("gemma2-tiny"), 0, 2);
    window_->classroom()->walkthroughDock()->toggleViewAction()->trigger();
    settle();
    WalkthroughPanel* walk = window_->classroom()->walkthrough();
    walk->setStep(static_cast<int>(WalkStep::Divide));
    settle();
    const QList<Stage> shown{Stage::Scores, Stage::Scaled, Stage::Capped};
    QCOMPARE(window_->grid()->highlightedStages(), shown);
    QCOMPARE(walkStepTitle(WalkStep::Divide, window_->document()->scene()),
             QStringLiteral("Divide, then soft-cap"));
    const QString text = walk->findChild<QLabel*>(QStringLiteral("walkthroughText"))->text();
    QVERIFY2(text.contains(QStringLiteral("<b>Then the soft-cap</b>: every scaled score x becomes "
                                          "2·tanh(x / 2)")),
             qPrintable(text));
    walk->setStep(static_cast<int>(WalkStep::Mask));
    settle();
    const QString mask = walk->findChild<QLabel*>(QStringLiteral("walkthroughText"))->text();
    QVERIFY2(mask.contains(QStringLiteral("a sliding window of W = 3")), qPrintable(mask));
    walk->setStep(static_cast<int>(WalkStep::Softmax));
    settle();
    QCOMPARE(window_->grid()->highlightedStages(), (QList<Stage>{Stage::Capped, Stage::Weights}));
}

// A model of three layers opened over a layer of a two-layer model: until the new model's run is
// shown, the old run is neither compared with the new one (changed heads) nor fed to the new
// model (predictions). Comparing them read past the old run's layers and crashed.
void TestModelWindowFamilies::anotherModelOpensOverAnOpenLayer() {
    openLayer(QStringLiteral("gemma2-tiny"), 1, 2);
    QCOMPARE(session()->model()->config.layers, 2);
    openLayer(QStringLiteral("gemma3-tiny"), 2, 1);
    QCOMPARE(session()->model()->config.layers, 3);
    QCOMPARE(session()->currentRun()->layers.size(), size_t(3));
    QCOMPARE(window_->modelView()->data().run->layers.size(), size_t(3));
    QVERIFY(window_->modelView()->data().changedHeads.empty());
    QVERIFY2(window_->document()->errorText().isEmpty(),
             qPrintable(window_->document()->errorText()));
    openLayer(QStringLiteral("pythia-tiny"), 0, 0);
    QCOMPARE(window_->modelView()->data().run->layers.size(), size_t(2));
}

// Not a check: with AE_TOUR_DIR set, a layer of each family in the window at 1024x768 (one head,
// every stage) for looking at, and Gemma 2's capped stage for docs/.
void TestModelWindowFamilies::tour() {
    const QString dir = qEnvironmentVariable("AE_TOUR_DIR");
    if (dir.isEmpty()) QSKIP("set AE_TOUR_DIR to save the families' screenshots");
    const auto save = [&](QWidget* w, const QString& name) {
        settle();
        QTest::qWait(150);
        QVERIFY(w->grab().toImage().save(dir + QLatin1Char('/') + name));
    };
    struct Shot {
        const char* model;
        int layer, head;
    };
    for (const Shot& shot :
         {Shot{"qwen2-tiny", 1, 1}, Shot{"mistral-tiny-window", 0, 1}, Shot{"gemma-tiny", 1, 0},
          Shot{"gemma2-tiny", 0, 2}, Shot{"gemma3-tiny", 0, 1}, Shot{"gemma3-wrapped-tiny", 1, 1},
          Shot{"phi3-tiny", 0, 1}, Shot{"pythia-tiny", 1, 0}, Shot{"olmo2-tiny", 1, 1},
          Shot{"smollm3-tiny", 1, 1}, Shot{"mpnet-tiny", 1, 1}, Shot{"modernbert-tiny", 1, 0},
          Shot{"deberta-v2-tiny", 0, 2}}) {
        openLayer(QLatin1String(shot.model), shot.layer, shot.head);
        window_->grid()->setViewMode(ViewMode::AllStages);
        save(
            window_.get(),
            QStringLiteral("family-%1-layer%2.png").arg(QLatin1String(shot.model)).arg(shot.layer));
    }
    // Gemma 2's soft-cap for a class: the walkthrough's divide step, scaled beside capped.
    openLayer(QStringLiteral("gemma2-tiny"), 0, 2);
    window_->grid()->setViewMode(ViewMode::AllStages);
    window_->classroom()->walkthroughDock()->show();
    window_->classroom()->walkthrough()->setStep(static_cast<int>(WalkStep::Divide));
    window_->grid()->setSelectedRow(5);
    save(window_.get(), QStringLiteral("gemma2-capped-1024x768.png"));
    window_->classroom()->walkthroughDock()->hide();
}

QTEST_MAIN(TestModelWindowFamilies)
#include "test_model_window_families.moc"
