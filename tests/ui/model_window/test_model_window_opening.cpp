// Opening a whole model in the window: File › Open model asks about unsaved changes, opens in the
// background and shows the model's input and view; a refused folder is shown and the window keeps
// working. Built-in models (here test ones, in a folder AE_MODELS_PATH names) open from
// File › Open built-in model and the examples gallery, and a scene saved on one reopens it by
// name.

#include <QAction>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QProgressBar>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>

#include "document/attention_document.h"
#include "document/model_session.h"
#include "io/model/builtin_models.h"
#include "io/scene/scene_file.h"
#include "plot/head_grid.h"
#include "plot/heatmap_grid.h"
#include "plot/model_panels.h"
#include "plot/model_view.h"
#include "qcustomplot.h"
#include "support/model_copy.h"
#include "support/model_window_fixture.h"
#include "ui/classroom/classroom.h"
#include "ui/classroom/examples_gallery.h"
#include "ui/files/export_dialog.h"
#include "ui/files/file_actions.h"
#include "ui/window/main_window.h"
#include "ui/window/model_panel.h"
#include "ui/window/workbench_panel.h"

using namespace ae;
using namespace ae::ui;
using namespace ae::document;
using namespace ae::plot;
using test::gpt2Tiny;

namespace {

// The query–key map's title (drawn first if it waits behind its tab).
QString queryKeyTitle(QueryKeyPanel* panel) {
    panel->drawIfStale();
    return static_cast<QCPTextElement*>(panel->plot()->plotLayout()->element(0, 0))->text();
}

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

// A Hugging Face cache in a temporary folder HF_HUB_CACHE names while this lives: gpt2-tiny as
// models--test--gpt2-tiny (its snapshot's files symlinks to blobs, as the hub writes them) and a
// model of a family the app does not run.
struct TestHubCache {
    QTemporaryDir dir;
    QString snapshot;
    TestHubCache() {
        const QDir entry(dir.filePath(QStringLiteral("models--test--gpt2-tiny")));
        snapshot = entry.filePath(QStringLiteral("snapshots/abc123"));
        QDir().mkpath(entry.filePath(QStringLiteral("blobs")));
        QDir().mkpath(snapshot);
        for (const QString& file : QDir(gpt2Tiny()).entryList(QDir::Files)) {
            QFile::copy(QDir(gpt2Tiny()).filePath(file), entry.filePath("blobs/" + file));
            QFile::link("../../blobs/" + file, QDir(snapshot).filePath(file));
        }
        const QString other = dir.filePath(QStringLiteral("models--test--mamba/snapshots/def456"));
        QDir().mkpath(other);
        QFile config(QDir(other).filePath(QStringLiteral("config.json")));
        if (config.open(QIODevice::WriteOnly)) config.write(R"({"model_type": "mamba"})");
        qputenv("HF_HUB_CACHE", dir.path().toLocal8Bit());
    }
    ~TestHubCache() { qunsetenv("HF_HUB_CACHE"); }
};

}  // namespace

class TestModelWindowOpening : public QObject, private test::ModelWindowFixture {
    Q_OBJECT
private slots:
    void initTestCase() {
        test::startModelWindowTests(QStringLiteral("test_model_window_opening"));
    }
    void init() { openWindow(); }
    void cleanup() { closeWindow(); }
    void openModelAsksAboutUnsavedChanges();
    void openedModelShowsItsInput();
    void refusalIsShownAndWindowKeepsWorking();
    void builtInModelOpensFromTheMenu();
    void hubCacheModelOpensFromTheMenu();
    void runCountsItsLayers();
    void openingShowsTheModelBeforeItsValuesAreRead();
    void nonFiniteWeightIsRefusedAfterTheHeaders();
    void galleryShowsEachBuiltInModel();
};

