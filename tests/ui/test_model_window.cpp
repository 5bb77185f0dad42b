// A whole model in the window (issue 16): File › Open model asks about unsaved changes, opens in
// the background and shows the model's input and view; a refused folder is shown and the window
// keeps working; a head activated in the model view becomes the explorer's scene (one undo
// step); the heads-off control is a what-if that flows through the model; a saved scene with a
// model reopens it; autosave keeps the model's what-ifs. Built-in models (here test ones, in a
// folder AE_MODELS_PATH names) open from File › Open built-in model and the examples gallery, and
// a scene saved on one reopens it by name.

#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFontMetrics>
#include <QHeaderView>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QMouseEvent>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabBar>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QToolButton>
#include <QUndoStack>
#include <QtTest>
#include <algorithm>
#include <memory>

#include "core/model/model_analysis.h"
#include "document/attention_document.h"
#include "document/model_session.h"
#include "io/model/builtin_models.h"
#include "io/scene/scene_file.h"
#include "plot/head_grid.h"
#include "plot/head_summary_table.h"
#include "plot/heatmap_grid.h"
#include "plot/model_panels.h"
#include "plot/model_view.h"
#include "qcustomplot.h"
#include "ui/classroom/classroom.h"
#include "ui/classroom/examples_gallery.h"
#include "ui/editors/controls_panel.h"
#include "ui/files/autosave.h"
#include "ui/files/batch_export.h"
#include "ui/files/file_actions.h"
#include "ui/window/document_maps.h"
#include "ui/window/main_window.h"
#include "ui/window/model_panel.h"
#include "ui/window/stale_click_guard.h"

using namespace ae;
using namespace ae::ui;

namespace {

QString gpt2Tiny() {
    return QStringLiteral(AE_TEST_DATA_DIR "/models/gpt2-tiny");
}

}  // namespace

class TestModelWindow : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void init();
    void cleanup();
    void openModelAsksAboutUnsavedChanges();
    void savedWhatIfReopensExactly();
    void aModelOpenFitsA1024PixelScreen();
    void everyDockFitsA1024PixelScreen_data();
    void everyDockFitsA1024PixelScreen();
    void openedModelShowsItsInput();
    void refusalIsShownAndWindowKeepsWorking();
    void activatedHeadOpensTheLayer();
    void typedIdsRun();
    void headSwitchedOffFlowsThroughTheModel();
    void clicksQueuedWhileALayerOpensAreDropped();
    void exportedMapsNameTheModelLayer();
    void longProblemIsReadWhole();
    void predictionsPositionAgreesAfterEveryChange();
    void savedSceneReopensTheModel();
    void autosaveKeepsTheWhatIf();
    void clickedChipMarksBertPadding();
    void movedModelIsReportedInTheWindow();
    void builtInModelOpensFromTheMenu();
    void galleryShowsEachBuiltInModel();

private:
    void openModel(const QString& folder = gpt2Tiny());
    void settle();
    ModelSession* session() const { return window_->modelSession(); }

    std::unique_ptr<QTemporaryDir> dir_;
    std::unique_ptr<MainWindow> window_;
    QList<QString> asked_;
    UnsavedChoice answer_ = UnsavedChoice::Discard;
};

namespace {

// A scene's numbers and settings as a file has them, without the window's view (which saving
// adds to).
QByteArray withoutView(Scene scene) {
    scene.viewJson.clear();
    return io::sceneToJson(scene);
}

// The query–key map's title (drawn first if it waits behind its tab).
QString queryKeyTitle(QueryKeyPanel* panel) {
    panel->drawIfStale();
    return static_cast<QCPTextElement*>(panel->plot()->plotLayout()->element(0, 0))->text();
}

}  // namespace

void TestModelWindow::initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("attention-explorer-tests"));
    QCoreApplication::setApplicationName(QStringLiteral("test_model_window"));
    QApplication::setFont(QFont(QStringLiteral("DejaVu Sans"), 9));
}

void TestModelWindow::init() {
    QSettings().clear();
    dir_ = std::make_unique<QTemporaryDir>();
    qputenv("AE_AUTOSAVE_DIR", dir_->filePath(QStringLiteral("autosave")).toLocal8Bit());
    window_ = std::make_unique<MainWindow>();
    window_->resize(1024, 768);
    window_->openPreset(QStringLiteral("default"));
    window_->show();
    session()->setProgressDelay(0);
    asked_.clear();
    answer_ = UnsavedChoice::Discard;
    window_->fileActions()->setUnsavedQuestion([this](const QString& name) {
        asked_ << name;
        return answer_;
    });
}

void TestModelWindow::cleanup() {
    window_.reset();
    dir_.reset();
}

void TestModelWindow::settle() {
    for (int i = 0; i < 3; ++i) {
        window_->document()->waitForResults();
        session()->waitUntilIdle();
        QCoreApplication::processEvents();
    }
}

void TestModelWindow::openModel(const QString& folder) {
    QVERIFY(window_->fileActions()->openModel(folder));
    settle();
}

