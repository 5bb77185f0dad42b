#include "ui/files/model_import_dialog.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QCompleter>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QRadioButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <tuple>

#include "document/attention_document.h"
#include "io/formats/safetensors.h"
#include "ui/setting.h"

namespace ae::ui {
namespace {

const Setting<QString> kFolder{"modelImport/folder", {}};
const Setting<QVariantMap> kChoices{"modelImport/choices", {}};

using Part = ModelImportDialog::Part;

struct PartInfo {
    Part part;
    const char* key;    // in the remembered choices
    const char* label;  // as the form shows it
};
constexpr PartInfo kParts[] = {
    {Part::Qkv, "qkv", "QKV (fused)"},
    {Part::QkvBias, "qkvBias", "bias"},
    {Part::Query, "query", "W_Q"},
    {Part::QueryBias, "queryBias", "b_Q"},
    {Part::Key, "key", "W_K"},
    {Part::KeyBias, "keyBias", "b_K"},
    {Part::Value, "value", "W_V"},
    {Part::ValueBias, "valueBias", "b_V"},
    {Part::Output, "output", "W_O"},
    {Part::OutputBias, "outputBias", "b_O"},
    {Part::Embeddings, "embeddings", ""},
    {Part::Positions, "positions", ""},
    {Part::NormWeight, "normWeight", ""},
    {Part::NormBias, "normBias", ""},
};

// The importer speaks in the CLI's option names; the dialog's fields have their own.
QString dialogWording(QString message) {
    static const std::pair<const char*, const char*> words[] = {
        {"give either --qkv NAME or all of --query, --key and --value",
         "choose a fused QKV tensor, or all of W_Q, W_K and W_V"},
        {"give both --norm-weight and --norm-bias, or neither",
         "layer norm: choose both its weight and its bias, or neither"},
        {"--output-bias needs --output", "b_O needs W_O"},
        {"--qkv-bias needs --qkv", "a fused QKV bias needs a fused QKV weight"},
        {"--rows: give at least one token id", "Tokens: give at least one"},
        {"--rows:", "Tokens:"},
        {"--heads ", "Heads "},
        {"--embeddings:", "Embeddings:"},
        {"(try --layout ", "(try layout "},
    };
    for (const auto& [cli, dialog] : words)
        message.replace(QLatin1String(cli), QLatin1String(dialog));
    // The list is right there in the dialog.
    message.remove(QRegularExpression(QStringLiteral("; list them with `[^`]*`")));
    return message;
}

// "1 token", "6 tokens": the app ships no translations, so %n's "(s)" would show as written.
QString counted(int n, const QString& one, const QString& many) {
    return QStringLiteral("%1 %2").arg(n).arg(n == 1 ? one : many);
}

QComboBox* tensorCombo(const char* objectName) {
    auto* combo = new QComboBox;
    combo->setObjectName(QLatin1String(objectName));
    combo->setEditable(true);  // a name can be typed, and checked on import like any other
    combo->setInsertPolicy(QComboBox::NoInsert);
    combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    // Wider with the dialog; at this narrowest the dialog still fits a 1024-pixel screen.
    combo->setMinimumContentsLength(14);
    combo->lineEdit()->setPlaceholderText(QObject::tr("(none)"));
    combo->lineEdit()->setClearButtonEnabled(true);
    return combo;
}

// One form row of a weight and its bias side by side.
QWidget* pairRow(QComboBox* weight, QComboBox* bias) {
    auto* row = new QWidget;
    auto* layout = new QHBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(weight, 3);
    layout->addWidget(new QLabel(QObject::tr("bias")));
    layout->addWidget(bias, 2);
    return row;
}

}  // namespace

ModelImportDialog::ModelImportDialog(document::AttentionDocument* document, QWidget* parent)
    : QDialog(parent), document_(document) {
    setWindowTitle(tr("Import model weights"));
    setObjectName(QStringLiteral("modelImportDialog"));

    // Left: the file and its tensors.
    modelPath_ = new QLineEdit;
    modelPath_->setObjectName(QStringLiteral("modelPath"));
    modelPath_->setReadOnly(true);
    modelPath_->setPlaceholderText(tr("No model open"));
    auto* openButton = new QPushButton(tr("Open .safetensors…"));
    auto* npyButton = new QPushButton(tr("Add .npy files…"));
    connect(openButton, &QPushButton::clicked, this, &ModelImportDialog::browseModel);
    connect(npyButton, &QPushButton::clicked, this, &ModelImportDialog::browseNpy);
    auto* fileRow = new QHBoxLayout;
    fileRow->addWidget(modelPath_, 1);
    fileRow->addWidget(openButton);
    fileRow->addWidget(npyButton);

    filter_ = new QLineEdit;
    filter_->setObjectName(QStringLiteral("filter"));
    filter_->setPlaceholderText(tr("Filter: part of a name, e.g. h.0.attn"));
    filter_->setClearButtonEnabled(true);
    count_ = new QLabel;
    connect(filter_, &QLineEdit::textChanged, this, &ModelImportDialog::applyFilter);
    auto* filterRow = new QHBoxLayout;
    filterRow->addWidget(filter_, 1);
    filterRow->addWidget(count_);

    table_ = new QTreeWidget;
    table_->setObjectName(QStringLiteral("tensorTable"));
    table_->setHeaderLabels({tr("Name"), tr("Shape"), tr("Dtype"), tr("Size")});
    table_->setRootIsDecorated(false);
    table_->setUniformRowHeights(true);
    table_->setAlternatingRowColors(true);
    table_->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    for (int c = 1; c < 4; ++c)
        table_->header()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    table_->header()->setStretchLastSection(false);
    table_->setMinimumWidth(300);

    auto* left = new QVBoxLayout;
    left->addLayout(fileRow);
    left->addLayout(filterRow);
    left->addWidget(table_, 1);

    // Right: what each part of the layer is.
    for (const PartInfo& p : kParts)
        combos_.insert(p.part, tensorCombo(p.key));

    guessNote_ = new QLabel;
    guessNote_->setObjectName(QStringLiteral("guessNote"));
    guessNote_->setWordWrap(true);

    layout_ = new QComboBox;
    layout_->setObjectName(QStringLiteral("layout"));
    layout_->addItem(tr("xw: stored [in, out], used as X·W (GPT-2's Conv1D)"));
    layout_->addItem(tr("linear: stored [out, in], transposed (nn.Linear)"));
    fused_ = new QRadioButton(tr("Fused QKV, split into thirds"));
    fused_->setObjectName(QStringLiteral("fused"));
    separate_ = new QRadioButton(tr("Separate Q, K, V"));
    separate_->setObjectName(QStringLiteral("separate"));
    fused_->setChecked(true);
    connect(fused_, &QRadioButton::toggled, this, &ModelImportDialog::updateProjectionMode);
    auto* modeRow = new QWidget;
    auto* modeLayout = new QHBoxLayout(modeRow);
    modeLayout->setContentsMargins(0, 0, 0, 0);
    modeLayout->addWidget(fused_);
    modeLayout->addWidget(separate_);
    modeLayout->addStretch();

    auto* layerBox = new QGroupBox(tr("The layer"));
    auto* layerForm = new QFormLayout(layerBox);
    layerForm->addRow(tr("Layout"), layout_);
    layerForm->addRow(tr("Projections"), modeRow);
    QWidget* qkvRow = pairRow(combos_[Part::Qkv], combos_[Part::QkvBias]);
    layerForm->addRow(tr("QKV"), qkvRow);
    fusedRows_ = {qkvRow};
    for (const auto& [weight, bias, label] : {std::tuple{Part::Query, Part::QueryBias, "W_Q"},
                                              std::tuple{Part::Key, Part::KeyBias, "W_K"},
                                              std::tuple{Part::Value, Part::ValueBias, "W_V"}}) {
        QWidget* row = pairRow(combos_[weight], combos_[bias]);
        layerForm->addRow(QLatin1String(label), row);
        separateRows_ << row;
    }
    layerForm->addRow(tr("W_O"), pairRow(combos_[Part::Output], combos_[Part::OutputBias]));
    heads_ = new QSpinBox;
    heads_->setObjectName(QStringLiteral("heads"));
    heads_->setRange(1, 4096);
    causal_ = new QCheckBox(tr("Causal mask (decoders: GPT-2, …)"));
    causal_->setObjectName(QStringLiteral("causal"));
    auto* headsRow = new QWidget;
    auto* headsLayout = new QHBoxLayout(headsRow);
    headsLayout->setContentsMargins(0, 0, 0, 0);
    headsLayout->addWidget(heads_);
    headsLayout->addWidget(causal_);
    headsLayout->addStretch();
    layerForm->addRow(tr("Heads"), headsRow);

    auto* inputBox = new QGroupBox(tr("Its input"));
    auto* inputForm = new QFormLayout(inputBox);
    inputForm->addRow(tr("Token table"), combos_[Part::Embeddings]);
    tokens_ = new QLineEdit;
    tokens_->setObjectName(QStringLiteral("tokens"));
    tokenKind_ = new QComboBox;
    tokenKind_->setObjectName(QStringLiteral("tokenKind"));
    tokenKind_->addItems({tr("ids"), tr("words")});
    auto* tokensRow = new QWidget;
    auto* tokensLayout = new QHBoxLayout(tokensRow);
    tokensLayout->setContentsMargins(0, 0, 0, 0);
    tokensLayout->addWidget(tokens_, 1);
    tokensLayout->addWidget(tokenKind_);
    inputForm->addRow(tr("Tokens"), tokensRow);
    vocabularyPath_ = new QLineEdit;
    vocabularyPath_->setObjectName(QStringLiteral("vocabulary"));
    vocabularyPath_->setPlaceholderText(tr("optional: vocab.json, or one token per line"));
    vocabularyPath_->setClearButtonEnabled(true);
    auto* vocabularyButton = new QPushButton(tr("Browse…"));
    connect(vocabularyButton, &QPushButton::clicked, this, &ModelImportDialog::browseVocabulary);
    auto* vocabularyRow = new QWidget;
    auto* vocabularyLayout = new QHBoxLayout(vocabularyRow);
    vocabularyLayout->setContentsMargins(0, 0, 0, 0);
    vocabularyLayout->addWidget(vocabularyPath_, 1);
    vocabularyLayout->addWidget(vocabularyButton);
    inputForm->addRow(tr("Vocabulary"), vocabularyRow);
    tokenPreview_ = new QLabel;
    tokenPreview_->setObjectName(QStringLiteral("tokenPreview"));
    tokenPreview_->setWordWrap(true);
    tokenPreview_->setTextFormat(Qt::PlainText);
    inputForm->addRow(QString(), tokenPreview_);
    inputForm->addRow(tr("Positions"), combos_[Part::Positions]);
    inputForm->addRow(tr("Layer norm"),
                      pairRow(combos_[Part::NormWeight], combos_[Part::NormBias]));
    connect(tokens_, &QLineEdit::textChanged, this, &ModelImportDialog::updateTokenPreview);
    connect(vocabularyPath_, &QLineEdit::textChanged, this, &ModelImportDialog::updateTokenPreview);
    connect(tokenKind_, &QComboBox::currentIndexChanged, this, [this](int kind) {
        tokens_->setPlaceholderText(kind == 0 ? tr("464, 3290, 3332") : tr("The dog sat"));
        updateTokenPreview();
    });
    tokens_->setPlaceholderText(tr("464, 3290, 3332"));

    problem_ = new QLabel;
    problem_->setObjectName(QStringLiteral("problem"));
    problem_->setWordWrap(true);
    problem_->setTextFormat(Qt::PlainText);
    problem_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    problem_->setStyleSheet(QStringLiteral("color: #b2182b;"));
    problem_->hide();

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel);
    importButton_ = buttons->addButton(tr("Import"), QDialogButtonBox::AcceptRole);
    importButton_->setObjectName(QStringLiteral("importButton"));
    importButton_->setDefault(true);
    connect(buttons, &QDialogButtonBox::accepted, this, &ModelImportDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &ModelImportDialog::reject);

