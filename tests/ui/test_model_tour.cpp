// The walkthrough's tour of the trained built-in model (resources/models/tiny-induction): it is
// offered when the model is installed, and each step acts on the window: step 1 opens the model
// on its repeated sequence in the model view, step 2 opens the previous-token head, step 3 the
// induction head (whose stripe holds most of its weight), step 4 switches the previous-token head
// off, and the induction head's stripe in the model's run fades to less than half; Back switches
// it on again. The panel's text quotes the live numbers.
// With AE_TOUR_DIR set, screenshots() saves the window at every step of the tour there, at the
// window size AE_TOUR_SIZE says (default 1024x768), for docs/.
#include <QApplication>
#include <QComboBox>
#include <QDockWidget>
#include <QSettings>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>
#include <memory>

#include <QSignalSpy>
#include "core/model/workbench.h"
#include "document/attention_document.h"
#include "document/model_session.h"
#include "document/workbench_session.h"
#include "plot/effect_map.h"
#include "plot/model_view.h"
#include "ui/classroom/classroom.h"
#include "ui/classroom/walkthrough_panel.h"
#include "ui/files/file_actions.h"
#include "ui/window/main_window.h"
#include "ui/window/workbench_panel.h"

using namespace ae;
using namespace ae::ui;
using namespace ae::document;

class TestModelTour : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void init();
    void cleanup();
    void tourIsOfferedWithTheShippedModel();
    void stepsOpenTheHeadsAndSwitchTheHeadOff();
    void stripeCountsOnlyTheSecondCopy();
    void screenshots();

private:
    void settle();
    ModelSession* session() const { return window_->modelSession(); }
    WalkthroughPanel* walk() const { return window_->classroom()->walkthrough(); }
    double stripe(const ModelSession::Run& run) const;

    std::unique_ptr<QTemporaryDir> dir_;
    std::unique_ptr<MainWindow> window_;
};

void TestModelTour::initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("attention-explorer-tests"));
    QCoreApplication::setApplicationName(QStringLiteral("test_model_tour"));
    QApplication::setFont(QFont(QStringLiteral("DejaVu Sans"), 9));
    // The shipped files themselves; the window looks for built-in models when it is made.
    qputenv("AE_MODELS_PATH", QByteArray(AE_SHIPPED_MODELS_DIR));
}

void TestModelTour::init() {
    QSettings().clear();
    dir_ = std::make_unique<QTemporaryDir>();
    qputenv("AE_AUTOSAVE_DIR", dir_->filePath(QStringLiteral("autosave")).toLocal8Bit());
    window_ = std::make_unique<MainWindow>();
    window_->resize(1024, 768);
    window_->openPreset(QStringLiteral("default"));
    window_->show();
    session()->setProgressDelay(0);
    window_->fileActions()->setUnsavedQuestion(
        [](const QString&) { return UnsavedChoice::Discard; });
}

void TestModelTour::cleanup() {
    window_.reset();
    dir_.reset();
}

void TestModelTour::settle() {
    for (int i = 0; i < 4; ++i) {
        window_->document()->waitForResults();
        session()->waitUntilIdle();
        QCoreApplication::processEvents();
    }
}

double TestModelTour::stripe(const ModelSession::Run& run) const {
    const ModelTourPlan& p = *walk()->plan();
    return inductionStripe(run.layers[p.inductionLayer].weights[p.inductionHead], p.ids);
}

void TestModelTour::tourIsOfferedWithTheShippedModel() {
    QVERIFY(walk()->plan().has_value());
    QCOMPARE(walk()->tourChoice()->count(), 2);
    QCOMPARE(walk()->tour(), WalkTour::Layer);
    QCOMPARE(walk()->stepCount(), kWalkStepCount);
    const ModelTourPlan& p = *walk()->plan();
    QCOMPARE(p.location, QStringLiteral("builtin:tiny-induction"));
    QVERIFY(p.previousLayer < p.inductionLayer);  // the induction head reads what it wrote
}