void TestModelWindow::openModelAsksAboutUnsavedChanges() {
    QVERIFY(window_->document()->setHeads(2));
    const QByteArray edited = io::sceneToJson(window_->document()->scene());
    answer_ = UnsavedChoice::Cancel;
    QVERIFY(!window_->fileActions()->openModel(gpt2Tiny()));
    QCOMPARE(asked_.size(), 1);
    QVERIFY(!session()->isBusy());
    settle();
    QVERIFY(!session()->isOpen());
    QCOMPARE(io::sceneToJson(window_->document()->scene()), edited);
    QCOMPARE(window_->document()->undoStack()->count(), 1);

    answer_ = UnsavedChoice::Discard;
    openModel();
    QCOMPARE(asked_.size(), 2);
    QVERIFY(session()->isOpen());
    QVERIFY(!window_->document()->isModified());
    QCOMPARE(window_->document()->undoStack()->count(), 0);
    QCOMPARE(window_->fileActions()->recentModels().value(0),
             QFileInfo(gpt2Tiny()).absoluteFilePath());

    // Another scene without a model: the maps alone are the middle again, the model input goes.
    window_->fileActions()->openPreset(QStringLiteral("default"));
    settle();
    QVERIFY(!session()->isOpen());
    QCOMPARE(window_->centralWidget(), window_->grid());
    QVERIFY(window_->grid()->isVisible());
    QVERIFY(!window_->modelPanel()->isVisible());
}

void TestModelWindow::openedModelShowsItsInput() {
    openModel();
    QCOMPARE(window_->centralWidget(), window_->centralTabs());
    QCOMPARE(window_->centralTabs()->count(), 2);
    QCOMPARE(window_->centralTabs()->currentWidget(), window_->modelView());
    ModelPanel* panel = window_->modelPanel();
    QVERIFY(panel->isVisible());
    // gpt2-tiny has no tokenizer: the text field says so, ids are typed.
    QVERIFY(!panel->textField()->isEnabled());
    QCOMPARE(panel->chips()->count(), static_cast<int>(session()->ids().size()));
    QVERIFY(panel->chips()->item(0)->text().contains(QString::number(session()->ids()[0])));
    QCOMPARE(panel->idsField()->text().split(QLatin1Char(' ')).size(),
             static_cast<int>(session()->ids().size()));
    // The model view has the run.
    QCOMPARE(window_->modelView()->data().run, session()->currentRun());
    QCOMPARE(static_cast<int>(window_->modelView()->data().summaries.size()), 2 * 4);
    QCOMPARE(window_->modelView()->data().predictions.size(), std::size_t{10});
    // Export image and Export every head work on what is in front: the model view, then the maps.
    FileActions* files = window_->fileActions();
    QCOMPARE(files->exportModeFor(ExportDialog::Mode::Image), ExportDialog::Mode::ModelImage);
    QCOMPARE(files->exportModeFor(ExportDialog::Mode::EveryHead),
             ExportDialog::Mode::ModelEveryHead);
    QCOMPARE(files->exportModeFor(ExportDialog::Mode::Sweep), ExportDialog::Mode::Sweep);
    window_->centralTabs()->setCurrentIndex(window_->centralTabs()->indexOf(window_->grid()));
    QCOMPARE(files->exportModeFor(ExportDialog::Mode::Image), ExportDialog::Mode::Image);
    QCOMPARE(files->exportModeFor(ExportDialog::Mode::EveryHead), ExportDialog::Mode::EveryHead);
}

void TestModelWindow::refusalIsShownAndWindowKeepsWorking() {
    QTemporaryDir bad;
    QFile bin(bad.filePath(QStringLiteral("pytorch_model.bin")));
    QVERIFY(bin.open(QIODevice::WriteOnly));
    bin.write("weights in a pickle");
    bin.close();
    const QByteArray before = io::sceneToJson(window_->document()->scene());
    QSignalSpy refused(session(), &ModelSession::openRefused);
    openModel(bad.path());
    QCOMPARE(refused.count(), 1);
    const QString message = refused.first().first().toString();
    QVERIFY2(message.contains(QLatin1String("config.json")) && !message.contains(QLatin1Char('\n')),
             qPrintable(message));
    QVERIFY(!session()->isOpen());
    QCOMPARE(io::sceneToJson(window_->document()->scene()), before);
    // Still working: an edit computes.
    QVERIFY(window_->document()->setHeads(2));
    window_->document()->waitForResults();
    QVERIFY(window_->document()->errorText().isEmpty());
}

void TestModelWindow::activatedHeadOpensTheLayer() {
    openModel();
    emit window_->modelView()->headActivated(1, 2);
    settle();
    QCOMPARE(session()->layer(), 1);
    QCOMPARE(session()->head(), 2);
    QCOMPARE(window_->document()->undoStack()->count(), 1);
    QCOMPARE(window_->centralTabs()->currentWidget(), window_->grid());
    QCOMPARE(window_->grid()->head(), 2);
    QCOMPARE(window_->findChild<QSpinBox*>(QStringLiteral("headSpin"))->value(), 2);
    const auto open = window_->modelView()->data().openHead;
    QVERIFY(open && open->first == 1 && open->second == 2);
    const auto& record = session()->baseRun()->layers[1];
    QCOMPARE((window_->document()->scene().embeddings.cast<float>() - record.hiddenIn)
                 .cwiseAbs()
                 .maxCoeff(),
             0.0f);
    window_->document()->undoStack()->undo();
    settle();
    QCOMPARE(session()->layer(), 0);
}

