#include "ui/editors/tokens_editor.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QTableView>
#include <QVBoxLayout>
#include <limits>

#include "core/scene_edit.h"
#include "ui/editors/matrix_table.h"
#include "ui/editors/token_table_model.h"

namespace ae::ui {
namespace {
// Characters of a sentence shown in its undo text and messages; the rest is elided.
constexpr int kShownSentenceLength = 80;
}  // namespace

QStringList splitSentence(const QString& text, const QStringList& known) {
    QStringList tokens;
    QString chunk;
    auto splitChunk = [&] {
        if (chunk.isEmpty()) return;
        if (known.contains(chunk)) {
            tokens << chunk;
            chunk.clear();
            return;
        }
        QString word;
        // By code point, so a character outside the BMP (an emoji) is one token, not two halves.
        for (const char32_t c : chunk.toUcs4()) {
            const QString piece = QString::fromUcs4(&c, 1);
            if (c != U'_' && (QChar::isPunct(c) || QChar::isSymbol(c))) {
                if (!word.isEmpty()) tokens << word;
                word.clear();
                tokens << piece;
            } else {
                word += piece;
            }
        }
        if (!word.isEmpty()) tokens << word;
        chunk.clear();
    };
    for (const char32_t c : text.toUcs4()) {
        if (QChar::isSpace(c)) {
            splitChunk();
        } else {
            chunk += QString::fromUcs4(&c, 1);
        }
    }
    splitChunk();
    return tokens;
}

// One sequence: sentence field, token table and the add/remove/move buttons. A plain widget of
// the editor (no signals of its own): it reports through the editor's message line.
class SequencePanel : public QWidget {
public:
    SequencePanel(TokensEditor* editor, document::AttentionDocument* document, Stream stream)
        : QWidget(editor), editor_(editor), document_(document), stream_(stream) {
        const QString prefix =
            stream == Stream::Query ? QStringLiteral("query") : QStringLiteral("source");
        title_ = new QLabel(this);
        sentence_ = new QLineEdit(this);
        sentence_->setObjectName(prefix + QStringLiteral("SentenceEdit"));
        sentence_->setPlaceholderText(tr("Type a sentence and press Enter"));
        sentence_->setToolTip(
            tr("Splits at spaces; punctuation becomes separate tokens. One vector per word: a "
               "word already present keeps its vector (every copy of it gets the same one); a "
               "new word gets a vector derived from its text, the same every time."));
        auto* useSentence = new QPushButton(tr("Use sentence"), this);
        useSentence->setObjectName(prefix + QStringLiteral("SentenceButton"));

        model_ = new TokenTableModel(document, stream, this);
        view_ = new QTableView(this);
        view_->setObjectName(prefix + QStringLiteral("Table"));
        view_->setModel(model_);
        view_->setSelectionMode(QAbstractItemView::SingleSelection);
        view_->setEditTriggers(QAbstractItemView::DoubleClicked |
                               QAbstractItemView::EditKeyPressed |
                               QAbstractItemView::AnyKeyPressed);
        configureNumberView(view_, 3);

        auto button = [this, &prefix](const QString& text, const QString& name,
                                      const QString& tip) {
            auto* b = new QPushButton(text, this);
            b->setObjectName(prefix + name);
            b->setToolTip(tip);
            return b;
        };
        auto* add = button(tr("Add"), QStringLiteral("AddButton"),
                           tr("Insert a token after the selected one"));
        auto* remove =
            button(tr("Remove"), QStringLiteral("RemoveButton"), tr("Remove the selected token"));
        auto* up = button(tr("Move up"), QStringLiteral("UpButton"),
                          tr("Move the selected token one place earlier"));
        auto* down = button(tr("Move down"), QStringLiteral("DownButton"),
                            tr("Move the selected token one place later"));

        auto* sentenceRow = new QHBoxLayout;
        sentenceRow->addWidget(sentence_, 1);
        sentenceRow->addWidget(useSentence);
        auto* buttons = new QHBoxLayout;
        for (QPushButton* b : {add, remove, up, down})
            buttons->addWidget(b);
        buttons->addStretch(1);
        auto* layout = new QVBoxLayout(this);
        layout->setContentsMargins(0, 0, 0, 0);
        layout->addWidget(title_);
        layout->addLayout(sentenceRow);
        layout->addWidget(view_, 1);
        layout->addLayout(buttons);

        connect(model_, &TokenTableModel::messageRequested, editor_, &TokensEditor::showMessage);
        connect(model_, &TokenTableModel::editAccepted, editor_, &TokensEditor::clearMessage);
        connect(model_, &QAbstractItemModel::modelReset, this, [this] { fitTextColumn(); });
        connect(sentence_, &QLineEdit::returnPressed, this, [this] { applySentence(); });
        connect(useSentence, &QPushButton::clicked, this, [this] { applySentence(); });
        connect(add, &QPushButton::clicked, this, [this] { addToken(); });
        connect(remove, &QPushButton::clicked, this, [this] { removeSelected(); });
        connect(up, &QPushButton::clicked, this, [this] { moveSelected(-1); });
        connect(down, &QPushButton::clicked, this, [this] { moveSelected(+1); });
        fitTextColumn();
    }

