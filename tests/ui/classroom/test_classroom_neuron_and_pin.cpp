// The neuron view (every number the engine's, also after an embedding edit) and pin and compare
// (the difference map is exactly current − pinned; F5 toggles, only Re-pin re-pins).

#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QUndoStack>
#include <QtTest>
#include <cmath>

#include "document/attention_document.h"
#include "plot/heatmap_controller.h"
#include "plot/heatmap_grid.h"
#include "support/classroom_fixture.h"
#include "support/map_equals.h"
#include "ui/classroom/classroom.h"
#include "ui/classroom/comparison_views.h"
#include "ui/classroom/neuron_view.h"
#include "ui/window/main_window.h"

using namespace ae;
using namespace ae::ui;
using namespace ae::document;
using namespace ae::plot;
using test::cell;

class TestClassroomNeuronAndPin : public QObject, private test::ClassroomFixture {
    Q_OBJECT
private slots:
    void initTestCase() { test::startClassroomTests(); }
    void init() { openWindow(); }
    void cleanup() { closeWindow(); }
    void neuronViewEqualsEngine();
    void differenceIsExactlyCurrentMinusPinned();
    void f5TogglesAndOnlyRepinRepins();

private:
    void checkNeuronView();
};

void TestClassroomNeuronAndPin::checkNeuronView() {
    NeuronView* view = classroom()->neuronView();
    const int h = view->head(), i = view->query();
    const EngineF& e = engine();
    const EngineF::Matrix q = e.headQuery(h).row(i);
    const EngineF::ConstBlock k = e.headKey(h), v = e.headValue(h);
    const int lk = e.scene().keyCount(), dh = e.dHead();
    EngineF::Matrix products(lk, dh), weighted(lk, dh);
    for (int j = 0; j < lk; ++j) {
        for (int c = 0; c < dh; ++c) {
            products(j, c) = q(0, c) * k(j, c);
            weighted(j, c) = e.weights(h)(i, j) * v(j, c);
        }
    }
    VERIFY_MAP(view->queryMap(), q);
    VERIFY_MAP(view->keysMap(), k);
    VERIFY_MAP(view->productMap(), products);
    VERIFY_MAP(view->weightedMap(), weighted);
    const EngineF::Matrix context = e.context(h).row(i);
    VERIFY_MAP(view->contextMap(), context);
    QTableWidget* table = view->scoreTable();
    QCOMPARE(table->rowCount(), lk);
    for (int j = 0; j < lk; ++j) {
        QCOMPARE(table->item(j, 1)->data(Qt::UserRole).toFloat(), e.scores(h)(i, j));
        QCOMPARE(table->item(j, 2)->data(Qt::UserRole).toFloat(), e.scaled(h)(i, j));
        QCOMPARE(table->item(j, 3)->data(Qt::UserRole).toFloat(), e.weights(h)(i, j));
        // The strip's row sums are the dot products, up to float rounding.
        const double sum = products.row(j).cast<double>().sum();
        QVERIFY(std::abs(sum - e.scores(h)(i, j)) <= 1e-5 * (1 + std::abs(sum)));
    }
    const Eigen::RowVectorXd total = weighted.cast<double>().colwise().sum();
    QVERIFY((total - context.cast<double>()).cwiseAbs().maxCoeff() < 1e-5);
    QCOMPARE(view->embeddingTable()->columnCount(), e.scene().dModel());
    for (int c = 0; c < e.scene().dModel(); ++c) {
        QCOMPARE(view->embeddingTable()->item(0, c)->text().toDouble(),
                 QString::number(e.scene().embeddings(i, c), 'g', 6).toDouble());
    }
}

void TestClassroomNeuronAndPin::neuronViewEqualsEngine() {
    classroom()->neuronDock()->toggleViewAction()->trigger();
    NeuronView* view = classroom()->neuronView();
    view->setHead(2);
    view->setQuery(3);
    settle();
    QCOMPARE(window_->grid()->selectedRow(), 3);  // the query is the grid's selected row
    checkNeuronView();
    // The grid's selection drives the view, too.
    window_->grid()->setSelectedRow(1);
    QCOMPARE(view->query(), 1);
    checkNeuronView();
    // An edit of token 1's embedding, typed into the view: everything follows.
    const double before = engine().scene().embeddings(1, 4);
    view->embeddingTable()->item(0, 4)->setText(QStringLiteral("2.75"));
    settle();
    QCOMPARE(engine().scene().embeddings(1, 4), 2.75);
    QVERIFY(before != 2.75);
    checkNeuronView();
    // And an edit made elsewhere (the document, as the tokens editor does).
    QVERIFY(window_->document()->setEmbeddingValue(Stream::Query, 1, 0, -1.5));
    settle();
    checkNeuronView();
    // Cross-attention: keys are the source tokens.
    open("cross-sentences");
    view->setQuery(2);
    checkNeuronView();
}

