// The window's progress bar for background computing: hidden for a job shorter than the delay,
// shown while a longer one runs, hidden again when it is done. Jobs are held on the worker with a
// semaphore (setBeforeJobForTesting), never timed; the document's side of background computing is
// tests/document/test_async_compute.

#include <QApplication>
#include <QProgressBar>
#include <QSemaphore>
#include <QSignalSpy>
#include <QThread>
#include <QtTest>
#include <atomic>

#include "core/init_draw.h"
#include "document/attention_document.h"
#include "ui/window/main_window.h"

using namespace ae;
using namespace ae::ui;
using namespace ae::document;

namespace {

// 16 tokens, d_model 32 in 4 heads: any job will do, since every one is held.
Scene sixteenTokens() {
    InitSpec spec;
    spec.seed = 3;
    spec.dModel = 32;
    return drawnScene(spec, 16, 4);
}

}  // namespace

class TestComputeProgress : public QObject {
    Q_OBJECT
private slots:
    void cleanup() { release(); }  // a document never waits on its destruction for a held job
    void progressShowsForLongWorkOnly();

private:
    // Threshold 0: every compute goes to the worker, held there until release().
    void holdJobs(AttentionDocument& document) {
        document.scheduler().setBackgroundThreshold(0.0);
        document.scheduler().setBeforeJobForTesting([this] {
            ++jobsStarted_;
            gate_.acquire();
        });
    }
    void release() { gate_.release(1000); }

    QSemaphore gate_;
    std::atomic<int> jobsStarted_{0};
};

void TestComputeProgress::progressShowsForLongWorkOnly() {
    MainWindow window;
    AttentionDocument* document = window.document();
    auto* bar = window.findChild<QProgressBar*>(QStringLiteral("computeProgress"));
    QVERIFY(bar);
    QVERIFY(bar->isHidden());
    document->resetScene(sixteenTokens());
    holdJobs(*document);

    // A job held far shorter than the delay shows nothing.
    document->scheduler().setProgressDelay(3600 * 1000);
    document->setScale({ScaleKind::Divisor, 2.0});
    QTRY_COMPARE(jobsStarted_.load(), 1);
    QTest::qWait(150);  // several progress ticks
    QVERIFY(!document->scheduler().showsProgress());
    QVERIFY(bar->isHidden());
    release();
    document->waitForResults();

    // Past the delay (0 here), the status bar shows how far the job is, then hides it.
    gate_.acquire(gate_.available());
    document->scheduler().setProgressDelay(0);
    QSignalSpy progress(document, &AttentionDocument::progressChanged);
    document->setScale({ScaleKind::Divisor, 3.0});
    QTRY_VERIFY(document->scheduler().showsProgress());
    QTRY_VERIFY(!bar->isHidden());
    QVERIFY(progress.count() >= 1);
    QVERIFY(progress.last().at(0).toDouble() >= 0.0 && progress.last().at(0).toDouble() <= 1.0);
    release();
    document->waitForResults();
    QVERIFY(!document->scheduler().showsProgress());
    QVERIFY(bar->isHidden());
    QCOMPARE(document->engine().scene().scale.divisor, 3.0);
}

QTEST_MAIN(TestComputeProgress)
#include "test_compute_progress.moc"
