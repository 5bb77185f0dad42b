#pragma once
// Undo commands: each stores the old and new value of one kind of change and applies it through
// the document. Commands pushed during one interaction (a slider drag) merge into one.

#include <QUndoCommand>
#include <functional>

#include "core/scene_compare.h"
#include "document/attention_document.h"

namespace ae::document {

enum CommandId {
    kHeadsCommand = 1,
    kScaleCommand,
    kMaskCommand,
    kMaskFillCommand,
    kAblationCommand,
    kHeadGroupingCommand
};

// Whether two values of a merging command are the same setting: a drag that comes back to its
// start is then no undo step.
inline bool sameValue(int a, int b) {
    return a == b;
}
inline bool sameValue(double a, double b) {
    return a == b;
}
inline bool sameValue(const Scale& a, const Scale& b) {
    return a.kind == b.kind && a.divisor == b.divisor;
}
inline bool sameValue(const Scene::Ablation& a, const Scene::Ablation& b) {
    return a == b;
}
// Bit for bit: a drag back to where it began leaves no step.
inline bool sameValue(const HeadGrouping& a, const HeadGrouping& b) {
    return a.heads == b.heads && a.kvHeads == b.kvHeads && sameMatrix(a.key, b.key) &&
           sameMatrix(a.value, b.value) && sameMatrix(a.keyBias, b.keyBias) &&
           sameMatrix(a.valueBias, b.valueBias);
}
inline bool sameValue(const Mask& a, const Mask& b) {
    return sameMask(a, b);
}

// One value of type T, set through `apply`; merges with the next command of the same id pushed
// in the same interaction. A merged command back at its start value makes itself obsolete, so
// QUndoStack drops it (and the stack is clean again if it was before the drag).
template <typename T>
class ChangeValueCommand : public QUndoCommand {
public:
    using Apply = std::function<void(const T&)>;
    ChangeValueCommand(const AttentionDocument* document, int id, Apply apply, T oldValue,
                       T newValue, const QString& text)
        : QUndoCommand(text),
          id_(id),
          serial_(document->interactionSerial()),
          apply_(apply),
          old_(std::move(oldValue)),
          new_(std::move(newValue)) {}
    int id() const override { return id_; }
    void undo() override { apply_(old_); }
    void redo() override { apply_(new_); }
    bool mergeWith(const QUndoCommand* other) override {
        const auto* next = static_cast<const ChangeValueCommand*>(other);
        if (next->serial_ != serial_) return false;
        new_ = next->new_;
        setObsolete(sameValue(old_, new_));
        return true;
    }

private:
    int id_;
    int serial_;
    Apply apply_;
    T old_, new_;
};

// The edits below are applied (and checked) before they are pushed: their first redo() only
// records them, later ones apply them again. A check still running in the background may make
// one obsolete (AttentionDocument::editRefused), so the document hears when one is deleted.
class AppliedCommand : public QUndoCommand {
public:
    AppliedCommand(AttentionDocument* document, const QString& text)
        : QUndoCommand(text), document_(document) {}
    ~AppliedCommand() override { document_->forgetCommand(this); }
    void redo() final {
        if (applied_) {
            applied_ = false;
            return;
        }
        apply(false);
    }
    void undo() final { apply(true); }

protected:
    virtual void apply(bool old) = 0;
    AttentionDocument* const document_;

private:
    bool applied_ = true;
};

// One number of the scene (an embedding or a weight value), set through `apply`, which records it
// and pushes nothing. No id: each edit of a number is an undo step of its own.
class CellValueCommand : public AppliedCommand {
public:
    using Apply = std::function<void(double)>;
    CellValueCommand(AttentionDocument* document, Apply apply, double oldValue, double newValue,
                     const QString& text);

protected:
    void apply(bool old) override;

private:
    Apply apply_;
    double old_, new_;
};

// Any structural change: keeps both whole scenes, shared with the document's own snapshots (a
// model's layer is tens of MB; a copy per step would cost as much time as memory).
class ReplaceSceneCommand : public AppliedCommand {
public:
    ReplaceSceneCommand(AttentionDocument* document, std::shared_ptr<const Scene> oldScene,
                        std::shared_ptr<const Scene> newScene, const QString& text);

protected:
    void apply(bool old) override;

private:
    std::shared_ptr<const Scene> old_, new_;
};

}  // namespace ae::document