    auto* right = new QVBoxLayout;
    right->addWidget(guessNote_);
    right->addWidget(layerBox);
    right->addWidget(inputBox);
    right->addStretch();

    auto* columns = new QHBoxLayout;
    columns->addLayout(left, 5);
    columns->addLayout(right, 6);
    auto* outer = new QVBoxLayout(this);
    outer->addLayout(columns, 1);
    outer->addWidget(problem_);
    outer->addWidget(buttons);
    resize(1180, 660);

    // Where the last import came from, with its choices.
    const QVariantMap last = kChoices.read();
    const QString lastModel = last.value(QStringLiteral("model")).toString();
    const QStringList lastNpy = last.value(QStringLiteral("npyFiles")).toStringList();
    if (!lastModel.isEmpty() && QFileInfo(lastModel).isFile()) openModel(lastModel);
    QStringList present;
    for (const QString& npy : lastNpy)
        if (QFileInfo(npy).isFile()) present << npy;
    if (!present.isEmpty()) addNpyFiles(present);
    restoreChoices(last);
    updateProjectionMode();
    updateTokenPreview();
}

ModelImportDialog::~ModelImportDialog() = default;

bool ModelImportDialog::openModel(const QString& fileName, QString* error) {
    file_.reset();
    npyFiles_.clear();
    listed_.clear();
    dtypes_.clear();
    sizes_.clear();
    modelPath_->clear();
    try {
        file_ = std::make_unique<io::SafetensorsFile>(fileName);
    } catch (const io::MatrixFileError& e) {
        fillTable();
        const QString problem = QString::fromUtf8(e.what());
        showProblem(problem);
        if (error) *error = problem;
        return false;
    }
    modelPath_->setText(QDir::toNativeSeparators(fileName));
    kFolder.write(QFileInfo(fileName).absolutePath());
    for (const io::TensorInfo& t : file_->tensors()) {
        listed_.push_back({t.name, t.shape});
        dtypes_ << t.dtype;
        sizes_ << QLocale().formattedDataSize(t.end - t.begin);
    }
    fillTable();
    for (QComboBox* combo : std::as_const(combos_))
        combo->setCurrentText(QString());
    const QVariantMap remembered = kChoices.read();
    if (remembered.value(QStringLiteral("model")).toString() ==
        QFileInfo(fileName).absoluteFilePath()) {
        restoreChoices(remembered);
        guessNote_->setText(tr("The choices of the last import from this file."));
    } else {
        applyGuess();
    }
    showProblem({});
    return true;
}

