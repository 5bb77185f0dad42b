#include "document/model_work.h"

#include <QEventLoop>
#include <QTimer>
#include <exception>
#include <utility>

#include "document/latest_job_runner.h"

namespace ae::document {

ModelWork::ModelWork(QObject* parent)
    : QObject(parent),
      jobs_(new LatestJobRunner(QStringLiteral("model session"), 4, this)),
      progressTimer_(new QTimer(this)) {
    progressTimer_->setSingleShot(true);
    connect(progressTimer_, &QTimer::timeout, this, [this] {
        if (busy_) emit progressShown(busyWhat_);
    });
}

void ModelWork::stop() {
    jobs_->stop();
}

void ModelWork::post(Channel channel, const QString& what, Job work) {
    jobs_->post(
        [this, channel, work = std::move(work)]() -> std::function<void()> {
            std::function<void()> deliver;
            try {
                deliver = work();
            } catch (const std::exception& error) {  // ModelError, TokenizerError, bad_alloc
                deliver = [this, channel, message = QString::fromStdString(error.what())] {
                    emit failed(message, channel == Opening);
                };
            }
            return [this, deliver = std::move(deliver)] {
                deliver();
                updateBusy();
                emit delivered();
            };
        },
        channel,
        // A follow-up starts once the events queued now (the scene the results replace, the
        // maps' repaint) have run: on two cores it would otherwise take half the machine from
        // them.
        channel == Induction || channel == Weighing ? LatestJobRunner::Start::AfterQueuedEvents
                                                    : LatestJobRunner::Start::Now);
    // A follow-up: the maps are up, nothing to wait for.
    if (channel == Induction || channel == Weighing) return;
    busyWhat_ = what;
    updateBusy();
    if (progressDelayMs_ <= 0)
        emit progressShown(busyWhat_);
    else
        progressTimer_->start(progressDelayMs_);
}

void ModelWork::drop(Channel channel) {
    jobs_->drop(channel);
    updateBusy();
}

void ModelWork::dropAll() {
    for (Channel channel : {Opening, Running, Induction, Weighing})
        drop(channel);
}

void ModelWork::waitWhile(const std::function<bool()>& working) {
    while (working()) {
        QEventLoop loop;
        connect(this, &ModelWork::busyChanged, &loop, &QEventLoop::quit);
        connect(this, &ModelWork::delivered, &loop, &QEventLoop::quit);
        QTimer::singleShot(50, &loop, &QEventLoop::quit);
        loop.exec();
    }
}

bool ModelWork::isPending(Channel channel) const {
    return jobs_->isPending(channel);
}

void ModelWork::updateBusy() {
    const bool busy = jobs_->isPending(Opening) || jobs_->isPending(Running);
    if (busy == busy_) return;
    busy_ = busy;
    if (!busy) progressTimer_->stop();
    emit busyChanged(busy);
}

}  // namespace ae::document
