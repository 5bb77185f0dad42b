#pragma once
// Heatmaps as image files: PNG and JPG (raster, at a size and a scale for print), PDF (vector
// axes and text) and SVG. Every image is drawn by the same HeatmapController plots the window
// shows, laid out side by side like the grid, so a file looks like the screen.
//
// Exports never draw the window's own plots (resizing those would disturb the window's layout):
// they build a hidden HeatmapGrid of the same results with the same GridView.

#include <QByteArray>
#include <QImage>
#include <QSize>
#include <QString>
#include <functional>
#include <optional>
#include <vector>

#include "plot/heatmap_grid.h"

class QPaintDevice;

namespace ae {
struct Scene;
}

class QCPPainter;
class QCustomPlot;

namespace ae::plot {

class HeatmapController;

enum class ImageFormat { Png, Jpg, Pdf, Svg };
// By suffix (.png, .jpg or .jpeg, .pdf, .svg), case-insensitive.
std::optional<ImageFormat> imageFormatForFile(const QString& fileName);
QString imageFormatSuffix(ImageFormat format);

// Which values the colours span, for every map of a figure.
struct ColorRange {
    // Auto: each map's own, as the window (weights 0 to 1, signed maps ±their largest |value|).
    // Shared: one range for every map drawn, the union of their own. Fixed: low to high; values
    // beyond take the end colours.
    enum class Kind { Auto, Shared, Fixed };
    Kind kind = Kind::Auto;
    double low = 0.0, high = 1.0;  // Fixed only; low < high, both finite
};
// "auto", "shared" or "MIN:MAX" (two finite numbers, MIN < MAX); nullopt otherwise.
std::optional<ColorRange> parseColorRange(const QString& text);

// What a figure for a paper decides beyond what the window shows.
struct FigureStyle {
    // None: every map keeps its own title. Empty: no titles at all. Text: the title of a lone map,
    // or one title above several (each keeps its own).
    std::optional<QString> title;
    QString colorBarLabel;  // beside every colour bar; empty: none
    ColorRange range;
    // Of every number in the cells; -1: one count for the figure, from the largest |value| of
    // the maps drawn (automaticDecimals).
    int decimals = -1;
    // For print: numbers keep the labels' size rather than growing in large cells as on a
    // projector. fitToPaper sets it.
    bool paper = false;
};

struct ImageOptions {
    QSize size;          // logical pixels of the whole image; empty: naturalImageSize()
    double scale = 1.0;  // raster only: device pixels per logical pixel, text and lines included
    QString caption;     // a line above the maps (a sweep's parameter), or none
    FigureStyle style;
    int columns = 0;  // maps side by side; 0: bestGridColumns for the size
    // The width the image is printed at: a PDF page's width, a PNG's dots per inch. 0: one
    // logical pixel is 1/96 in (0.75 pt), the size the maps have on a screen.
    double printWidthInches = 0.0;
};

// The bytes of an image file of `format` holding what `paint` draws with the painter it is given
// on a device of `size` logical pixels: PDF and SVG stay vector (96 dpi, the painter in
// QCustomPlot's vectorized mode), PNG and JPG are raster at `scale` device pixels a logical pixel,
// on white. `printWidthInches` (0: none) is the width the figure is printed at: a PDF's page gets
// that width (the drawing shrunk onto it), a PNG the matching dots per inch. Throws io::WriteError
// when the encoder fails.
QByteArray paintedImage(ImageFormat format, QSize size, double scale, const QString& title,
                        const std::function<void(QCPPainter& painter)>& paint,
                        double printWidthInches = 0.0);

// Lays `plot` out at `size` before it is drawn there: the layout pass that places tick labels
// comes after the one that measures them, so a plot drawn at a new size needs two passes before
// its labels fit (HeatmapController::updateTicks, EffectMap::image).
void settleAtSize(QCustomPlot* plot, QSize size);
// Room for `tiles` maps of a comfortable size, about square overall.
QSize naturalImageSize(int tiles);

// A journal's one column (3.5 in) or its page width (7 in).
enum class PaperWidth { Column, Page };
double paperWidthInches(PaperWidth width);
// Sets size, columns and printWidthInches for `tiles` maps printed at that width: as few columns
// as keep the figure within a page's height, and text no smaller than 7 pt (the window's 9 pt
// font, laid out at up to 9/7 of the print width and shrunk to fit it).
void fitToPaper(ImageOptions& options, int tiles, PaperWidth width);

// The view an export draws: the window's, without its interactive marks (the selected row).
GridView figureView(GridView view);

// Draws `tiles` in a grid of columns chosen for `options.size` (bestGridColumns). White
// background; size * scale device pixels; resolution metadata 96 * scale dpi.
QImage renderImage(const std::vector<HeatmapController*>& tiles, const ImageOptions& options);
// The file's bytes. Throws io::WriteError with the encoder's reason.
QByteArray encodeImage(const std::vector<HeatmapController*>& tiles, ImageFormat format,
                       const ImageOptions& options);
// encodeImage, then an atomic write: never a partial file. Throws io::WriteError.
void saveImage(const QString& fileName, const std::vector<HeatmapController*>& tiles,
               const ImageOptions& options);

// The controllers of a grid's tiles, in order.
std::vector<HeatmapController*> gridTiles(const HeatmapGrid& grid);

// What `attention-explorer render` draws, as the window would draw it.
struct RenderRequest {
    Stage stage = Stage::Weights;
    std::optional<int> head;  // one head; none: every head (and their mean, for the weights)
    std::optional<ColorMap> colorMap;  // every map drawn; none: viridis for weights, RdBu else
    bool showValues = false;
    bool showEntropy = true;
    bool valueWeighted = false;  // GridView::valueWeighted
    ImageOptions image;
};
// Throws std::invalid_argument (one line) for a request that does not fit the scene (a head out of
// range, no output projection) or a scene that cannot be computed, io::WriteError for the file.
QByteArray renderScene(const Scene& scene, const RenderRequest& request, ImageFormat format);

}  // namespace ae::plot