bool ModelImportDialog::addNpyFiles(const QStringList& fileNames, QString* error) {
    QString problem;
    for (const QString& fileName : fileNames) {
        io::NpyInfo info;
        try {
            info = io::readNpyInfo(fileName);
        } catch (const io::MatrixFileError& e) {
            if (problem.isEmpty()) problem = QString::fromUtf8(e.what());
            continue;
        }
        const QString name = QFileInfo(fileName).fileName();
        const bool known = npyFiles_.contains(name);
        npyFiles_.insert(name, QFileInfo(fileName).absoluteFilePath());
        const QString size = QLocale().formattedDataSize(QFileInfo(fileName).size());
        if (known) {
            for (std::size_t i = 0; i < listed_.size(); ++i) {
                if (listed_[i].name != name) continue;
                listed_[i].shape = info.shape;
                dtypes_[int(i)] = info.dtype;
                sizes_[int(i)] = size;
            }
        } else {
            listed_.push_back({name, info.shape});
            dtypes_ << info.dtype;
            sizes_ << size;
        }
        kFolder.write(QFileInfo(fileName).absolutePath());
    }
    if (!file_) {
        modelPath_->setText(
            counted(static_cast<int>(npyFiles_.size()), tr(".npy file"), tr(".npy files")));
    }
    fillTable();
    applyGuess();
    showProblem(problem);
    if (error) *error = problem;
    return problem.isEmpty();
}

