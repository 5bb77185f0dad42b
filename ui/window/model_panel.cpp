#include "ui/window/model_panel.h"

#include <QDockWidget>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMainWindow>
#include <QPainter>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QStyledItemDelegate>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>

#include "document/model_session.h"
#include "io/model/sentence_embedding.h"
#include "io/tokenizer/tokenizer.h"

namespace ae::ui {
namespace {

// A chip: a rounded box in the item's background colour (sentence A's or B's) with a grey
// border, its text centred. Drawn here because a style sheet's item rule paints every item alike.
class ChipDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;
    void paint(QPainter* painter, const QStyleOptionViewItem& option,
               const QModelIndex& index) const override {
        painter->save();
        painter->setRenderHint(QPainter::Antialiasing);
        painter->setPen(QColor(0x8a, 0x8a, 0x8a));
        painter->setBrush(index.data(Qt::BackgroundRole).value<QBrush>());
        painter->drawRoundedRect(QRectF(option.rect).adjusted(0.5, 0.5, -0.5, -0.5), 6, 6);
        const QVariant foreground = index.data(Qt::ForegroundRole);
        painter->setPen(foreground.isValid() ? foreground.value<QBrush>().color()
                                             : QColor(Qt::black));
        const QVariant font = index.data(Qt::FontRole);
        painter->setFont(font.isValid() ? font.value<QFont>() : option.font);
        painter->drawText(option.rect, Qt::AlignCenter, index.data(Qt::DisplayRole).toString());
        painter->restore();
    }
    QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override {
        const QSize text =
            QFontMetrics(option.font).size(0, index.data(Qt::DisplayRole).toString());
        return text + QSize(2 * 6, 2 * 2);
    }
};

}  // namespace

ModelPanel::ModelPanel(document::ModelSession* session, QWidget* parent)
    : QWidget(parent),
      session_(session),
      title_(new QLabel),
      text_(new QLineEdit),
      second_(new QLineEdit),
      secondLabel_(new QLabel(tr("B"))),
      chips_(new QListWidget),
      ids_(new QLineEdit),
      hint_(new QLabel),
      problem_(new QLabel),
      progress_(new QProgressBar),
      cancel_(new QPushButton(tr("Cancel"))) {
    title_->setObjectName(QStringLiteral("modelTitle"));
    title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    text_->setObjectName(QStringLiteral("modelText"));
    text_->setClearButtonEnabled(true);
    text_->setToolTip(tr("The sentence; tokenized and run as you type"));
    // An encoder's sentence B: the pair joined by the tokenizer's template ([CLS] A [SEP] B
    // [SEP]), each token given its sentence.
    second_->setObjectName(QStringLiteral("modelTextPair"));
    second_->setClearButtonEnabled(true);
    second_->setPlaceholderText(tr("Sentence B (optional)"));
    second_->setToolTip(tr("A second sentence: the two run as a pair, [CLS] A [SEP] B [SEP]"));
    secondLabel_->setToolTip(second_->toolTip());
    ids_->setObjectName(QStringLiteral("modelIds"));
    ids_->setToolTip(tr("Token ids, separated by spaces or commas; Enter runs them"));
    // Chips: one per token, its text over its id, wrapping like words.
    chips_->setObjectName(QStringLiteral("modelChips"));
    chips_->setFlow(QListView::LeftToRight);
    chips_->setWrapping(true);
    chips_->setResizeMode(QListView::Adjust);
    chips_->setSpacing(3);
    chips_->setUniformItemSizes(false);
    chips_->setSelectionMode(QAbstractItemView::NoSelection);
    chips_->setFixedHeight(chips_->fontMetrics().height() * 2 + 16);  // fitChips() sets it
    chips_->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    chips_->setStyleSheet(
        QStringLiteral("QListWidget { background: palette(window); border: none; }"));
    chips_->setItemDelegate(new ChipDelegate(chips_));
    hint_->setWordWrap(true);
    hint_->setStyleSheet(QStringLiteral("color: palette(mid);"));
    problem_->setObjectName(QStringLiteral("modelProblem"));
    problem_->setWordWrap(true);
    problem_->setStyleSheet(QStringLiteral("color: #b71c1c;"));
    problem_->hide();
    progress_->setObjectName(QStringLiteral("modelProgress"));
    progress_->setRange(0, 0);  // busy, until a pass counts its layers
    progress_->setTextVisible(true);
    cancel_->setObjectName(QStringLiteral("modelCancel"));
    cancel_->setToolTip(tr("Drop what is under way; the window stays as it is"));

    // Compact, for a 1024x768 projector: the model and both fields on one line, the chips under
    // them, and a line for a problem or the progress only while there is one.
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 2, 4, 2);
    layout->setSpacing(2);
    auto* fields = new QHBoxLayout;
    fields->addWidget(title_);
    fields->addSpacing(8);
    fields->addWidget(new QLabel(tr("Text")));
    fields->addWidget(text_, 3);
    fields->addWidget(secondLabel_);
    fields->addWidget(second_, 2);
    fields->addWidget(new QLabel(tr("Ids")));
    fields->addWidget(ids_, 2);
    layout->addLayout(fields);
    layout->addWidget(chips_);
    auto* status = new QHBoxLayout;
    status->setContentsMargins(0, 0, 0, 0);
    status->addWidget(hint_, 1);
    status->addWidget(problem_, 1);
    status->addWidget(progress_, 1);
    status->addWidget(cancel_);
    // The row keeps the bar's and Cancel's height while they are hidden: the dock is sized before
    // a pass shows them, and a taller row then clipped the bar's text.
    auto* statusRow = new QWidget;
    statusRow->setLayout(status);
    statusRow->setMinimumHeight(
        std::max(progress_->sizeHint().height(), cancel_->sizeHint().height()));
    layout->addWidget(statusRow);
    progress_->hide();
    cancel_->hide();
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum);

    auto typed = [this] { session_->setTextPair(text_->text(), second_->text()); };
    connect(text_, &QLineEdit::textEdited, this, typed);
    connect(second_, &QLineEdit::textEdited, this, typed);
    connect(ids_, &QLineEdit::returnPressed, this, [this] {
        std::vector<long long> ids;
        QString error;
        if (!parseIds(ids_->text(), &ids, &error)) {
            showProblem(error);
            return;
        }
        session_->setIds(ids);
    });
    connect(chips_, &QListWidget::itemClicked, this, &ModelPanel::chipClicked);
    connect(cancel_, &QPushButton::clicked, session_, &document::ModelSession::cancel);
    connect(session_, &document::ModelSession::opened, this, &ModelPanel::showModel);
    connect(session_, &document::ModelSession::closed, this, &ModelPanel::showModel);
    connect(session_, &document::ModelSession::inputChanged, this, &ModelPanel::showInput);
    connect(session_, &document::ModelSession::problem, this, &ModelPanel::showProblem);
    connect(session_, &document::ModelSession::progressShown, this, [this](const QString& what) {
        progress_->setFormat(what + QStringLiteral("…"));
        progress_->show();
        cancel_->show();
    });
    // A long pass counts its layers; the bar shows them once it is visible.
    connect(session_, &document::ModelSession::layerProgress, this, [this](int done, int layers) {
        progress_->setRange(0, layers);
        progress_->setValue(done);
        progress_->setFormat(tr("Running the model: layer %1 of %2").arg(done).arg(layers));
    });
    connect(session_, &document::ModelSession::valuesChecking, this, [this](double fraction) {
        progress_->setRange(0, 100);
        progress_->setValue(static_cast<int>(fraction * 100));
        progress_->setFormat(tr("Checking the weights for inf and NaN: %p%"));
    });
    connect(session_, &document::ModelSession::busyChanged, this, [this](bool busy) {
        if (busy) return;
        progress_->hide();
        cancel_->hide();
        progress_->setRange(0, 0);  // busy, until the next pass counts its layers
    });
    showModel();
}

