#pragma once
// Work off the GUI thread where only the latest request counts: jobs run one after another on one
// worker thread, and each hands back what to do with its result, which runs on the runner's own
// (GUI) thread unless a newer job of the same kind was posted, or the kind was dropped, in the
// meantime. A running job is never interrupted here; a caller that can stop its work early does
// so itself (ComputeScheduler's cancel flag). Used by ComputeScheduler (the engines' computes) and
// ModelSession (opening, running and measuring a model).

#include <QObject>
#include <QString>
#include <functional>
#include <vector>

class QThread;

namespace ae::document {

class LatestJobRunner : public QObject {
    Q_OBJECT
public:
    // What a job hands back; runs on the runner's thread, only if the job is still the latest.
    using Delivery = std::function<void()>;
    // Runs on the worker thread: it must touch nothing the GUI thread uses, and not throw (a job
    // hands its failure back as a delivery).
    using Job = std::function<Delivery()>;
    enum class Start {
        Now,
        // Once the events queued now have run: a follow-up that must not take the machine from
        // the repaint of the results it follows.
        AfterQueuedEvents
    };

    // `kinds` independent kinds of job (0 to kinds − 1), each with its own latest; they share the
    // one worker thread, named `threadName`, started on the first post.
    explicit LatestJobRunner(const QString& threadName, int kinds = 1, QObject* parent = nullptr);
    // Stops the worker (stop()).
    ~LatestJobRunner() override;

    // Makes `job` the latest of `kind` and queues it on the worker.
    void post(Job job, int kind = 0, Start start = Start::Now);
    // No job of `kind` under way counts any more: their deliveries are dropped.
    void drop(int kind = 0);
    // Whether the latest job of `kind` has not delivered yet (and was not dropped).
    bool isPending(int kind = 0) const;
    // Waits for the running job to end and drops the queued ones; what a job uses must outlive
    // this, so an owner calls it in its destructor before freeing that.
    void stop();

private:
    QString threadName_;
    QThread* worker_ = nullptr;
    QObject* workerContext_ = nullptr;  // lives in worker_: jobs are queued to it
    std::vector<long> serials_;         // per kind, the job whose delivery counts
    std::vector<bool> pending_;
};

}  // namespace ae::document