void TestModelWindowOpening::openModelAsksAboutUnsavedChanges() {
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

void TestModelWindowOpening::openedModelShowsItsInput() {
    openModel();
    QCOMPARE(window_->centralWidget(), window_->centralTabs());
    QCOMPARE(window_->centralTabs()->count(), 3);  // Explorer, Model, Workbench
    QCOMPARE(window_->centralTabs()->tabText(2), QStringLiteral("Workbench"));
    QVERIFY(window_->centralTabs()->widget(2)->isAncestorOf(window_->workbench()));
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

void TestModelWindowOpening::refusalIsShownAndWindowKeepsWorking() {
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

void TestModelWindowOpening::builtInModelOpensFromTheMenu() {
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

void TestModelWindowOpening::hubCacheModelOpensFromTheMenu() {
    auto* menu = window_->findChild<QMenu*>(QStringLiteral("hubCacheMenu"));
    QVERIFY(menu);
    {
        // An empty cache says where it looked.
        QTemporaryDir empty;
        qputenv("HF_HUB_CACHE", empty.path().toLocal8Bit());
        emit menu->aboutToShow();
        QCOMPARE(menu->actions().size(), 1);
        QVERIFY(!menu->actions()[0]->isEnabled());
        QVERIFY2(menu->actions()[0]->text().contains(QDir::toNativeSeparators(empty.path())),
                 qPrintable(menu->actions()[0]->text()));
        qunsetenv("HF_HUB_CACHE");
    }
    const TestHubCache hub;
    emit menu->aboutToShow();
    const QList<QAction*> actions = menu->actions();
    QCOMPARE(actions.size(), 2);  // by name: test/gpt2-tiny, test/mamba
    // Name, family, dtype and size on disk.
    QVERIFY2(actions[0]->text().startsWith(QStringLiteral("test/gpt2-tiny  (gpt2, F32, ")),
             qPrintable(actions[0]->text()));
    QVERIFY(actions[0]->isEnabled());
    // The unsupported family is disabled and says why, as opening it would.
    QVERIFY(!actions[1]->isEnabled());
    QVERIFY2(
        actions[1]->text().startsWith(QStringLiteral("test/mamba  (mamba) — cannot open: ")) &&
            actions[1]->text().contains(QLatin1String("model_type \"mamba\" is not supported")),
        qPrintable(actions[1]->text()));
    QCOMPARE(actions[1]->toolTip(), actions[1]->text().section(QStringLiteral("cannot open: "), 1));

    actions[0]->trigger();
    settle();
    QVERIFY2(session()->isOpen(), qPrintable(session()->problemText()));
    QCOMPARE(window_->fileActions()->recentModels().value(0),
             QFileInfo(hub.snapshot).absoluteFilePath());
}

// A pass reports each layer as it finishes, in order, to the progress bar, which the Cancel
// beside it stops between two layers.
void TestModelWindowOpening::runCountsItsLayers() {
    QSignalSpy layers(session(), &document::ModelSession::layerProgress);
    openModel();
    const int count = session()->model()->config.layers;
    QVERIFY(layers.count() >= count);
    for (int l = 0; l < count; ++l) {
        QCOMPARE(layers[l][0].toInt(), l + 1);
        QCOMPARE(layers[l][1].toInt(), count);
    }
    // A typed input runs again and counts again; the bar is back to busy once nothing runs.
    layers.clear();
    session()->setIds({3, 1, 4, 1, 5, 9});
    settle();
    QCOMPARE(layers.count(), count);
    auto* bar = window_->findChild<QProgressBar*>(QStringLiteral("modelProgress"));
    QVERIFY(bar);
    QVERIFY(!bar->isVisible());
    QCOMPARE(bar->maximum(), 0);
}

// Opening reads the headers only before it shows the model: the Model tab is up with a blank
// frame for every layer while the values are checked and the first pass runs, and the signals come
// in that order (the shape, the check to its end, then the layers).
void TestModelWindowOpening::openingShowsTheModelBeforeItsValuesAreRead() {
    std::vector<QString> order;
    int framedLayers = -1, filledWhenFramed = -1;
    bool modelTabWhenFramed = false;
    double lastFraction = -1;
    connect(session(), &ModelSession::passStarting, this, [&](int layers, int heads, int tokens) {
        order.push_back(QStringLiteral("starting %1 %2 %3").arg(layers).arg(heads).arg(tokens));
        HeadGrid* grid = window_->modelView()->grid();
        framedLayers = grid->layers();
        filledWhenFramed = grid->layersFilled();
        auto* centre = window_->findChild<QTabWidget*>();
        modelTabWhenFramed =
            centre && centre->isVisible() && centre->currentWidget() == window_->modelView();
    });
    connect(session(), &ModelSession::valuesChecking, this, [&](double fraction) {
        if (order.empty() || order.back() != QLatin1String("checking"))
            order.push_back(QStringLiteral("checking"));
        QVERIFY(fraction >= lastFraction);
        lastFraction = fraction;
    });
    connect(session(), &ModelSession::layerProgress, this,
            [&](int done, int) { order.push_back(QStringLiteral("layer %1").arg(done)); });
    QVERIFY(window_->fileActions()->openModel(gpt2Tiny()));
    settle();
    QVERIFY(session()->isOpen());
    const model::Config& c = session()->model()->config;
    const int tokens = static_cast<int>(session()->ids().size());
    QVERIFY(order.size() >= 3);
    QCOMPARE(order[0], QStringLiteral("starting %1 %2 %3").arg(c.layers).arg(c.heads).arg(tokens));
    QCOMPARE(order[1], QStringLiteral("checking"));
    QCOMPARE(order[2], QStringLiteral("layer 1"));
    QCOMPARE(lastFraction, 1.0);
    QCOMPARE(framedLayers, c.layers);
    QCOMPARE(filledWhenFramed, 0);
    QVERIFY(modelTabWhenFramed);
    QCOMPARE(window_->modelView()->grid()->layersFilled(), -1);  // the finished run's picture
}

// A value found bad by the check after the model was shown: refused with the tensor's one line,
// and the window goes back to the scene it had, still working.
void TestModelWindowOpening::nonFiniteWeightIsRefusedAfterTheHeaders() {
    testing::ModelCopy broken("qwen3-tiny");
    broken.editTensors([](std::vector<testing::TestTensor>& t) {
        for (testing::TestTensor& x : t) {
            if (x.name == "model.layers.1.self_attn.k_norm.weight") {
                const float nan = std::numeric_limits<float>::quiet_NaN();
                std::memcpy(x.bytes.data() + 12, &nan, 4);
            }
        }
    });
    const QByteArray before = io::sceneToJson(window_->document()->scene());
    QSignalSpy starting(session(), &ModelSession::passStarting);
    QSignalSpy refused(session(), &ModelSession::openRefused);
    openModel(broken.dir);
    QCOMPARE(starting.count(), 1);
    QCOMPARE(refused.count(), 1);
    const QString message = refused.first().first().toString();
    QVERIFY2(message.contains(QLatin1String("tensor model.layers.1.self_attn.k_norm.weight [16] "
                                            "has a non-finite value at element 3")),
             qPrintable(message));
    QVERIFY(!session()->isOpen());
    QCOMPARE(window_->centralWidget(), static_cast<QWidget*>(window_->grid()));
    QCOMPARE(io::sceneToJson(window_->document()->scene()), before);
    QVERIFY(window_->document()->setHeads(2));
    window_->document()->waitForResults();
    QVERIFY(window_->document()->errorText().isEmpty());
    // A model open before stays open, its picture back in the Model tab.
    openModel();
    QVERIFY(session()->isOpen());
    const auto run = session()->currentRun();
    openModel(broken.dir);
    QCOMPARE(refused.count(), 2);
    QVERIFY(session()->isOpen());
    QCOMPARE(session()->currentRun(), run);
    QCOMPARE(window_->modelView()->grid()->layersFilled(), -1);
    QCOMPARE(window_->modelView()->grid()->layers(), run->config.layers);
}

void TestModelWindowOpening::galleryShowsEachBuiltInModel() {
    const TestBuiltIns builtIns;
    ExamplesGallery* gallery = window_->classroom()->gallery();
    QListWidget* list = gallery->list();
    const int presets = galleryExamples().size();
    QCOMPARE(list->count(), presets + 2 + workbenchExamples().size());
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

QTEST_MAIN(TestModelWindowOpening)
#include "test_model_window_opening.moc"