QString ModelPanel::problemText() const {
    return problem_->isVisible() ? problem_->text() : QString();
}

bool ModelPanel::parseIds(const QString& text, std::vector<long long>* ids, QString* error) {
    ids->clear();
    const QStringList parts =
        text.split(QRegularExpression(QStringLiteral("[\\s,;]+")), Qt::SkipEmptyParts);
    for (const QString& part : parts) {
        bool ok = false;
        const long long id = part.toLongLong(&ok);
        if (!ok || id < 0) {
            if (error)
                *error = tr("ids: \"%1\" is not a token id (a whole number from 0)").arg(part);
            return false;
        }
        ids->push_back(id);
    }
    if (ids->empty()) {
        if (error) *error = tr("ids: no tokens");
        return false;
    }
    return true;
}

void ModelPanel::showModel() {
    const model::Model* m = session_->model();
    clearProblem();
    if (!m) {
        title_->setText(tr("No model open (File › Open model…)"));
        text_->setEnabled(false);
        second_->hide();
        secondLabel_->hide();
        ids_->setEnabled(false);
        chips_->clear();
        hint_->clear();
        return;
    }
    const model::Config& c = m->config;
    title_->setText(tr("<b>%1</b> · %2 · %3×%4 heads · d %5")
                        .arg(QFileInfo(session_->folder()).fileName().toHtmlEscaped())
                        .arg(QLatin1String(model::familyName(c.family)))
                        .arg(c.layers)
                        .arg(c.heads)
                        .arg(c.hidden));
    title_->setToolTip(session_->folder());
    const bool tokenizer = session_->tokenizer() != nullptr;
    text_->setEnabled(tokenizer);
    text_->setPlaceholderText(tokenizer ? tr("Type a sentence")
                                        : tr("No tokenizer in this folder: type ids below"));
    // Sentence pairs are for encoders, whose pretraining saw them (next-sentence prediction).
    second_->setVisible(!c.isDecoder() && tokenizer);
    secondLabel_->setVisible(second_->isVisible());
    ids_->setEnabled(true);
    QString hint = c.isDecoder() ? tr("Double-click a head in the Model tab to open it.")
                                 : tr("Click a token: padding. Double-click a head in the Model "
                                      "tab to open it.");
    if (!session_->tokenizerProblem().isEmpty())
        hint += QLatin1Char(' ') + tr("Tokenizer not read: %1").arg(session_->tokenizerProblem());
    const QString embedding = io::sentenceEmbeddingNote(session_->folder());
    if (!embedding.isEmpty()) hint += QLatin1Char(' ') + embedding + QLatin1Char('.');
    hint_->setText(hint);
    showInput();
}

