// Grouped-query attention in the window (issue 17): the kv heads slider pools K and V from the
// weights the layer had and gives them back exactly, one undo step a drag that undoes bit for
// bit, together with the heads slider never leaves an invalid scene, and the maps and status line
// show the groups and the KV cache.

#include <QLabel>
#include <QSlider>
#include <QUndoStack>
#include <QtTest>
#include <memory>

#include "core/key_value_heads.h"
#include "core/scene_edit.h"
#include "document/attention_document.h"
#include "io/scene/scene_file.h"
#include "plot/heatmap_controller.h"
#include "plot/heatmap_grid.h"
#include "support/window_fixture.h"
#include "ui/window/main_window.h"

using namespace ae;
using namespace ae::ui;
using namespace ae::document;
using namespace ae::plot;

namespace {

template <typename M>
bool bitEqual(const M& a, const M& b) {
    return a.rows() == b.rows() && a.cols() == b.cols() &&
           (a.size() == 0 || (a.array() == b.array()).all());
}

bool sameKeysAndValues(const Scene& a, const Scene& b) {
    const Projections &p = a.projections, &q = b.projections;
    return a.heads == b.heads && a.kvHeads == b.kvHeads && bitEqual(p.key, q.key) &&
           bitEqual(p.value, q.value) && bitEqual(p.keyBias, q.keyBias) &&
           bitEqual(p.valueBias, q.valueBias);
}

// Every matrix the engine shows, copied.
struct Results {
    std::vector<EngineF::Matrix> matrices;
    bool operator==(const Results& o) const {
        if (matrices.size() != o.matrices.size()) return false;
        for (size_t i = 0; i < matrices.size(); ++i) {
            if (!bitEqual(matrices[i], o.matrices[i])) return false;
        }
        return true;
    }
};

Results resultsOf(const EngineF& engine) {
    Results r;
    r.matrices = {engine.query(), engine.key(), engine.value(), engine.concat()};
    if (engine.hasOutput()) r.matrices.push_back(engine.output());
    for (int h = 0; h < engine.heads(); ++h) {
        r.matrices.push_back(engine.scores(h));
        r.matrices.push_back(engine.weights(h));
    }
    return r;
}

}  // namespace

class TestKeyValueHeadsWindow : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void init();
    void cleanup();
    void sliderPoolsAndRestoresTheWeights();
    void dragIsOneStepAndUndoIsBitIdentical();
    void editedWeightsBecomeTheSource();
    void headsAndKvSlidersNeverMakeAnInvalidScene();
    void headsDragKeepsItsGrouping();
    void gridLabelsTheGroups();
    void statusLineShowsTheCache();
    void disabledWhereThereIsNothingToGroup();

private:
    AttentionDocument* document() const { return window_->document(); }
    QSlider* slider(const char* name) const {
        return window_->findChild<QSlider*>(QLatin1String(name));
    }
    QString kvLabel() const {
        return window_->findChild<QLabel*>(QStringLiteral("kvHeadsLabel"))->text();
    }
    std::unique_ptr<MainWindow> window_;
};

void TestKeyValueHeadsWindow::initTestCase() {
    test::startWindowTests();
}

void TestKeyValueHeadsWindow::init() {
    window_ = test::firstStartWindow();  // the default scene: d_proj 8, four heads of 2
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
    test::settleWindow(*window_);
}

void TestKeyValueHeadsWindow::cleanup() {
    window_.reset();
}