void TestModelWindow::typedIdsRun() {
    openModel();
    QLineEdit* ids = window_->modelPanel()->idsField();
    ids->setText(QStringLiteral("1, 2 3"));
    emit ids->returnPressed();
    settle();
    QCOMPARE(session()->ids(), (std::vector<long long>{1, 2, 3}));
    QCOMPARE(window_->modelPanel()->chips()->count(), 3);
    QCOMPARE(window_->document()->scene().queryCount(), 3);
    ids->setText(QStringLiteral("1 two"));
    emit ids->returnPressed();
    settle();
    QVERIFY(window_->modelPanel()->problemText().contains(QLatin1String("two")));
    QCOMPARE(session()->ids().size(), std::size_t{3});
}

void TestModelWindow::headSwitchedOffFlowsThroughTheModel() {
    openModel();
    const auto before = session()->currentRun();
    // The model as it is has no "before → after" column; a what-if has, until it is undone.
    PredictionsPanel* predictions = window_->modelView()->predictionsPanel();
    constexpr int beforeColumn = PredictionsPanel::BeforeColumn;
    QVERIFY(predictions->table()->isColumnHidden(beforeColumn));
    QVERIFY2(!predictions->heading().contains(QStringLiteral("what-if")),
             qPrintable(predictions->heading()));
    auto* off = window_->controls()->findChild<QToolButton*>(QStringLiteral("headOff1"));
    QVERIFY(off);
    off->click();
    settle();
    QCOMPARE(window_->document()->scene().ablation.heads, std::vector<int>{1});
    QVERIFY(session()->currentRun() != session()->baseRun());
    QVERIFY((session()->currentRun()->logits - before->logits).cwiseAbs().maxCoeff() > 1e-6f);
    // The switched-off head itself, and the heads of layer 1 its output reaches.
    const auto& changed = window_->modelView()->data().changedHeads;
    QVERIFY(std::find(changed.begin(), changed.end(), std::pair{0, 1}) != changed.end());
    QVERIFY(
        std::any_of(changed.begin(), changed.end(), [](const auto& c) { return c.first == 1; }));
    QVERIFY(!predictions->table()->isColumnHidden(beforeColumn));
    QVERIFY(predictions->heading().contains(QStringLiteral("before and after the what-if")));
    // At 1024 pixels every cell of the list reads whole and the list needs no sideways scroll
    // ("0.000 → 0.00…" was cut there).
    window_->resize(1024, 768);
    QTabWidget* panels = window_->modelView()->panels();
    panels->setCurrentWidget(predictions);
    settle();
    QTableWidget* list = predictions->table();
    for (int row = 0; row < list->rowCount(); ++row) {
        for (int column = 0; column < list->columnCount(); ++column) {
            if (list->isColumnHidden(column) || !list->item(row, column)) continue;
            QFont font = list->item(row, column)->font();
            const int needed =
                QFontMetrics(font).horizontalAdvance(list->item(row, column)->text());
            QVERIFY2(needed + 6 <= list->columnWidth(column),
                     qPrintable(QStringLiteral("row %1, column %2: \"%3\" needs %4 px, has %5")
                                    .arg(row)
                                    .arg(column)
                                    .arg(list->item(row, column)->text())
                                    .arg(needed)
                                    .arg(list->columnWidth(column))));
        }
    }
    QCOMPARE(list->horizontalScrollBar()->maximum(), 0);
    window_->document()->undoStack()->undo();
    settle();
    QCOMPARE(session()->currentRun(), session()->baseRun());
    QVERIFY(!off->isChecked());
    QVERIFY(predictions->table()->isColumnHidden(beforeColumn));
}

// One owner of the selected position (the session): the position box, the list's heading, the
// list itself and the rollout's row agree after a longer text, a position picked by hand, a
// shorter text and an undo. The view used to keep its own position (the last token of the first
// text) while the session computed the list for the new last token.
void TestModelWindow::predictionsPositionAgreesAfterEveryChange() {
    openModel();
    ModelView* view = window_->modelView();
    const auto agreeAt = [&](int expected) {
        const auto run = session()->currentRun();
        QCOMPARE(view->selectedPosition(), expected);
        QCOMPARE(view->data().position, expected);
        const auto wanted = model::topPredictions(*session()->model(), *run, expected, 10);
        const auto& shown = view->data().predictions;
        QCOMPARE(shown.size(), wanted.size());
        for (std::size_t i = 0; i < shown.size(); ++i)
            QCOMPARE(shown[i].token, wanted[i].token);
        QVERIFY2(
            view->predictionsPanel()->heading().contains(QStringLiteral("after %1").arg(expected)),
            qPrintable(view->predictionsPanel()->heading()));
        QCOMPARE(view->rolloutPanel()->position(), expected);
    };
    const int first = static_cast<int>(session()->ids().size());
    agreeAt(first - 1);
    std::vector<long long> longer = session()->ids();
    for (long long id : {5, 9, 13, 21, 34})
        longer.push_back(id);
    session()->setIds(longer);
    settle();
    agreeAt(first + 4);
    view->setSelectedPosition(2);  // picked by hand
    settle();
    agreeAt(2);
    longer.push_back(7);
    session()->setIds(longer);
    settle();
    agreeAt(2);
    session()->setIds({3, 4});  // too short for position 2: the last token again
    settle();
    agreeAt(1);
    window_->document()->undoStack()->undo();
    settle();
    agreeAt(first + 5);
    // Picking the last token follows the text's end.
    view->setSelectedPosition(first + 5);
    session()->setIds({3, 4, 5, 6});
    settle();
    agreeAt(3);
}