void ModelImportDialog::fillTable() {
    table_->clear();
    QList<QTreeWidgetItem*> items;
    for (std::size_t i = 0; i < listed_.size(); ++i) {
        auto* item = new QTreeWidgetItem(
            {listed_[i].name, io::shapeText(listed_[i].shape), dtypes_[int(i)], sizes_[int(i)]});
        item->setTextAlignment(3, Qt::AlignRight | Qt::AlignVCenter);
        if (npyFiles_.contains(listed_[i].name))
            item->setToolTip(0, npyFiles_.value(listed_[i].name));
        items << item;
    }
    table_->addTopLevelItems(items);
    QStringList names;
    for (const io::TensorShape& t : listed_)
        names << t.name;
    for (QComboBox* combo : std::as_const(combos_)) {
        const QString chosen = combo->currentText();
        combo->clear();
        combo->addItem(QString());
        combo->addItems(names);
        auto* completer = new QCompleter(names, combo);
        completer->setFilterMode(Qt::MatchContains);
        completer->setCaseSensitivity(Qt::CaseInsensitive);
        combo->setCompleter(completer);
        combo->setCurrentText(chosen);
    }
    applyFilter();
}

void ModelImportDialog::applyFilter() {
    const QString text = filter_->text().trimmed();
    int shown = 0;
    for (int i = 0; i < table_->topLevelItemCount(); ++i) {
        QTreeWidgetItem* item = table_->topLevelItem(i);
        const bool visible = item->text(0).contains(text, Qt::CaseInsensitive);
        item->setHidden(!visible);
        shown += visible;
    }
    const int total = table_->topLevelItemCount();
    count_->setText(text.isEmpty() ? counted(total, tr("tensor"), tr("tensors"))
                                   : tr("%1 of %n", nullptr, total).arg(shown));
}