void TestKeyValueHeadsWindow::sliderPoolsAndRestoresTheWeights() {
    const Scene original = document()->scene();
    QCOMPARE(original.heads, 4);
    QVERIFY(!original.usesVersion2());  // a version 1 scene: offered all the same
    QSlider* kv = slider("kvHeadsSlider");
    QVERIFY(kv && kv->isEnabled());
    QCOMPARE(kv->maximum(), 2);  // 1, 2, 4
    QVERIFY(kvLabel().contains(QStringLiteral("multi-head")));

    QTest::keyClick(kv, Qt::Key_Left);
    QCOMPARE(document()->scene().keyValueHeads(), 2);
    QVERIFY(kvLabel().contains(QStringLiteral("grouped (2 groups)")));
    // Each kv head is the mean of its group's columns.
    QVERIFY(bitEqual(document()->scene().projections.key,
                     meanPoolHeadColumns(original.projections.key, 4, 2)));
    QVERIFY(bitEqual(document()->scene().projections.value,
                     meanPoolHeadColumns(original.projections.value, 4, 2)));
    QTest::keyClick(kv, Qt::Key_Home);
    QCOMPARE(document()->scene().keyValueHeads(), 1);
    QVERIFY(kvLabel().contains(QStringLiteral("multi-query")));
    QCOMPARE(document()->engine().key().cols(), Eigen::Index(2));
    QTest::keyClick(kv, Qt::Key_Right);
    QTest::keyClick(kv, Qt::Key_End);
    // Back to multi-head: the very weights the layer had, not a pooled copy.
    QVERIFY(sameKeysAndValues(document()->scene(), original));
    QVERIFY(!document()->scene().kvHeads.has_value());
    QCOMPARE(document()->undoStack()->count(), 4);
}

void TestKeyValueHeadsWindow::dragIsOneStepAndUndoIsBitIdentical() {
    document()->waitForResults();
    const Scene original = document()->scene();
    const Results before = resultsOf(document()->engine());
    const int steps = document()->undoStack()->count();
    QSlider* kv = slider("kvHeadsSlider");
    kv->setSliderDown(true);
    for (int position : {1, 0, 1})
        kv->setValue(position);
    kv->setSliderDown(false);
    QCOMPARE(document()->undoStack()->count(), steps + 1);
    QCOMPARE(document()->scene().keyValueHeads(), 2);
    document()->waitForResults();
    const Results after = resultsOf(document()->engine());
    QVERIFY(!(after == before));

    document()->undoStack()->undo();
    document()->waitForResults();
    QVERIFY(sameKeysAndValues(document()->scene(), original));
    QVERIFY(resultsOf(document()->engine()) == before);
    QCOMPARE(kv->value(), 2);
    document()->undoStack()->redo();
    document()->waitForResults();
    QVERIFY(resultsOf(document()->engine()) == after);
}

void TestKeyValueHeadsWindow::editedWeightsBecomeTheSource() {
    const Scene original = document()->scene();
    QVERIFY(document()->setKeyValueHeads(2));
    // A weight edited while grouped: the pooled weights are now the user's, and going back up
    // writes them out per head (repeat_kv) rather than forgetting the edit.
    QVERIFY(document()->setWeightValue(WeightMatrix::Key, 0, 0, 3.25));
    QVERIFY(document()->setKeyValueHeads(4));
    const MatrixD& key = document()->scene().projections.key;
    QCOMPARE(key(0, 0), 3.25);
    QVERIFY(bitEqual(MatrixD(key.middleCols(0, 2)), MatrixD(key.middleCols(2, 2))));
    // Undo back past the edit: the original source is found again, so multi-head is exact.
    document()->undoStack()->undo();  // kv 4
    document()->undoStack()->undo();  // the edit
    QCOMPARE(document()->scene().keyValueHeads(), 2);
    QVERIFY(document()->setKeyValueHeads(4));
    QVERIFY(sameKeysAndValues(document()->scene(), original));
}

