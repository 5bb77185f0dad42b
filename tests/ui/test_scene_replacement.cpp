// Nothing the user made is lost when another scene comes in. Every path that replaces the scene
// and clears Undo (the examples gallery, File › Open preset, Open, Open recent, a dropped file)
// asks about unsaved changes through the one question FileActions::maybeSave() asks: Cancel
// keeps the scene and its undo history, Discard replaces both. Imports and training Reset are undo
// steps instead: they ask nothing, and Undo gives back the scene as it was.

#include <QApplication>
#include <QDropEvent>
#include <QListWidget>
#include <QMenu>
#include <QMimeData>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QUrl>
#include <QtTest>
#include <functional>
#include <memory>

#include "document/attention_document.h"
#include "io/formats/result_export.h"
#include "io/scene/scene_file.h"
#include "ui/classroom/classroom.h"
#include "ui/classroom/examples_gallery.h"
#include "ui/files/file_actions.h"
#include "ui/training/training_panel.h"
#include "ui/window/main_window.h"

using namespace ae;
using namespace ae::ui;

class TestSceneReplacement : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void init();
    void cleanup();
    void galleryAsksFirst();
    void openPresetAsksFirst();
    void openFileAsksFirst();
    void openRecentAsksFirst();
    void droppedFileAsksFirst();
    void saveAnswerSavesBeforeReplacing();
    void cleanSceneIsReplacedWithoutAsking();
    void importIsAnUndoStepAndDoesNotAsk();
    void trainingResetIsAnUndoStepAndDoesNotAsk();
    void trainingEndsWhenAnotherSceneOpens();

private:
    // Runs `replace` twice on a scene with unsaved changes: answered Cancel, then Discard.
    // Checks that the question was asked each time, that Cancel kept the scene and its undo
    // history, and that Discard put in a scene titled `expectedTitle` with an empty history.
    void checkAsksFirst(const std::function<void()>& replace, const QString& expectedTitle);
    // One unsaved edit on the open scene: the head count from 4 to 2.
    void makeUnsavedEdit();
    QString writeScene(const QString& preset);
    QByteArray sceneJson() const { return io::sceneToJson(window_->document()->scene()); }
    QUndoStack* undoStack() const { return window_->document()->undoStack(); }

    std::unique_ptr<QTemporaryDir> dir_;
    std::unique_ptr<MainWindow> window_;
    QList<QString> asked_;  // the scene names the question named, in order
    UnsavedChoice answer_ = UnsavedChoice::Cancel;
};

void TestSceneReplacement::initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("attention-explorer-tests"));
    QCoreApplication::setApplicationName(QStringLiteral("test_scene_replacement"));
    QApplication::setFont(QFont(QStringLiteral("DejaVu Sans"), 9));
}

void TestSceneReplacement::init() {
    QSettings().clear();
    dir_ = std::make_unique<QTemporaryDir>();
    QVERIFY(dir_->isValid());
    qputenv("AE_AUTOSAVE_DIR", dir_->filePath(QStringLiteral("autosave")).toLocal8Bit());
    window_ = std::make_unique<MainWindow>();
    window_->openPreset(QStringLiteral("default"));
    asked_.clear();
    window_->fileActions()->setUnsavedQuestion([this](const QString& name) {
        asked_ << name;
        return answer_;
    });
}

void TestSceneReplacement::cleanup() {
    window_.reset();
    dir_.reset();
}

void TestSceneReplacement::makeUnsavedEdit() {
    QCOMPARE(window_->document()->scene().heads, 4);
    QVERIFY(window_->document()->setHeads(2));
    QVERIFY(window_->document()->isModified());
}

QString TestSceneReplacement::writeScene(const QString& preset) {
    const QString file = dir_->filePath(preset + QStringLiteral(".json"));
    QFile out(file);
    if (!out.open(QIODevice::WriteOnly) || out.write(io::presetJson(preset)) < 0) return {};
    return file;
}

