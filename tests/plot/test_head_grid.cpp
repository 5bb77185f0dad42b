// The model view's layers x heads grid and its summaries table, on a hand-made run whose
// weights are known: what each small map paints, what the read-out says, the keys, the marks,
// sorting and the threshold.

#include <QApplication>
#include <QSignalSpy>
#include <QtTest>
#include <cmath>
#include <limits>

#include "plot/color_maps.h"
#include "plot/head_grid.h"
#include "plot/head_summary_table.h"

using namespace ae;
using namespace ae::plot;

namespace {

// A causal run of `layers` x `heads` heads on `tokens` tokens. Head (l, h)'s row i puts
// `peak(l, h)` on key max(0, i - 1 - (h % 2)) and spreads the rest evenly over the keys it sees,
// so every row sums to 1 and each head has its own largest weight.
double peak(int layer, int head) {
    return 0.3 + 0.05 * layer + 0.1 * head;
}

std::shared_ptr<const model::ModelRun<float>> handMadeRun(int layers, int heads, int tokens) {
    auto run = std::make_shared<model::ModelRun<float>>();
    run->config.layers = layers;
    run->config.heads = heads;
    run->config.kvHeads = heads;
    run->config.headDim = 2;
    for (int t = 0; t < tokens; ++t)
        run->tokens.push_back(10 + t);
    run->layers.resize(static_cast<size_t>(layers));
    for (int l = 0; l < layers; ++l) {
        for (int h = 0; h < heads; ++h) {
            model::Matrix<float> w = model::Matrix<float>::Zero(tokens, tokens);
            for (int i = 0; i < tokens; ++i) {
                const int target = std::max(0, i - 1 - (h % 2));
                if (i == 0) {
                    w(0, 0) = 1.0f;
                    continue;
                }
                const double rest = (1.0 - peak(l, h)) / i;  // over the i other visible keys
                for (int j = 0; j <= i; ++j)
                    w(i, j) = static_cast<float>(j == target ? peak(l, h) : rest);
            }
            run->layers[static_cast<size_t>(l)].weights.push_back(w);
        }
    }
    return run;
}

std::vector<model::HeadSummary> summaries(int layers, int heads) {
    std::vector<model::HeadSummary> all;
    for (int l = 0; l < layers; ++l) {
        for (int h = 0; h < heads; ++h) {
            model::HeadSummary s;
            s.layer = l;
            s.head = h;
            s.entropy = 1.0 + l * 0.1 + h * 0.01;
            s.firstToken = 0.05 * h;
            s.previousToken = 0.1 * l + 0.02 * h;  // L2 H3 is the largest
            s.self = 0.2;
            s.induction = (l == 1 && h == 2) ? 0.9 : std::numeric_limits<double>::quiet_NaN();
            all.push_back(s);
        }
    }
    return all;
}

QStringList letters(int count) {
    QStringList tokens;
    for (int i = 0; i < count; ++i)
        tokens << QString(QChar('a' + i % 26));
    return tokens;
}

QImage painted(QWidget& widget) {
    QImage image(widget.size(), QImage::Format_RGB32);
    widget.render(&image);
    return image;
}

// The pixel at the centre of matrix cell (row, column) of a head's map.
QPoint cellCentre(const HeadGrid& grid, HeadId head, int row, int column) {
    const QRect r = grid.mapRect(head);
    const PoolShape p = grid.poolShape();
    const double cellW = static_cast<double>(r.width()) / p.shownColumns;
    const double cellH = static_cast<double>(r.height()) / p.shownRows;
    return QPoint(r.left() + static_cast<int>((column / p.columnsPerCell + 0.5) * cellW),
                  r.top() + static_cast<int>((row / p.rowsPerCell + 0.5) * cellH));
}

bool near(QColor a, QColor b, int tolerance = 2) {
    return std::abs(a.red() - b.red()) <= tolerance &&
           std::abs(a.green() - b.green()) <= tolerance &&
           std::abs(a.blue() - b.blue()) <= tolerance;
}

}  // namespace

