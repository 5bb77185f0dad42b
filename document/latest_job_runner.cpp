#include "document/latest_job_runner.h"

#include <QThread>
#include <QTimer>
#include <utility>

namespace ae::document {

LatestJobRunner::LatestJobRunner(const QString& threadName, int kinds, QObject* parent)
    : QObject(parent),
      threadName_(threadName),
      serials_(static_cast<std::size_t>(kinds), 0),
      pending_(static_cast<std::size_t>(kinds), false) {}

LatestJobRunner::~LatestJobRunner() {
    stop();
}

void LatestJobRunner::stop() {
    if (!worker_) return;
    worker_->quit();
    worker_->wait();
    delete workerContext_;
    workerContext_ = nullptr;
    delete worker_;
    worker_ = nullptr;
}

void LatestJobRunner::post(Job job, int kind, Start start) {
    if (!worker_) {
        worker_ = new QThread(this);
        worker_->setObjectName(threadName_);
        workerContext_ = new QObject;
        workerContext_->moveToThread(worker_);
        worker_->start();
    }
    const std::size_t k = static_cast<std::size_t>(kind);
    const long serial = ++serials_[k];
    pending_[k] = true;
    auto toWorker = [this, k, serial, job = std::move(job)]() mutable {
        if (serial != serials_[k] || !workerContext_) return;  // dropped before it started
        QMetaObject::invokeMethod(
            workerContext_,
            [this, k, serial, job = std::move(job)] {
                Delivery deliver = job();
                QMetaObject::invokeMethod(
                    this,
                    [this, k, serial, deliver = std::move(deliver)] {
                        if (serial != serials_[k]) return;  // stale: a newer job, or drop()
                        pending_[k] = false;
                        if (deliver) deliver();
                    },
                    Qt::QueuedConnection);
            },
            Qt::QueuedConnection);
    };
    if (start == Start::AfterQueuedEvents)
        QTimer::singleShot(0, this, std::move(toWorker));
    else
        toWorker();
}

void LatestJobRunner::drop(int kind) {
    const std::size_t k = static_cast<std::size_t>(kind);
    ++serials_[k];
    pending_[k] = false;
}

bool LatestJobRunner::isPending(int kind) const {
    return pending_[static_cast<std::size_t>(kind)];
}

}  // namespace ae::document