void TestKeyValueHeadsWindow::headsAndKvSlidersNeverMakeAnInvalidScene() {
    QSlider* heads = slider("headSlider");
    QSlider* kv = slider("kvHeadsSlider");
    // Every kv position at every head count, and every head count from every grouping.
    for (int h = heads->minimum(); h <= heads->maximum(); ++h) {
        for (int k = 0; k <= 3; ++k) {
            heads->setValue(h);
            kv->setValue(std::min(k, kv->maximum()));
            for (int h2 = heads->minimum(); h2 <= heads->maximum(); ++h2) {
                heads->setValue(h2);
                const Scene& scene = document()->scene();
                QCOMPARE(scene.heads % scene.keyValueHeads(), 0);
                QVERIFY(!scene.kvHeads || *scene.kvHeads < scene.heads);
                QCOMPARE(scene.projections.key.cols(), Eigen::Index(scene.dKeyValue()));
                // The reader, which checks every field, takes it back.
                const Scene reread = io::parseScene(io::sceneToJson(scene));
                QCOMPARE(reread.keyValueHeads(), scene.keyValueHeads());
                document()->waitForResults();
                QVERIFY2(document()->errorText().isEmpty(), qPrintable(document()->errorText()));
                QCOMPARE(kv->maximum() + 1, int(keyValueHeadChoices(scene.heads).size()));
            }
        }
    }
}

void TestKeyValueHeadsWindow::headsDragKeepsItsGrouping() {
    const Scene original = document()->scene();
    QVERIFY(document()->setKeyValueHeads(2));
    const Scene grouped = document()->scene();
    QSlider* heads = slider("headSlider");  // divisors of 8: 1, 2, 4, 8
    const int steps = document()->undoStack()->count();
    heads->setSliderDown(true);
    heads->setValue(3);  // 8 heads: 2 kv heads still divide them
    QCOMPARE(document()->scene().heads, 8);
    QCOMPARE(document()->scene().keyValueHeads(), 2);
    heads->setValue(0);  // 1 head: 1 kv head, multi-head and multi-query at once
    QCOMPARE(document()->scene().heads, 1);
    QVERIFY(!document()->scene().kvHeads.has_value());
    heads->setValue(2);  // back to 4 heads: the grouping the drag began with
    heads->setSliderDown(false);
    QVERIFY(sameKeysAndValues(document()->scene(), grouped));
    QCOMPARE(document()->undoStack()->count(), steps);  // back where it began: no step
    // Apart from a drag, a head count that the kv count does not divide takes the nearest.
    QVERIFY(document()->setKeyValueHeads(1));
    QVERIFY(document()->setHeads(2));
    QCOMPARE(document()->scene().keyValueHeads(), 1);
    QVERIFY(document()->setKeyValueHeads(2));
    QVERIFY(!document()->scene().kvHeads.has_value());  // 2 of 2: multi-head
    QVERIFY(document()->setHeads(4));
    QVERIFY(sameKeysAndValues(document()->scene(), original));
}

void TestKeyValueHeadsWindow::gridLabelsTheGroups() {
    HeatmapGrid* grid = window_->grid();
    QVERIFY(document()->setKeyValueHeads(2));
    test::settleWindow(*window_);
    // The weights: every head's map says which kv head it reads.
    QCOMPARE(grid->tiles().size(), size_t(5));
    for (int h = 0; h < 4; ++h) {
        const QString title = grid->tile(Stage::Weights, h)->title();
        QVERIFY2(title.endsWith(QStringLiteral(" · kv %1").arg(h / 2)), qPrintable(title));
    }
    QVERIFY(!grid->tile(Stage::Weights, -1)->title().contains(QStringLiteral("kv")));
    // And a colour its group shares: heads 0 and 1 alike, 2 and 3 alike, the two groups apart.
    const auto colour = [grid](int h) { return grid->tile(Stage::Weights, h)->titleColor(); };
    QCOMPARE(colour(0), colour(1));
    QCOMPARE(colour(2), colour(3));
    QVERIFY(colour(1) != colour(2));
    QVERIFY(colour(0) != QColor(Qt::black));
    QCOMPARE(grid->tile(Stage::Weights, -1)->titleColor(), QColor(Qt::black));
    // K and V: one map per kv head, named with the heads that share it.
    for (Stage stage : {Stage::Key, Stage::Value}) {
        grid->setStage(stage);
        test::settleWindow(*window_);
        QCOMPARE(grid->tiles().size(), size_t(2));
        QVERIFY2(grid->tile(stage, 0)->title().contains(QStringLiteral("kv head 0 (heads 0–1)")),
                 qPrintable(grid->tile(stage, 0)->title()));
        QVERIFY(grid->tile(stage, 3)->title().contains(QStringLiteral("kv head 1 (heads 2–3)")));
        QCOMPARE(grid->tile(stage, 3), grid->tile(stage, 2));
        const EngineF& engine = document()->engine();
        const double shown = grid->tile(stage, 3)->cellValue(1, 1);
        QCOMPARE(shown,
                 double(stage == Stage::Key ? engine.headKey(3)(1, 1) : engine.headValue(3)(1, 1)));
    }
    // Multi-head again: one K map a head, no group labels.
    QVERIFY(document()->setKeyValueHeads(4));
    test::settleWindow(*window_);
    QCOMPARE(grid->tiles().size(), size_t(4));
    QVERIFY(!grid->tile(Stage::Value, 3)->title().contains(QStringLiteral("kv")));
    QCOMPARE(grid->tile(Stage::Value, 3)->titleColor(), QColor(Qt::black));
}