// Clicks stamped while a head's layer was being opened (the window busy) are dropped instead of
// landing on the maps that opening put under the pointer; clicks after it count.
void TestModelWindow::clicksQueuedWhileALayerOpensAreDropped() {
    StaleClickGuard* guard = window_->clickGuard();
    QVERIFY(guard);
    QPushButton button(QStringLiteral("under the pointer"));
    button.resize(120, 40);
    button.show();
    QSignalSpy clicked(&button, &QPushButton::clicked);
    const auto click = [&](unsigned long stamp) {
        const QPointF at(20, 20);
        for (QEvent::Type type : {QEvent::MouseButtonPress, QEvent::MouseButtonRelease}) {
            QMouseEvent event(type, at, button.mapToGlobal(at), Qt::LeftButton,
                              type == QEvent::MouseButtonPress ? Qt::LeftButton : Qt::NoButton,
                              Qt::NoModifier);
            event.setTimestamp(type == QEvent::MouseButtonPress ? stamp : stamp + 1);
            QApplication::sendEvent(&button, &event);
        }
    };
    click(100000);  // the double-click that opens a layer
    QCOMPARE(clicked.size(), 1);
    const int droppedBefore = guard->droppedClicks();
    guard->dropClicksDuring(500);  // the layer took half a second
    click(100200);                 // made meanwhile: dropped
    QCOMPARE(clicked.size(), 1);
    QCOMPARE(guard->droppedClicks(), droppedBefore + 2);
    click(100700);  // after: counts
    QCOMPARE(clicked.size(), 2);
}

// A map exported from a model's layer says which layer ("layer 1 · head 2 · softmax weights"), as
// the model's every-head export does; a scene of no model keeps its titles.
void TestModelWindow::exportedMapsNameTheModelLayer() {
    const auto exportTitles = [this] {
        HeatmapGrid grid;
        nameModelLayer(grid, *window_->document());
        DocumentMaps follows(window_->document(), &grid);
        grid.setView(window_->grid()->view());
        QStringList titles;
        for (const HeatmapTile& t : grid.tiles())
            titles << t.controller->title();
        return titles;
    };
    for (const QString& title : exportTitles())
        QVERIFY2(!title.contains(QStringLiteral("layer")), qPrintable(title));
    openModel();
    emit window_->modelView()->headActivated(1, 2);
    settle();
    const QStringList titles = exportTitles();
    QVERIFY(!titles.isEmpty());
    for (const QString& title : titles)
        QVERIFY2(title.startsWith(QStringLiteral("layer 1 · ")), qPrintable(title));
}

// A problem too long for one line in the model input at 1024 pixels is read whole: it takes the
// hint's room and the dock grows to its lines (it was cut off at the dock's bottom).
void TestModelWindow::longProblemIsReadWhole() {
    openModel();
    window_->resize(1024, 768);
    settle();
    const QString message = QStringLiteral(
        "gpt2-tiny: the ids 70, 71 and 99 are past the vocabulary of 64 tokens; a token id is a "
        "number from 0 to 63, as the model's embeddings have rows, and the text was not run");
    emit session()->problem(message);
    settle();
    settle();
    auto* label = window_->modelPanel()->findChild<QLabel*>(QStringLiteral("modelProblem"));
    QVERIFY(label && label->isVisible());
    QCOMPARE(window_->modelPanel()->problemText(), message);
    QVERIFY2(label->height() >= label->heightForWidth(label->width()),
             qPrintable(QStringLiteral("%1 px high, %2 needed")
                            .arg(label->height())
                            .arg(label->heightForWidth(label->width()))));
    auto* scroll = window_->findChild<QScrollArea*>(QStringLiteral("modelDockScroll"));
    QVERIFY(scroll);
    const QRect shown(label->mapTo(scroll->viewport(), QPoint(0, 0)), label->size());
    QVERIFY2(scroll->viewport()->rect().contains(shown),
             qPrintable(QStringLiteral("label at %1,%2 %3x%4 in a viewport %5x%6")
                            .arg(shown.x())
                            .arg(shown.y())
                            .arg(shown.width())
                            .arg(shown.height())
                            .arg(scroll->viewport()->width())
                            .arg(scroll->viewport()->height())));
}