QStringList ModelImportDialog::tensorNames() const {
    QStringList names;
    for (const io::TensorShape& t : listed_)
        names << t.name;
    return names;
}

QStringList ModelImportDialog::visibleTensorNames() const {
    QStringList names;
    for (int i = 0; i < table_->topLevelItemCount(); ++i)
        if (!table_->topLevelItem(i)->isHidden()) names << table_->topLevelItem(i)->text(0);
    return names;
}

void ModelImportDialog::applyGuess() {
    const io::ModelImportSpec guess = io::guessImportSpec(listed_);
    const std::pair<Part, QString> guessed[] = {{Part::Qkv, guess.qkv},
                                                {Part::QkvBias, guess.qkvBias},
                                                {Part::Query, guess.query},
                                                {Part::QueryBias, guess.queryBias},
                                                {Part::Key, guess.key},
                                                {Part::KeyBias, guess.keyBias},
                                                {Part::Value, guess.value},
                                                {Part::ValueBias, guess.valueBias},
                                                {Part::Output, guess.output},
                                                {Part::OutputBias, guess.outputBias},
                                                {Part::Embeddings, guess.embeddings},
                                                {Part::Positions, guess.positions},
                                                {Part::NormWeight, guess.normWeight},
                                                {Part::NormBias, guess.normBias}};
    QStringList found;
    for (const auto& [part, name] : guessed) {
        // A guess never overwrites a choice already made (.npy files added one by one).
        if (name.isEmpty() || !combos_[part]->currentText().isEmpty()) continue;
        combos_[part]->setCurrentText(name);
        found << name;
    }
    const bool projections = !guess.qkv.isEmpty() || !guess.query.isEmpty();
    if (projections) {
        layout_->setCurrentIndex(guess.layout == io::WeightLayout::XW ? 0 : 1);
        (guess.qkv.isEmpty() ? separate_ : fused_)->setChecked(true);
        causal_->setChecked(guess.causal);
    }
    if (guess.heads > 0) heads_->setValue(guess.heads);
    if (found.isEmpty()) {
        guessNote_->setText(
            tr("No guess from these names: choose the tensors for each part below."));
    } else {
        QString note =
            tr("Guessed from the names (check them): ") +
            (guess.qkv.isEmpty() ? tr("separate Q, K, V") : tr("fused QKV %1").arg(guess.qkv)) +
            tr(", layout %1").arg(guess.layout == io::WeightLayout::XW ? "xw" : "linear");
        if (guess.heads > 0)
            note += ", " + counted(guess.heads, tr("head"), tr("heads")) + tr(" of 64");
        if (projections) note += guess.causal ? tr(", causal") : tr(", not causal");
        guessNote_->setText(note + '.');
    }
    updateProjectionMode();
}