void TestModelTour::stepsOpenTheHeadsAndSwitchTheHeadOff() {
    window_->classroom()->walkthroughDock()->show();
    // Picking the tour in the panel's choice starts it: the model opens.
    walk()->tourChoice()->setCurrentIndex(1);
    settle();
    QCOMPARE(walk()->tour(), WalkTour::TrainedModel);
    QCOMPARE(walk()->stepCount(), kModelTourStepCount);
    QCOMPARE(walk()->step(), 0);
    const ModelTourPlan& p = *walk()->plan();
    QCOMPARE(session()->builtInName(), QStringLiteral("tiny-induction"));
    QCOMPARE(session()->ids(), p.ids);
    QCOMPARE(window_->centralTabs()->currentWidget(), window_->modelView());
    QCOMPARE(session()->layer(), p.inductionLayer);
    QCOMPARE(session()->head(), p.inductionHead);

    walk()->next();
    settle();
    QCOMPARE(session()->layer(), p.previousLayer);
    QCOMPARE(session()->head(), p.previousHead);
    QVERIFY(window_->document()->scene().ablation.heads.empty());
    QVERIFY(walk()->explanationText().contains(QStringLiteral("before it")));

    walk()->next();
    settle();
    QCOMPARE(session()->layer(), p.inductionLayer);
    QCOMPARE(session()->head(), p.inductionHead);
    const double on = stripe(*session()->baseRun());
    QVERIFY2(on >= 0.5, qPrintable(QString::number(on)));
    QVERIFY(walk()->explanationText().contains(QString::number(on, 'g', 4)));

    // The weights alone: the previous-token head's K-composition into the induction head, far
    // above random weights', and the Workbench tab showing the matrix.
    QSignalSpy computed(window_->workbench()->workbench(), &document::WorkbenchSession::finished);
    walk()->next();
    settle();
    const model::CompositionResult scores = model::compositionScores(*session()->model());
    const int H = session()->model()->config.heads;
    const double k =
        scores.k(p.previousLayer * H + p.previousHead, p.inductionLayer * H + p.inductionHead);
    const double random = model::randomCompositionBaseline(session()->model()->config.hidden,
                                                           session()->model()->config.headDim);
    qInfo("K-composition L%dH%d -> L%dH%d: %.4f, random weights %.4f", p.previousLayer,
          p.previousHead, p.inductionLayer, p.inductionHead, k, random);
    QVERIFY2(k > 2 * random, qPrintable(QString::number(k)));
    QVERIFY2(walk()->formulaText().contains(QString::number(k, 'g', 4)),
             qPrintable(walk()->formulaText()));
    QCOMPARE(window_->centralTabs()->currentIndex(), window_->centralTabs()->count() - 1);
    QVERIFY(computed.count() == 1 || computed.wait(20000));
    QCOMPARE(window_->workbench()->compositionMap()->value(p.previousLayer * H + p.previousHead,
                                                           p.inductionLayer * H + p.inductionHead),
             k);
    QVERIFY(window_->document()->scene().ablation.heads.empty());

    walk()->next();
    settle();
    QCOMPARE(session()->layer(), p.previousLayer);
    QCOMPARE(window_->document()->scene().ablation.heads, std::vector<int>{p.previousHead});
    QVERIFY(session()->currentRun() != session()->baseRun());
    const double off = stripe(*session()->currentRun());
    qInfo("induction stripe %.4f with every head, %.4f with the previous-token head off", on, off);
    QVERIFY2(off < 0.5 * on, qPrintable(QString::number(off)));
    // The panel quotes both numbers, as the run has them.
    QVERIFY2(walk()->explanationText().contains(QString::number(off, 'g', 4)),
             qPrintable(walk()->explanationText()));
    // The induction loss jumps: the second copy's next tokens, every head on and with it off.
    model::RunOptions ablated;
    ablated.ablations = {{p.previousLayer, p.previousHead}};
    const int half = static_cast<int>(p.ids.size() / 2);
    const double lossOn =
        model::nextTokenLoss(model::runModel<float>(*session()->model(), p.ids), half);
    const double lossOff =
        model::nextTokenLoss(model::runModel<float>(*session()->model(), p.ids, ablated), half);
    qInfo("second-copy loss %.4f nats with every head, %.4f with the previous-token head off",
          lossOn, lossOff);
    QVERIFY2(lossOff > 2 * lossOn, qPrintable(QString::number(lossOff)));
    QVERIFY2(walk()->explanationText().contains(QString::number(lossOn, 'g', 4)) &&
                 walk()->explanationText().contains(QString::number(lossOff, 'g', 4)),
             qPrintable(walk()->explanationText()));
    QCOMPARE(walk()->step(), kModelTourStepCount - 1);

    // Back: the composition step, every head on.
    walk()->back();
    settle();
    QCOMPARE(session()->layer(), p.inductionLayer);
    QVERIFY(window_->document()->scene().ablation.heads.empty());
    QCOMPARE(stripe(*session()->currentRun()), on);

    // The layer tour is still there, with its twelve steps.
    walk()->setTour(WalkTour::Layer);
    QCOMPARE(walk()->stepCount(), kWalkStepCount);
    QCOMPARE(walk()->tourChoice()->currentIndex(), 0);
}

void TestModelTour::stripeCountsOnlyTheSecondCopy() {
    // ids = 5 6 7, 5 6 7: rows 3, 4, 5 look at 1, 2, 3.
    model::Matrix<float> w = model::Matrix<float>::Zero(6, 6);
    w(3, 1) = 1.0f;
    w(4, 2) = 0.5f;
    w(5, 3) = 0.25f;
    w(2, 0) = 1.0f;  // the first copy: not on the stripe
    QCOMPARE(inductionStripe(w, {5, 6, 7, 5, 6, 7}), (1.0 + 0.5 + 0.25) / 3);
    QVERIFY(std::isnan(inductionStripe(w, {5, 6, 7, 5, 6, 8})));
    QVERIFY(std::isnan(inductionStripe(w, {5, 6, 7, 5, 6})));
}

// Not a check: docs/'s pictures of the tour, when AE_TOUR_DIR names a folder.
void TestModelTour::screenshots() {
    const QString dir = qEnvironmentVariable("AE_TOUR_DIR");
    if (dir.isEmpty()) QSKIP("set AE_TOUR_DIR to save the tour's screenshots");
    const QStringList size =
        qEnvironmentVariable("AE_TOUR_SIZE", QStringLiteral("1024x768")).split(QLatin1Char('x'));
    QCOMPARE(size.size(), 2);
    window_->showNormal();
    window_->resize(size[0].toInt(), size[1].toInt());
    window_->classroom()->walkthroughDock()->show();
    walk()->setTour(WalkTour::TrainedModel);
    for (int step = 0; step < kModelTourStepCount; ++step) {
        walk()->setStep(step);
        settle();
        QTest::qWait(300);
        settle();
        const QImage image = window_->grab().toImage();
        QVERIFY(image.save(QStringLiteral("%1/tour-builtin-%2-%3.png")
                               .arg(dir)
                               .arg(step + 1)
                               .arg(size.join(QLatin1Char('x')))));
    }
}

QTEST_MAIN(TestModelTour)
#include "test_model_tour.moc"
