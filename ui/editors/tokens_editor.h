#pragma once
// Tokens and embeddings: one table per sequence (the queries, and the source of a cross-attention
// layer), the sentence field, d_model, positions and layer norm. Every change goes through the
// document, so it is undoable and every other view follows.

#include <QStringList>
#include <QWidget>

#include "document/attention_document.h"
#include "ui/editors/scene_editor.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSpinBox;
class QTableView;

namespace ae::ui {

class MatrixTableModel;
class SequencePanel;

// Splits typed text into tokens: whitespace separates, and every punctuation or symbol character
// except '_' is a token of its own ("Hello, world!" -> Hello , world !), as BERT's basic tokenizer
// does. A space-separated piece that is one of `known` (the current tokens) stays whole, so a
// sentence made of existing tokens such as "[CLS]" reads back unchanged.
QStringList splitSentence(const QString& text, const QStringList& known = {});

class TokensEditor : public SceneEditor {
    Q_OBJECT
public:
    explicit TokensEditor(document::AttentionDocument* document, QWidget* parent = nullptr);

    // Decimals shown in the cells (3 by default); the cell editor and tooltip show every digit.
    void setDecimals(int decimals);
    QSize sizeHint() const override;

private:
    friend class SequencePanel;
    void refresh() override;

    SequencePanel* queries_;
    SequencePanel* source_;
    QCheckBox* crossCheck_;
    QSpinBox* dModelSpin_;
    QSpinBox* seedSpin_;
    QComboBox* positionalCombo_;
    QDoubleSpinBox* baseSpin_;
    QCheckBox* normCheck_;
    // The learned positional table, shown while positions are learned.
    QTableView* positionalView_;
    MatrixTableModel* positionalModel_;
};

}  // namespace ae::ui
