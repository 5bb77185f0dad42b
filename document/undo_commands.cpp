#include "document/undo_commands.h"

namespace ae::ui {

EmbeddingValueCommand::EmbeddingValueCommand(AttentionDocument* document, Stream stream, int row,
                                             int column, double oldValue, double newValue)
    : AppliedCommand(document, QObject::tr("Edit embedding value")),
      stream_(stream),
      row_(row),
      column_(column),
      old_(oldValue),
      new_(newValue) {}

void EmbeddingValueCommand::apply(bool old) {
    document_->applyEmbeddingValue(stream_, row_, column_, old ? old_ : new_);
}

WeightValueCommand::WeightValueCommand(AttentionDocument* document, WeightMatrix which, int row,
                                       int column, double oldValue, double newValue)
    : AppliedCommand(document, QObject::tr("Edit weight value")),
      which_(which),
      row_(row),
      column_(column),
      old_(oldValue),
      new_(newValue) {}

void WeightValueCommand::apply(bool old) {
    document_->applyWeightValue(which_, row_, column_, old ? old_ : new_);
}

ReplaceSceneCommand::ReplaceSceneCommand(AttentionDocument* document,
                                         std::shared_ptr<const Scene> oldScene,
                                         std::shared_ptr<const Scene> newScene, const QString& text)
    : AppliedCommand(document, text), old_(std::move(oldScene)), new_(std::move(newScene)) {}

void ReplaceSceneCommand::apply(bool old) {
    document_->applyScene(old ? old_ : new_);
}

}  // namespace ae::ui
