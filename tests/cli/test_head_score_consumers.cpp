// Every place that shows the head scores lists every row of core/model/head_scores.h, in the
// table's order, with the row's own names and numbers: the model view's heads table (a column
// per row, its title, short title and tooltip), the threshold's choice of score, the grid's
// read-out, `heads --json` (a key per row), the `heads` table (a column per row) and the
// window's CSV export (a column per row). A consumer that spells the scores out instead of
// reading the table fails here as soon as a row is added.
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

#include "core/model/head_scores.h"
#include "core/model/model_analysis.h"
#include "core/model/workbench.h"
#include "io/model/model_folder.h"
#include "plot/head_grid.h"
#include "plot/head_summary_table.h"
#include "plot/model_view.h"
#include "support/model_checks.h"
#include "support/run_binary.h"
#include "ui/files/batch_export.h"

using namespace ae;
using namespace ae::ui;
using namespace ae::plot;

namespace {

const std::vector<model::HeadScore>& rows() {
    return model::headScores();
}

QStringList keys() {
    QStringList names;
    for (const model::HeadScore& score : rows())
        names << QString::fromUtf8(score.key);
    return names;
}

// One head whose every score is its own number (0.1, 0.2, ...), so a column showing another
// row's field is seen.
model::HeadSummary distinctScores() {
    model::HeadSummary s;
    s.layer = 1;
    s.head = 2;
    double value = 0.1;
    for (const model::HeadScore& score : rows()) {
        s.*score.value = value;
        value += 0.1;
    }
    return s;
}

const std::vector<long long> kIds = {7, 41, 3, 59};

}  // namespace

