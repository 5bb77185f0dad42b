// The model view on a real run (the tiny GPT-2 and BERT golden models): the summaries table and
// its threshold, the predictions and their change after a what-if, rollout and the query-key
// map, each checked against core/model_analysis's numbers; and the view drawn into files.

#include <QApplication>
#include <QElapsedTimer>
#include <QFont>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QtTest>
#include <cmath>
#include <set>

#include "core/model/model_analysis.h"
#include "io/model/model_folder.h"
#include "plot/head_grid.h"
#include "plot/heatmap_controller.h"
#include "plot/model_panels.h"
#include "plot/model_view.h"
#include "plot/model_view_export.h"
#include "qcustomplot.h"

using namespace ae;
using namespace ae::plot;

namespace {

QString modelDir(const char* name) {
    return QStringLiteral(AE_TEST_DATA_DIR "/models/") + name;
}

struct Loaded {
    std::unique_ptr<io::ModelFolder> folder;
    std::shared_ptr<const model::ModelRun<float>> run;
    ModelViewData data;
};

Loaded load(const char* name, std::vector<long long> ids) {
    Loaded l;
    l.folder = std::make_unique<io::ModelFolder>(modelDir(name));
    l.run =
        std::make_shared<model::ModelRun<float>>(model::runModel<float>(l.folder->model(), ids));
    l.data.run = l.run;
    for (size_t i = 0; i < ids.size(); ++i)
        l.data.tokens << QStringLiteral("t%1").arg(ids[i]);
    l.data.summaries = model::summarizeHeads(*l.run);
    if (l.run->config.isDecoder())
        l.data.predictions = model::topPredictions(*l.run, static_cast<int>(ids.size()) - 1);
    return l;
}

const std::vector<long long> kIds{63, 5, 17, 5, 17, 40, 2, 9};

}  // namespace

