#pragma once
// Heatmaps as image files: PNG and JPG (raster, at a size and a scale for print), PDF (vector
// axes and text) and SVG. Every image is drawn by the same HeatmapController plots the window
// shows, laid out side by side like the grid, so a file looks like the screen.
//
// Exports never draw the window's own plots (resizing those would disturb the window's layout):
// they build a hidden HeatmapGrid of the document with the same GridView.

#include <QByteArray>
#include <QImage>
#include <QSize>
#include <QString>
#include <optional>
#include <vector>

#include "heatmap_grid.h"

namespace ae {
struct Scene;
}

namespace ae::ui {

class AttentionDocument;
class HeatmapController;

enum class ImageFormat { Png, Jpg, Pdf, Svg };
// By suffix (.png, .jpg or .jpeg, .pdf, .svg), case-insensitive.
std::optional<ImageFormat> imageFormatForFile(const QString& fileName);
QString imageFormatSuffix(ImageFormat format);

struct ImageOptions {
    QSize size;          // logical pixels of the whole image; empty: naturalImageSize()
    double scale = 1.0;  // raster only: device pixels per logical pixel, text and lines included
    QString caption;     // a line above the maps (a sweep's parameter), or none
};

// Room for `tiles` maps of a comfortable size, about square overall.
QSize naturalImageSize(int tiles);

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
    ImageOptions image;
};
// Throws std::invalid_argument (one line) for a request that does not fit the scene (a head out of
// range, no output projection) or a scene that cannot be computed, io::WriteError for the file.
QByteArray renderScene(const Scene& scene, const RenderRequest& request, ImageFormat format);

}  // namespace ae::ui
