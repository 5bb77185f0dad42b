#include "ui/classroom/examples_gallery.h"

#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

#include "document/workbench_presets.h"
#include "io/model/builtin_models.h"

namespace ae::ui {

const QList<GalleryExample>& galleryExamples() {
    // Written for this app: each note names the control or map where the idea becomes visible.
    static const QList<GalleryExample> examples = {
        {QStringLiteral("journey"),
         QStringLiteral("Your journey starts with one step"),
         QStringLiteral(
             "Six words, three numbers each, one head. Small enough to check by hand: hover a "
             "weight to see q·k, the divisor and the softmax that made it. Notice that "
             "“journey” and “starts” have almost the same embedding, so every query treats them "
             "alike."),
         {}},
        {QStringLiteral("four-words"),
         QStringLiteral("Four words, integer weights"),
         QStringLiteral(
             "Whole-number embeddings and weights: every raw score is an integer you can compute "
             "on the board. Press √d_k, then 1, and watch the same scores become sharper or "
             "softer weights."),
         {}},
        {QStringLiteral("tutorial-variant"),
         QStringLiteral("The tutorial variant (causal, −1e20)"),
         QStringLiteral(
             "A common tutorial's layer: projections shared by the heads, scores divided by "
             "√d_model rather than √d_k, masked with −1e20 instead of −inf. Notice the upper "
             "triangle is still exactly 0, and compare the divisor in the status bar with "
             "√d_k."),
         {}},
        {QStringLiteral("bert-base"),
         QStringLiteral("BERT-base-sized layer"),
         QStringLiteral(
             "768 wide, 12 heads of 64, biases and an output layer, drawn from a seed. Twelve "
             "heads look at the same six tokens in twelve different ways; the last map is their "
             "mean. Change the head count and see everything recompute at once."),
         {}},
        {QStringLiteral("gpt2-style"),
         QStringLiteral("GPT-2-style causal layer"),
         QStringLiteral(
             "Learned positions, layer norm and a causal mask, as in GPT-2's first layer. Each "
             "word only looks back: the first row has a single weight of 1, the last spreads "
             "over the whole sentence. Step through the walkthrough to see the norm at work."),
         {}},
        {QStringLiteral("cross-sentences"),
         QStringLiteral("Cross-attention: English reads French"),
         QStringLiteral(
             "Queries are the English words, keys and values the French sentence, as in a "
             "translator's decoder. Notice the crossed diagonal: “black cat” aligns with “chat "
             "noir”, because French puts the adjective after the noun."),
         {}},
        {QStringLiteral("why-scale"),
         QStringLiteral("Why scale? A 256-wide head"),
         QStringLiteral(
             "One head with d_k = 256 and no scaling: the raw scores are in the tens, so every "
             "softmax row is a single 1 and the rest 0 (entropy strip near 0 bits). Press √d_k in "
             "Controls, or ] in presentation mode, and the weights come back to life."),
         {}},
    };
    return examples;
}

QList<GalleryExample> builtInModelExamples() {
    QList<GalleryExample> examples;
    for (const io::BuiltInModel& m : io::builtInModels()) {
        GalleryExample e;
        e.model = io::builtInPrefix() + m.name;
        e.heading = QCoreApplication::translate("ExamplesGallery", "Model: %1")
                        .arg(m.about.title.isEmpty() ? m.name : m.about.title);
        e.notice = m.about.note.isEmpty()
                       ? QCoreApplication::translate(
                             "ExamplesGallery",
                             "A small whole model that comes with the app. Its Model tab shows "
                             "every layer and head; double-click a head to open its layer in the "
                             "explorer, where every what-if flows on to the predictions.")
                       : m.about.note;
        examples.append(e);
    }
    return examples;
}

QList<GalleryExample> workbenchExamples() {
    QList<GalleryExample> examples;
    for (const document::WorkbenchPreset& p : document::workbenchPresets()) {
        if (io::isBuiltInArgument(p.model) && !io::findBuiltInModel(io::builtInName(p.model)))
            continue;
        GalleryExample e;
        e.heading = p.heading;
        e.notice = p.notice;
        e.workbench = p.name;
        e.model = p.model;
        examples.append(e);
    }
    return examples;
}

ExamplesGallery::ExamplesGallery(QWidget* parent)
    : QDialog(parent), entries_(galleryExamples() + builtInModelExamples() + workbenchExamples()) {
    setWindowTitle(tr("Examples"));
    setObjectName(QStringLiteral("examplesGallery"));
    list_ = new QListWidget(this);
    list_->setObjectName(QStringLiteral("examplesList"));
    QFont big = list_->font();
    big.setPointSizeF(big.pointSizeF() * 1.25);
    list_->setFont(big);
    list_->setSpacing(3);
    for (const GalleryExample& e : entries_) {
        auto* item = new QListWidgetItem(e.heading, list_);
        item->setData(Qt::UserRole, e.preset);
        item->setData(Qt::UserRole + 1, e.model);
        item->setData(Qt::UserRole + 2, e.workbench);
        item->setToolTip(e.model.isEmpty() ? e.preset : e.model);
    }
    notice_ = new QLabel(this);
    notice_->setObjectName(QStringLiteral("examplesNotice"));
    notice_->setWordWrap(true);
    notice_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    notice_->setMinimumWidth(360);
    notice_->setFont(big);
    notice_->setMargin(8);

    auto* buttons = new QDialogButtonBox(this);
    QPushButton* open = buttons->addButton(tr("&Open"), QDialogButtonBox::AcceptRole);
    buttons->addButton(QDialogButtonBox::Close);
    connect(open, &QPushButton::clicked, this, &ExamplesGallery::openSelected);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(list_, &QListWidget::itemActivated, this, &ExamplesGallery::openSelected);
    connect(list_, &QListWidget::currentRowChanged, this, &ExamplesGallery::showNotice);

    auto* row = new QHBoxLayout;
    row->addWidget(list_, 1);
    row->addWidget(notice_, 1);
    auto* layout = new QVBoxLayout(this);
    const bool withModels = entries_.size() > galleryExamples().size();
    auto* intro = new QLabel(
        withModels ? tr("<b>Pick a scene or a model to explore.</b> Each one shows one idea; the "
                        "note says where to look. File › Examples brings this back.")
                   : tr("<b>Pick a scene to explore.</b> Each one shows one idea; the note says "
                        "where to look. File › Examples brings this back."),
        this);
    intro->setWordWrap(true);
    layout->addWidget(intro);
    layout->addLayout(row, 1);
    layout->addWidget(buttons);
    list_->setCurrentRow(0);
    resize(860, 420);
}

void ExamplesGallery::showNotice(int row) {
    if (row < 0 || row >= entries_.size()) return;
    const GalleryExample& e = entries_[row];
    notice_->setText(
        QStringLiteral("<h3>%1</h3><p>%2</p><p style='color:#555'>%3: "
                       "<tt>%4</tt></p>")
            .arg(e.heading.toHtmlEscaped(), e.notice.toHtmlEscaped(),
                 e.model.isEmpty() && e.workbench.isEmpty() ? tr("preset") : tr("model"),
                 (!e.model.isEmpty()       ? e.model
                  : !e.workbench.isEmpty() ? tr("your GPT-2 small")
                                           : e.preset)
                     .toHtmlEscaped()));
}

void ExamplesGallery::openSelected() {
    const QListWidgetItem* item = list_->currentItem();
    if (!item) return;
    const QString model = item->data(Qt::UserRole + 1).toString();
    const QString workbench = item->data(Qt::UserRole + 2).toString();
    if (!workbench.isEmpty()) {
        emit workbenchPresetRequested(workbench);
    } else if (model.isEmpty()) {
        emit presetRequested(item->data(Qt::UserRole).toString());
    } else {
        emit modelRequested(model);
    }
}

}  // namespace ae::ui