void TestSceneReplacement::checkAsksFirst(const std::function<void()>& replace,
                                          const QString& expectedTitle) {
    makeUnsavedEdit();
    const QByteArray edited = sceneJson();
    const int steps = undoStack()->count();
    const QString fileName = window_->document()->fileName();

    answer_ = UnsavedChoice::Cancel;
    replace();
    QCOMPARE(asked_.size(), 1);
    QCOMPARE(sceneJson(), edited);
    QCOMPARE(undoStack()->count(), steps);
    QVERIFY(window_->document()->isModified());
    QCOMPARE(window_->document()->fileName(), fileName);
    undoStack()->undo();  // the history is whole: the edit can still be taken back
    QCOMPARE(window_->document()->scene().heads, 4);
    undoStack()->redo();

    answer_ = UnsavedChoice::Discard;
    replace();
    QCOMPARE(asked_.size(), 2);
    QCOMPARE(QString::fromStdString(window_->document()->scene().title), expectedTitle);
    QCOMPARE(undoStack()->count(), 0);
    QVERIFY(!window_->document()->isModified());
}

void TestSceneReplacement::galleryAsksFirst() {
    ExamplesGallery* gallery = window_->classroom()->gallery();
    const QList<QListWidgetItem*> items = gallery->list()->findItems(
        QStringLiteral("Cross-attention: English reads French"), Qt::MatchExactly);
    QCOMPARE(items.size(), 1);
    gallery->list()->setCurrentItem(items.first());
    const QString title = QString::fromStdString(io::loadPreset("cross-sentences").title);
    checkAsksFirst([gallery] { gallery->openSelected(); }, title);
    QVERIFY(window_->document()->scene().hasSource);
    QCOMPARE(asked_.first(), QStringLiteral("This scene"));  // untitled: not a file name
}

void TestSceneReplacement::openPresetAsksFirst() {
    const QString title = QString::fromStdString(io::loadPreset("journey").title);
    checkAsksFirst([this] { window_->fileActions()->openPreset(QStringLiteral("journey")); },
                   title);
    // The menu entry is that same path.
    window_->openPreset(QStringLiteral("default"));
    makeUnsavedEdit();
    answer_ = UnsavedChoice::Cancel;
    QAction* entry = nullptr;
    for (QAction* a : window_->findChildren<QAction*>()) {
        if (a->text().startsWith(QLatin1String("four-words"))) entry = a;
    }
    QVERIFY(entry);
    entry->trigger();
    QCOMPARE(asked_.size(), 3);
    QCOMPARE(window_->document()->scene().heads, 2);  // cancelled: still the edited scene
}

void TestSceneReplacement::openFileAsksFirst() {
    QVERIFY(window_->openSceneFile(writeScene(QStringLiteral("default"))));
    const QString other = writeScene(QStringLiteral("journey"));
    const QString title = QString::fromStdString(io::loadPreset("journey").title);
    checkAsksFirst([this, other] { window_->fileActions()->open(other); }, title);
    QCOMPARE(asked_.first(), QStringLiteral("default.json"));
    QCOMPARE(window_->document()->fileName(), other);
}

void TestSceneReplacement::openRecentAsksFirst() {
    const QString recent = writeScene(QStringLiteral("journey"));
    QVERIFY(window_->openSceneFile(recent));
    window_->openPreset(QStringLiteral("default"));
    QCOMPARE(window_->fileActions()->recentFiles().value(0), QFileInfo(recent).absoluteFilePath());
    QMenu* menu = nullptr;
    for (QMenu* m : window_->findChildren<QMenu*>()) {
        if (m->title() == QLatin1String("Open &recent")) menu = m;
    }
    QVERIFY(menu);
    const auto openFirstRecent = [menu] {
        emit menu->aboutToShow();  // fills the menu, as opening it does
        QVERIFY(!menu->actions().isEmpty());
        menu->actions().first()->trigger();
    };
    const QString title = QString::fromStdString(io::loadPreset("journey").title);
    checkAsksFirst(openFirstRecent, title);
}

void TestSceneReplacement::droppedFileAsksFirst() {
    const QString dropped = writeScene(QStringLiteral("four-words"));
    QVERIFY(window_->acceptDrops());
    const auto drop = [this, dropped] {
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(dropped)});
        QDropEvent event(QPointF(20, 20), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        // A synthetic QDropEvent sent to the window never reached its filter here (no drag is
        // running), so the filter is called as Qt calls it during a real drop.
        QObject* handler = window_->fileActions();
        QVERIFY(handler->eventFilter(window_.get(), &event));
    };
    const QString title = QString::fromStdString(io::loadPreset("four-words").title);
    checkAsksFirst(drop, title);
    QCOMPARE(window_->document()->fileName(), dropped);
}