class TestHeadGrid : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QApplication::setFont(QFont("DejaVu Sans", 9)); }

    void everyHeadIsPaintedWithItsWeights() {
        HeadGrid grid;
        grid.resize(900, 700);
        const auto run = handMadeRun(3, 4, 6);
        grid.setRun(run, letters(6));
        QCOMPARE(grid.layers(), 3);
        QCOMPARE(grid.heads(), 4);
        const QImage image = painted(grid);
        // Shared: every map on 0 .. the largest weight of all, without a decoder's first row
        // (one key, weight 1).
        double largest = 0;
        for (const auto& layer : run->layers)
            for (const auto& w : layer.weights)
                largest = std::max(largest, static_cast<double>(w.bottomRows(5).maxCoeff()));
        QVERIFY(largest < 1.0);
        for (int l = 0; l < 3; ++l) {
            for (int h = 0; h < 4; ++h) {
                const auto [low, high] = grid.colorRange({l, h});
                QCOMPARE(low, 0.0);
                QCOMPARE(high, largest);
                for (int i = 0; i < 6; ++i) {
                    for (int j = 0; j < 6; ++j) {
                        const double w = run->layers[l].weights[h](i, j);
                        const QColor expected = gradientColor(ColorMap::Viridis, w, low, high);
                        QVERIFY2(
                            near(grid.paintedColor({l, h}, i, j), expected),
                            qPrintable(
                                QStringLiteral("L%1 H%2 (%3,%4)").arg(l).arg(h).arg(i).arg(j)));
                        const QColor onScreen = image.pixelColor(cellCentre(grid, {l, h}, i, j));
                        QVERIFY2(near(onScreen, expected),
                                 qPrintable(QStringLiteral("screen L%1 H%2 (%3,%4)")
                                                .arg(l)
                                                .arg(h)
                                                .arg(i)
                                                .arg(j)));
                    }
                }
            }
        }
        QCOMPARE(grid.layerLabels(), (QStringList{"L0", "L1", "L2"}));
        QCOMPARE(grid.headLabels(), (QStringList{"H0", "H1", "H2", "H3"}));
    }

    // A long pass fills the grid layer by layer from each layer's digest; the layers it has not
    // reached are blank, and each layer done is painted as the finished run paints it.
    void passFillsTheGridLayerByLayer() {
        const auto run = handMadeRun(3, 4, 70);  // pooled: 70 tokens in blocks of 2
        HeadGrid finished;
        finished.resize(900, 700);
        finished.setRun(run, letters(70));
        QCOMPARE(finished.layersFilled(), -1);
        HeadGrid grid;
        grid.resize(900, 700);
        for (int layer = 0; layer < 3; ++layer) {
            const model::LayerDigest digest =
                model::digestLayer(run->layers[static_cast<size_t>(layer)].weights, {},
                                   run->config.isDecoder(), layer);
            grid.showLayerDigest(layer, 3, 70, digest.heads);
            QCOMPARE(grid.layersFilled(), layer + 1);
            QCOMPARE(grid.layers(), 3);
            QCOMPARE(grid.heads(), 4);
            for (int l = 0; l < 3; ++l) {
                for (int h = 0; h < 4; ++h) {
                    for (const auto& [row, column] : {std::pair{5, 3}, std::pair{69, 68}}) {
                        if (l <= layer) {
                            QCOMPARE(grid.paintedColor({l, h}, row, column),
                                     finished.paintedColor({l, h}, row, column));
                        } else {
                            QVERIFY(!grid.paintedColor({l, h}, row, column).isValid());
                        }
                    }
                }
            }
            const QString hover = grid.hoverText(cellCentre(grid, {2, 1}, 10, 4));
            QCOMPARE(hover.contains(QStringLiteral("not run yet")), layer < 2);
        }
        // The run itself, once finished, replaces the picture.
        grid.setRun(run, letters(70));
        QCOMPARE(grid.layersFilled(), -1);
    }

    void perMapRangeUsesEachMapsLargestWeight() {
        HeadGrid grid;
        grid.resize(600, 500);
        // Without row 0 (its weight 1 everywhere) each head's largest weight is its own peak:
        // drop it by shifting, i.e. look at rows >= 1 through a run whose first row is spread.
        auto run = std::const_pointer_cast<model::ModelRun<float>>(handMadeRun(2, 3, 5));
        for (auto& layer : run->layers)
            for (auto& w : layer.weights)
                w(0, 0) = 0.1f;  // not a softmax any more; the grid only paints
        grid.setRun(run, letters(5));
        grid.setRangeMode(HeadGrid::RangeMode::PerMap);
        double sharedMax = 0;
        for (int l = 0; l < 2; ++l) {
            for (int h = 0; h < 3; ++h) {
                const double largest = run->layers[l].weights[h].maxCoeff();
                sharedMax = std::max(sharedMax, largest);
                QCOMPARE(grid.colorRange({l, h}).second, largest);
                // The cell holding the largest weight takes the top colour.
                Eigen::Index i = 0, j = 0;
                run->layers[l].weights[h].maxCoeff(&i, &j);
                // Within one of the gradient's 256 levels: QCustomPlot truncates
                // largest·255/largest, which rounding may leave at 254.99.
                QVERIFY(near(grid.paintedColor({l, h}, int(i), int(j)),
                             gradientColor(ColorMap::Viridis, 1.0, 0.0, 1.0), 4));
            }
        }
        grid.setRangeMode(HeadGrid::RangeMode::Shared);
        QCOMPARE(grid.colorRange({0, 0}).second, sharedMax);
        QVERIFY(sharedMax < 1.0);
    }

    void largeMapsArePooledByTheirMaximum() {
        HeadGrid grid;
        grid.resize(700, 600);
        const int tokens = 130;  // pooled 3 x 3 into 44 x 44
        const auto run = handMadeRun(2, 2, tokens);
        grid.setRun(run, letters(tokens));
        const PoolShape p = grid.poolShape();
        QCOMPARE(p.rowsPerCell, 3);
        QCOMPARE(p.shownRows, 44);
        QVERIFY(p.shownRows <= HeadGrid::kMaxShownCells);
        const auto& w = run->layers[1].weights[1];
        const double blockMax = w.block(60, 57, 3, 3).maxCoeff();
        QVERIFY(blockMax > 0);
        const auto [low, high] = grid.colorRange({1, 1});
        QVERIFY(near(grid.paintedColor({1, 1}, 61, 58),
                     gradientColor(ColorMap::Viridis, blockMax, low, high)));
        const QString text = grid.hoverText(cellCentre(grid, {1, 1}, 61, 58));
        QVERIFY2(text.contains("queries 60–62 → keys 57–59"), qPrintable(text));
        QVERIFY2(text.contains(QString::number(blockMax, 'f', 3)), qPrintable(text));
    }

    void hoverNamesTheHeadItsScoresAndTheCell() {
        HeadGrid grid;
        grid.resize(900, 700);
        const auto run = handMadeRun(3, 4, 6);
        grid.setRun(run, letters(6));
        grid.setSummaries(summaries(3, 4));
        grid.show();
        QVERIFY(QTest::qWaitForWindowExposed(&grid));
        QSignalSpy hovered(&grid, &HeadGrid::hoverTextChanged);
        const QPoint pixel = cellCentre(grid, {2, 3}, 4, 2);
        QTest::mouseMove(&grid, pixel);
        QVERIFY(!hovered.isEmpty());
        const QString text = hovered.last().at(0).toString();
        QVERIFY2(text.startsWith("L2 H3 · entropy 1.23 · first token 0.15 · previous token 0.26"),
                 qPrintable(text));
        QVERIFY2(text.contains("induction –"), qPrintable(text));
        const double w = run->layers[2].weights[3](4, 2);
        QVERIFY2(text.contains(QStringLiteral("4 “e” → 2 “c”: weight %1").arg(w, 0, 'f', 3)),
                 qPrintable(text));
        QVERIFY(grid.hoverText(QPoint(2, 2)).isEmpty());  // over the labels' corner
    }

    void keysMoveAndEnterOpens() {
        HeadGrid grid;
        grid.resize(600, 500);
        grid.setRun(handMadeRun(3, 4, 4), letters(4));
        QSignalSpy activated(&grid, &HeadGrid::headActivated);
        QTest::keyClick(&grid, Qt::Key_Right);
        QTest::keyClick(&grid, Qt::Key_Down);
        QTest::keyClick(&grid, Qt::Key_Down);
        QTest::keyClick(&grid, Qt::Key_Down);  // stays on the last layer
        QCOMPARE(grid.currentHead(), (HeadId{2, 1}));
        QTest::keyClick(&grid, Qt::Key_Return);
        QCOMPARE(activated.size(), 1);
        QCOMPARE(activated.at(0).at(0).toInt(), 2);
        QCOMPARE(activated.at(0).at(1).toInt(), 1);
        QTest::keyClick(&grid, Qt::Key_End);
        QCOMPARE(grid.currentHead(), (HeadId{2, 3}));
    }

    void doubleClickOpensTheHeadUnderThePointer() {
        HeadGrid grid;
        grid.resize(600, 500);
        grid.setRun(handMadeRun(3, 4, 4), letters(4));
        QSignalSpy activated(&grid, &HeadGrid::headActivated);
        QTest::mouseDClick(&grid, Qt::LeftButton, {}, grid.mapRect({1, 3}).center());
        QCOMPARE(activated.size(), 1);
        QCOMPARE(activated.at(0).at(0).toInt(), 1);
        QCOMPARE(activated.at(0).at(1).toInt(), 3);
    }

    void marksAreDrawnAroundTheirHeads() {
        HeadGrid grid;
        grid.resize(800, 600);
        grid.setRun(handMadeRun(3, 4, 4), letters(4));
        const QImage before = painted(grid);
        grid.setOpenHead(HeadId{1, 1});
        grid.setHighlighted({{0, 2}});
        grid.setChangedHeads({{2, 3}});
        const QImage after = painted(grid);
        const QRect open = grid.mapRect({1, 1});
        // Orange frame just outside the open head's map, where the background was.
        const QPoint frame(open.center().x(), open.top() - 5);
        QCOMPARE(before.pixelColor(frame), grid.palette().base().color());
        QVERIFY(near(after.pixelColor(frame), QColor(0xE6, 0x9F, 0x00), 10));
        const QRect high = grid.mapRect({0, 2});
        QVERIFY(near(after.pixelColor(high.center().x(), high.top() - 2), QColor(0x00, 0x72, 0xB2),
                     10));
        const QRect changed = grid.mapRect({2, 3});
        QVERIFY(near(after.pixelColor(changed.right() - 3, changed.top() + 3),
                     QColor(0xD5, 0x5E, 0x00), 10));
    }

    void repaintsAFullModelQuickly() {
        HeadGrid grid;
        grid.resize(1000, 800);
        const auto run = handMadeRun(12, 12, 128);
        QElapsedTimer timer;
        timer.start();
        grid.setRun(run, letters(128));
        const QImage image = painted(grid);
        const double ms = static_cast<double>(timer.nsecsElapsed()) / 1e6;
        qInfo("144 maps at L = 128: refill %.1f ms, refill and paint %.1f ms",
              grid.lastRefillMilliseconds(), ms);
        QVERIFY2(ms < 200, qPrintable(QString::number(ms)));
    }

    void tableSortsAndHighlights() {
        HeadSummaryModel model;
        HeadSummaryFilter filter;
        filter.setSourceModel(&model);
        const auto all = summaries(3, 4);
        model.setSummaries(all);
        QCOMPARE(filter.rowCount(), 12);
        filter.sort(HeadSummaryModel::scoreColumn("previous_token"), Qt::DescendingOrder);
        QCOMPARE(filter.index(0, HeadSummaryModel::LayerColumn).data().toInt(), 2);
        QCOMPARE(filter.index(0, HeadSummaryModel::HeadColumn).data().toInt(), 3);
        QCOMPARE(filter.index(0, HeadSummaryModel::scoreColumn("previous_token")).data().toString(),
                 QString("0.260"));
        // Unmeasured induction sorts below every measured one and shows a dash.
        filter.sort(HeadSummaryModel::scoreColumn("induction"), Qt::DescendingOrder);
        QCOMPARE(filter.index(0, HeadSummaryModel::scoreColumn("induction")).data().toString(),
                 QString("0.900"));
        QCOMPARE(filter.index(1, HeadSummaryModel::scoreColumn("induction")).data().toString(),
                 QString("–"));

        const auto above = headsAbove(all, model::headScore("previous_token"), 0.15);
        // Layer 2 (0.2 .. 0.26); layer 1 tops out at 0.16 with H3.
        QCOMPARE(above, (std::set<std::pair<int, int>>{{1, 3}, {2, 0}, {2, 1}, {2, 2}, {2, 3}}));
        QVERIFY(headsAbove(all, model::headScore("induction"), 0.5) ==
                (std::set<std::pair<int, int>>{{1, 2}}));
        model.setHighlighted(above);
        filter.setOnlyHighlighted(true);
        QCOMPARE(filter.rowCount(), 5);
        for (int row = 0; row < filter.rowCount(); ++row) {
            QVERIFY(filter.index(row, 0).data(HeadSummaryModel::HighlightRole).toBool());
            QVERIFY(filter.index(row, 3).data(Qt::BackgroundRole).value<QColor>().isValid());
        }
        filter.setOnlyHighlighted(false);
        QCOMPARE(filter.rowCount(), 12);
        // New scores for the same heads (a what-if) re-sort the rows in place.
        filter.sort(HeadSummaryModel::scoreColumn("previous_token"), Qt::DescendingOrder);
        auto changed = all;
        changed[0].previousToken = 0.9;  // L0 H0 goes to the top
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        model.setSummaries(changed);
        QCOMPARE(reset.size(), 0);
        QCOMPARE(filter.index(0, HeadSummaryModel::LayerColumn).data().toInt(), 0);
        QCOMPARE(filter.index(0, HeadSummaryModel::HeadColumn).data().toInt(), 0);
        QCOMPARE(filter.index(0, HeadSummaryModel::scoreColumn("previous_token")).data().toString(),
                 QString("0.900"));
    }
};

QTEST_MAIN(TestHeadGrid)
#include "test_head_grid.moc"