    TokenTableModel* model() const { return model_; }
    QTableView* view() const { return view_; }

    void refresh(const QString& title) {
        title_->setText(title);
        model_->refresh();
        // Keep what the user is typing; otherwise show the tokens as a sentence to edit.
        if (!sentence_->hasFocus() && (stream_ == Stream::Query || document_->scene().hasSource)) {
            QStringList words;
            for (const std::string& t : streamTokens(document_->scene(), stream_)) {
                words << QString::fromStdString(t);
            }
            sentence_->setText(words.join(QLatin1Char(' ')));
        }
    }

    void setDecimals(int decimals) {
        model_->setDecimals(decimals);
        configureNumberView(view_, decimals);
    }

private:
    int selectedRow() const {
        const QModelIndex current = view_->currentIndex();
        return current.isValid() ? current.row() : -1;
    }

    void select(int row) {
        if (row < 0 || row >= model_->rowCount()) return;
        view_->setCurrentIndex(model_->index(row, TokenTableModel::kTextColumn));
    }

    void fitTextColumn() {
        if (model_->rowCount() > 0) view_->resizeColumnToContents(TokenTableModel::kTextColumn);
        if (model_->paddingColumn() >= 0) view_->resizeColumnToContents(model_->paddingColumn());
    }

    void applySentence() {
        // Tokens already in the sequence stay whole, so the sentence shown can be edited and
        // applied again without splitting "[CLS]" or "word_1".
        QStringList known;
        for (const std::string& t : streamTokens(document_->scene(), stream_)) {
            known << QString::fromStdString(t);
        }
        const QStringList words = splitSentence(sentence_->text(), known);
        if (words.isEmpty()) {
            editor_->showMessage(tr("The sentence has no tokens; nothing changed"));
            return;
        }
        std::vector<std::string> tokens;
        for (const QString& w : words)
            tokens.push_back(w.toStdString());
        // Enter on the sentence as shown is not an edit: no undo step, vectors untouched.
        if (tokens == streamTokens(document_->scene(), stream_)) return;
        Scene next = document_->scene();
        setSentence(next, stream_, tokens);
        // A long sentence is shortened in the undo text and in a refusal's message line.
        QString shown = words.join(QLatin1Char(' '));
        if (shown.size() > kShownSentenceLength)
            shown = shown.left(kShownSentenceLength) + QStringLiteral("…");
        editor_->commit(next, tr("Set sentence “%1”").arg(shown));
    }

    void addToken() {
        const int n = model_->rowCount();
        const int at = selectedRow() >= 0 ? selectedRow() + 1 : n;
        Scene next = document_->scene();
        insertToken(next, stream_, at, tr("new").toStdString());
        if (editor_->commit(next, tr("Add token"))) select(at);
    }

    void removeSelected() {
        const int row = selectedRow();
        if (row < 0) {
            editor_->showMessage(tr("Select a token to remove"));
            return;
        }
        if (model_->rowCount() <= 1) {
            editor_->showMessage(tr("A sequence needs at least one token"));
            return;
        }
        Scene next = document_->scene();
        const QString text = QString::fromStdString(streamTokens(next, stream_)[row]);
        removeToken(next, stream_, row);
        if (editor_->commit(next, tr("Remove token “%1”").arg(text))) {
            select(std::min(row, model_->rowCount() - 1));
        }
    }

    void moveSelected(int step) {
        const int row = selectedRow();
        const int to = row + step;
        if (row < 0 || to < 0 || to >= model_->rowCount()) return;
        Scene next = document_->scene();
        moveToken(next, stream_, row, to);
        if (editor_->commit(next, tr("Move token"))) select(to);
    }