QVariantMap ModelImportDialog::choices() const {
    QVariantMap map;
    map.insert(QStringLiteral("model"),
               file_ ? QFileInfo(file_->fileName()).absoluteFilePath() : QString());
    map.insert(QStringLiteral("npyFiles"), QStringList(npyFiles_.values()));
    map.insert(QStringLiteral("layout"),
               layout_->currentIndex() == 0 ? QStringLiteral("xw") : QStringLiteral("linear"));
    map.insert(QStringLiteral("fused"), fused_->isChecked());
    for (const PartInfo& p : kParts)
        map.insert(QLatin1String(p.key), combos_[p.part]->currentText().trimmed());
    map.insert(QStringLiteral("tokens"), tokens_->text());
    map.insert(QStringLiteral("tokenKind"),
               tokenKind_->currentIndex() == 0 ? QStringLiteral("ids") : QStringLiteral("words"));
    map.insert(QStringLiteral("vocabulary"), vocabularyPath_->text());
    map.insert(QStringLiteral("heads"), heads_->value());
    map.insert(QStringLiteral("causal"), causal_->isChecked());
    return map;
}

void ModelImportDialog::restoreChoices(const QVariantMap& map) {
    if (map.isEmpty()) return;
    layout_->setCurrentIndex(map.value(QStringLiteral("layout")).toString() == "linear" ? 1 : 0);
    (map.value(QStringLiteral("fused"), true).toBool() ? fused_ : separate_)->setChecked(true);
    for (const PartInfo& p : kParts)
        combos_[p.part]->setCurrentText(map.value(QLatin1String(p.key)).toString());
    tokens_->setText(map.value(QStringLiteral("tokens")).toString());
    tokenKind_->setCurrentIndex(map.value(QStringLiteral("tokenKind")).toString() == "words" ? 1
                                                                                             : 0);
    vocabularyPath_->setText(map.value(QStringLiteral("vocabulary")).toString());
    heads_->setValue(map.value(QStringLiteral("heads"), 1).toInt());
    causal_->setChecked(map.value(QStringLiteral("causal")).toBool());
    updateProjectionMode();
}

void ModelImportDialog::updateProjectionMode() {
    for (QWidget* row : std::as_const(fusedRows_))
        row->setEnabled(fused_->isChecked());
    for (QWidget* row : std::as_const(separateRows_))
        row->setEnabled(!fused_->isChecked());
}

const std::vector<std::string>& ModelImportDialog::vocabulary() const {
    const QString path = vocabularyPath_->text().trimmed();
    if (path != vocabularyLoaded_) {
        // Cached: GPT-2's vocab.json has 50257 tokens, and the preview follows every keystroke.
        vocabulary_.clear();
        vocabularyLoaded_.clear();
        if (!path.isEmpty()) vocabulary_ = io::readVocabulary(path);
        vocabularyLoaded_ = path;
    }
    return vocabulary_;
}

void ModelImportDialog::updateTokenPreview() {
    if (tokens_->text().trimmed().isEmpty()) {
        tokenPreview_->setText(tokenKind_->currentIndex() == 0
                                   ? tr("Token ids are rows of the token table.")
                                   : tr("Words are looked up in the vocabulary."));
        return;
    }
    try {
        const std::vector<long long> ids = spec().tokenIds;
        const std::vector<std::string>& labels = vocabulary();
        QStringList parts;
        for (long long id : ids) {
            const bool labelled = id < static_cast<long long>(labels.size()) && !labels[id].empty();
            parts << (labelled
                          ? QStringLiteral("%1 %2").arg(id).arg(QString::fromStdString(labels[id]))
                          : QString::number(id));
        }
        tokenPreview_->setText(counted(static_cast<int>(ids.size()), tr("token"), tr("tokens")) +
                               ": " + parts.join(QStringLiteral(" · ")));
    } catch (const io::MatrixFileError& e) {
        tokenPreview_->setText(dialogWording(QString::fromUtf8(e.what())));
    }
}

