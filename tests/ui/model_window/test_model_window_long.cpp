// A model whose run needs more memory than the map budget, in the window: the status bar says the
// maps come on demand, the Model tab fills layer by layer as the pass runs and shows the same
// heads as a run keeping every map, and a head opens exactly. With AE_BIG_MODEL_DIR and
// AE_TOUR_DIR set, bigModelTour() runs an 8B-shaped folder at L = 2048 and saves screenshots.

#include <QElapsedTimer>
#include <QLabel>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTabWidget>
#include <QtTest>
#include <random>

#include "document/attention_document.h"
#include "document/model_session.h"
#include "plot/head_grid.h"
#include "plot/model_view.h"
#include "support/model_window_fixture.h"
#include "ui/window/main_window.h"

using namespace ae;
using namespace ae::ui;
using namespace ae::plot;

class TestModelWindowLong : public QObject, private test::ModelWindowFixture {
    Q_OBJECT
private slots:
    void initTestCase() { test::startModelWindowTests(QStringLiteral("test_model_window_long")); }
    void init() { openWindow(); }
    void cleanup() { closeWindow(); }
    void digestsOnlyRunInTheWindow();
    void bigModelTour();
};

namespace {

QLabel* mapModeLabel(MainWindow& window) {
    return window.statusBar()->findChild<QLabel*>(QStringLiteral("mapModeLabel"));
}

}  // namespace

void TestModelWindowLong::digestsOnlyRunInTheWindow() {
    openModel();
    const std::vector<long long> text{7, 41, 3, 59, 22, 15, 36};
    session()->setIds(text);
    settle();
    QLabel* mode = mapModeLabel(*window_);
    QVERIFY(mode);
    QCOMPARE(mode->text(), QStringLiteral("Maps: all kept"));
    const auto fullRun = session()->currentRun();
    HeadGrid* grid = window_->modelView()->grid();
    const int layers = grid->layers(), heads = grid->heads();
    std::vector<QColor> fullColours;
    for (int l = 0; l < layers; ++l)
        for (int h = 0; h < heads; ++h)
            fullColours.push_back(grid->paintedColor({l, h}, 3, 1));

    // The same model with a budget nothing fits: the next pass keeps digests only, and tells
    // the view each layer as it finishes.
    session()->setMapBudget(1.0);
    session()->setIds({7, 41, 3});
    settle();
    QSignalSpy layerDone(session(), &document::ModelSession::layerDigestReady);
    session()->setIds(text);
    settle();
    QCOMPARE(session()->currentRun()->tokens, text);
    QVERIFY(session()->keepsOnlyDigests());
    QCOMPARE(layerDone.count(), layers);
    for (int l = 0; l < layers; ++l)
        QCOMPARE(layerDone.at(l).at(0).toInt(), l);
    QCOMPARE(mode->text(), QStringLiteral("Maps: on demand"));
    QVERIFY(mode->toolTip().contains(QStringLiteral("recomputes")));
    QCOMPARE(grid->layersFilled(), -1);  // the finished run replaced the layer-by-layer picture
    for (int l = 0; l < layers; ++l)
        for (int h = 0; h < heads; ++h)
            QCOMPARE(grid->paintedColor({l, h}, 3, 1),
                     fullColours[static_cast<size_t>(l * heads + h)]);

    // Opening a head gives the explorer the layer as the model has it.
    session()->openHead(layers - 1, 1);
    settle();
    QCOMPARE(session()->layer(), layers - 1);
    QVERIFY(window_->document()->errorText().isEmpty());
    const auto& full = fullRun->layers.back().weights[1];
    const auto& shown = window_->document()->engine().weights(1);
    QCOMPARE(shown.rows(), full.rows());
    QVERIFY((shown - full).cwiseAbs().maxCoeff() <= 1e-5);
}

