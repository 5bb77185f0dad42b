// What the window does with a whole model open: a head activated in the model view becomes the
// explorer's scene (one undo step), typed ids run, the heads-off control is a what-if that flows
// through the model, the selected position has one owner, a clicked chip marks BERT padding,
// clicks queued while a layer opens are dropped, and exported maps name the model's layer.

#include <QApplication>
#include <QFont>
#include <QFontMetrics>
#include <QLineEdit>
#include <QListWidget>
#include <QMouseEvent>
#include <QPushButton>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableWidget>
#include <QToolButton>
#include <QUndoStack>
#include <QtTest>
#include <algorithm>

#include "core/model/model_analysis.h"
#include "document/attention_document.h"
#include "document/model_session.h"
#include "plot/heatmap_controller.h"
#include "plot/heatmap_grid.h"
#include "plot/model_panels.h"
#include "plot/model_view.h"
#include "support/model_window_fixture.h"
#include "ui/editors/controls_panel.h"
#include "ui/files/batch_export.h"
#include "ui/window/document_maps.h"
#include "ui/window/main_window.h"
#include "ui/window/model_panel.h"
#include "ui/window/stale_click_guard.h"

using namespace ae;
using namespace ae::ui;
using namespace ae::document;
using namespace ae::plot;
using test::gpt2Tiny;

class TestModelWindowInteraction : public QObject, private test::ModelWindowFixture {
    Q_OBJECT
private slots:
    void initTestCase() {
        test::startModelWindowTests(QStringLiteral("test_model_window_interaction"));
    }
    void init() { openWindow(); }
    void cleanup() { closeWindow(); }
    void activatedHeadOpensTheLayer();
    void typedIdsRun();
    void headSwitchedOffFlowsThroughTheModel();
    void clicksQueuedWhileALayerOpensAreDropped();
    void exportedMapsNameTheModelLayer();
    void predictionsPositionAgreesAfterEveryChange();
    void clickedChipMarksBertPadding();
};

void TestModelWindowInteraction::activatedHeadOpensTheLayer() {
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

void TestModelWindowInteraction::typedIdsRun() {
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

void TestModelWindowInteraction::headSwitchedOffFlowsThroughTheModel() {
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

// Clicks stamped while a head's layer was being opened (the window busy) are dropped instead of
// landing on the maps that opening put under the pointer; clicks after it count.
void TestModelWindowInteraction::clicksQueuedWhileALayerOpensAreDropped() {
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
void TestModelWindowInteraction::exportedMapsNameTheModelLayer() {
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

// One owner of the selected position (the session): the position box, the list's heading, the
// list itself and the rollout's row agree after a longer text, a position picked by hand, a
// shorter text and an undo. The view used to keep its own position (the last token of the first
// text) while the session computed the list for the new last token.
void TestModelWindowInteraction::predictionsPositionAgreesAfterEveryChange() {
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

void TestModelWindowInteraction::clickedChipMarksBertPadding() {
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

QTEST_MAIN(TestModelWindowInteraction)
#include "test_model_window_interaction.moc"
