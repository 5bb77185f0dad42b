#include "document/undo_commands.h"

namespace ae::document {

CellValueCommand::CellValueCommand(AttentionDocument* document, Apply apply, double oldValue,
                                   double newValue, const QString& text)
    : AppliedCommand(document, text), apply_(std::move(apply)), old_(oldValue), new_(newValue) {}

void CellValueCommand::apply(bool old) {
    apply_(old ? old_ : new_);
}

ReplaceSceneCommand::ReplaceSceneCommand(AttentionDocument* document,
                                         std::shared_ptr<const Scene> oldScene,
                                         std::shared_ptr<const Scene> newScene, const QString& text)
    : AppliedCommand(document, text), old_(std::move(oldScene)), new_(std::move(newScene)) {}

void ReplaceSceneCommand::apply(bool old) {
    document_->applyScene(old ? old_ : new_);
}

}  // namespace ae::document