void TestModelWindow::savedSceneReopensTheModel() {
    openModel();
    session()->setIds({4, 8, 15, 16, 23});
    settle();
    emit window_->modelView()->headActivated(1, 3);
    settle();
    const QString file = dir_->filePath(QStringLiteral("with-model.json"));
    QString error;
    QVERIFY2(window_->fileActions()->saveTo(file, &error), qPrintable(error));
    // The folder, relative to the scene file when near it and absolute otherwise (where the
    // temporary folder lies decides which): either way it leads to the model; never the weights.
    QFile saved(file);
    QVERIFY(saved.open(QIODevice::ReadOnly));
    const QJsonObject root = QJsonDocument::fromJson(saved.readAll()).object();
    const QJsonObject model =
        root[QLatin1String("view")].toObject()[QLatin1String("model")].toObject();
    const QString folder = model[QLatin1String("folder")].toString();
    QCOMPARE(QFileInfo(QDir(dir_->path()).filePath(folder)).canonicalFilePath(),
             QFileInfo(gpt2Tiny()).canonicalFilePath());
    QVERIFY(!folder.endsWith(QLatin1String(".safetensors")));
    // The layer's numbers are the model's: markers, not matrices.
    QCOMPARE(root["embeddings"].toObject()["from_model"], QJsonValue(true));
    QCOMPARE(root["projections"].toObject()["query"].toObject()["from_model"], QJsonValue(true));
    QCOMPARE(model[QLatin1String("layer")].toInt(), 1);
    QCOMPARE(model[QLatin1String("head")].toInt(), 3);

    window_.reset();
    window_ = std::make_unique<MainWindow>();
    window_->resize(1024, 768);
    window_->openPreset(QStringLiteral("default"));
    window_->show();
    session()->setProgressDelay(0);
    QVERIFY(window_->openSceneFile(file, &error));
    settle();
    QVERIFY2(session()->isOpen(), qPrintable(session()->problemText()));
    QCOMPARE(session()->ids(), (std::vector<long long>{4, 8, 15, 16, 23}));
    QCOMPARE(session()->layer(), 1);
    QCOMPARE(session()->head(), 3);
    QCOMPARE(window_->grid()->head(), 3);
    // Saved with the explorer in front (a head was opened): it comes back in front.
    QCOMPARE(window_->centralTabs()->currentWidget(), window_->grid());
    QCOMPARE(session()->currentRun(), session()->baseRun());
    QVERIFY(!window_->document()->isModified());
}

void TestModelWindow::autosaveKeepsTheWhatIf() {
    openModel();
    Scene::Ablation off;
    off.heads = {0, 3};
    off.byMean = true;
    window_->document()->setAblation(off);
    QVERIFY(window_->document()->setWeightValue(WeightMatrix::Value, 2, 5, 0.75));
    settle();
    const QByteArray expected = withoutView(window_->document()->scene());
    QVERIFY(window_->autosave()->writeIfChanged());
    QFile file(window_->autosave()->filePath());
    QVERIFY(file.open(QIODevice::ReadOnly));
    OrphanedAutosave orphan;
    orphan.file = file.fileName();
    orphan.contents = parseAutosave(file.readAll());
    // Kept without the model's numbers, as a saved file is; the what-ifs are in it.
    QVERIFY(orphan.contents.takesNumbersFromModel);
    QVERIFY(orphan.contents.sceneJson.contains("\"edits\""));
    const auto reference = modelReference(orphan.contents.scene.viewJson);
    QVERIFY(reference);
    QCOMPARE(reference->folder, QFileInfo(gpt2Tiny()).absoluteFilePath());
    QCOMPARE(reference->ids, session()->ids());

    // Restored in a new window: the model opens, and the scene is the one that was left.
    window_.reset();
    window_ = std::make_unique<MainWindow>();
    window_->openPreset(QStringLiteral("default"));
    window_->show();
    session()->setProgressDelay(0);
    window_->autosave()->restore(std::move(orphan));
    settle();
    QVERIFY2(session()->isOpen(), qPrintable(session()->problemText()));
    QVERIFY(withoutView(window_->document()->scene()) == expected);
    QCOMPARE(window_->document()->scene().ablation, off);
    QVERIFY(window_->document()->isModified());
    QVERIFY(session()->currentRun() != session()->baseRun());  // the what-if flows again
}

// A projector's 1024 pixels: with a model open and its tab in front, the window fits (before,
// the combos sized to their longest item and the view pushed the window to 1150 pixels).
void TestModelWindow::aModelOpenFitsA1024PixelScreen() {
    openModel(QStringLiteral(AE_TEST_DATA_DIR "/models/llama-tiny-gqa"));
    window_->centralTabs()->setCurrentWidget(window_->modelView());
    settle();
    QVERIFY2(window_->minimumSizeHint().width() <= 1024,
             qPrintable(QString::number(window_->minimumSizeHint().width())));
    // At that width every score in the heads table stays on one line, whole: a projector must
    // not show "0." over "085".
    window_->resize(window_->minimumSizeHint().width(), 768);
    settle();
    QTableView* table = window_->modelView()->summaryTable();
    QVERIFY(!table->wordWrap());
    const int needed = table->fontMetrics().horizontalAdvance(QStringLiteral("0.000")) + 6;
    for (int column = HeadSummaryModel::FirstScoreColumn;
         column <= HeadSummaryModel::lastScoreColumn(); ++column) {
        QVERIFY2(table->columnWidth(column) >= needed,
                 qPrintable(QStringLiteral("column %1: %2 px, %3 needed")
                                .arg(column)
                                .arg(table->columnWidth(column))
                                .arg(needed)));
    }
    // Every header says its name on lines that fit its column: short names here ("Prev."), the
    // full ones ("Previous token") where there is room.
    const auto headersFit = [table] {
        const QHeaderView* header = table->horizontalHeader();
        const QFontMetrics metrics(header->font());
        for (int column = HeadSummaryModel::FirstScoreColumn;
             column <= HeadSummaryModel::lastScoreColumn(); ++column) {
            const QString text =
                table->model()->headerData(column, Qt::Horizontal, Qt::DisplayRole).toString();
            for (const QString& line : text.split(QLatin1Char('\n'))) {
                if (metrics.horizontalAdvance(line) + 4 > header->sectionSize(column)) return false;
            }
        }
        return true;
    };
    const auto header = [table](int column) {
        return table->model()->headerData(column, Qt::Horizontal, Qt::DisplayRole).toString();
    };
    QVERIFY2(headersFit(), qPrintable(header(HeadSummaryModel::scoreColumn("previous_token"))));
    // Every score is read whole, in presentation mode too (its larger text read "0.…" here):
    // with fewer decimals, or in columns as wide as their numbers with the table scrolling.
    const auto scoresFit = [table]() -> QString {
        const QFontMetrics metrics(table->font());
        for (int row = 0; row < table->model()->rowCount(); ++row) {
            for (int column = HeadSummaryModel::FirstScoreColumn;
                 column <= HeadSummaryModel::lastScoreColumn(); ++column) {
                const QString text = table->model()->index(row, column).data().toString();
                if (metrics.horizontalAdvance(text) + 4 > table->columnWidth(column))
                    return QStringLiteral("row %1, column %2: \"%3\" in %4 px")
                        .arg(row)
                        .arg(column)
                        .arg(text)
                        .arg(table->columnWidth(column));
            }
        }
        return {};
    };
    QVERIFY2(scoresFit().isEmpty(), qPrintable(scoresFit()));
    QAction* presentation = window_->findChild<QAction*>(QStringLiteral("presentationAction"));
    QVERIFY(presentation);
    presentation->trigger();
    settle();
    QVERIFY2(scoresFit().isEmpty(), qPrintable(scoresFit()));
    presentation->trigger();
    settle();
    window_->resize(1900, 900);
    settle();
    QCOMPARE(header(HeadSummaryModel::scoreColumn("previous_token")),
             QStringLiteral("Previous\ntoken"));
    QVERIFY(headersFit());
}