class TestHeadScoreConsumers : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    void headsTableHasAColumnPerRow() {
        HeadSummaryModel table;
        const model::HeadSummary s = distinctScores();
        table.setSummaries({s});
        QCOMPARE(table.columnCount(), 2 + int(rows().size()));
        QCOMPARE(HeadSummaryModel::lastScoreColumn(), table.columnCount() - 1);
        for (size_t i = 0; i < rows().size(); ++i) {
            const model::HeadScore& score = rows()[i];
            const int column = HeadSummaryModel::FirstScoreColumn + int(i);
            QCOMPARE(HeadSummaryModel::scoreColumn(score.key), column);
            QCOMPARE(&HeadSummaryModel::scoreOf(column), &score);
            QCOMPARE(table.headerData(column, Qt::Horizontal, Qt::DisplayRole).toString(),
                     QString::fromUtf8(score.label).replace(' ', '\n'));
            QCOMPARE(table.headerData(column, Qt::Horizontal, Qt::ToolTipRole).toString(),
                     QString::fromUtf8(score.help));
            QCOMPARE(table.index(0, column).data(HeadSummaryModel::SortRole).toDouble(),
                     s.*score.value);
            QCOMPARE(table.index(0, column).data().toString(),
                     QString::number(s.*score.value, 'f', 3));
        }
        table.setShortHeaders(true);
        for (size_t i = 0; i < rows().size(); ++i) {
            const int column = HeadSummaryModel::FirstScoreColumn + int(i);
            QCOMPARE(table.headerData(column, Qt::Horizontal, Qt::DisplayRole).toString(),
                     QString::fromUtf8(rows()[i].shortLabel));
        }
    }

    void thresholdOffersEveryRow() {
        ModelView view;
        QComboBox* choice = nullptr;
        for (QComboBox* combo : view.findChildren<QComboBox*>())
            if (combo->findData(QStringLiteral("previous_token")) >= 0) choice = combo;
        QVERIFY(choice);
        QCOMPARE(choice->count(), int(rows().size()));
        for (int i = 0; i < choice->count(); ++i) {
            QCOMPARE(choice->itemData(i).toString(), QString::fromUtf8(rows()[size_t(i)].key));
            QCOMPARE(choice->itemText(i), QString::fromUtf8(rows()[size_t(i)].label));
        }
    }

    void gridReadOutNamesEveryRow() {
        const model::HeadSummary s = distinctScores();
        QStringList expected = {QStringLiteral("L1 H2")};
        for (const model::HeadScore& score : rows()) {
            expected << QString::fromUtf8(score.key).replace('_', ' ') + ' ' +
                            QString::number(s.*score.value, 'f', 2);
        }
        QCOMPARE(headSummaryText(s), expected.join(QStringLiteral(" · ")));
    }

    void headsJsonHasAKeyPerRow() {
        const auto r = test::runBinary(
            {"heads", testing::goldenModelDir("gpt2-tiny"), "--ids", "7,41,3,59", "--json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QList<QByteArray> lines = r.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 2 * 4);
        // The keys as written, in order (a parsed QJsonObject would sort them).
        static const QRegularExpression key(QStringLiteral("\"([a-z_0-9]+)\":"));
        for (const QByteArray& line : lines) {
            QStringList written;
            for (const auto& match : key.globalMatch(QString::fromUtf8(line)))
                written << match.captured(1);
            QCOMPARE(written, QStringList({"layer", "head"}) + keys());
        }
    }

    void headsCommandTableHasAColumnPerRow() {
        const auto r =
            test::runBinary({"heads", testing::goldenModelDir("gpt2-tiny"), "--ids", "7,41,3,59"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QList<QByteArray> lines = r.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 2 + 2 * 4);
        QCOMPARE(QString::fromUtf8(lines[1].simplified()).split(' '),
                 QStringList({"layer", "head"}) + keys());
        for (int n = 2; n < lines.size(); ++n)
            QCOMPARE(int(lines[n].simplified().split(' ').size()), 2 + int(rows().size()));
    }

    void csvExportHasAColumnPerRow() {
        const io::ModelFolder folder(testing::goldenModelDir("gpt2-tiny"));
        ModelViewData data;
        // The first token stands for a separator, so that every score has a number.
        model::RunOptions runOptions;
        runOptions.separators = {0};
        const auto run = std::make_shared<model::ModelRun<float>>(
            model::runModel<float>(folder.model(), kIds, runOptions));
        data.run = run;
        for (long long id : kIds)
            data.tokens << QStringLiteral("t%1").arg(id);
        data.summaries = model::summarizeHeads(*run);
        auto repeated = kIds;
        repeated.insert(repeated.end(), kIds.begin(), kIds.end());
        model::addRepeatedRunScores(data.summaries,
                                    model::runModel<float>(folder.model(), repeated), 0, 4);
        model::addValueNormScores(data.summaries, folder.model(), *run);
        ImageOptions options;
        options.size = QSize(120, 100);
        exportEveryModelHead(data, dir_.path(), QStringLiteral("m"), ImageFormat::Png, options,
                             QSize(400, 300));
        QFile csv(QDir(dir_.path()).filePath(QStringLiteral("m-heads.csv")));
        QVERIFY(csv.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = csv.readAll().trimmed().split('\n');
        QCOMPARE(int(lines.size()), 1 + int(data.summaries.size()));
        QCOMPARE(QString::fromUtf8(lines[0]).split(','), QStringList({"layer", "head"}) + keys());
        for (size_t n = 0; n < data.summaries.size(); ++n) {
            const QList<QByteArray> cells = lines[int(n) + 1].split(',');
            QCOMPARE(int(cells.size()), 2 + int(rows().size()));
            for (size_t i = 0; i < rows().size(); ++i) {
                const double value = data.summaries[n].*rows()[i].value;
                QVERIFY(std::isfinite(value));
                QCOMPARE(cells[int(2 + i)].toDouble(), value);
            }
        }
    }

private:
    QTemporaryDir dir_;
};

QTEST_MAIN(TestHeadScoreConsumers)
#include "test_head_score_consumers.moc"
