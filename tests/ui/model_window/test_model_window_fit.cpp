// A whole model in the window at a projector's 1024 pixels: the window with the model open fits,
// with every dock alone and all at once, before and after the model; the heads table's scores
// and headers read whole, in presentation mode too; a long problem in the model input is read
// whole.

#include <QAction>
#include <QDockWidget>
#include <QFontMetrics>
#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QStringList>
#include <QTabWidget>
#include <QTableView>
#include <QtTest>

#include "document/model_session.h"
#include "plot/head_summary_table.h"
#include "plot/model_view.h"
#include "support/model_window_fixture.h"
#include "ui/window/main_window.h"
#include "ui/window/model_panel.h"

using namespace ae;
using namespace ae::ui;
using namespace ae::document;
using namespace ae::plot;
using test::gpt2Tiny;

class TestModelWindowFit : public QObject, private test::ModelWindowFixture {
    Q_OBJECT
private slots:
    void initTestCase() { test::startModelWindowTests(QStringLiteral("test_model_window_fit")); }
    void init() { openWindow(); }
    void cleanup() { closeWindow(); }
    void aModelOpenFitsA1024PixelScreen();
    void everyDockFitsA1024PixelScreen_data();
    void everyDockFitsA1024PixelScreen();
    void longProblemIsReadWhole();
};

// A projector's 1024 pixels: with a model open and its tab in front, the window fits (before,
// the combos sized to their longest item and the view pushed the window to 1150 pixels).
void TestModelWindowFit::aModelOpenFitsA1024PixelScreen() {
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
        if (table->isColumnHidden(column)) continue;  // to [SEP]: the text has no separator
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
            if (table->isColumnHidden(column)) continue;
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
                if (table->isColumnHidden(column)) continue;
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
void TestModelWindowFit::everyDockFitsA1024PixelScreen_data() {
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

void TestModelWindowFit::everyDockFitsA1024PixelScreen() {
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

// A problem too long for one line in the model input at 1024 pixels is read whole: it takes the
// hint's room and the dock grows to its lines (it was cut off at the dock's bottom).
void TestModelWindowFit::longProblemIsReadWhole() {
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

QTEST_MAIN(TestModelWindowFit)
#include "test_model_window_fit.moc"
