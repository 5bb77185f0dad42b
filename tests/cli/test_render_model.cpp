// `render MODEL_DIR --view ...` through the real binary: each view in each vector and raster
// format on the tiny GPT-2, its pixels against the same view drawn in process, and the contract
// for bad arguments (exit status 2, one stderr line, no file).

#include <QApplication>
#include <QFile>
#include <QImage>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>

#include "core/model/model_analysis.h"
#include "io/model/model_folder.h"
#include "plot/head_grid.h"
#include "plot/model_view_export.h"
#include "support/file_bytes.h"
#include "support/run_binary.h"

using namespace ae;
using namespace ae::plot;

namespace {

using ae::test::readAll;
using ae::test::runBinary;

const QString kModel = QStringLiteral(AE_TEST_DATA_DIR "/models/gpt2-tiny");
const QString kIds = QStringLiteral("63,5,17,5,17,40,2,9");

}  // namespace

class TestRenderModel : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QApplication::setFont(QFont(QStringLiteral("DejaVu Sans"), 9));
        QVERIFY(dir_.isValid());
    }

    void everyViewInEveryFormat_data() {
        QTest::addColumn<QString>("view");
        QTest::addColumn<QString>("suffix");
        for (const char* view : {"model", "head", "rollout", "qk"}) {
            for (const char* suffix : {"png", "pdf", "svg"})
                QTest::newRow(qPrintable(QStringLiteral("%1.%2").arg(view, suffix)))
                    << QString(view) << QString(suffix);
        }
    }

    void everyViewInEveryFormat() {
        QFETCH(QString, view);
        QFETCH(QString, suffix);
        const QString out = dir_.filePath(view + "." + suffix);
        const auto run = runBinary({"render", kModel, "--ids", kIds, "--view", view, "--layer", "1",
                                    "--head", "2", "--width", "800", "--height", "600", "-o", out});
        QCOMPARE(QString::fromUtf8(run.err), QString());
        QCOMPARE(run.exitCode, 0);
        const QByteArray bytes = readAll(out);
        if (suffix == "png") {
            QImage image;
            QVERIFY(image.loadFromData(bytes, "PNG"));
            QCOMPARE(image.size(), QSize(800, 600));
        } else if (suffix == "pdf") {
            QVERIFY(bytes.startsWith("%PDF"));
            QVERIFY(bytes.trimmed().endsWith("%%EOF"));
        } else {
            QXmlStreamReader xml(bytes);
            bool svgRoot = false;
            while (!xml.atEnd()) {
                xml.readNext();
                if (xml.isStartElement() && xml.name() == QLatin1String("svg")) svgRoot = true;
            }
            QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
            QVERIFY(svgRoot);
        }
    }

    void theModelViewIsTheWindowsDrawing() {
        // The same run drawn in process, with the same inputs the command gives the view.
        const QString out = dir_.filePath("same.png");
        QCOMPARE(runBinary({"render", kModel, "--ids", kIds, "--view", "model", "--width", "900",
                            "--height", "640", "-o", out})
                     .exitCode,
                 0);
        const io::ModelFolder folder(kModel);
        const std::vector<long long> ids{63, 5, 17, 5, 17, 40, 2, 9};
        auto run =
            std::make_shared<model::ModelRun<float>>(model::runModel<float>(folder.model(), ids));
        ModelViewData data;
        data.run = run;
        for (long long id : ids)
            data.tokens << QString::number(id);
        data.summaries = model::summarizeHeads(*run);
        ModelViewImage image;
        image.size = QSize(900, 640);
        QImage expected;
        QVERIFY(expected.loadFromData(renderModelView(data, image, ImageFormat::Png), "PNG"));
        QImage written;
        QVERIFY(written.load(out));
        // The grid's maps are identical; (the table differs: the command also measures
        // induction). Compare the painted centre of every head's map.
        ModelView view;
        view.resize(900, 640);
        view.setData(data);
        QImage scratch(view.size(), QImage::Format_ARGB32_Premultiplied);
        view.render(&scratch);
        view.render(&scratch);
        int compared = 0;
        for (int layer = 0; layer < 2; ++layer) {
            for (int head = 0; head < 4; ++head) {
                const auto* grid = view.grid();
                const QRect r = grid->mapRect({layer, head});
                const QPoint centre = r.center();
                const QPoint p = grid->mapTo(&view, centre);
                QCOMPARE(written.pixel(p), expected.pixel(p));
                const int row = (centre.y() - r.top()) * 8 / r.height();
                const int column = (centre.x() - r.left()) * 8 / r.width();
                QCOMPARE(QColor(written.pixel(p)), grid->paintedColor({layer, head}, row, column));
                ++compared;
            }
        }
        QCOMPARE(compared, 8);
    }

    void badArgumentsExitTwoWithOneLine_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("problem");
        const QString out = dir_.filePath("never.png");
        QTest::newRow("layer") << QStringList{kModel,    "--ids", kIds, "--view", "qk",
                                              "--layer", "2",     "-o", out}
                               << "render: --layer: expected 0 to 1, got 2";
        QTest::newRow("head") << QStringList{kModel,   "--ids", kIds, "--view", "qk",
                                             "--head", "4",     "-o", out}
                              << "render: --head: expected 0 to 3, got 4";
        QTest::newRow("head view head")
            << QStringList{kModel, "--ids", kIds, "--view", "head", "--head", "-1", "-o", out}
            << "render: --head: expected 0 to 3, got -1";
        QTest::newRow("view")
            << QStringList{kModel, "--ids", kIds, "--view", "all", "-o", out}
            << "render: --view: expected model, head, rollout, qk or cross, got all";
        QTest::newRow("no input") << QStringList{kModel, "--view", "model", "-o", out}
                                  << "render: give --text TEXT or --ids 1,2,3";
        QTest::newRow("id") << QStringList{kModel, "--ids", "63,99", "--view", "model", "-o", out}
                            << "99";
        QTest::newRow("position") << QStringList{kModel, "--ids", kIds, "--position",
                                                 "8",    "-o",    out}
                                  << "render: --position: expected 0 to 7, got 8";
    }

    void badArgumentsExitTwoWithOneLine() {
        QFETCH(QStringList, arguments);
        QFETCH(QString, problem);
        const auto run = runBinary(QStringList{"render"} + arguments);
        const QString err = QString::fromUtf8(run.err);
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(err.endsWith('\n') && err.count('\n') == 1, qPrintable(err));
        QVERIFY2(err.contains(problem), qPrintable(err));
        QVERIFY(!QFile::exists(dir_.filePath("never.png")));
    }

private:
    QTemporaryDir dir_;
};

QTEST_MAIN(TestRenderModel)
#include "test_render_model.moc"