// Each dock alone and all of them at once, opened before the model and after it: the window's
// minimum stays within a 1024-pixel screen (the walkthrough opened before the model grew the
// maximised window to 1178 pixels, pushing itself off the screen), and a window of 1024 pixels
// holds every dock shown whole.
void TestModelWindow::everyDockFitsA1024PixelScreen_data() {
    QTest::addColumn<QStringList>("docks");
    QTest::addColumn<bool>("beforeTheModel");
    const QStringList all = {"controlsDock", "tokensDock", "weightsDock",  "walkthroughDock",
                             "neuronDock",   "pinDock",    "trainingDock", "trainingModelDock"};
    for (bool before : {true, false}) {
        const char* when = before ? "before" : "after";
        for (const QString& dock : all)
            QTest::addRow("%s, %s", qPrintable(dock), when) << QStringList{dock} << before;
        QTest::addRow("all, %s", when) << all << before;
    }
}

void TestModelWindow::everyDockFitsA1024PixelScreen() {
    QFETCH(QStringList, docks);
    QFETCH(bool, beforeTheModel);
    window_->resize(1024, 768);
    const auto showDocks = [&] {
        for (QDockWidget* d : window_->findChildren<QDockWidget*>()) {
            if (d->objectName() != QLatin1String("modelDock"))
                d->setVisible(docks.contains(d->objectName()));
        }
        settle();
    };
    if (beforeTheModel) showDocks();
    openModel();
    QVERIFY(session()->isOpen());
    if (!beforeTheModel) showDocks();
    for (const QString& name : docks)
        QVERIFY2(window_->findChild<QDockWidget*>(name)->isVisible(), qPrintable(name));
    QVERIFY2(window_->minimumSizeHint().width() <= 1024,
             qPrintable(QString::number(window_->minimumSizeHint().width())));
    QVERIFY2(window_->minimumWidth() <= 1024, qPrintable(QString::number(window_->minimumWidth())));
    window_->resize(1024, 768);
    settle();
    QCOMPARE(window_->width(), 1024);
    for (QDockWidget* d : window_->findChildren<QDockWidget*>()) {
        // A dock behind another's tab is parked outside the window: only the shown ones count.
        if (!d->isVisible() || d->isFloating() || d->visibleRegion().isEmpty()) continue;
        const QRect inWindow(d->mapTo(window_.get(), QPoint(0, 0)), d->size());
        QVERIFY2(window_->rect().contains(inWindow), qPrintable(QStringLiteral("%1 at %2,%3 %4x%5")
                                                                    .arg(d->objectName())
                                                                    .arg(inWindow.x())
                                                                    .arg(inWindow.y())
                                                                    .arg(inWindow.width())
                                                                    .arg(inWindow.height())));
    }
}

