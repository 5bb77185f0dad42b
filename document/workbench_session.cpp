#include "document/workbench_session.h"

#include <QMetaObject>
#include <QPointer>
#include <QRegularExpression>

#include "document/model_session.h"
#include "io/model/model_folder.h"
#include "io/tokenizer/tokenizer.h"

namespace ae::document {

WorkbenchSession::WorkbenchSession(ModelSession* session, QObject* parent)
    : QObject(parent), session_(session) {}

WorkbenchSession::~WorkbenchSession() {
    cancel();
    join();
}

void WorkbenchSession::join() {
    if (worker_.joinable()) worker_.join();
}

void WorkbenchSession::cancel() {
    if (cancel_) cancel_->store(true);
}

long long WorkbenchSession::tokenId(const QString& token, const char* what,
                                    QString* problem) const {
    const model::Model* model = session_->model();
    const io::Tokenizer* tokenizer = session_->tokenizer();
    QString text = token;
    bool number = false;
    long long id = -1;
    if (text.startsWith('#')) {
        id = text.mid(1).toLongLong(&number);
    } else if (!tokenizer) {
        id = text.trimmed().toLongLong(&number);
    }
    if (!number && tokenizer) {
        std::vector<int> ids;
        try {
            ids = tokenizer->encode(text, false);
        } catch (const std::exception& e) {
            *problem = QString::fromStdString(e.what());
            return -1;
        }
        if (ids.size() == 1) {
            id = ids.front();
            number = true;
        } else {
            *problem = tr("The %1 \"%2\" is %3 tokens, not one: pick it from the predictions or "
                          "type #id")
                           .arg(QLatin1String(what), text)
                           .arg(ids.size());
            return -1;
        }
    }
    if (!number || id < 0 || (model && id >= model->config.vocab)) {
        *problem = tr("The %1 \"%2\" is not a token id in [0, %3)")
                       .arg(QLatin1String(what), text)
                       .arg(model ? model->config.vocab : 0);
        return -1;
    }
    return id;
}

std::vector<long long> WorkbenchSession::corruptedIds(QString* problem) const {
    if (!session_->model()) {
        *problem = tr("Open a model first");
        return {};
    }
    if (corrupted_.trimmed().isEmpty()) {
        *problem = tr("Type the corrupted prompt: the model's text with a few tokens changed");
        return {};
    }
    if (const io::Tokenizer* tokenizer = session_->tokenizer()) {
        try {
            const std::vector<int> ids = tokenizer->encode(corrupted_, true);
            return {ids.begin(), ids.end()};
        } catch (const std::exception& e) {
            *problem = QString::fromStdString(e.what());
            return {};
        }
    }
    std::vector<long long> ids;
    for (const QString& part :
         corrupted_.split(QRegularExpression(QStringLiteral("[\\s,]+")), Qt::SkipEmptyParts)) {
        bool ok = false;
        const long long id = part.toLongLong(&ok);
        if (!ok) {
            *problem = tr("This folder has no tokenizer: type the corrupted prompt as ids, "
                          "e.g. 7 41 3 (\"%1\" is not an id)")
                           .arg(part);
            return {};
        }
        ids.push_back(id);
    }
    return ids;
}

std::vector<int> WorkbenchSession::changedPositions() const {
    QString problem;
    const std::vector<long long> corrupt = corruptedIds(&problem);
    const std::vector<long long>& clean = session_->ids();
    std::vector<int> changed;
    if (corrupt.size() != clean.size()) return changed;
    for (std::size_t i = 0; i < clean.size(); ++i)
        if (clean[i] != corrupt[i]) changed.push_back(static_cast<int>(i));
    return changed;
}

void WorkbenchSession::run() {
    cancel();
    join();
    QString problem;
    const std::vector<long long> corrupt = corruptedIds(&problem);
    const std::vector<long long> clean = session_->ids();
    long long target = -1, foil = -1;
    if (problem.isEmpty() && corrupt.size() != clean.size())
        problem = tr("The corrupted prompt is %1 tokens, the model's text %2: patching needs "
                     "texts of the same length")
                      .arg(corrupt.size())
                      .arg(clean.size());
    if (problem.isEmpty()) target = tokenId(target_, "answer", &problem);
    if (problem.isEmpty() && !foil_.trimmed().isEmpty()) foil = tokenId(foil_, "foil", &problem);
    const std::shared_ptr<const io::ModelFolder> folder = session_->folderHandle();
    if (problem.isEmpty() && !folder) problem = tr("Open a model first");
    if (!problem.isEmpty()) {
        emit this->problem(problem);
        return;
    }
    cancel_ = std::make_shared<std::atomic<bool>>(false);
    running_ = true;
    const unsigned generation = ++generation_;
    const std::shared_ptr<std::atomic<bool>> stop = cancel_;
    const QPointer<WorkbenchSession> self(this);
    worker_ = std::thread([=] {
        std::optional<model::PatchingResult> result;
        QString failure;
        try {
            result = model::activationPatching<float>(
                folder->model(), clean, corrupt, -1, target, foil, [&](double done) {
                    QMetaObject::invokeMethod(self, [self, generation, done] {
                        if (self && self->generation_ == generation) emit self->progress(done);
                    });
                    return !stop->load();
                });
        } catch (const model::RunCancelled&) {
            failure = QStringLiteral("cancelled");
        } catch (const model::ModelError& e) {
            failure = QString::fromStdString(e.what());
        }
        QMetaObject::invokeMethod(self, [self, generation, result, failure, clean, corrupt] {
            if (!self || self->generation_ != generation) return;
            self->running_ = false;
            if (result) {
                self->result_ = result;
                self->cleanIds_ = clean;
                self->resultCorrupt_ = corrupt;
                emit self->finished();
            } else if (failure != QLatin1String("cancelled")) {
                emit self->problem(failure);
            } else {
                emit self->finished();
            }
        });
    });
}

}  // namespace ae::document
