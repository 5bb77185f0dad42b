// The model view as files (issue 16): every head of the tiny GPT-2 as its own image with the
// heads' summaries in a CSV and the view's parts, written atomically; and the export dialog on
// the model view, writing the part asked for in each format.

#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

#include "core/model/model_analysis.h"
#include "io/formats/result_export.h"
#include "io/model/model_folder.h"
#include "plot/model_view.h"
#include "ui/files/batch_export.h"
#include "ui/files/export_dialog.h"

using namespace ae;
using namespace ae::ui;
using namespace ae::plot;

namespace {

const std::vector<long long> kIds{63, 5, 17, 5, 17, 40, 2, 9};

struct Loaded {
    std::unique_ptr<io::ModelFolder> folder;
    ModelViewData data;
};

Loaded loadTinyGpt2() {
    Loaded l;
    l.folder =
        std::make_unique<io::ModelFolder>(QStringLiteral(AE_TEST_DATA_DIR "/models/gpt2-tiny"));
    auto run =
        std::make_shared<model::ModelRun<float>>(model::runModel<float>(l.folder->model(), kIds));
    l.data.run = run;
    for (long long id : kIds)
        l.data.tokens << QStringLiteral("t%1").arg(id);
    l.data.summaries = model::summarizeHeads(*run);
    l.data.predictions = model::topPredictions(*run, static_cast<int>(kIds.size()) - 1);
    return l;
}

QByteArray readAll(const QString& file) {
    QFile f(file);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// Whether the image holds more than one colour: something was drawn.
bool hasContent(const QImage& image) {
    if (image.isNull()) return false;
    const QRgb first = image.pixel(0, 0);
    for (int y = 0; y < image.height(); y += 3) {
        for (int x = 0; x < image.width(); x += 3) {
            if (image.pixel(x, y) != first) return true;
        }
    }
    return false;
}

}  // namespace

class TestModelExport : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QApplication::setFont(QFont("DejaVu Sans", 9));
        QVERIFY(dir_.isValid());
    }

    void everyHeadOfTheModelAsFiles() {
        const Loaded l = loadTinyGpt2();
        const model::ModelRun<float>& run = *l.data.run;
        const int layers = static_cast<int>(run.layers.size());
        const int heads = run.config.heads;
        QVERIFY(layers >= 1 && heads >= 2);
        const QString folder = dir_.filePath(QStringLiteral("model-heads"));
        ImageOptions options;
        options.size = QSize(360, 320);
        const QStringList files = exportEveryModelHead(l.data, folder, QStringLiteral("gpt2"),
                                                       ImageFormat::Png, options, QSize(900, 600));
        QCOMPARE(files.size(), layers * heads + 1 + 3);
        QCOMPARE(QDir(folder).entryList(QDir::Files).size(), files.size());  // no temporaries
        for (const QString& file : files)
            QVERIFY2(QFileInfo::exists(file), qPrintable(file));

        // One image per head, named by layer and head, each a drawn map of the asked size.
        for (int layer = 0; layer < layers; ++layer) {
            for (int head = 0; head < heads; ++head) {
                const QString file = QDir(folder).filePath(QStringLiteral("gpt2-L%1-H%2.png")
                                                               .arg(layer, 2, 10, QChar('0'))
                                                               .arg(head, 2, 10, QChar('0')));
                QVERIFY2(files.contains(file), qPrintable(file));
                const QImage image(file);
                QCOMPARE(image.size(), QSize(360, 320));
                QVERIFY(hasContent(image));
            }
        }
        // Heads whose weights differ look different.
        QVERIFY(!run.layers[0].weights[0].isApprox(run.layers[0].weights[1]));
        QVERIFY(QImage(QDir(folder).filePath("gpt2-L00-H00.png")) !=
                QImage(QDir(folder).filePath("gpt2-L00-H01.png")));

        // The view's parts at the asked size.
        for (const char* part : {"grid", "rollout", "qk"}) {
            const QImage image(QDir(folder).filePath(QStringLiteral("gpt2-%1.png").arg(part)));
            QCOMPARE(image.size(), QSize(900, 600));
            QVERIFY2(hasContent(image), part);
        }

        // The CSV's numbers are the summaries, exactly; an unmeasured induction is empty.
        const QList<QByteArray> lines =
            readAll(QDir(folder).filePath("gpt2-heads.csv")).trimmed().split('\n');
        QCOMPARE(lines.size(), layers * heads + 1);
        QCOMPARE(lines[0], QByteArray("layer,head,entropy,first_token,previous_token,self,"
                                      "induction,to_separator,sink_norm"));
        for (int i = 0; i < layers * heads; ++i) {
            const model::HeadSummary& s = l.data.summaries[static_cast<size_t>(i)];
            const QList<QByteArray> cells = lines[i + 1].split(',');
            QCOMPARE(cells.size(), 9);
            QCOMPARE(cells[0].toInt(), s.layer);
            QCOMPARE(cells[1].toInt(), s.head);
            QCOMPARE(cells[2].toDouble(), s.entropy);
            QCOMPARE(cells[3].toDouble(), s.firstToken);
            QCOMPARE(cells[4].toDouble(), s.previousToken);
            QCOMPARE(cells[5].toDouble(), s.self);
            if (std::isnan(s.induction))
                QVERIFY(cells[6].isEmpty());
            else
                QCOMPARE(cells[6].toDouble(), s.induction);
            QVERIFY(std::isnan(s.toSeparator));  // GPT-2's text has no separator
            QVERIFY(cells[7].isEmpty());
        }
    }

    void vectorFormatsForEveryHead() {
        const Loaded l = loadTinyGpt2();
        const QString folder = dir_.filePath(QStringLiteral("model-svg"));
        ImageOptions options;
        options.size = QSize(360, 320);
        const QStringList files = exportEveryModelHead(l.data, folder, QStringLiteral("m"),
                                                       ImageFormat::Svg, options, QSize(900, 600));
        for (const QString& file : files) {
            const QByteArray bytes = readAll(file);
            if (file.endsWith(".csv")) continue;
            QVERIFY2(file.endsWith(".svg") && bytes.contains("<svg"), qPrintable(file));
        }
        QVERIFY(readAll(QDir(folder).filePath("m-L01-H00.svg")).contains("layer 1, head 0"));
    }

    void unwritableFolderFailsCleanly() {
        const Loaded l = loadTinyGpt2();
        // A folder that cannot be created: its parent is a file.
        const QString blocker = dir_.filePath(QStringLiteral("a-file"));
        io::writeFileAtomically(blocker, "x");
        try {
            exportEveryModelHead(l.data, blocker + QStringLiteral("/heads"), "m", ImageFormat::Png,
                                 ImageOptions());
            QFAIL("expected io::WriteError");
        } catch (const io::WriteError& e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains("cannot create the directory"), e.what());
        }
        // A folder where the first file cannot be written (a directory holds its name): the
        // error names it and no file, partial or temporary, is left behind.
        const QString folder = dir_.filePath(QStringLiteral("blocked"));
        QVERIFY(QDir().mkpath(QDir(folder).filePath("m-heads.csv")));
        try {
            exportEveryModelHead(l.data, folder, "m", ImageFormat::Png, ImageOptions());
            QFAIL("expected io::WriteError");
        } catch (const io::WriteError& e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains("m-heads.csv"), e.what());
        }
        QCOMPARE(QDir(folder).entryList(QDir::Files | QDir::Hidden | QDir::System).size(), 0);
        QCOMPARE(QDir(folder).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden),
                 QStringList{"m-heads.csv"});
    }

    // The dialog on the model view writes the part chosen in each format.
    void dialogWritesTheChosenPart() {
        const Loaded l = loadTinyGpt2();
        ModelView view;
        view.resize(1100, 700);
        view.setData(l.data);
        QString error;
        const char* parts[] = {"grid", "rollout", "qk"};
        for (int part = 0; part < 3; ++part) {
            for (const char* suffix : {"png", "pdf", "svg"}) {
                ExportDialog dialog(&view, ExportDialog::Mode::ModelImage);
                auto* maps = dialog.findChild<QComboBox*>("mapsCombo");
                auto* format = dialog.findChild<QComboBox*>("formatCombo");
                QVERIFY(maps && format);
                QCOMPARE(maps->count(), 3);
                maps->setCurrentIndex(part);
                format->setCurrentIndex(format->findData(QString::fromLatin1(suffix)));
                const QString file = dir_.filePath(QStringLiteral("view-%1").arg(parts[part]));
                dialog.setTarget(file);  // the format's suffix is added
                QVERIFY2(dialog.exportNow(&error), qPrintable(error));
                const QString written = file + QLatin1Char('.') + QLatin1String(suffix);
                QCOMPARE(dialog.target(), written);
                const QByteArray bytes = readAll(written);
                if (QByteArray(suffix) == "png") {
                    const QImage image = QImage::fromData(bytes, "PNG");
                    QCOMPARE(image.size(), QSize(1100, 700));
                    QVERIFY(hasContent(image));
                } else if (QByteArray(suffix) == "pdf") {
                    // The dialog's size in points (0.75 pt a pixel), whatever the last format
                    // was: a PDF does not switch the model view to a paper's column.
                    QVERIFY(bytes.startsWith("%PDF"));
                    QVERIFY2(bytes.contains("/MediaBox [0 0 825.000000 525.000000]"),
                             bytes.left(2000));
                } else {
                    QVERIFY(bytes.contains("<svg"));
                    QVERIFY(bytes.contains("viewBox=\"0 0 1100 700\""));
                }
            }
        }
        // The three parts are different pictures.
        const QImage grid(dir_.filePath("view-grid.png")),
            rollout(dir_.filePath("view-rollout.png")), qk(dir_.filePath("view-qk.png"));
        QVERIFY(grid != rollout && rollout != qk && grid != qk);
    }

    void dialogExportsEveryHead() {
        const Loaded l = loadTinyGpt2();
        ModelView view;
        view.resize(900, 600);
        view.setData(l.data);
        ExportDialog dialog(&view, ExportDialog::Mode::ModelEveryHead);
        auto* format = dialog.findChild<QComboBox*>("formatCombo");
        format->setCurrentIndex(format->findData(QStringLiteral("png")));
        const QString folder = dir_.filePath(QStringLiteral("dialog-heads"));
        dialog.setTarget(folder);
        QString error;
        QVERIFY2(dialog.exportNow(&error), qPrintable(error));
        const int heads = static_cast<int>(l.data.summaries.size());
        QCOMPARE(QDir(folder).entryList(QDir::Files).size(), heads + 1 + 3);
        // The size fields are one head's map; the view's parts keep their own size.
        QCOMPARE(QImage(QDir(folder).filePath("model-L00-H00.png")).size(), naturalImageSize(1));
        QCOMPARE(QImage(QDir(folder).filePath("model-grid.png")).size(), QSize(1280, 800));
        // A folder that cannot be made: the dialog reports the writer's reason.
        io::writeFileAtomically(dir_.filePath("plain-file"), "x");
        dialog.setTarget(dir_.filePath("plain-file/heads"));
        QVERIFY(!dialog.exportNow(&error));
        QVERIFY2(error.contains("cannot create the directory"), qPrintable(error));
    }

private:
    QTemporaryDir dir_;
};

QTEST_MAIN(TestModelExport)
#include "test_model_export.moc"