QString ModelImportDialog::tensorName(Part part) const {
    const QString name = combos_[part]->currentText().trimmed();
    return npyFiles_.value(name, name);
}

io::ModelImportSpec ModelImportDialog::spec() const {
    io::ModelImportSpec s;
    s.layout = layout_->currentIndex() == 0 ? io::WeightLayout::XW : io::WeightLayout::Linear;
    if (fused_->isChecked()) {
        s.qkv = tensorName(Part::Qkv);
        s.qkvBias = tensorName(Part::QkvBias);
    } else {
        s.query = tensorName(Part::Query);
        s.key = tensorName(Part::Key);
        s.value = tensorName(Part::Value);
        s.queryBias = tensorName(Part::QueryBias);
        s.keyBias = tensorName(Part::KeyBias);
        s.valueBias = tensorName(Part::ValueBias);
    }
    s.output = tensorName(Part::Output);
    s.outputBias = tensorName(Part::OutputBias);
    s.embeddings = tensorName(Part::Embeddings);
    s.positions = tensorName(Part::Positions);
    s.normWeight = tensorName(Part::NormWeight);
    s.normBias = tensorName(Part::NormBias);
    s.vocabularyFile = vocabularyPath_->text().trimmed();
    if (tokenKind_->currentIndex() == 0) {
        s.tokenIds = io::parseTokenIds(tokens_->text());
    } else {
        if (s.vocabularyFile.isEmpty())
            throw io::ModelImportError("Tokens: words need a vocabulary file");
        s.tokenIds = io::lookUpTokens(vocabulary(), tokens_->text());
    }
    s.heads = heads_->value();
    s.causal = causal_->isChecked();
    s.title = "Imported from " + (file_ ? QFileInfo(file_->fileName()).fileName()
                                        : QStringList(npyFiles_.keys()).join(", "));
    return s;
}

io::TensorReader ModelImportDialog::reader() const {
    return file_ ? io::tensorReader(*file_) : io::npyTensorReader();
}

bool ModelImportDialog::importNow(QString* error) {
    QString problem;
    if (!file_ && npyFiles_.isEmpty()) {
        problem = tr("Open a .safetensors file, or add .npy files, first.");
    } else {
        QApplication::setOverrideCursor(Qt::WaitCursor);
        try {
            const Scene scene = io::importModel(reader(), spec());
            if (document_->replaceScene(scene, tr("Import model weights"), &problem)) {
                QApplication::restoreOverrideCursor();
                kChoices.write(choices());
                showProblem({});
                return true;
            }
        } catch (const io::MatrixFileError& e) {
            problem = dialogWording(QString::fromUtf8(e.what()));
        }
        QApplication::restoreOverrideCursor();
    }
    showProblem(problem);
    if (error) *error = problem;
    return false;
}

void ModelImportDialog::accept() {
    if (importNow()) QDialog::accept();
}

QString ModelImportDialog::problemText() const {
    return problem_->isHidden() ? QString() : problem_->text();
}

void ModelImportDialog::showProblem(const QString& text) {
    problem_->setText(text);
    problem_->setVisible(!text.isEmpty());
}

void ModelImportDialog::browseModel() {
    const QString fileName =
        QFileDialog::getOpenFileName(this, tr("Model weights"), kFolder.read(),
                                     tr("Safetensors (*.safetensors);;All files (*)"));
    if (!fileName.isEmpty()) openModel(fileName);
}

void ModelImportDialog::browseNpy() {
    const QStringList fileNames = QFileDialog::getOpenFileNames(
        this, tr("Tensors as .npy files"), kFolder.read(), tr("NumPy arrays (*.npy)"));
    if (!fileNames.isEmpty()) addNpyFiles(fileNames);
}

void ModelImportDialog::browseVocabulary() {
    const QString fileName = QFileDialog::getOpenFileName(
        this, tr("Vocabulary"), kFolder.read(), tr("Vocabularies (*.json *.txt);;All files (*)"));
    if (!fileName.isEmpty()) vocabularyPath_->setText(fileName);
}

}  // namespace ae::ui