// A what-if saved and opened again: the same scene, bit for bit, on the model, and nothing to
// save. Without the model the file is refused by name and the window keeps what it had.
void TestModelWindow::savedWhatIfReopensExactly() {
    // The model beside the scene file, so the file holds its folder relative to itself (the
    // layer must still be found for what the file leaves out).
    const QString folder = dir_->filePath(QStringLiteral("models/gpt2"));
    QDir().mkpath(folder);
    for (const QString& name : QDir(gpt2Tiny()).entryList(QDir::Files))
        QVERIFY(QFile::copy(QDir(gpt2Tiny()).filePath(name), QDir(folder).filePath(name)));
    openModel(folder);
    emit window_->modelView()->headActivated(1, 2);
    settle();
    QVERIFY(window_->document()->setWeightValue(WeightMatrix::Query, 1, 2, -0.5));
    window_->document()->setScale({ScaleKind::Divisor, 3.0});
    settle();
    const QByteArray expected = withoutView(window_->document()->scene());
    const QString file = dir_->filePath(QStringLiteral("what-if.json"));
    QString error;
    QVERIFY2(window_->fileActions()->saveTo(file, &error), qPrintable(error));
    QFile saved(file);
    QVERIFY(saved.open(QIODevice::ReadOnly));
    const QByteArray json = saved.readAll();
    QVERIFY(io::takesNumbersFromModel(json));
    QCOMPARE(QJsonDocument::fromJson(json)
                 .object()["view"]
                 .toObject()["model"]
                 .toObject()["folder"]
                 .toString(),
             QStringLiteral("models/gpt2"));
    QVERIFY2(json.size() * 4 < io::sceneToJson(window_->document()->scene()).size(),
             qPrintable(QStringLiteral("%1 of %2 bytes").arg(json.size()).arg(expected.size())));

    window_.reset();
    window_ = std::make_unique<MainWindow>();
    window_->openPreset(QStringLiteral("default"));
    window_->show();
    session()->setProgressDelay(0);
    QVERIFY(window_->openSceneFile(file, &error));
    settle();
    QVERIFY2(session()->isOpen(), qPrintable(session()->problemText()));
    QVERIFY(withoutView(window_->document()->scene()) == expected);
    QCOMPARE(window_->document()->fileName(), QFileInfo(file).absoluteFilePath());
    QVERIFY(!window_->document()->isModified());
    QCOMPARE(session()->layer(), 1);
    QVERIFY(session()->currentRun() != session()->baseRun());

    // The same file, with its model gone.
    QTemporaryDir elsewhere;
    QJsonObject root = QJsonDocument::fromJson(json).object();
    QJsonObject view = root["view"].toObject();
    QJsonObject model = view["model"].toObject();
    model["folder"] = elsewhere.filePath(QStringLiteral("no-such-model"));
    view["model"] = model;
    root["view"] = view;
    const QString orphanFile = dir_->filePath(QStringLiteral("orphan.json"));
    QFile out(orphanFile);
    QVERIFY(out.open(QIODevice::WriteOnly));
    out.write(QJsonDocument(root).toJson());
    out.close();
    QSignalSpy refused(session(), &ModelSession::openRefused);
    window_->openSceneFile(orphanFile, &error);
    settle();
    QCOMPARE(refused.count(), 1);
    QVERIFY2(refused.first().first().toString().contains(QStringLiteral("no-such-model")),
             qPrintable(refused.first().first().toString()));
    QVERIFY(withoutView(window_->document()->scene()) == expected);  // nothing lost
}

void TestModelWindow::clickedChipMarksBertPadding() {
    openModel(QStringLiteral(AE_TEST_DATA_DIR "/models/bert-tiny"));
    QListWidget* chips = window_->modelPanel()->chips();
    const int last = chips->count() - 1;
    emit chips->itemClicked(chips->item(last));
    settle();
    QCOMPARE(session()->attentionMask().at(static_cast<std::size_t>(last)), 0);
    QVERIFY(window_->document()->scene().mask.padding.at(static_cast<std::size_t>(last)));
    QVERIFY(window_->modelPanel()->chips()->item(last)->font().strikeOut());
    // Again: unmarked, and the mask is gone.
    emit chips->itemClicked(window_->modelPanel()->chips()->item(last));
    settle();
    QVERIFY(session()->attentionMask().empty());
}

void TestModelWindow::movedModelIsReportedInTheWindow() {
    QTemporaryDir models;
    const QString folder = models.filePath(QStringLiteral("gpt2"));
    QDir().mkpath(folder);
    for (const QString& name : QDir(gpt2Tiny()).entryList(QDir::Files))
        QFile::copy(QDir(gpt2Tiny()).filePath(name), QDir(folder).filePath(name));
    openModel(folder);
    const QString file = dir_->filePath(QStringLiteral("moved.json"));
    QVERIFY(window_->fileActions()->saveTo(file));
    QVERIFY(QDir(folder).removeRecursively());
    // Another day, another window: the folder is gone.
    window_.reset();
    window_ = std::make_unique<MainWindow>();
    window_->resize(1024, 768);
    window_->openPreset(QStringLiteral("default"));
    window_->show();
    session()->setProgressDelay(0);
    QSignalSpy refused(session(), &ModelSession::openRefused);
    QVERIFY(window_->fileActions()->open(file));
    settle();
    QCOMPARE(refused.count(), 1);
    const QString message = refused.first().first().toString();
    QVERIFY2(message.contains(QLatin1String("not there")) &&
                 message.contains(QLatin1String("cannot be shown without it")),
             qPrintable(message));
    QVERIFY(!session()->isOpen());
    QCOMPARE(window_->centralWidget(), window_->grid());
    // The file holds only what was changed in the layer, not the model's numbers: the window
    // keeps the scene it had (the default, six tokens), working.
    QCOMPARE(window_->document()->scene().queryCount(), 6);
    QVERIFY(window_->document()->errorText().isEmpty());
}