// The status line's figure is short (the whole sentence is its tooltip): at the window's
// default 922 pixels the long one was cut ("64 B at floa").
void TestKeyValueHeadsWindow::statusLineShowsTheCache() {
    auto* label = window_->findChild<QLabel*>(QStringLiteral("kvCacheLabel"));
    QVERIFY(label);
    QCOMPARE(label->text(), QStringLiteral("KV cache 64 B/token/layer"));
    QVERIFY(label->toolTip().startsWith(
        QStringLiteral("KV cache 2 × 4 kv heads × 2 = 16 numbers/token/layer (64 B at float32)")));
    QVERIFY(document()->setKeyValueHeads(1));
    document()->waitForResults();
    QCOMPARE(label->text(), QStringLiteral("KV cache 16 B/token/layer"));
    QVERIFY(label->toolTip().startsWith(
        QStringLiteral("KV cache 2 × 1 kv head × 2 = 4 numbers/token/layer (16 B at float32)")));
    window_->resize(922, window_->height());
    test::settleWindow(*window_);
    for (const char* name : {"kvCacheLabel", "statsLabel"}) {
        auto* shown = window_->findChild<QLabel*>(QLatin1String(name));
        QVERIFY2(
            shown->fontMetrics().horizontalAdvance(shown->text()) <= shown->contentsRect().width(),
            qPrintable(QStringLiteral("%1: \"%2\" in %3 px")
                           .arg(QLatin1String(name), shown->text())
                           .arg(shown->contentsRect().width())));
    }
}

void TestKeyValueHeadsWindow::disabledWhereThereIsNothingToGroup() {
    Scene shared = document()->scene();
    setProjectionMode(shared, ProjectionMode::SharedQK, inferredDrawSpec(shared));
    QVERIFY(document()->replaceScene(shared, QStringLiteral("shared")));
    QSlider* kv = slider("kvHeadsSlider");
    QVERIFY(!kv->isEnabled());
    QVERIFY(kv->toolTip().contains(QStringLiteral("separate")));
    QString error;
    QVERIFY(!document()->setKeyValueHeads(2, &error));
    QVERIFY(error.contains(QStringLiteral("separate")));
    Scene oneHead = document()->scene();
    setProjectionMode(oneHead, ProjectionMode::Separate, inferredDrawSpec(oneHead));
    oneHead.heads = 1;
    QVERIFY(document()->replaceScene(oneHead, QStringLiteral("one head")));
    QVERIFY(!kv->isEnabled());
    QVERIFY(kv->toolTip().contains(QStringLiteral("One head")));
}

QTEST_MAIN(TestKeyValueHeadsWindow)
#include "test_key_value_heads_window.moc"