class TestModelView : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QApplication::setFont(QFont("DejaVu Sans", 9)); }

    void gridAndTableShowEveryHead() {
        Loaded l = load("gpt2-tiny", kIds);
        ModelView view;
        view.resize(1000, 700);
        view.setData(l.data);
        QCOMPARE(view.grid()->layers(), 2);
        QCOMPARE(view.grid()->heads(), 4);
        QCOMPARE(view.summaryModel()->rowCount(), 8);
        QCOMPARE(view.selectedPosition(), static_cast<int>(kIds.size()) - 1);
        // The grid paints the run's own weights.
        const auto& w = l.run->layers[1].weights[2];
        const auto [low, high] = view.grid()->colorRange({1, 2});
        QCOMPARE(view.grid()->paintedColor({1, 2}, 5, 3),
                 gradientColor(ColorMap::Viridis, w(5, 3), low, high));
    }

    void thresholdHighlightsInGridAndTable() {
        Loaded l = load("gpt2-tiny", kIds);
        ModelView view;
        view.setData(l.data);
        // A threshold between the heads' previous-token scores: some above, some not.
        std::vector<double> scores;
        for (const auto& s : l.data.summaries)
            scores.push_back(s.previousToken);
        std::sort(scores.begin(), scores.end());
        const double threshold = (scores[3] + scores[4]) / 2;
        view.setThreshold(true, model::headScore("previous_token"), threshold, true);
        const auto expected =
            headsAbove(l.data.summaries, model::headScore("previous_token"), threshold);
        QCOMPARE(expected.size(), size_t(4));
        QCOMPARE(view.highlightedHeads(), expected);
        QCOMPARE(view.summaryFilter()->rowCount(), 4);
        QCOMPARE(view.grid()->highlighted(), expected);
        view.setThreshold(false, model::headScore("previous_token"), threshold);
        // The grid's head and the table's row follow each other.
        view.grid()->setCurrentHead({1, 2});
        const QModelIndex current = view.summaryTable()->currentIndex();
        QCOMPARE(current.siblingAtColumn(HeadSummaryModel::LayerColumn).data().toInt(), 1);
        QCOMPARE(current.siblingAtColumn(HeadSummaryModel::HeadColumn).data().toInt(), 2);
        view.summaryTable()->setCurrentIndex(view.summaryFilter()->index(5, 0));
        QCOMPARE(view.grid()->currentHead(), (std::pair<int, int>{1, 1}));
        QVERIFY(view.highlightedHeads().empty());
        QVERIFY(view.grid()->highlighted().empty());
        QCOMPARE(view.summaryFilter()->rowCount(), 8);
    }

    void doubleClickingARowOpensItsHead() {
        Loaded l = load("gpt2-tiny", kIds);
        ModelView view;
        view.resize(1000, 700);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setData(l.data);
        QTableView* table = view.summaryTable();
        table->sortByColumn(HeadSummaryModel::scoreColumn("entropy"), Qt::AscendingOrder);
        QSignalSpy activated(&view, &ModelView::headActivated);
        const QModelIndex first = table->model()->index(0, 0);
        const int layer = table->model()->index(0, HeadSummaryModel::LayerColumn).data().toInt();
        const int head = table->model()->index(0, HeadSummaryModel::HeadColumn).data().toInt();
        // The lowest entropy is the row sorted first.
        double lowest = 1e9;
        for (const auto& s : l.data.summaries)
            lowest = std::min(lowest, s.entropy);
        QCOMPARE(l.data.summaries[layer * 4 + head].entropy, lowest);
        view.panels()->setCurrentIndex(0);
        const QRect cell = table->visualRect(first);
        QVERIFY2(table->viewport()->rect().contains(cell.center()),
                 qPrintable(QStringLiteral("%1,%2 in %3x%4")
                                .arg(cell.center().x())
                                .arg(cell.center().y())
                                .arg(table->viewport()->width())
                                .arg(table->viewport()->height())));
        // A double-click is a press and release, then the double-click event (an item view
        // only opens the row it was pressed on).
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, cell.center());
        QTest::mouseDClick(table->viewport(), Qt::LeftButton, {}, cell.center());
        QCOMPARE(activated.size(), 1);
        QCOMPARE(activated.at(0).at(0).toInt(), layer);
        QCOMPARE(activated.at(0).at(1).toInt(), head);
        // Enter opens the current row: the next one down.
        table->setFocus();
        QTest::keyClick(table, Qt::Key_Down);
        QTest::keyClick(table, Qt::Key_Return);
        QCOMPARE(activated.size(), 2);
        QCOMPARE(activated.at(1).at(0).toInt(),
                 table->model()->index(1, HeadSummaryModel::LayerColumn).data().toInt());
        QCOMPARE(activated.at(1).at(1).toInt(),
                 table->model()->index(1, HeadSummaryModel::HeadColumn).data().toInt());
    }

    void predictionsShowTheWhatIfsChange() {
        Loaded l = load("gpt2-tiny", kIds);
        ModelView view;
        view.setData(l.data);
        QTableWidget* table = view.predictionsPanel()->table();
        using P = PredictionsPanel;
        QCOMPARE(table->rowCount(), 10);
        QVERIFY(table->isColumnHidden(P::BeforeColumn));
        QVERIFY(table->isColumnHidden(P::RankColumn));
        QCOMPARE(table->item(0, P::ProbabilityColumn)->text(),
                 probabilityText(l.data.predictions[0].probability));
        // A what-if: the first token lost probability, the second gained, one is new.
        ModelViewData after = l.data;
        after.basePredictions = l.data.predictions;
        after.predictions[0].probability -= 0.05;
        after.predictions[1].probability += 0.03;
        after.predictions[2].token = 12345;
        view.setData(after);
        QVERIFY(!table->isColumnHidden(P::BeforeColumn));
        QVERIFY(!table->isColumnHidden(P::RankColumn));
        QCOMPARE(table->item(0, P::BeforeColumn)->text(),
                 probabilityText(l.data.predictions[0].probability));
        QCOMPARE(table->item(0, P::ProbabilityColumn)->text(),
                 probabilityText(after.predictions[0].probability));
        QCOMPARE(table->item(2, P::RankColumn)->text(), QStringLiteral("new"));
        QCOMPARE(table->item(2, P::BeforeColumn)->toolTip(),
                 QStringLiteral("Not in the top 10 before the what-if"));
        QVERIFY(!table->wordWrap());  // one line a token
        QVERIFY(table->item(0, P::ProbabilityColumn)->foreground().color() !=
                table->item(1, P::ProbabilityColumn)->foreground().color());
        QVERIFY(view.panels()->isTabVisible(view.panels()->indexOf(view.predictionsPanel())));
    }

    // A head flattened so far that every probability of the list is below 0.001 and the ranking
    // changes: each pair still reads apart, and the ranks' moves show.
    void predictionsReadApartBelowAThousandth() {
        QCOMPARE(probabilityText(0.659), QStringLiteral("0.659"));
        QCOMPARE(probabilityText(0.0123), QStringLiteral("0.0123"));
        QCOMPARE(probabilityText(0.004567), QStringLiteral("0.00457"));
        QCOMPARE(probabilityText(4.567e-5), QStringLiteral("4.57e-05"));
        QCOMPARE(significantDigitsToTellApart(0.4567, 0.4568), 4);
        QCOMPARE(significantDigitsToTellApart(2.0e-4, 2.0e-4), 3);
        Loaded l = load("gpt2-tiny", kIds);
        ModelView view;
        ModelViewData data = l.data;
        data.basePredictions = {{10, 4.0e-4}, {11, 3.0e-4}, {12, 2.0e-4}, {13, 1.0e-4}};
        data.predictions = {{12, 4.1e-4}, {10, 4.0e-4}, {11, 2.5e-4}, {14, 9.0e-5}};
        data.tokenText = {};
        view.setData(data);
        QTableWidget* table = view.predictionsPanel()->table();
        using P = PredictionsPanel;
        const auto text = [&](int row, int column) { return table->item(row, column)->text(); };
        QCOMPARE(text(0, P::BeforeColumn), QStringLiteral("2.00e-04"));
        QCOMPARE(text(0, P::ProbabilityColumn), QStringLiteral("4.10e-04"));
        QCOMPARE(text(0, P::RankColumn), QStringLiteral("↑2"));
        QCOMPARE(text(1, P::RankColumn), QStringLiteral("↓1"));
        QCOMPARE(text(1, P::BeforeColumn), text(1, P::ProbabilityColumn));  // unchanged reads so
        QCOMPARE(text(2, P::RankColumn), QStringLiteral("↓1"));
        QVERIFY(text(2, P::BeforeColumn) != text(2, P::ProbabilityColumn));
        QCOMPARE(text(3, P::RankColumn), QStringLiteral("new"));
        QVERIFY2(table->item(0, P::ProbabilityColumn)->toolTip().contains("ln p = -7.799"),
                 qPrintable(table->item(0, P::ProbabilityColumn)->toolTip()));
        QCOMPARE(table->item(0, P::RankColumn)->toolTip(),
                 QStringLiteral("Rank 3 before the what-if, 1 after"));
        // Two probabilities apart only in the fourth digit get a fourth digit.
        data.basePredictions = {{10, 0.4567}};
        data.predictions = {{10, 0.4568}};
        view.setData(data);
        QCOMPARE(text(0, P::BeforeColumn), QStringLiteral("0.4567"));
        QCOMPARE(text(0, P::ProbabilityColumn), QStringLiteral("0.4568"));
        QCOMPARE(text(0, P::RankColumn), QStringLiteral("="));
    }

    // The induction column says whose scores it shows: a what-if's stale column reads grey and
    // italic, and every state's tooltip says why; the button explains what cannot be measured.
    void inductionColumnSaysWhoseScoresItShows() {
        Loaded l = load("gpt2-tiny", kIds);
        ModelView view;
        using ae::model::InductionState;
        const auto cell = [&](int role) {
            return view.summaryModel()
                ->index(0, HeadSummaryModel::scoreColumn("induction"))
                .data(role);
        };
        l.data.induction = InductionState::Measured;
        view.setData(l.data);
        QVERIFY(!cell(Qt::FontRole).value<QFont>().italic());
        QCOMPARE(cell(Qt::ToolTipRole).toString(),
                 QStringLiteral("Induction score on this text repeated twice"));
        l.data.induction = InductionState::Stale;
        l.data.inductionNote = QStringLiteral("these are the model's scores without the what-if");
        view.setData(l.data);
        QVERIFY(cell(Qt::FontRole).value<QFont>().italic());
        QCOMPARE(cell(Qt::ForegroundRole).value<QColor>(), QColor(0x80, 0x80, 0x80));
        QVERIFY(cell(Qt::ToolTipRole).toString().contains(QStringLiteral("without the what-if")));
        l.data.induction = InductionState::Unmeasurable;
        l.data.inductionNote = QStringLiteral("40 tokens, more than the model's 32 positions");
        view.setData(l.data);
        QSignalSpy needed(&view, &ModelView::summariesNeeded);
        auto* button = view.findChild<QPushButton*>(QStringLiteral("measureInduction"));
        QVERIFY(button && button->isEnabled());
        button->click();
        QCOMPARE(needed.size(), 1);
        QVERIFY2(view.readout().contains(QStringLiteral("32 positions")),
                 qPrintable(view.readout()));
    }

    void bertHasNoPredictions() {
        Loaded l = load("bert-tiny", {2, 7, 9, 11, 3});
        ModelView view;
        view.setData(l.data);
        QVERIFY(!view.panels()->isTabVisible(view.panels()->indexOf(view.predictionsPanel())));
    }

    void rolloutIsTheLibrarys() {
        // (and the selected position follows a text that gets shorter)
        Loaded l = load("gpt2-tiny", kIds);
        ModelView view;
        view.resize(1000, 700);
        view.setData(l.data);
        const auto rollout = model::attentionRollout(*l.run);
        HeatmapController* map = view.rolloutPanel()->rolloutMap();
        const int t = static_cast<int>(kIds.size());
        QCOMPARE(map->rows(), t);
        for (int i = 0; i < t; ++i)
            for (int j = 0; j < t; ++j)
                QCOMPARE(map->matrix()(i, j), static_cast<float>(rollout.back()(i, j)));
        QSignalSpy selected(&view, &ModelView::positionSelected);
        view.setSelectedPosition(3);
        QCOMPARE(selected.size(), 1);
        HeatmapController* perLayer = view.rolloutPanel()->perLayerMap();
        QCOMPARE(perLayer->rows(), 2);
        for (int layer = 0; layer < 2; ++layer)
            for (int j = 0; j < t; ++j)
                QCOMPARE(perLayer->matrix()(layer, j), static_cast<float>(rollout[layer](3, j)));
        // The data's position is what the view shows: its owner answers a choice with it. A
        // shorter text whose owner gives no position reads its last token, and the view emits
        // nothing (no choice was made).
        Loaded shorter = load("gpt2-tiny", {63, 5, 17});
        selected.clear();
        view.setSelectedPosition(6);
        QCOMPARE(selected.size(), 1);
        view.setData(shorter.data);
        QCOMPARE(view.selectedPosition(), 2);
        QCOMPARE(selected.size(), 1);
        // A position the owner gives moves the box, the rollout's row and the list's heading.
        ModelViewData at1 = shorter.data;
        at1.position = 1;
        view.setData(at1);
        QCOMPARE(view.selectedPosition(), 1);
        QCOMPARE(selected.size(), 1);
        const auto shortRollout = model::attentionRollout(*shorter.run);
        HeatmapController* shortPerLayer = view.rolloutPanel()->perLayerMap();
        for (int j = 0; j < 3; ++j)
            QCOMPARE(shortPerLayer->matrix()(1, j), static_cast<float>(shortRollout[1](1, j)));
        QVERIFY2(view.predictionsPanel()->heading().contains(QStringLiteral("after 1 ")),
                 qPrintable(view.predictionsPanel()->heading()));
    }

    void queryKeyMapPlotsTheLibrarysProjection() {
        Loaded l = load("gpt2-tiny", kIds);
        ModelView view;
        l.data.openHead = std::pair<int, int>{1, 3};
        view.setData(l.data);
        QueryKeyPanel* panel = view.queryKeyPanel();
        using model::QkProjectionMode;
        for (QkProjectionMode mode :
             {QkProjectionMode::Separate, QkProjectionMode::Joint, QkProjectionMode::Norms}) {
            panel->setMode(mode);
            const auto expected = model::projectQueriesAndKeys(*l.run, 1, 3, mode);
            const auto queries = panel->plottedQueries();
            const auto keys = panel->plottedKeys();
            QCOMPARE(queries.size() + keys.size(), 2 * kIds.size());
            for (size_t i = 0; i < kIds.size(); ++i) {
                QCOMPARE(queries[i].x(), expected.queries(i, 0));
                QCOMPARE(queries[i].y(), expected.queries(i, 1));
                QCOMPARE(keys[i].x(), expected.keys(i, 0));
                QCOMPARE(keys[i].y(), expected.keys(i, 1));
            }
            if (mode != QkProjectionMode::Norms) {
                const QString share =
                    QStringLiteral("%1%").arg(std::lround(expected.explainedQuery * 100));
                QVERIFY2(panel->xAxisTitle().contains(share), qPrintable(panel->xAxisTitle()));
            }
        }
    }

    // A query-key map behind another tab waits: the eigen-decomposition runs when it is shown
    // (or read, or exported), for the head asked for last.
    void hiddenQueryKeyMapDrawsWhenShown() {
        Loaded l = load("gpt2-tiny", kIds);
        QueryKeyPanel panel;
        auto* queries = qobject_cast<QCPCurve*>(panel.plot()->plottable(0));
        QVERIFY(queries);
        panel.setHead(l.run, 0, 1, {});
        panel.setHead(l.run, 1, 3, {});
        QCOMPARE(queries->data()->size(), 0);  // not drawn while hidden
        panel.resize(500, 400);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QCOMPARE(queries->data()->size(), static_cast<int>(kIds.size()));
        const auto expected =
            model::projectQueriesAndKeys(*l.run, 1, 3, model::QkProjectionMode::Separate);
        QCOMPARE(queries->data()->at(2)->key, expected.queries(2, 0));
        QCOMPARE(queries->data()->at(2)->value, expected.queries(2, 1));
    }

    // The rollout behind another tab waits for a new run; showing its tab (or showing the view
    // with the tab current) computes it for the latest run.
    void hiddenRolloutIsComputedWhenShown() {
        Loaded a = load("gpt2-tiny", kIds);
        Loaded b = load("gpt2-tiny", {63, 5, 17});
        ModelView view;
        view.resize(1000, 700);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        auto* panel = qobject_cast<RolloutPanel*>(view.panels()->widget(1));
        QVERIFY(panel);
        view.setData(a.data);
        QCOMPARE(panel->rolloutMap()->rows(), 0);  // the Heads tab is in front
        view.panels()->setCurrentWidget(panel);
        QCOMPARE(panel->rolloutMap()->rows(), static_cast<int>(kIds.size()));
        view.setData(b.data);  // in front: at once
        QCOMPARE(panel->rolloutMap()->rows(), 3);
        const auto rollout = model::attentionRollout(*b.run);
        QCOMPARE(panel->rolloutMap()->matrix()(2, 1), static_cast<float>(rollout.back()(2, 1)));
        // Hidden with the view, a new run waits until the view is shown again.
        view.hide();
        view.setData(a.data);
        QCOMPARE(panel->rolloutMap()->rows(), 3);
        view.show();
        QCOMPARE(panel->rolloutMap()->rows(), static_cast<int>(kIds.size()));
    }

    // At 128 tokens not every point can be named: the names drawn never cover one another, and
    // both queries and keys are named.
    void queryKeyLabelsNeverOverlap() {
        const int heads = 2, hd = 8, t = 128;
        auto run = std::make_shared<model::ModelRun<float>>();
        run->config.layers = 1;
        run->config.heads = heads;
        run->config.kvHeads = heads;
        run->config.headDim = hd;
        run->tokens.assign(t, 7);
        run->layers.resize(1);
        run->layers[0].query = model::Matrix<float>::Random(t, heads * hd);
        run->layers[0].key = model::Matrix<float>::Random(t, heads * hd);
        QStringList tokens;
        for (int i = 0; i < t; ++i)
            tokens << QStringLiteral("word%1").arg(i);
        QueryKeyPanel panel;
        panel.resize(520, 420);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        panel.setHead(run, 0, 1, tokens);
        QCustomPlot* plot = panel.plot();
        std::set<QRgb> colours;
        // Every label's box as drawn; none may cover another or the legend, or leave the axes.
        const auto labelsFit = [&](std::size_t* placed) {
            std::vector<QRectF> boxes;
            std::vector<QPointF> anchors;  // the point each label names
            for (int n = 0; n < plot->itemCount(); ++n) {
                auto* text = qobject_cast<QCPItemText*>(plot->item(n));
                if (!text) return false;
                const QPointF at = text->position->pixelPosition();
                anchors.push_back(at);
                const QFontMetricsF metrics(text->font());
                boxes.emplace_back(at.x() + 4, at.y() - 2 - metrics.height(),
                                   metrics.horizontalAdvance(text->text()), metrics.height());
                colours.insert(text->color().rgb());
            }
            *placed = boxes.size();
            // The markers' squares: a label may touch its own point, never hide another.
            std::vector<QRectF> markers;
            for (int set = 0; set < 2; ++set) {
                auto* curve = qobject_cast<QCPCurve*>(plot->plottable(set));
                const double side = curve->scatterStyle().size();
                for (auto it = curve->data()->constBegin(); it != curve->data()->constEnd(); ++it) {
                    const QPointF at(plot->xAxis->coordToPixel(it->key),
                                     plot->yAxis->coordToPixel(it->value));
                    markers.emplace_back(at.x() - side / 2, at.y() - side / 2, side, side);
                }
            }
            for (size_t a = 0; a < boxes.size(); ++a) {
                for (const QRectF& marker : markers) {
                    const QPointF centre = marker.center();
                    const bool own = std::abs(centre.x() - anchors[a].x()) < 0.01 &&
                                     std::abs(centre.y() - anchors[a].y()) < 0.01;
                    if (!own && marker.intersects(boxes[a])) return false;
                }
            }
            const QRectF legend = plot->legend->outerRect();
            const QRectF axes = plot->axisRect()->rect();
            for (size_t a = 0; a < boxes.size(); ++a) {
                if (boxes[a].intersects(legend) || !axes.contains(boxes[a])) return false;
                for (size_t b = a + 1; b < boxes.size(); ++b)
                    if (boxes[a].intersects(boxes[b])) return false;
            }
            return true;
        };
        std::size_t atFirst = 0, narrow = 0, wide = 0;
        QVERIFY(labelsFit(&atFirst));
        QVERIFY2(atFirst >= 10 && atFirst < 2 * static_cast<size_t>(t),
                 qPrintable(QString::number(atFirst)));
        QCOMPARE(colours.size(), static_cast<size_t>(2));  // queries' and keys' colours
        // Resized, the labels are placed again for the new pixels: fewer on a narrow map, more on
        // a wide one, still never covering one another.
        panel.resize(300, 420);
        QTRY_VERIFY(labelsFit(&narrow) && narrow < atFirst);
        panel.resize(900, 700);
        QTRY_VERIFY(labelsFit(&wide) && wide > atFirst);
        // Hovering names any point, labelled or not; away from every point, nothing.
        const auto queries = panel.plottedQueries();
        const auto keys = panel.plottedKeys();
        const auto pixelOf = [plot](QPointF p) {
            return QPointF(plot->xAxis->coordToPixel(p.x()), plot->yAxis->coordToPixel(p.y()));
        };
        for (int i : {0, 64, 127}) {
            QCOMPARE(panel.pointTextAt(pixelOf(queries[i])),
                     QStringLiteral("query %1 “word%1”").arg(i));
            QCOMPARE(panel.pointTextAt(pixelOf(keys[i])), QStringLiteral("key %1 “word%1”").arg(i));
        }
        QCOMPARE(panel.pointTextAt(QPointF(-50, -50)), QString());
        // The axis title's lines fit the narrow map.
        panel.resize(300, 420);
        QTRY_VERIFY(labelsFit(&narrow) && narrow < atFirst);
        const QFontMetricsF titleMetrics(plot->xAxis->labelFont());
        for (const QString& line : panel.xAxisTitle().split(QLatin1Char('\n')))
            QVERIFY2(titleMetrics.horizontalAdvance(line) <= plot->width(), qPrintable(line));
    }

    void aFullModelShows() {
        // GPT-2 small's shape at L = 128: 144 heads, pooled to 64 x 64 each; the view's own
        // share of a text edit (grid, rollout, query-key map, table) is printed for a glance.
        const int layers = 12, heads = 12, hd = 8, t = 128;
        auto run = std::make_shared<model::ModelRun<float>>();
        run->config.layers = layers;
        run->config.heads = heads;
        run->config.kvHeads = heads;
        run->config.headDim = hd;
        run->tokens.assign(t, 7);
        run->layers.resize(layers);
        for (int l = 0; l < layers; ++l) {
            auto& layer = run->layers[l];
            layer.query = model::Matrix<float>::Random(t, heads * hd);
            layer.key = model::Matrix<float>::Random(t, heads * hd);
            for (int h = 0; h < heads; ++h) {
                model::Matrix<float> w = model::Matrix<float>::Zero(t, t);
                for (int i = 0; i < t; ++i) {
                    w.row(i).head(i + 1).setConstant(1.0f / static_cast<float>(i + 1));
                }
                layer.weights.push_back(w);
            }
        }
        ModelViewData data;
        data.run = run;
        for (int i = 0; i < t; ++i)
            data.tokens << QStringLiteral("w%1").arg(i);
        data.summaries = model::summarizeHeads(*run);
        ModelView view;
        view.resize(1024, 768);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QElapsedTimer timer;
        timer.start();
        view.setData(data);
        view.repaint();
        const double ms = static_cast<double>(timer.nsecsElapsed()) / 1e6;
        // How fast is for `bench --ui --model` to measure on a quiet machine, not for a test.
        qInfo("setData and repaint, 144 heads at L = 128: %.1f ms", ms);
        QCOMPARE(view.grid()->poolShape().shownRows, 64);
    }

    void renderedFilesAreImages() {
        Loaded l = load("gpt2-tiny", kIds);
        for (ModelViewPart part :
             {ModelViewPart::Model, ModelViewPart::Rollout, ModelViewPart::QueryKey}) {
            ModelViewImage image;
            image.part = part;
            image.size = QSize(1024, 768);
            const QByteArray png = renderModelView(l.data, image, ImageFormat::Png);
            QImage read;
            QVERIFY(read.loadFromData(png, "PNG"));
            QCOMPARE(read.size(), QSize(1024, 768));
            QVERIFY(renderModelView(l.data, image, ImageFormat::Pdf).startsWith("%PDF"));
            QVERIFY(renderModelView(l.data, image, ImageFormat::Svg).contains("<svg"));
        }
        ModelViewImage bad;
        bad.head = std::pair<int, int>{0, 4};
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 renderModelView(l.data, bad, ImageFormat::Png));
    }
};

QTEST_MAIN(TestModelView)
#include "test_model_view.moc"