void TestSceneReplacement::saveAnswerSavesBeforeReplacing() {
    const QString file = writeScene(QStringLiteral("default"));
    QVERIFY(window_->openSceneFile(file));
    makeUnsavedEdit();
    answer_ = UnsavedChoice::Save;
    QVERIFY(window_->fileActions()->openPreset(QStringLiteral("journey")));
    QCOMPARE(asked_.size(), 1);
    QCOMPARE(io::loadSceneFile(file).heads, 2);  // the edit reached the file
    QCOMPARE(window_->document()->scene().title, io::loadPreset("journey").title);
}

void TestSceneReplacement::cleanSceneIsReplacedWithoutAsking() {
    QVERIFY(window_->fileActions()->openPreset(QStringLiteral("journey")));
    QVERIFY(window_->fileActions()->open(writeScene(QStringLiteral("four-words"))));
    QCOMPARE(asked_.size(), 0);
    QCOMPARE(window_->document()->scene().title, io::loadPreset("four-words").title);
}

void TestSceneReplacement::importIsAnUndoStepAndDoesNotAsk() {
    makeUnsavedEdit();
    const QByteArray edited = sceneJson();
    const Scene& scene = window_->document()->scene();
    const MatrixD embeddings = MatrixD::Constant(scene.queryCount(), scene.dModel(), 0.5);
    const QString file = dir_->filePath(QStringLiteral("embeddings.csv"));
    QFile out(file);
    QVERIFY(out.open(QIODevice::WriteOnly));
    out.write(io::csvBytes(embeddings));
    out.close();
    QString error;
    QVERIFY2(window_->fileActions()->importEmbeddings(file, {}, &error), qPrintable(error));
    QCOMPARE(asked_.size(), 0);
    QVERIFY(window_->document()->scene().embeddings.isApprox(embeddings));
    QCOMPARE(undoStack()->count(), 2);  // the edit, then the import
    undoStack()->undo();
    QCOMPARE(sceneJson(), edited);
    undoStack()->undo();
    QCOMPARE(window_->document()->scene().heads, 4);
}

void TestSceneReplacement::trainingResetIsAnUndoStepAndDoesNotAsk() {
    auto* panel = window_->findChild<TrainingPanel*>();
    QVERIFY(panel);
    makeUnsavedEdit();
    const QByteArray beforeTraining = sceneJson();
    panel->step();
    QTRY_COMPARE(undoStack()->count(), 2);  // the edit, then the training step
    const QByteArray trained = sceneJson();
    QVERIFY(trained != beforeTraining);
    panel->reset();
    QCOMPARE(asked_.size(), 0);
    QCOMPARE(sceneJson(), beforeTraining);
    QCOMPARE(undoStack()->count(), 3);
    undoStack()->undo();  // the trained weights come back
    QCOMPARE(sceneJson(), trained);
    undoStack()->undo();
    undoStack()->undo();
    QCOMPARE(window_->document()->scene().heads, 4);
}

// Reset used to put the scene training started from (the old file's) into the newly opened one,
// and a run still going kept writing the old scene's snapshots over it.
void TestSceneReplacement::trainingEndsWhenAnotherSceneOpens() {
    auto* panel = window_->findChild<TrainingPanel*>();
    QVERIFY(panel);
    panel->step();
    QTRY_COMPARE(undoStack()->count(), 1);
    answer_ = UnsavedChoice::Discard;
    QVERIFY(window_->fileActions()->openPreset(QStringLiteral("journey")));
    QCOMPARE(asked_.size(), 1);  // the trained weights were unsaved changes
    const QByteArray journey = sceneJson();
    panel->reset();
    QCOMPARE(sceneJson(), journey);
    QCOMPARE(undoStack()->count(), 0);

    panel->play();
    QTRY_VERIFY(panel->lossPointCount() > 0);
    QVERIFY(window_->fileActions()->openPreset(QStringLiteral("four-words")));
    QVERIFY(!panel->isRunning());
    const QByteArray fourWords = sceneJson();
    QTest::qWait(300);  // time for snapshots of the old run to arrive, if any were still sent
    QCOMPARE(sceneJson(), fourWords);
    QCOMPARE(undoStack()->count(), 0);
    QCOMPARE(panel->lossPointCount(), 0);
}

QTEST_MAIN(TestSceneReplacement)
#include "test_scene_replacement.moc"
