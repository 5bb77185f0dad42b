#pragma once
// The model session's work off the GUI thread (document/model_session.h): three kinds of job on
// one LatestJobRunner (document/latest_job_runner.h), whether the session is busy, and the
// progress it shows once work has run longer than the progress delay.

#include <QObject>
#include <QString>
#include <functional>

class QTimer;

namespace ae::document {

class LatestJobRunner;

class ModelWork : public QObject {
    Q_OBJECT
public:
    // Opening a folder, running the model on the open folder (a run, a resumed run), and
    // measuring induction after a run. A newer job of a kind makes the older one stale.
    // Weighing: the model view's value-weighted maps of a run, a follow-up as induction is.
    enum Channel { Opening = 0, Running = 1, Induction = 2, Weighing = 3 };
    // Runs on the worker and hands back what to do on the GUI thread; it may throw.
    using Job = std::function<std::function<void()>()>;

    explicit ModelWork(QObject* parent = nullptr);
    // Stops the worker: call before freeing what jobs use.
    void stop();

    // Runs `work` on the worker, then what it returns on this thread unless a newer job of its
    // channel started or drop() was called in between. `what` is what the progress shows
    // ("Opening gpt2"); induction is a follow-up that neither shows progress nor makes busy. A
    // job's exception comes back as failed().
    void post(Channel channel, const QString& what, Job work);
    void drop(Channel channel);
    void dropAll();
    bool isPending(Channel channel) const;
    // Opening or running under way.
    bool isBusy() const { return busy_; }
    void setProgressDelay(int milliseconds) { progressDelayMs_ = milliseconds; }
    // Runs an event loop while `working()` says so (tests, the command line), looking again after
    // each delivery, each change of busy, and every 50 ms.
    void waitWhile(const std::function<bool()>& working);

signals:
    void busyChanged(bool busy);
    void progressShown(const QString& what);
    // A job's result was taken in (after what it hands back has run).
    void delivered();
    // A job threw: `message` is its one line; `opening` when it was opening a model.
    void failed(const QString& message, bool opening);

private:
    void updateBusy();

    LatestJobRunner* jobs_;
    bool busy_ = false;
    int progressDelayMs_ = 200;
    QString busyWhat_;
    QTimer* progressTimer_;
};

}  // namespace ae::document