// Not a check: the 8B-shaped folder `bench --model --shape llama3-8b` writes, opened in the window
// at 1024x768 and run on 2048 ids, then one token typed at the end; screenshots mid-pass, of every
// head, and of a head of the last layer, with the times of each step.
void TestModelWindowLong::bigModelTour() {
    const QString folder = qEnvironmentVariable("AE_BIG_MODEL_DIR");
    const QString dir = qEnvironmentVariable("AE_TOUR_DIR");
    if (folder.isEmpty() || dir.isEmpty())
        QSKIP("set AE_BIG_MODEL_DIR and AE_TOUR_DIR to run the big model in the window");
    const int tokens = qEnvironmentVariableIntValue("AE_BIG_MODEL_TOKENS") > 0
                           ? qEnvironmentVariableIntValue("AE_BIG_MODEL_TOKENS")
                           : 2048;
    const auto save = [&](const QString& name) {
        QCoreApplication::processEvents();
        QTest::qWait(200);
        QVERIFY(window_->grab().toImage().save(dir + QLatin1Char('/') + name));
    };
    auto* centre = window_->findChild<QTabWidget*>();
    QElapsedTimer timer;
    timer.start();
    double shownAfter = -1, checkedAfter = -1;
    connect(session(), &document::ModelSession::passStarting, this,
            [&](int, int, int) { shownAfter = timer.nsecsElapsed() / 1e9; });
    connect(session(), &document::ModelSession::valuesChecking, this, [&](double fraction) {
        if (fraction >= 1.0) checkedAfter = timer.nsecsElapsed() / 1e9;
    });
    QVERIFY(window_->fileActions()->openModel(folder));
    settle();
    QVERIFY(session()->isOpen());
    qInfo(
        "opened: shown from the headers after %.2f s, values checked after %.1f s, the default "
        "text run after %.1f s",
        shownAfter, checkedAfter, timer.nsecsElapsed() / 1e9);
    if (centre) centre->setCurrentWidget(window_->modelView());

    std::mt19937 random(7);
    std::uniform_int_distribution<long long> id(0, session()->model()->config.vocab - 1);
    std::vector<long long> ids(static_cast<size_t>(tokens));
    for (long long& i : ids)
        i = id(random);
    int layersDone = 0;
    bool savedMidway = false;
    connect(session(), &document::ModelSession::layerDigestReady, this,
            [&](int layer, int layers, int, const std::vector<model::HeadDigest>&) {
                layersDone = layer + 1;
                if (!savedMidway && layersDone >= layers / 2) {
                    savedMidway = true;
                    save(QStringLiteral("big-model-filling-1024x768.png"));
                }
            });
    // The pass alone (its induction, the repeated text's pass, follows on the same worker).
    const auto runOnly = [&] {
        session()->waitUntilIdle(false);
        QCoreApplication::processEvents();
    };
    timer.restart();
    session()->setIds(ids);
    runOnly();
    qInfo("the pass on %d tokens: %.1f s, %d layers reported, maps %s", tokens,
          timer.nsecsElapsed() / 1e9, layersDone,
          session()->keepsOnlyDigests() ? "on demand" : "all kept");
    save(QStringLiteral("big-model-heads-1024x768.png"));
    // A token typed at the end while that induction runs: it stops at its next layer, the rows
    // before the new token are reused, and every row is attended again. AE_TOUR_SKIP_TYPING
    // leaves it out, to time the head alone.
    if (!qEnvironmentVariableIsSet("AE_TOUR_SKIP_TYPING")) {
        ids.push_back(id(random));
        timer.restart();
        session()->setIds(ids);
        runOnly();
        qInfo("a token typed at the end, %zu tokens: %.1f s", ids.size(),
              timer.nsecsElapsed() / 1e9);
    }
    timer.restart();
    settle();
    qInfo("then its induction (the text repeated, %zu tokens): %.1f s", 2 * ids.size(),
          timer.nsecsElapsed() / 1e9);
    const int last = session()->model()->config.layers - 1;
    timer.restart();
    session()->openHead(last, 5);
    settle();
    qInfo("opening head 5 of layer %d: %.1f s", last, timer.nsecsElapsed() / 1e9);
    QVERIFY(window_->document()->errorText().isEmpty());
    save(QStringLiteral("big-model-head-1024x768.png"));
}

QTEST_MAIN(TestModelWindowLong)
#include "test_model_window_long.moc"
