#pragma once
// The Workbench tab's analyses on the open model (core/model/workbench.h): activation patching of
// the model's text (the clean run) against a corrupted text of the same length, with an answer
// and a foil token. A sweep runs on a thread of its own, reports its progress and can be
// cancelled; its result arrives as a signal. The settings are the tab's own: they are not yet
// part of the scene's view (not undone, not saved).
#include <QObject>
#include <QString>
#include <atomic>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "core/model/workbench.h"

namespace ae::document {

class ModelSession;

class WorkbenchSession : public QObject {
    Q_OBJECT
public:
    explicit WorkbenchSession(ModelSession* session, QObject* parent = nullptr);
    ~WorkbenchSession() override;

    // The corrupted prompt: a text for the model's tokenizer, or ids ("7 41 3" or "7,41,3") when
    // the folder has no tokenizer.
    void setCorrupted(const QString& text) { corrupted_ = text; }
    QString corrupted() const { return corrupted_; }
    // The answer and the foil: one token each, as text ("␣Mary" tokenizes to one token) or as an
    // id ("#5"; a bare number without a tokenizer). An empty foil: the answer's logit alone.
    void setTarget(const QString& token) { target_ = token; }
    void setFoil(const QString& token) { foil_ = token; }
    QString target() const { return target_; }
    QString foil() const { return foil_; }

    // The corrupted prompt's ids, or a one-line reason (no model, no text, a token that is not
    // one id); and the positions where it differs from the model's text, when they are as long.
    std::vector<long long> corruptedIds(QString* problem) const;
    std::vector<int> changedPositions() const;

    // Starts a sweep (heads, patterns and residual rows) on the model's current text; refusals
    // come as problem(). A sweep under way is cancelled first.
    void run();
    void cancel();
    bool isRunning() const { return running_; }
    const std::optional<model::PatchingResult>& result() const { return result_; }
    // The texts the result is for.
    const std::vector<long long>& cleanIds() const { return cleanIds_; }
    const std::vector<long long>& resultCorruptIds() const { return resultCorrupt_; }

signals:
    void progress(double fraction);
    void finished();
    void problem(const QString& message);

private:
    long long tokenId(const QString& token, const char* what, QString* problem) const;
    void join();

    ModelSession* session_;
    QString corrupted_, target_, foil_;
    std::optional<model::PatchingResult> result_;
    std::vector<long long> cleanIds_, resultCorrupt_;
    std::thread worker_;
    std::shared_ptr<std::atomic<bool>> cancel_;
    bool running_ = false;
    unsigned generation_ = 0;
};

}  // namespace ae::document