namespace {

// Two test built-in models: copies of gpt2-tiny, one with an about.json, one without, in a
// temporary folder AE_MODELS_PATH names while this lives.
struct TestBuiltIns {
    QTemporaryDir dir;
    TestBuiltIns() {
        for (const char* name : {"tiny-test", "plain-test"}) {
            const QString folder = dir.filePath(QLatin1String(name));
            QDir().mkpath(folder);
            for (const QString& file : QDir(gpt2Tiny()).entryList(QDir::Files))
                QFile::copy(QDir(gpt2Tiny()).filePath(file), QDir(folder).filePath(file));
        }
        QFile about(dir.filePath(QStringLiteral("tiny-test/about.json")));
        if (about.open(QIODevice::WriteOnly)) {
            about.write(R"({"title": "A tiny test model",
                            "note": "Two layers of four heads; look at layer 1, head 2.",
                            "ids": [3, 1, 4, 1, 5], "layer": 1, "head": 2})");
        }
        qputenv("AE_MODELS_PATH", dir.path().toLocal8Bit());
    }
    ~TestBuiltIns() { qunsetenv("AE_MODELS_PATH"); }
};

}  // namespace

void TestModelWindow::builtInModelOpensFromTheMenu() {
    const TestBuiltIns builtIns;
    auto* menu = window_->findChild<QMenu*>(QStringLiteral("builtInModelsMenu"));
    QVERIFY(menu);
    emit menu->aboutToShow();
    const QList<QAction*> actions = menu->actions();
    QCOMPARE(actions.size(), 2);  // by name: plain-test, tiny-test
    QCOMPARE(actions[0]->text(), QStringLiteral("plain-test"));
    QCOMPARE(actions[1]->text(), QStringLiteral("A tiny test model (tiny-test)"));
    QVERIFY(window_->document()->setHeads(2));  // unsaved: asked first, as every opening does
    actions[1]->trigger();
    settle();
    QCOMPARE(asked_.size(), 1);
    QVERIFY2(session()->isOpen(), qPrintable(session()->problemText()));
    QCOMPARE(session()->builtInName(), QStringLiteral("tiny-test"));
    QCOMPARE(session()->layer(), 1);
    QCOMPARE(session()->head(), 2);
    // The grid's current head, which the query–key map draws, is the head opened.
    QCOMPARE(window_->modelView()->grid()->currentHead(), (std::pair<int, int>{1, 2}));
    window_->centralTabs()->setCurrentWidget(window_->modelView());
    QCOMPARE(queryKeyTitle(window_->modelView()->queryKeyPanel()),
             QStringLiteral("L1 H2: queries and keys"));
    QCOMPARE(window_->fileActions()->recentModels().value(0), QStringLiteral("builtin:tiny-test"));

    // Saved, it names the model; opened again (here, after another scene), it opens it by name.
    const QString file = dir_->filePath(QStringLiteral("builtin.json"));
    QVERIFY(window_->fileActions()->saveTo(file));
    QFile saved(file);
    QVERIFY(saved.open(QIODevice::ReadOnly));
    const QJsonObject view = QJsonDocument::fromJson(saved.readAll()).object()["view"].toObject();
    const auto reference =
        modelReference(QJsonDocument(view).toJson(QJsonDocument::Compact).toStdString());
    QVERIFY(reference);
    QCOMPARE(reference->builtIn, QStringLiteral("tiny-test"));
    QVERIFY(reference->folder.isEmpty());
    window_->fileActions()->openPreset(QStringLiteral("default"));
    settle();
    QVERIFY(!session()->isOpen());
    QString error;
    QVERIFY2(window_->openSceneFile(file, &error), qPrintable(error));
    settle();
    QVERIFY2(session()->isOpen(), qPrintable(session()->problemText()));
    QCOMPARE(session()->builtInName(), QStringLiteral("tiny-test"));
    QCOMPARE(session()->ids(), (std::vector<long long>{3, 1, 4, 1, 5}));
    QCOMPARE(session()->head(), 2);
    QVERIFY(!window_->document()->isModified());
}

void TestModelWindow::galleryShowsEachBuiltInModel() {
    const TestBuiltIns builtIns;
    ExamplesGallery* gallery = window_->classroom()->gallery();
    QListWidget* list = gallery->list();
    const int presets = galleryExamples().size();
    QCOMPARE(list->count(), presets + 2);
    QCOMPARE(list->item(presets)->text(), QStringLiteral("Model: plain-test"));
    QCOMPARE(list->item(presets + 1)->text(), QStringLiteral("Model: A tiny test model"));
    list->setCurrentRow(presets + 1);
    auto* notice = gallery->findChild<QLabel*>(QStringLiteral("examplesNotice"));
    QVERIFY(notice);
    QVERIFY2(notice->text().contains(QLatin1String("look at layer 1, head 2")) &&
                 notice->text().contains(QLatin1String("builtin:tiny-test")),
             qPrintable(notice->text()));
    // Without an about.json the note says what a built-in model is.
    list->setCurrentRow(presets);
    QVERIFY(notice->text().contains(QLatin1String("whole model")));
    // Opening the entry opens the model, as File › Open built-in model does.
    list->setCurrentRow(presets + 1);
    gallery->openSelected();
    settle();
    QVERIFY2(session()->isOpen(), qPrintable(session()->problemText()));
    QCOMPARE(session()->builtInName(), QStringLiteral("tiny-test"));
    // A preset entry still opens its preset.
    list->setCurrentRow(0);
    gallery->openSelected();
    settle();
    QVERIFY(!session()->isOpen());
}

QTEST_MAIN(TestModelWindow)
#include "test_model_window.moc"