void TestClassroomNeuronAndPin::differenceIsExactlyCurrentMinusPinned() {
    PinCompareView* pin = classroom()->pinCompare();
    QVERIFY(!pin->hasPin());
    window_->findChild<QAction*>(QStringLiteral("pinAction"))->trigger();
    QVERIFY(pin->hasPin());
    QVERIFY(classroom()->pinDock()->isVisible());
    AttentionDocument* doc = window_->document();
    doc->setScale({ScaleKind::Divisor, 0.7});
    Mask mask = doc->scene().mask;
    mask.causal = true;
    doc->setMask(mask);
    pin->setHead(2);
    settle();
    QVERIFY(pin->problem().isEmpty());
    const EngineF::Matrix& pinned = pin->pinnedWeights(2);
    const EngineF::Matrix& current = engine().weights(2);
    VERIFY_MAP(pin->pinnedMap(), pinned);
    VERIFY_MAP(pin->currentMap(), current);
    bool changed = false;
    for (int i = 0; i < pinned.rows(); ++i) {
        for (int j = 0; j < pinned.cols(); ++j) {
            const float expected = current(i, j) - pinned(i, j);
            QCOMPARE(cell(pin->differenceMap(), i, j), static_cast<double>(expected));
            changed = changed || expected != 0.0f;
        }
    }
    QVERIFY(changed);
    // A diverging map, symmetric about 0: no change is white.
    const ValueRange range = pin->differenceMap()->colorRange();
    QCOMPARE(range.lower, -range.upper);
    // Undo both changes: the difference is exactly 0 again.
    doc->undoStack()->undo();
    doc->undoStack()->undo();
    settle();
    for (int i = 0; i < pinned.rows(); ++i) {
        for (int j = 0; j < pinned.cols(); ++j)
            QCOMPARE(cell(pin->differenceMap(), i, j), 0.0);
    }
    // Other tokens: the view says so rather than comparing unlike things.
    open("four-words");
    QVERIFY(!pin->problem().isEmpty());
}

void TestClassroomNeuronAndPin::f5TogglesAndOnlyRepinRepins() {
    PinCompareView* pin = classroom()->pinCompare();
    QDockWidget* dock = classroom()->pinDock();
    QApplication::setActiveWindow(window_.get());
    // F5 opens the view, pinning the first time; F5 again closes it.
    QTest::keyClick(window_.get(), Qt::Key_F5);
    settle();
    QVERIFY(dock->isVisible());
    QVERIFY(pin->hasPin());
    const EngineF::Matrix pinned = pin->pinnedWeights(0);
    QVERIFY(pinned == engine().weights(0));
    QTest::keyClick(window_.get(), Qt::Key_F5);
    settle();
    QVERIFY(!dock->isVisible());

    // An edit, then F5 twice more: the pin is the old one, not the edited weights.
    AttentionDocument* doc = window_->document();
    doc->setScale({ScaleKind::Divisor, 0.5});
    settle();
    QTest::keyClick(window_.get(), Qt::Key_F5);
    settle();
    QVERIFY(dock->isVisible());
    QVERIFY(pin->pinnedWeights(0) == pinned);
    QVERIFY(engine().weights(0) != pinned);
    // The difference is current − pinned: check one cell by hand, and that a weight that grew
    // is positive and painted blue, as the legend says.
    pin->setHead(0);
    settle();
    const EngineF::Matrix& current = engine().weights(0);
    Eigen::Index gi = 0, gj = 0;
    (current - pinned).maxCoeff(&gi, &gj);
    const float grew = current(gi, gj) - pinned(gi, gj);
    QVERIFY(grew > 0.0f);
    QCOMPARE(cell(pin->differenceMap(), int(gi), int(gj)), static_cast<double>(grew));
    const QColor grewColour = pin->differenceMap()->cellColor(int(gi), int(gj));
    QVERIFY2(grewColour.blue() > grewColour.red(), qPrintable(grewColour.name()));
    auto* legend = pin->findChild<QWidget*>(QStringLiteral("pinLegend"));
    QVERIFY(legend && legend->isVisible());
    QStringList legendTexts;
    for (const QLabel* label : legend->findChildren<QLabel*>())
        legendTexts << label->text();
    QVERIFY2(legendTexts.contains(QStringLiteral("blue: grew since pinned")),
             qPrintable(legendTexts.join(QStringLiteral(" | "))));
    QVERIFY(legendTexts.contains(QStringLiteral("red: fell since pinned")));

    // Re-pinning is an explicit action (Shift+F5, and the view's button): then the difference
    // is zero.
    QAction* repin = window_->findChild<QAction*>(QStringLiteral("repinAction"));
    QVERIFY(repin);
    QCOMPARE(repin->shortcut(), QKeySequence(Qt::SHIFT | Qt::Key_F5));
    QTest::keyClick(window_.get(), Qt::Key_F5, Qt::ShiftModifier);
    settle();
    QVERIFY(dock->isVisible());
    QVERIFY(pin->pinnedWeights(0) == engine().weights(0));
    for (int i = 0; i < current.rows(); ++i) {
        for (int j = 0; j < current.cols(); ++j)
            QCOMPARE(cell(pin->differenceMap(), i, j), 0.0);
    }
    auto* button = pin->findChild<QPushButton*>(QStringLiteral("repinButton"));
    QVERIFY(button && button->text().contains(QStringLiteral("Re-pin")));
    doc->undoStack()->undo();
    settle();
    button->click();
    QVERIFY(pin->pinnedWeights(0) == pinned);
}

QTEST_MAIN(TestClassroomNeuronAndPin)
#include "test_classroom_neuron_and_pin.moc"
