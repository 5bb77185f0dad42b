#include "plot/image_export.h"

#include <QBuffer>
#include <QFileInfo>
#include <QImageWriter>
#include <QPdfWriter>
#include <QSvgGenerator>
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/scene_error.h"
#include "io/formats/result_export.h"
#include "plot/heatmap_controller.h"
#include "qcustomplot.h"

namespace ae::plot {
namespace {

constexpr QSize kNaturalTile(460, 400);
// Paper figures: a map is laid out at least this wide when the text may shrink to make room,
// and the text never shrinks below 7/9 of the window's (9 pt to 7 pt).
constexpr double kPaperTileWidth = 380.0;
constexpr double kMaxPaperShrink = 9.0 / 7.0;
constexpr double kLogicalDpi = 96.0;

// QCustomPlot lays out with the screen's font metrics: every device we draw on gets the same
// logical resolution, so text takes the room the layout gave it.
int layoutDpi(const std::vector<HeatmapController*>& tiles) {
    return tiles.empty() ? 96 : tiles.front()->plot()->logicalDpiY();
}

QFont captionFont(const std::vector<HeatmapController*>& tiles) {
    QFont font = tiles.empty() ? QFont() : tiles.front()->plot()->font();
    font.setBold(true);
    font.setPointSizeF(font.pointSizeF() * 1.25);
    return font;
}

// One count of decimals for the whole figure, from the largest |value| of any map drawn: maps
// side by side are compared cell by cell.
int figureDecimals(const std::vector<HeatmapController*>& tiles, int asked) {
    if (asked >= 0 || tiles.size() < 2) return asked;
    double largest = 0.0;
    for (const HeatmapController* c : tiles) {
        if (c->matrix().size() > 0) {
            const float m = c->matrix().cwiseAbs().maxCoeff();
            largest = std::max(largest, std::isfinite(m) ? double(m) : 1e38);
        }
    }
    return automaticDecimals(largest);  // -1 (scientific) stays per map
}

void applyStyle(const std::vector<HeatmapController*>& tiles, const FigureStyle& style) {
    const bool noTitles = style.title && style.title->isEmpty();
    const int decimals = figureDecimals(tiles, style.decimals);
    for (HeatmapController* c : tiles) {
        c->setTitleShown(!noTitles);
        if (style.title && !noTitles && tiles.size() == 1) c->setTitle(*style.title);
        c->setColorBarLabel(style.colorBarLabel);
        c->setDecimals(decimals);
        c->setNumbersMayGrow(!style.paper);
    }
    if (style.range.kind == ColorRange::Kind::Fixed) {
        for (HeatmapController* c : tiles)
            c->setDataRange(style.range.low, style.range.high);
    } else if (style.range.kind == ColorRange::Kind::Shared && !tiles.empty()) {
        QCPRange all = tiles.front()->colorMap()->dataRange();
        for (const HeatmapController* c : tiles)
            all.expand(c->colorMap()->dataRange());
        for (HeatmapController* c : tiles)
            c->setDataRange(all.lower, all.upper);
    }
}

// The line above the maps: a given title over several maps, and a sweep's parameter.
QString captionText(const std::vector<HeatmapController*>& tiles, const ImageOptions& options) {
    const std::optional<QString>& title = options.style.title;
    if (!title || title->isEmpty() || tiles.size() <= 1) return options.caption;
    return options.caption.isEmpty() ? *title : *title + QStringLiteral(" · ") + options.caption;
}

// Masked cells carry a value (the softmax's 0, or the score it ignored): the legend says why
// those cells are hatched, so a hatched 0.00 is not read as a small weight.
int drawMaskedLegend(QCPPainter& painter, const std::vector<HeatmapController*>& tiles,
                     QSize size) {
    const bool masked = std::any_of(tiles.begin(), tiles.end(),
                                    [](const HeatmapController* c) { return c->hasMaskedCells(); });
    if (!masked) return 0;
    const QFont font = tiles.front()->plot()->font();
    const QFontMetricsF metrics(font);
    const QString text = QObject::tr("masked (hidden from the softmax)");
    const int height = qRound(metrics.height() * 1.6);
    const double swatchWidth = metrics.height() * 1.6;
    const double textWidth = metrics.horizontalAdvance(text);
    const double right = size.width() - metrics.height();
    const QRectF swatch(right - textWidth - 6.0 - swatchWidth, size.height() - height * 0.8,
                        swatchWidth, metrics.height() * 0.9);
    painter.save();
    painter.setRenderHint(QPainter::Antialiasing, true);
    painter.fillRect(swatch, QColor(225, 225, 225));
    painter.setClipRect(swatch);
    painter.setPen(QPen(QColor(40, 40, 40, 200), 1.2));
    for (double t = -swatch.height(); t < swatch.width(); t += 5.0) {
        painter.drawLine(QPointF(swatch.left() + t, swatch.bottom()),
                         QPointF(swatch.left() + t + swatch.height(), swatch.top()));
    }
    painter.setClipping(false);
    painter.setPen(QPen(QColor(40, 40, 40), 1.0, Qt::DashLine));
    painter.drawRect(swatch);
    painter.setFont(font);
    painter.setPen(QColor(30, 30, 30));
    painter.drawText(QRectF(swatch.right() + 6.0, swatch.top() - metrics.height(), textWidth + 2.0,
                            swatch.height() + 2.0 * metrics.height()),
                     Qt::AlignLeft | Qt::AlignVCenter, text);
    painter.restore();
    return height;
}

// Draws everything in logical pixels on an active painter whose device has layoutDpi().
void drawTiles(QCPPainter& painter, const std::vector<HeatmapController*>& tiles,
               const ImageOptions& options, QSize size) {
    painter.fillRect(QRect(QPoint(0, 0), size), Qt::white);
    applyStyle(tiles, options.style);
    int top = 0;
    const QString caption = captionText(tiles, options);
    if (!caption.isEmpty()) {
        const QFont font = captionFont(tiles);
        top = qRound(QFontMetricsF(font).height() * 1.8);
        painter.setFont(font);
        painter.setPen(QColor(30, 30, 30));
        painter.drawText(QRect(0, 0, size.width(), top), Qt::AlignCenter, caption);
    }
    const int n = static_cast<int>(tiles.size());
    if (n == 0) return;
    const int bottom = drawMaskedLegend(painter, tiles, size);
    int cellRows = 1, cellColumns = 1;
    for (const HeatmapController* c : tiles) {
        cellRows = std::max(cellRows, c->rows());
        cellColumns = std::max(cellColumns, c->columns());
    }
    const QSize area(size.width(), size.height() - top - bottom);
    const int columns = options.columns > 0
                            ? std::min(options.columns, n)
                            : bestGridColumns(n, QSize(cellColumns, cellRows), area);
    const int rows = (n + columns - 1) / columns;
    const QSize tile(area.width() / columns, area.height() / rows);
    for (int i = 0; i < n; ++i) {
        QCustomPlot* plot = tiles[static_cast<size_t>(i)]->plot();
        settleAtSize(plot, tile);
        painter.save();
        painter.translate((i % columns) * tile.width(), top + (i / columns) * tile.height());
        plot->toPainter(&painter, tile.width(), tile.height());
        painter.restore();
    }
}

QSize sizeFor(const std::vector<HeatmapController*>& tiles, const ImageOptions& options) {
    return options.size.isEmpty() ? naturalImageSize(static_cast<int>(tiles.size())) : options.size;
}

QByteArray encodeVector(const std::vector<HeatmapController*>& tiles, ImageFormat format,
                        const ImageOptions& options) {
    const QSize size = sizeFor(tiles, options);
    const int dpi = layoutDpi(tiles);
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    if (format == ImageFormat::Pdf) {
        // One logical pixel is one device pixel of a dpi-dots-per-inch page: the page is the
        // size the maps have on a screen, and everything but the colour maps stays vector.
        QPdfWriter pdf(&buffer);
        pdf.setCreator(QStringLiteral("Attention Explorer"));
        pdf.setResolution(dpi);
        // A print width shrinks the whole drawing (text included) onto a page of that width.
        const double shrink =
            options.printWidthInches > 0.0 ? options.printWidthInches * dpi / size.width() : 1.0;
        pdf.setPageSize(QPageSize(QSizeF(size) * (72.0 / dpi * shrink), QPageSize::Point, QString(),
                                  QPageSize::ExactMatch));
        pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
        QCPPainter painter;
        if (!painter.begin(&pdf)) throw io::WriteError("cannot start the PDF writer");
        painter.setMode(QCPPainter::pmVectorized);
        painter.scale(shrink, shrink);
        drawTiles(painter, tiles, options, size);
        painter.end();
    } else {
        QSvgGenerator svg;
        svg.setOutputDevice(&buffer);
        svg.setResolution(dpi);
        svg.setSize(size);
        svg.setViewBox(QRect(QPoint(0, 0), size));
        svg.setTitle(QStringLiteral("Attention Explorer"));
        QCPPainter painter;
        if (!painter.begin(&svg)) throw io::WriteError("cannot start the SVG generator");
        painter.setMode(QCPPainter::pmVectorized);
        drawTiles(painter, tiles, options, size);
        painter.end();
    }
    return bytes;
}

}  // namespace

void settleAtSize(QCustomPlot* plot, QSize size) {
    QImage scratch(1, 1, QImage::Format_ARGB32_Premultiplied);
    for (int pass = 0; pass < 2; ++pass) {
        QCPPainter painter(&scratch);
        plot->toPainter(&painter, size.width(), size.height());
    }
}

std::optional<ImageFormat> imageFormatForFile(const QString& fileName) {
    const QString suffix = QFileInfo(fileName).suffix().toLower();
    if (suffix == QLatin1String("png")) return ImageFormat::Png;
    if (suffix == QLatin1String("jpg") || suffix == QLatin1String("jpeg")) return ImageFormat::Jpg;
    if (suffix == QLatin1String("pdf")) return ImageFormat::Pdf;
    if (suffix == QLatin1String("svg")) return ImageFormat::Svg;
    return std::nullopt;
}

QString imageFormatSuffix(ImageFormat format) {
    switch (format) {
        case ImageFormat::Png:
            return QStringLiteral("png");
        case ImageFormat::Jpg:
            return QStringLiteral("jpg");
        case ImageFormat::Pdf:
            return QStringLiteral("pdf");
        case ImageFormat::Svg:
            return QStringLiteral("svg");
    }
    return {};
}

QByteArray paintedImage(ImageFormat format, QSize size, double scale, const QString& title,
                        const std::function<void(QCPPainter&)>& paint, double printWidthInches) {
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    if (format == ImageFormat::Pdf) {
        QPdfWriter pdf(&buffer);
        pdf.setCreator(QStringLiteral("Attention Explorer"));
        pdf.setTitle(title);
        pdf.setResolution(96);
        pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
        // A print width shrinks the whole drawing (text included) onto a page of that width.
        const double shrink = printWidthInches > 0.0 ? printWidthInches * 96 / size.width() : 1.0;
        pdf.setPageSize(QPageSize(QSizeF(size) * (0.75 * shrink), QPageSize::Point, QString(),
                                  QPageSize::ExactMatch));
        QCPPainter painter;
        if (!painter.begin(&pdf)) throw io::WriteError("cannot start the PDF writer");
        painter.setMode(QCPPainter::pmVectorized);
        painter.scale(shrink, shrink);
        paint(painter);
    } else if (format == ImageFormat::Svg) {
        QSvgGenerator svg;
        svg.setOutputDevice(&buffer);
        svg.setSize(size);
        svg.setViewBox(QRect(QPoint(0, 0), size));
        svg.setResolution(96);
        svg.setTitle(title);
        QCPPainter painter(&svg);
        painter.setMode(QCPPainter::pmVectorized);
        paint(painter);
    } else {
        QImage image(size * scale, QImage::Format_ARGB32_Premultiplied);
        if (image.isNull()) throw io::WriteError("the image is too large for memory");
        image.setDevicePixelRatio(scale);
        image.fill(Qt::white);
        {
            QCPPainter painter(&image);
            paint(painter);
        }
        const double dpi = printWidthInches > 0.0 ? size.width() / printWidthInches : 96.0;
        image.setDotsPerMeterX(qRound(dpi * scale / 0.0254));
        image.setDotsPerMeterY(qRound(dpi * scale / 0.0254));
        if (format == ImageFormat::Jpg) image = image.convertToFormat(QImage::Format_RGB32);
        QImageWriter writer(&buffer, format == ImageFormat::Jpg ? "jpg" : "png");
        if (format == ImageFormat::Jpg) writer.setQuality(95);
        if (!writer.write(image)) throw io::WriteError(writer.errorString().toStdString());
    }
    return bytes;
}

QSize naturalImageSize(int tiles) {
    const int columns = std::max(1, static_cast<int>(std::ceil(std::sqrt(std::max(tiles, 1)))));
    const int rows = (std::max(tiles, 1) + columns - 1) / columns;
    return QSize(kNaturalTile.width() * columns, kNaturalTile.height() * rows);
}

double paperWidthInches(PaperWidth width) {
    return width == PaperWidth::Column ? 3.5 : 7.0;
}

void fitToPaper(ImageOptions& options, int tiles, PaperWidth width) {
    const int n = std::max(1, tiles);
    const double inches = paperWidthInches(width);
    const double maxHeightInches = width == PaperWidth::Column ? 6.0 : 8.5;
    const double paperPixels = inches * kLogicalDpi;
    const double tileAspect = double(kNaturalTile.height()) / kNaturalTile.width();
    int chosen = 0;
    double chosenShrink = 1.0;
    for (int columns = 1; columns <= n; ++columns) {
        const double shrink =
            std::clamp(columns * kPaperTileWidth / paperPixels, 1.0, kMaxPaperShrink);
        const int rows = (n + columns - 1) / columns;
        const double printedHeight = rows * (inches / columns) * tileAspect;
        chosen = columns;
        chosenShrink = shrink;
        // Past a square grid more columns only make the maps smaller.
        if (printedHeight <= maxHeightInches || rows <= columns) break;
    }
    const int rows = (n + chosen - 1) / chosen;
    const double logicalWidth = paperPixels * chosenShrink;
    const double tileWidth = logicalWidth / chosen;
    options.size = QSize(qRound(logicalWidth), qRound(rows * tileWidth * tileAspect));
    options.columns = chosen;
    options.printWidthInches = inches;
    options.style.paper = true;
}

GridView figureView(GridView view) {
    view.selectedRow = -1;
    return view;
}

std::optional<ColorRange> parseColorRange(const QString& text) {
    if (text == QLatin1String("auto")) return ColorRange{};
    if (text == QLatin1String("shared")) return ColorRange{ColorRange::Kind::Shared, 0.0, 1.0};
    const QStringList parts = text.split(QLatin1Char(':'));
    if (parts.size() != 2) return std::nullopt;
    bool lowOk = false, highOk = false;
    const double low = parts[0].toDouble(&lowOk), high = parts[1].toDouble(&highOk);
    if (!lowOk || !highOk || !std::isfinite(low) || !std::isfinite(high) || !(low < high))
        return std::nullopt;
    return ColorRange{ColorRange::Kind::Fixed, low, high};
}

QImage renderImage(const std::vector<HeatmapController*>& tiles, const ImageOptions& options) {
    const QSize size = sizeFor(tiles, options);
    const int dpi = layoutDpi(tiles);
    // Drawn at the layout's resolution (text takes the room the layout measured); the file then
    // says the print resolution.
    const double dotsPerMeter = dpi / 0.0254;
    const double printDotsPerMeter =
        (options.printWidthInches > 0.0 ? size.width() / options.printWidthInches : dpi) / 0.0254;
    QImage image(qRound(size.width() * options.scale), qRound(size.height() * options.scale),
                 QImage::Format_ARGB32_Premultiplied);
    if (image.isNull()) throw io::WriteError("the image is too large for memory");
    image.setDotsPerMeterX(qRound(dotsPerMeter));
    image.setDotsPerMeterY(qRound(dotsPerMeter));
    {
        QCPPainter painter(&image);
        if (options.scale != 1.0) {
            // As QCustomPlot's own savePng: thin cosmetic lines would vanish when scaled up.
            painter.setMode(QCPPainter::pmNonCosmetic, options.scale > 1.0);
            painter.scale(options.scale, options.scale);
        }
        drawTiles(painter, tiles, options, size);
    }
    // The print size is the screen size (or the print width): `scale` times the dots per inch.
    image.setDotsPerMeterX(qRound(printDotsPerMeter * options.scale));
    image.setDotsPerMeterY(qRound(printDotsPerMeter * options.scale));
    return image;
}

QByteArray encodeImage(const std::vector<HeatmapController*>& tiles, ImageFormat format,
                       const ImageOptions& options) {
    if (format == ImageFormat::Pdf || format == ImageFormat::Svg)
        return encodeVector(tiles, format, options);
    QImage image = renderImage(tiles, options);
    if (format == ImageFormat::Jpg) image = image.convertToFormat(QImage::Format_RGB32);
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    QImageWriter writer(&buffer, format == ImageFormat::Jpg ? "jpg" : "png");
    if (format == ImageFormat::Jpg) writer.setQuality(95);
    if (!writer.write(image)) throw io::WriteError(writer.errorString().toStdString());
    return bytes;
}

void saveImage(const QString& fileName, const std::vector<HeatmapController*>& tiles,
               const ImageOptions& options) {
    const std::optional<ImageFormat> format = imageFormatForFile(fileName);
    if (!format) {
        throw io::WriteError(QStringLiteral("%1: cannot write: expected .png, .jpg, .pdf or .svg")
                                 .arg(fileName)
                                 .toStdString());
    }
    QByteArray bytes;
    try {
        bytes = encodeImage(tiles, *format, options);
    } catch (const io::WriteError& error) {
        throw io::WriteError(
            QStringLiteral("%1: cannot write: %2").arg(fileName, error.what()).toStdString());
    }
    io::writeFileAtomically(fileName, bytes);
}

std::vector<HeatmapController*> gridTiles(const HeatmapGrid& grid) {
    std::vector<HeatmapController*> tiles;
    for (const HeatmapTile& t : grid.tiles())
        tiles.push_back(t.controller);
    return tiles;
}

QByteArray renderScene(const Scene& scene, const RenderRequest& request, ImageFormat format) {
    // One float engine, as the window draws; refused before allocating if it cannot fit.
    EngineF engine;
    try {
        checkFitsInMemory(scene, sizeof(float));
        engine.setScene(scene);
        engine.compute();
    } catch (const SceneError& error) {
        throw std::invalid_argument(error.what());
    }
    if (!stageAvailable(engine, request.stage)) {
        throw std::invalid_argument(
            "--stage output: this scene has no output projection (projections.output)");
    }
    const bool oneHead = request.head && isPerHead(request.stage);
    if (oneHead && (*request.head < 0 || *request.head >= engine.heads())) {
        throw std::invalid_argument(QStringLiteral("--head: expected 0 to %1 or all, got %2")
                                        .arg(engine.heads() - 1)
                                        .arg(*request.head)
                                        .toStdString());
    }
    GridView view;
    // One head: the one-head view holds every stage of that head; only the requested one is drawn.
    view.mode = oneHead ? ViewMode::AllStages : ViewMode::AllHeads;
    view.stage = request.stage;
    view.head = oneHead ? *request.head : 0;
    view.showValues = request.showValues;
    view.showEntropy = request.showEntropy;
    view.valueWeighted = request.valueWeighted;
    if (request.colorMap) view.weightsMap = view.signedMap = *request.colorMap;
    HeatmapGrid grid;
    grid.setView(view);
    grid.showResults(&engine);
    std::vector<HeatmapController*> tiles;
    if (oneHead) {
        tiles.push_back(grid.tile(request.stage, *request.head));
    } else {
        tiles = gridTiles(grid);
    }
    return encodeImage(tiles, format, request.image);
}

}  // namespace ae::plot
