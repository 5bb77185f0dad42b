#include "ui/files/file_actions.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLocale>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QSpinBox>
#include <QUndoStack>
#include <memory>

#include "document/model_session.h"
#include "io/formats/latex_export.h"
#include "io/formats/matrix_files.h"
#include "io/formats/result_export.h"
#include "io/model/builtin_models.h"
#include "io/model/hub_cache.h"
#include "io/scene/scene_file.h"
#include "plot/heatmap_grid.h"
#include "plot/image_export.h"
#include "ui/files/batch_export.h"
#include "ui/files/export_dialog.h"
#include "ui/files/model_import_dialog.h"
#include "ui/files/scene_import.h"
#include "ui/setting.h"
#include "ui/window/document_maps.h"

namespace ae::ui {
namespace {

const Setting<QStringList> kRecentFiles{"files/recent", {}};
const Setting<QStringList> kRecentModels{"files/recentModels", {}};
const Setting<QString> kModelFolder{"files/modelFolder", {}};
const Setting<QString> kSceneFolder{"files/sceneFolder", {}};
const Setting<QString> kImportFolder{"files/importFolder", {}};
const Setting<QString> kMatrixFolder{"files/matrixFolder", {}};
const Setting<int> kLatexDecimals{"files/latexDecimals", 2};
constexpr int kMaxRecent = 8;

QString localJsonFile(const QMimeData* mime) {
    if (!mime || !mime->hasUrls() || mime->urls().size() != 1) return {};
    const QString file = mime->urls().first().toLocalFile();
    return file.endsWith(QLatin1String(".json"), Qt::CaseInsensitive) ? file : QString();
}

// The result's names for a stage: head{h}_{key} per head, or the key itself.
bool belongsTo(const std::string& name, Stage stage) {
    const std::string key = plot::stageKey(stage).toStdString();
    if (!plot::isPerHead(stage)) return name == key;
    return name.rfind("head", 0) == 0 && name.size() > key.size() + 1 &&
           name.compare(name.size() - key.size() - 1, std::string::npos, "_" + key) == 0;
}

AttentionEngine<double> computedInDouble(const Scene& scene) {
    checkFitsInMemory(scene, sizeof(double));
    AttentionEngine<double> engine(scene);
    engine.compute();
    return engine;
}

}  // namespace

FileActions::FileActions(Window window) : QObject(window.widget), window_(std::move(window)) {
    window_.widget->setAcceptDrops(true);
    window_.widget->installEventFilter(this);
}

void FileActions::addOpenActions(QMenu* file) {
    QAction* open = file->addAction(tr("&Open scene…"), this, &FileActions::openDialog);
    open->setShortcut(QKeySequence::Open);
    recentMenu_ = file->addMenu(tr("Open &recent"));
    connect(recentMenu_, &QMenu::aboutToShow, this, &FileActions::fillRecentMenu);
    connect(document(), &document::AttentionDocument::fileNameChanged, this,
            &FileActions::rememberRecent);
}

void FileActions::addModelActions(QMenu* file) {
    QAction* open = file->addAction(tr("Open &model…"), this, &FileActions::openModelDialog);
    open->setObjectName(QStringLiteral("openModelAction"));
    open->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    open->setToolTip(tr("A Hugging Face model folder (config.json and safetensors)"));
    builtInModelsMenu_ = file->addMenu(tr("Open &built-in model"));
    builtInModelsMenu_->setObjectName(QStringLiteral("builtInModelsMenu"));
    connect(builtInModelsMenu_, &QMenu::aboutToShow, this, &FileActions::fillBuiltInModelsMenu);
    hubCacheMenu_ = file->addMenu(tr("Open from the Hugging Face &cache"));
    hubCacheMenu_->setObjectName(QStringLiteral("hubCacheMenu"));
    hubCacheMenu_->setToolTipsVisible(true);
    connect(hubCacheMenu_, &QMenu::aboutToShow, this, &FileActions::fillHubCacheMenu);
    recentModelsMenu_ = file->addMenu(tr("Recent mo&dels"));
    recentModelsMenu_->setObjectName(QStringLiteral("recentModelsMenu"));
    connect(recentModelsMenu_, &QMenu::aboutToShow, this, &FileActions::fillRecentModelsMenu);
}

void FileActions::fillBuiltInModelsMenu() {
    builtInModelsMenu_->clear();
    for (const io::BuiltInModel& m : io::builtInModels()) {
        const QString location = io::builtInPrefix() + m.name;
        const QString title =
            m.about.title.isEmpty() ? m.name : QStringLiteral("%1 (%2)").arg(m.about.title, m.name);
        QAction* a =
            builtInModelsMenu_->addAction(title, this, [this, location] { openModel(location); });
        a->setData(location);
        a->setToolTip(m.about.note.isEmpty() ? m.folder : m.about.note);
        a->setStatusTip(m.folder);
    }
    if (builtInModelsMenu_->isEmpty())
        builtInModelsMenu_->addAction(tr("(none installed)"))->setEnabled(false);
}

void FileActions::fillHubCacheMenu() {
    hubCacheMenu_->clear();
    const QString hub = io::hubCacheFolder();
    for (const io::HubModel& m : io::listHubModels(hub)) {
        QStringList facts;
        if (!m.family.isEmpty()) facts << m.family;
        if (!m.dtype.isEmpty()) facts << m.dtype;
        if (m.bytesOnDisk > 0) facts << QLocale().formattedDataSize(m.bytesOnDisk);
        QString text = m.name;
        if (!facts.isEmpty())
            text += QStringLiteral("  (%1)").arg(facts.join(QStringLiteral(", ")));
        const QString folder = m.snapshot;
        QAction* a = hubCacheMenu_->addAction(text, this, [this, folder] { openModel(folder); });
        a->setData(folder);
        if (m.problem.isEmpty()) {
            a->setToolTip(folder);
        } else {
            // The reason in the entry itself: a menu's tooltip is easy to miss.
            a->setText(text + QStringLiteral(" — ") + tr("cannot open: %1").arg(m.problem));
            a->setToolTip(m.problem);
            a->setEnabled(false);
        }
        a->setStatusTip(folder);
    }
    if (hubCacheMenu_->isEmpty()) {
        hubCacheMenu_->addAction(tr("(no models in %1)").arg(QDir::toNativeSeparators(hub)))
            ->setEnabled(false);
    }
}

bool FileActions::openModel(const QString& folder) {
    if (!maybeSave()) return false;
    window_.openModel(folder);
    return true;
}

void FileActions::openModelDialog() {
    const QString folder = QFileDialog::getExistingDirectory(
        window_.widget, tr("Open model folder"), kModelFolder.read());
    if (folder.isEmpty()) return;
    kModelFolder.write(QFileInfo(folder).absolutePath());
    openModel(folder);
}

QStringList FileActions::recentModels() const {
    return kRecentModels.read();
}

void FileActions::rememberModel(const QString& folder) {
    if (folder.isEmpty()) return;
    const QString path =
        io::isBuiltInArgument(folder) ? folder : QFileInfo(folder).absoluteFilePath();
    QStringList recent = kRecentModels.read();
    recent.removeAll(path);
    recent.prepend(path);
    kRecentModels.write(recent.mid(0, kMaxRecent));
}

void FileActions::fillRecentModelsMenu() {
    recentModelsMenu_->clear();
    const QStringList recent = kRecentModels.read();
    for (int i = 0; i < recent.size(); ++i) {
        const QString& path = recent[i];
        // A built-in model is remembered as builtin:NAME, and shown so.
        const QString shown = io::isBuiltInArgument(path) ? path : QFileInfo(path).fileName();
        QAction* a = recentModelsMenu_->addAction(QStringLiteral("&%1 %2").arg(i + 1).arg(shown),
                                                  this, [this, path] { openModel(path); });
        a->setToolTip(path);
        a->setStatusTip(path);
    }
    if (recent.isEmpty()) recentModelsMenu_->addAction(tr("(none yet)"))->setEnabled(false);
}

void FileActions::addSaveAndExportActions(QMenu* file) {
    file->addSeparator();
    file->addAction(tr("&Save"), this, &FileActions::save)->setShortcut(QKeySequence::Save);
    file->addAction(tr("Save &as…"), this, &FileActions::saveAs)->setShortcut(QKeySequence::SaveAs);
    file->addSeparator();
    // Not named `import`: clang-format takes that for a C++20 module import and mangles the block.
    QMenu* importMenu = file->addMenu(tr("&Import"));
    importMenu->addAction(tr("&Embeddings (.npy or CSV)…"), this,
                          [this] { importEmbeddingsDialog(false); });
    importMenu->addAction(tr("&Tokens (text) and embeddings…"), this,
                          [this] { importEmbeddingsDialog(true); });
    importMenu->addSeparator();
    const std::pair<document::WeightMatrix, const char*> weights[] = {
        {document::WeightMatrix::Query, "W_Q"},
        {document::WeightMatrix::Key, "W_K"},
        {document::WeightMatrix::Value, "W_V"},
        {document::WeightMatrix::Output, "W_O"}};
    for (const auto& [which, name] : weights) {
        importMenu->addAction(tr("%1…").arg(QLatin1String(name)), this,
                              [this, which = which] { importWeightDialog(which); });
    }
    file->addAction(tr("Import &model weights…"), this, [this] {
        ModelImportDialog dialog(document(), window_.widget);
        dialog.exec();
    });
    file->addSeparator();
    file->addAction(tr("Export &image…"), this,
                    [this] { exportDialog(ExportDialog::Mode::Image); });
    file->addAction(tr("Export every &head…"), this,
                    [this] { exportDialog(ExportDialog::Mode::EveryHead); });
    file->addAction(tr("Export a s&weep…"), this,
                    [this] { exportDialog(ExportDialog::Mode::Sweep); });
    file->addAction(tr("Export &matrices…"), this, &FileActions::exportMatricesDialog);
}

void FileActions::addCopyActions(QMenu* edit) {
    QAction* copy = edit->addAction(tr("Copy &image"), this, &FileActions::copyImage);
    copy->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
    edit->addAction(tr("Copy as &LaTeX…"), this, &FileActions::copyLatexDialog);
}

ExportDialog::Mode FileActions::exportModeFor(ExportDialog::Mode asked) const {
    const plot::ModelView* model = window_.modelViewInFront ? window_.modelViewInFront() : nullptr;
    if (!model) return asked;
    if (asked == ExportDialog::Mode::Image) return ExportDialog::Mode::ModelImage;
    if (asked == ExportDialog::Mode::EveryHead) return ExportDialog::Mode::ModelEveryHead;
    return asked;
}

void FileActions::exportDialog(ExportDialog::Mode asked) {
    const ExportDialog::Mode mode = exportModeFor(asked);
    const bool onModel =
        mode == ExportDialog::Mode::ModelImage || mode == ExportDialog::Mode::ModelEveryHead;
    std::unique_ptr<ExportDialog> dialog =
        onModel ? std::make_unique<ExportDialog>(window_.modelViewInFront(), mode, window_.widget)
                : std::make_unique<ExportDialog>(document(), window_.grid, mode, window_.widget);
    connect(dialog.get(), &ExportDialog::statusMessage, this, &FileActions::statusMessage);
    dialog->exec();
}

void FileActions::fail(const QString& text) {
    emit problem(text);
}

bool FileActions::open(const QString& fileName) {
    if (!maybeSave()) return false;
    QString error;
    if (!window_.openSceneFile(fileName, &error)) {
        fail(QStringLiteral("%1: %2").arg(fileName, error));
        return false;
    }
    return true;
}

bool FileActions::openPreset(const QString& name) {
    if (!maybeSave()) return false;
    try {
        window_.openPreset(name);
    } catch (const SceneError& e) {
        fail(QString::fromStdString(e.what()));
        return false;
    }
    return true;
}

void FileActions::openDialog() {
    const QString start = document()->fileName().isEmpty()
                              ? kSceneFolder.read()
                              : QFileInfo(document()->fileName()).absolutePath();
    const QString fileName = QFileDialog::getOpenFileName(window_.widget, tr("Open scene"), start,
                                                          tr("Scenes (*.json);;All files (*)"));
    if (!fileName.isEmpty()) open(fileName);
}

// The document's view with the window's state over it. Keys this window does not know (from a
// newer version, or added by hand) stay.
std::string FileActions::viewJsonForSaving() const {
    QJsonObject view =
        QJsonDocument::fromJson(QByteArray::fromStdString(document()->scene().viewJson)).object();
    const QJsonObject state = window_.viewState();
    for (auto it = state.begin(); it != state.end(); ++it)
        view[it.key()] = it.value();
    return QJsonDocument(view).toJson(QJsonDocument::Compact).toStdString();
}

Scene FileActions::sceneForSaving() const {
    Scene scene = document()->scene();
    scene.viewJson = viewJsonForSaving();
    return scene;
}

// The model's layer is found by the folder as the session has it (absolute), before a file gets
// it relative to itself.
std::shared_ptr<const Scene> FileActions::modelLayer() const {
    return window_.modelLayerOf ? window_.modelLayerOf(document()->scene()) : nullptr;
}

QByteArray FileActions::sceneJsonForSaving() const {
    return io::sceneToJson(document()->scene(), modelLayer().get(), viewJsonForSaving());
}

bool FileActions::saveTo(const QString& fileName, QString* error) {
    try {
        const std::string view = document::withFolderRelativeTo(viewJsonForSaving(), fileName);
        io::writeFileAtomically(fileName,
                                io::sceneToJson(document()->scene(), modelLayer().get(), view));
    } catch (const io::WriteError& e) {
        if (error) *error = QString::fromStdString(e.what());
        return false;
    }
    document()->setFileName(fileName);
    document()->markSaved();
    kSceneFolder.write(QFileInfo(fileName).absolutePath());
    return true;
}

bool FileActions::save() {
    if (document()->fileName().isEmpty()) return saveAs();
    QString error;
    if (saveTo(document()->fileName(), &error)) return true;
    fail(error);
    return false;
}

bool FileActions::saveAs() {
    QString start = document()->fileName();
    if (start.isEmpty()) {
        QString title = QString::fromStdString(document()->scene().title);
        start = QDir(kSceneFolder.read())
                    .filePath((title.isEmpty() ? tr("scene") : title)
                                  .replace(QLatin1Char('/'), QLatin1Char('-')) +
                              QStringLiteral(".json"));
    }
    QString fileName = QFileDialog::getSaveFileName(window_.widget, tr("Save scene"), start,
                                                    tr("Scenes (*.json)"));
    if (fileName.isEmpty()) return false;
    if (QFileInfo(fileName).suffix().isEmpty()) fileName += QStringLiteral(".json");
    QString error;
    if (saveTo(fileName, &error)) return true;
    fail(error);
    return false;
}

bool FileActions::maybeSave() {
    if (!document()->isModified()) return true;
    const QString name = document()->fileName().isEmpty()
                             ? tr("This scene")
                             : QFileInfo(document()->fileName()).fileName();
    UnsavedChoice answer = UnsavedChoice::Cancel;
    if (askUnsaved_) {
        answer = askUnsaved_(name);
    } else {
        switch (QMessageBox::warning(window_.widget, tr("Unsaved changes"),
                                     tr("%1 has unsaved changes. Save them?").arg(name),
                                     QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel,
                                     QMessageBox::Save)) {
            case QMessageBox::Save:
                answer = UnsavedChoice::Save;
                break;
            case QMessageBox::Discard:
                answer = UnsavedChoice::Discard;
                break;
            default:
                break;
        }
    }
    if (answer == UnsavedChoice::Save) return save();
    return answer == UnsavedChoice::Discard;
}

QStringList FileActions::recentFiles() const {
    return kRecentFiles.read();
}

void FileActions::rememberRecent(const QString& fileName) {
    if (fileName.isEmpty()) return;
    const QString path = QFileInfo(fileName).absoluteFilePath();
    QStringList recent = kRecentFiles.read();
    recent.removeAll(path);
    recent.prepend(path);
    kRecentFiles.write(recent.mid(0, kMaxRecent));
}

void FileActions::fillRecentMenu() {
    recentMenu_->clear();
    const QStringList recent = kRecentFiles.read();
    for (int i = 0; i < recent.size(); ++i) {
        const QString& path = recent[i];
        QAction* a = recentMenu_->addAction(
            QStringLiteral("&%1 %2").arg(i + 1).arg(QFileInfo(path).fileName()), this,
            [this, path] { open(path); });
        a->setToolTip(path);
        a->setStatusTip(path);
    }
    if (recent.isEmpty()) recentMenu_->addAction(tr("(none yet)"))->setEnabled(false);
}

bool FileActions::eventFilter(QObject* watched, QEvent* event) {
    if (watched == window_.widget && event->type() == QEvent::DragEnter) {
        auto* drag = static_cast<QDragEnterEvent*>(event);
        if (!localJsonFile(drag->mimeData()).isEmpty()) drag->acceptProposedAction();
        return true;
    }
    if (watched == window_.widget && event->type() == QEvent::Drop) {
        auto* drop = static_cast<QDropEvent*>(event);
        const QString file = localJsonFile(drop->mimeData());
        if (file.isEmpty()) return false;
        drop->acceptProposedAction();
        open(file);
        return true;
    }
    return QObject::eventFilter(watched, event);
}

bool FileActions::importEmbeddings(const QString& matrixFile, const QString& tokenFile,
                                   QString* error) {
    try {
        const MatrixD embeddings = io::readMatrixFile(matrixFile);
        std::vector<std::string> tokens;
        if (!tokenFile.isEmpty()) tokens = io::readTokenFile(tokenFile);
        const Scene scene = withEmbeddings(document()->scene(), embeddings,
                                           tokenFile.isEmpty() ? nullptr : &tokens);
        return document()->replaceScene(scene, tr("Import embeddings"), error);
    } catch (const io::MatrixFileError& e) {
        if (error) *error = QString::fromStdString(e.what());
    }
    return false;
}

bool FileActions::importWeight(document::WeightMatrix which, const QString& matrixFile,
                               QString* error) {
    try {
        const Scene scene = withWeight(document()->scene(), which, io::readMatrixFile(matrixFile));
        return document()->replaceScene(scene, tr("Import weights"), error);
    } catch (const io::MatrixFileError& e) {
        if (error) *error = QString::fromStdString(e.what());
    }
    return false;
}

void FileActions::importEmbeddingsDialog(bool withTokens) {
    QString tokens;
    if (withTokens) {
        tokens =
            QFileDialog::getOpenFileName(window_.widget, tr("Tokens, one per line"),
                                         kImportFolder.read(), tr("Text (*.txt);;All files (*)"));
        if (tokens.isEmpty()) return;
        kImportFolder.write(QFileInfo(tokens).absolutePath());
    }
    const QString matrix =
        QFileDialog::getOpenFileName(window_.widget, tr("Embeddings"), kImportFolder.read(),
                                     tr("Matrices (*.npy *.csv *.tsv *.txt);;All files (*)"));
    if (matrix.isEmpty()) return;
    kImportFolder.write(QFileInfo(matrix).absolutePath());
    QString error;
    if (!importEmbeddings(matrix, tokens, &error)) fail(error);
}

void FileActions::importWeightDialog(document::WeightMatrix which) {
    const QString matrix =
        QFileDialog::getOpenFileName(window_.widget, tr("Weight matrix"), kImportFolder.read(),
                                     tr("Matrices (*.npy *.csv *.tsv *.txt);;All files (*)"));
    if (matrix.isEmpty()) return;
    kImportFolder.write(QFileInfo(matrix).absolutePath());
    QString error;
    if (!importWeight(which, matrix, &error)) fail(error);
}

QStringList FileActions::exportMatrices(const Scene& scene, std::optional<Stage> stage,
                                        MatrixExportFormat format, const QString& target) {
    const AttentionEngine<double> engine = computedInDouble(scene);
    if (format == MatrixExportFormat::ResultJson) {
        io::writeFileAtomically(target, io::resultJson(engine));
        return {target};
    }
    const bool npy = format == MatrixExportFormat::Npy;
    if (!stage) {
        io::writeMatrixDirectory(engine, target,
                                 npy ? io::MatrixFormat::Npy : io::MatrixFormat::Csv);
        QStringList files;
        for (const auto& [name, m] : io::resultMatrices(engine))
            files << QDir(target).filePath(QString::fromStdString(name) + (npy ? ".npy" : ".csv"));
        return files;
    }
    if (!QDir().mkpath(target)) {
        throw io::WriteError(
            QStringLiteral("%1: cannot create the directory").arg(target).toStdString());
    }
    QStringList files;
    for (const auto& [name, m] : io::resultMatrices(engine)) {
        if (!belongsTo(name, *stage)) continue;
        const QString file =
            QDir(target).filePath(QString::fromStdString(name) + (npy ? ".npy" : ".csv"));
        io::writeFileAtomically(file, npy ? io::npyBytes(m) : io::csvBytes(m));
        files << file;
    }
    return files;
}

QString FileActions::latexForStage(const Scene& scene, Stage stage, int head, int decimals) {
    const AttentionEngine<double> engine = computedInDouble(scene);
    const std::string wanted = plot::isPerHead(stage) ? "head" + std::to_string(head) + "_" +
                                                            plot::stageKey(stage).toStdString()
                                                      : plot::stageKey(stage).toStdString();
    for (const auto& [name, m] : io::resultMatrices(engine)) {
        if (name == wanted) return io::latexBmatrix(m, decimals);
    }
    return {};
}

void FileActions::exportMatricesDialog() {
    QDialog dialog(window_.widget);
    dialog.setWindowTitle(tr("Export matrices"));
    auto* form = new QFormLayout(&dialog);
    auto* scope = new QComboBox;
    const Stage stage = window_.grid->stage();
    scope->addItem(tr("%1, every head").arg(plot::stageName(stage)));
    scope->addItem(tr("Every stage"));
    auto* format = new QComboBox;
    format->addItems({tr("CSV files in a folder"), tr("NPY files in a folder"),
                      tr("Result JSON (every stage)")});
    connect(format, &QComboBox::currentIndexChanged, scope, [scope](int index) {
        // The result format is the whole result; a part of it would not be one.
        if (index == 2) scope->setCurrentIndex(1);
        scope->setEnabled(index != 2);
    });
    form->addRow(tr("Matrices"), scope);
    form->addRow(tr("Format"), format);
    form->addRow(new QLabel(tr("Computed in double precision, as the export command does.")));
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    form->addRow(buttons);
    if (dialog.exec() != QDialog::Accepted) return;

    const auto chosen = static_cast<MatrixExportFormat>(format->currentIndex());
    const QString base = QFileInfo(document()->fileName()).completeBaseName();
    QString target;
    if (chosen == MatrixExportFormat::ResultJson) {
        target = QFileDialog::getSaveFileName(
            window_.widget, tr("Result file"),
            QDir(kMatrixFolder.read())
                .filePath((base.isEmpty() ? tr("scene") : base) + QStringLiteral("-result.json")),
            tr("JSON (*.json)"));
    } else {
        target = QFileDialog::getExistingDirectory(window_.widget, tr("Folder for the matrices"),
                                                   kMatrixFolder.read());
    }
    if (target.isEmpty()) return;
    kMatrixFolder.write(chosen == MatrixExportFormat::ResultJson ? QFileInfo(target).absolutePath()
                                                                 : target);
    try {
        const QStringList files =
            exportMatrices(document()->scene(),
                           scope->currentIndex() == 0 ? std::optional<Stage>(stage) : std::nullopt,
                           chosen, target);
        emit statusMessage(tr("Wrote %n file(s) to %1", nullptr, static_cast<int>(files.size()))
                               .arg(QDir::toNativeSeparators(target)));
    } catch (const io::WriteError& e) {
        fail(QString::fromStdString(e.what()));
    } catch (const SceneError& e) {
        fail(QString::fromStdString(e.what()));
    }
}

void FileActions::copyImage() {
    plot::HeatmapGrid grid;
    nameModelLayer(grid, *document());
    DocumentMaps gridFollowsDocument(document(), &grid);
    grid.setView(window_.grid->view());
    plot::ImageOptions options;
    options.size = window_.grid->size();
    QApplication::clipboard()->setImage(plot::renderImage(plot::gridTiles(grid), options));
    emit statusMessage(tr("Copied the maps as an image"));
}

void FileActions::copyLatexDialog() {
    const Stage stage = window_.grid->stage();
    const Scene& scene = document()->scene();
    QDialog dialog(window_.widget);
    dialog.setWindowTitle(tr("Copy as LaTeX"));
    auto* form = new QFormLayout(&dialog);
    auto* head = new QSpinBox;
    head->setRange(0, scene.heads - 1);
    head->setValue(std::min(window_.grid->head(), scene.heads - 1));
    head->setEnabled(plot::isPerHead(stage));
    auto* decimals = new QSpinBox;
    decimals->setRange(0, 8);
    decimals->setValue(kLatexDecimals.read());
    auto* preview = new QPlainTextEdit;
    preview->setReadOnly(true);
    preview->setMinimumSize(480, 220);
    const auto update = [&] {
        try {
            preview->setPlainText(latexForStage(scene, stage, head->value(), decimals->value()));
        } catch (const SceneError& e) {
            preview->setPlainText(QString::fromStdString(e.what()));
        }
    };
    connect(head, &QSpinBox::valueChanged, &dialog, update);
    connect(decimals, &QSpinBox::valueChanged, &dialog, update);
    update();
    form->addRow(tr("Stage"), new QLabel(plot::stageName(stage)));
    form->addRow(tr("Head"), head);
    form->addRow(tr("Decimals"), decimals);
    form->addRow(preview);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel);
    buttons->addButton(tr("Copy"), QDialogButtonBox::AcceptRole);
    connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    form->addRow(buttons);
    if (dialog.exec() != QDialog::Accepted) return;
    kLatexDecimals.write(decimals->value());
    QApplication::clipboard()->setText(preview->toPlainText());
    emit statusMessage(tr("Copied a bmatrix of %1").arg(plot::stageName(stage)));
}

}  // namespace ae::ui