    TokensEditor* editor_;
    document::AttentionDocument* document_;
    Stream stream_;
    QLabel* title_;
    QLineEdit* sentence_;
    TokenTableModel* model_;
    QTableView* view_;
};

TokensEditor::TokensEditor(document::AttentionDocument* document, QWidget* parent)
    : SceneEditor(document, parent) {
    queries_ = new SequencePanel(this, document, Stream::Query);
    source_ = new SequencePanel(this, document, Stream::Source);

    crossCheck_ = new QCheckBox(tr("Cross-attention: separate source sentence"), this);
    crossCheck_->setObjectName(QStringLiteral("crossAttentionCheck"));
    crossCheck_->setToolTip(
        tr("Keys and values come from a second sequence, which starts as a "
           "copy of the tokens above"));

    dModelSpin_ = new QSpinBox(this);
    dModelSpin_->setObjectName(QStringLiteral("dModelSpin"));
    dModelSpin_->setRange(1, 4096);
    dModelSpin_->setKeyboardTracking(false);
    dModelSpin_->setToolTip(
        tr("Width of every embedding. New columns start at zero (so nothing changes until you type "
           "a value); new projection rows are drawn as a re-roll would draw them."));

    seedSpin_ = new QSpinBox(this);
    seedSpin_->setObjectName(QStringLiteral("embeddingSeedSpin"));
    seedSpin_->setRange(0, std::numeric_limits<int>::max());
    auto* randomize = new QPushButton(tr("Randomize embeddings"), this);
    randomize->setObjectName(QStringLiteral("randomizeButton"));
    randomize->setToolTip(
        tr("Draw every embedding from the seed: normal, std 1 (SplitMix64, the "
           "same numbers on every machine)"));

    positionalCombo_ = new QComboBox(this);
    positionalCombo_->setObjectName(QStringLiteral("positionalCombo"));
    positionalCombo_->addItem(tr("None"), int(PositionalKind::None));
    positionalCombo_->addItem(tr("Sinusoidal"), int(PositionalKind::Sinusoidal));
    positionalCombo_->addItem(tr("Learned"), int(PositionalKind::Learned));
    positionalCombo_->setToolTip(
        tr("Added to the embeddings before the projections. A learned "
           "table is drawn (normal, std 0.5) when you switch to it."));
    baseSpin_ = new QDoubleSpinBox(this);
    baseSpin_->setObjectName(QStringLiteral("positionalBaseSpin"));
    baseSpin_->setRange(1.5, 1e9);
    baseSpin_->setDecimals(1);
    baseSpin_->setKeyboardTracking(false);
    baseSpin_->setToolTip(tr("Sinusoidal base: PE[pos, 2i] = sin(pos / base^(2i/d_model))"));
    normCheck_ = new QCheckBox(tr("Layer norm"), this);
    normCheck_->setObjectName(QStringLiteral("layerNormCheck"));

    auto* settings = new QGridLayout;
    settings->addWidget(new QLabel(tr("d_model"), this), 0, 0);
    settings->addWidget(dModelSpin_, 0, 1);
    settings->addWidget(new QLabel(tr("Seed"), this), 0, 2);
    settings->addWidget(seedSpin_, 0, 3);
    settings->addWidget(randomize, 0, 4);
    settings->addWidget(new QLabel(tr("Positions"), this), 1, 0);
    settings->addWidget(positionalCombo_, 1, 1);
    settings->addWidget(new QLabel(tr("base"), this), 1, 2);
    settings->addWidget(baseSpin_, 1, 3);
    settings->addWidget(normCheck_, 1, 4);
    settings->setColumnStretch(5, 1);

    positionalModel_ = new MatrixTableModel(this);
    positionalModel_->setToolTipPrefix(tr("Learned position"));
    positionalModel_->setSetter([this](int row, int column, double value, QString* error) {
        Scene next = document_->scene();
        if (row >= next.positional.table.rows() || column >= next.positional.table.cols()) {
            return false;
        }
        next.positional.table(row, column) = value;
        return document_->replaceScene(next, tr("Edit learned position %1").arg(row), error);
    });
    positionalView_ = new QTableView(this);
    positionalView_->setObjectName(QStringLiteral("positionalTable"));
    positionalView_->setModel(positionalModel_);
    positionalView_->setToolTip(
        tr("Learned positional table: row p is added to the token at "
           "position p (both sequences)"));
    configureNumberView(positionalView_, 3);
    connect(positionalModel_, &MatrixTableModel::messageRequested, this,
            &TokensEditor::showMessage);
    connect(positionalModel_, &MatrixTableModel::valueAccepted, this, &TokensEditor::clearMessage);

    auto* layout = new QVBoxLayout(this);
    // The token tables get most of the height; the learned table is a secondary view.
    layout->addWidget(queries_, 3);
    layout->addWidget(crossCheck_);
    layout->addWidget(source_, 3);
    layout->addLayout(settings);
    layout->addWidget(positionalView_, 1);
    layout->addWidget(messageLabel());

    connect(dModelSpin_, &QSpinBox::valueChanged, this, [this](int d) {
        // Copies: after the commit the document holds the new scene.
        const int heads = document_->scene().heads;
        Scene next = document_->scene();
        setModelWidth(next, d, inferredDrawSpec(next));
        if (!commit(next, tr("Change d_model to %1").arg(d))) return;
        if (next.heads != heads) {
            showMessage(tr("Heads changed from %1 to %2, which divides d_proj = %3")
                            .arg(heads)
                            .arg(next.heads)
                            .arg(next.dProj()));
        }
    });
    connect(randomize, &QPushButton::clicked, this, [this] {
        Scene next = document_->scene();
        randomizeEmbeddings(next, static_cast<std::uint64_t>(seedSpin_->value()));
        commit(next, tr("Randomize embeddings (seed %1)").arg(seedSpin_->value()));
    });
    connect(positionalCombo_, &QComboBox::currentIndexChanged, this, [this] {
        Scene next = document_->scene();
        setPositionalKind(next,
                          static_cast<PositionalKind>(positionalCombo_->currentData().toInt()));
        commit(next, tr("Positional encoding: %1").arg(positionalCombo_->currentText()));
    });
    connect(baseSpin_, &QDoubleSpinBox::valueChanged, this, [this](double base) {
        Scene next = document_->scene();
        next.positional.base = base;
        commit(next, tr("Sinusoidal base %1").arg(base));
    });
    connect(normCheck_, &QCheckBox::toggled, this, [this](bool on) {
        Scene next = document_->scene();
        setNormEnabled(next, on);
        const QString norm = next.norm.kind == NormKind::Rms ? tr("RMS norm") : tr("Layer norm");
        commit(next, on ? tr("%1 on").arg(norm) : tr("%1 off").arg(norm));
    });
    connect(crossCheck_, &QCheckBox::toggled, this, [this](bool on) {
        Scene next = document_->scene();
        setSourceEnabled(next, on);
        commit(next, on ? tr("Cross-attention: separate source") : tr("Self-attention"));
    });
    connect(document_, &document::AttentionDocument::structureChanged, this,
            &TokensEditor::refresh);
    connect(document_, &document::AttentionDocument::resultsChanged, this, &TokensEditor::refresh);
    refresh();
}

void TokensEditor::refresh() {
    const Scene& scene = document_->scene();
    queries_->refresh(scene.hasSource ? tr("Queries (target sentence)") : tr("Tokens"));
    source_->refresh(tr("Source: keys and values"));
    source_->setVisible(scene.hasSource);

    const QSignalBlocker b1(crossCheck_), b2(dModelSpin_), b3(positionalCombo_), b4(baseSpin_),
        b5(normCheck_);
    crossCheck_->setChecked(scene.hasSource);
    // Only when different: with keyboard tracking off, text being typed into a spin box is not
    // its value yet, and setValue() would wipe it on every result change.
    if (dModelSpin_->value() != scene.dModel()) dModelSpin_->setValue(scene.dModel());
    positionalCombo_->setCurrentIndex(positionalCombo_->findData(int(scene.positional.kind)));
    if (baseSpin_->value() != scene.positional.base) baseSpin_->setValue(scene.positional.base);
    baseSpin_->setEnabled(scene.positional.kind == PositionalKind::Sinusoidal);
    normCheck_->setChecked(scene.norm.enabled);
    // A Llama or Qwen layer's pre-norm is an RMSNorm (no mean, no bias): say which.
    normCheck_->setText(scene.norm.kind == NormKind::Rms ? tr("RMS norm") : tr("Layer norm"));

    const bool learned = scene.positional.kind == PositionalKind::Learned;
    positionalView_->setVisible(learned);
    if (learned) {
        QStringList rows;
        for (int p = 0; p < scene.positional.table.rows(); ++p)
            rows << tr("pos %1").arg(p);
        positionalModel_->setValues(scene.positional.table, rows);
    }
}

void TokensEditor::setDecimals(int decimals) {
    queries_->setDecimals(decimals);
    source_->setDecimals(decimals);
    positionalModel_->setDecimals(decimals);
    configureNumberView(positionalView_, decimals);
}

QSize TokensEditor::sizeHint() const {
    return {560, 460};
}

}  // namespace ae::ui