void ModelPanel::showInput() {
    if (!session_->model()) return;
    if (!text_->hasFocus() || text_->text().isEmpty()) text_->setText(session_->text());
    if (!second_->hasFocus()) second_->setText(session_->textPair());
    QStringList ids;
    for (long long id : session_->ids())
        ids << QString::number(id);
    if (!ids_->hasFocus()) ids_->setText(ids.join(QLatin1Char(' ')));
    clearProblem();
    chips_->clear();
    const std::vector<int>& mask = session_->attentionMask();
    for (std::size_t i = 0; i < session_->ids().size(); ++i) {
        const long long id = session_->ids()[i];
        QString label = session_->tokenLabel(id);
        label.replace(QLatin1Char(' '), QChar(0x2423));  // a visible space: ␣world
        // Without a tokenizer the label is the id itself: one line.
        const bool idOnly = !session_->tokenizer();
        auto* item = new QListWidgetItem(
            idOnly ? QString::number(id) : QStringLiteral("%1\n%2").arg(label).arg(id), chips_);
        item->setTextAlignment(Qt::AlignCenter);
        item->setData(Qt::UserRole, static_cast<int>(i));
        const bool padding = i < mask.size() && mask[i] == 0;
        // Sentence B's tokens in another colour: the pair's boundary at a glance.
        const int pairStart = session_->pairStart();
        const bool second = pairStart >= 0 && static_cast<int>(i) >= pairStart;
        item->setBackground(second ? QColor(0xfd, 0xe4, 0xc4) : QColor(0xee, 0xf3, 0xfb));
        item->setToolTip(padding  ? tr("Padding: no query attends to it (click to undo)")
                         : second ? tr("Token %1, id %2, sentence B").arg(i).arg(id)
                                  : tr("Token %1, id %2").arg(i).arg(id));
        if (padding) {
            item->setForeground(QColor(0x9e, 0x9e, 0x9e));
            QFont font = item->font();
            font.setStrikeOut(true);
            item->setFont(font);
        }
    }
    fitChips();
}

// A problem takes the hint's place and as many lines as it needs: sharing the row with the hint,
// in a dock as high as it was, its end was cut off.
void ModelPanel::showProblem(const QString& message) {
    problem_->setText(message);
    problem_->setToolTip(message);
    hint_->hide();
    problem_->show();
    fitDockHeight();
}

void ModelPanel::clearProblem() {
    if (problem_->isHidden()) return;
    problem_->hide();
    hint_->show();
    fitDockHeight();
}

void ModelPanel::fitDockHeight() {
    QWidget* w = parentWidget();
    while (w && !qobject_cast<QDockWidget*>(w))
        w = w->parentWidget();
    auto* dock = qobject_cast<QDockWidget*>(w);
    auto* window = dock ? qobject_cast<QMainWindow*>(dock->parentWidget()) : nullptr;
    if (!window || dock->isFloating() || !dock->isVisible()) return;
    // The labels' heights follow their width once the layout has run.
    QTimer::singleShot(0, this, [this, window, dock] {
        layout()->activate();
        const int contents = layout()->hasHeightForWidth() ? layout()->totalHeightForWidth(width())
                                                           : sizeHint().height();
        const int chrome = dock->height() - (dock->widget() ? dock->widget()->height() : 0);
        if (dock->isVisible()) window->resizeDocks({dock}, {contents + chrome}, Qt::Vertical);
    });
}

void ModelPanel::fitChips() {
    // Up to two rows of chips, then the list scrolls.
    const int row =
        chips_->count() > 0 ? chips_->sizeHintForRow(0) : chips_->fontMetrics().height();
    chips_->setFixedHeight(2 * (row + 2 * chips_->spacing()) + 2 * chips_->frameWidth() + 2);
}

void ModelPanel::chipClicked(QListWidgetItem* item) {
    const model::Model* m = session_->model();
    if (!m || m->config.isDecoder()) return;  // padding is BERT's (a decoder refuses left padding)
    const int position = item->data(Qt::UserRole).toInt();
    const std::vector<int>& mask = session_->attentionMask();
    const bool padding = static_cast<std::size_t>(position) < mask.size() &&
                         mask[static_cast<std::size_t>(position)] == 0;
    session_->setPadding(position, !padding);
}

}  // namespace ae::ui
