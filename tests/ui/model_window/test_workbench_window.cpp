// The Workbench tab: activation patching on the open model's text in the window. The maps hold
// the library's effects (core/model/workbench.h) for the texts and tokens typed; the changed
// tokens and a length mismatch are said before a run; a bad token is refused in one line.
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QtTest>

#include "core/model/workbench.h"
#include "document/workbench_session.h"
#include "io/model/model_folder.h"
#include "plot/effect_map.h"
#include "support/model_window_fixture.h"
#include "ui/window/workbench_panel.h"

using namespace ae;
using namespace ae::test;

class TestWorkbenchWindow : public QObject, public ModelWindowFixture {
    Q_OBJECT

private slots:
    void initTestCase() { startModelWindowTests(QStringLiteral("test_workbench_window")); }
    void init() { openWindow(); }
    void cleanup() { closeWindow(); }

    void patchingMapsHoldTheLibrarysEffects() {
        openModel();
        session()->setIds({7, 41, 3, 59, 22, 15, 36});
        settle();
        ui::WorkbenchPanel* bench = window_->workbench();
        auto* tabs = window_->findChild<QTabWidget*>(QStringLiteral("centralTabs"));
        tabs->setCurrentIndex(2);  // Explorer, Model, Workbench
        bench->corruptedField()->setText(QStringLiteral("7 41 3 12 22 15 36"));
        const QString changes = bench->findChild<QLabel*>(QStringLiteral("patchChanges"))->text();
        QVERIFY2(changes.contains(QStringLiteral("3: #59 → <b>#12</b>")), qPrintable(changes));
        bench->targetField()->setText(QStringLiteral("5"));
        bench->foilField()->setText(QStringLiteral("9"));
        QSignalSpy finished(bench->workbench(), &document::WorkbenchSession::finished);
        bench->runButton()->click();
        QVERIFY(finished.wait(60000));
        const io::ModelFolder folder(gpt2Tiny());
        const model::PatchingResult expected = model::activationPatching<float>(
            folder.model(), {7, 41, 3, 59, 22, 15, 36}, {7, 41, 3, 12, 22, 15, 36}, -1, 5, 9);
        QCOMPARE(bench->headsMap()->rows(), 2);
        QCOMPARE(bench->headsMap()->columns(), 4);
        QCOMPARE(bench->residualMap()->columns(), 7);
        for (int l = 0; l < 2; ++l) {
            for (int h = 0; h < 4; ++h) {
                QCOMPARE(bench->headsMap()->value(l, h),
                         expected.heads[static_cast<std::size_t>(l)][static_cast<std::size_t>(h)]);
                QCOMPARE(
                    bench->patternMap()->value(l, h),
                    expected.pattern[static_cast<std::size_t>(l)][static_cast<std::size_t>(h)]);
            }
            for (int t = 0; t < 7; ++t)
                QCOMPARE(
                    bench->residualMap()->value(l, t),
                    expected.residual[static_cast<std::size_t>(l)][static_cast<std::size_t>(t)]);
        }
        QVERIFY(bench->residualMap()->range() >= 1.0);
        QVERIFY2(bench->statusText().contains(QStringLiteral("logit(#5) − logit(#9)")),
                 qPrintable(bench->statusText()));
        QCOMPARE(bench->findChild<QProgressBar*>()->value(), 1000);
        QCOMPARE(window_->size(), QSize(1024, 768));  // the tab fits the window it opened in
        const QString shots = qEnvironmentVariable("AE_SHOTS_DIR");
        if (!shots.isEmpty()) {
            QTest::qWait(200);  // the maps' queued replots
            QVERIFY(
                window_->grab().save(shots + QStringLiteral("/workbench-patching-1024x768.png")));
        }
    }

    void mismatchesAreSaidInOneLine() {
        openModel();
        session()->setIds({7, 41, 3, 59, 22});
        settle();
        ui::WorkbenchPanel* bench = window_->workbench();
        bench->corruptedField()->setText(QStringLiteral("7 41 3"));
        QVERIFY(bench->findChild<QLabel*>(QStringLiteral("patchChanges"))
                    ->text()
                    .contains(QStringLiteral("3 tokens against the text's 5")));
        QSignalSpy problem(bench->workbench(), &document::WorkbenchSession::problem);
        bench->targetField()->setText(QStringLiteral("5"));
        bench->runButton()->click();
        QCOMPARE(problem.count(), 1);
        QVERIFY(bench->statusText().contains(
            QStringLiteral("patching needs texts of the same length")));
        bench->corruptedField()->setText(QStringLiteral("7 41 3 12 22"));
        bench->targetField()->setText(QStringLiteral("64"));
        bench->runButton()->click();
        QVERIFY2(bench->statusText().contains(QStringLiteral("is not a token id in [0, 64)")),
                 qPrintable(bench->statusText()));
        bench->corruptedField()->setText(QStringLiteral("7 forty 3"));
        QVERIFY(bench->findChild<QLabel*>(QStringLiteral("patchChanges"))
                    ->text()
                    .contains(QStringLiteral("\"forty\" is not an id")));
    }
};

QTEST_MAIN(TestWorkbenchWindow)
#include "test_workbench_window.moc"
