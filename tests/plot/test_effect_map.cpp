// The labelled map (plot/effect_map.h) as a figure: an image labels as many rows and columns as
// fit the image's own size, whatever size the map has in the window, and leaves the window's map
// as it was.
#include <QImage>
#include <QtTest>

#include <qcustomplot.h>

#include "plot/effect_map.h"

using namespace ae;

namespace {

// The row labels a figure draws: runs of image rows with dark pixels in the strip between the
// axis name (rotated, at the far left) and the axis, x in [20, 60).
int rowLabelsDrawn(const QImage& image) {
    int runs = 0;
    bool inRun = false;
    for (int y = 0; y < image.height(); ++y) {
        bool dark = false;
        for (int x = 20; x < 60 && !dark; ++x)
            dark = qGray(image.pixel(x, y)) < 128;
        if (dark && !inRun) ++runs;
        inRun = dark;
    }
    return runs;
}

// A map of `rows` x `columns` words in a widget of `size`, as a hidden export sees it.
struct Map {
    QWidget host;
    plot::EffectMap* map;
    Map(int rows, int columns, QSize size) {
        map = new plot::EffectMap(QStringLiteral("alignment"), &host,
                                  plot::EffectMap::Scale::Sequential,
                                  QStringLiteral("attention weight"));
        map->setAxisNames(QStringLiteral("source"), QStringLiteral("output"));
        MatrixD values = MatrixD::Zero(rows, columns);
        QStringList rowLabels, columnLabels;
        for (int r = 0; r < rows; ++r) {
            values(r, r % columns) = 1.0;
            rowLabels << QStringLiteral("out%1").arg(r);
        }
        for (int c = 0; c < columns; ++c)
            columnLabels << QStringLiteral("in%1").arg(c);
        map->setValues(values, rowLabels, columnLabels);
        map->widget()->resize(size);
    }
    QImage image(QSize size) const {
        return QImage::fromData(map->image(plot::ImageFormat::Png, size));
    }
};

int rowTicks(const Map& m) {
    const auto ticker = m.map->plot()->yAxis->ticker().dynamicCast<QCPAxisTickerText>();
    return ticker ? static_cast<int>(ticker->ticks().size()) : -1;
}

}  // namespace

class TestEffectMap : public QObject {
    Q_OBJECT
private slots:
    // The same figure from a map the window shows small and from one shown at the figure's own
    // size: a small map used to thin the figure's labels to every third.
    void figureLabelsFollowTheImageSize() {
        const QSize figure(1024, 768);
        Map small(8, 8, QSize(160, 120));
        QVERIFY(rowTicks(small) < 8);
        const QImage image = small.image(figure);
        QCOMPARE(image.size(), figure);
        QCOMPARE(rowLabelsDrawn(image), 8);
        // A figure too small for every label draws fewer of them.
        const QImage tiny = small.image(QSize(300, 160));
        QCOMPARE(tiny.size(), QSize(300, 160));
        QVERIFY(rowLabelsDrawn(tiny) < 8);
        // The window's map goes back to the labels that fit its own, smaller size.
        QVERIFY(rowTicks(small) < 8);
    }
};

QTEST_MAIN(TestEffectMap)
#include "test_effect_map.moc"
