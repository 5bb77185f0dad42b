#pragma once
// The model view as an image file, drawn with no display: what `render --view model|rollout|qk`
// writes. The same widgets the window shows are laid out at the image's size and painted into
// a PNG or JPG (raster), a PDF or an SVG (text and lines stay vector; maps are images).

#include <QByteArray>
#include <QSize>
#include <optional>
#include <utility>

#include "plot/image_export.h"
#include "plot/model_view.h"

namespace ae::plot {

enum class ModelViewPart {
    Model,     // the whole model view: the grid, its read-out and the heads table
    Rollout,   // the rollout map and the per-layer view of the selected position
    QueryKey,  // one head's query-key map
};

struct ModelViewImage {
    ModelViewPart part = ModelViewPart::Model;
    QSize size{1280, 800};                    // logical pixels
    double scale = 1.0;                       // raster only: device pixels per logical pixel
    std::optional<std::pair<int, int>> head;  // the head of the query-key map (default L0 H0)
    bool presentation = false;
    ae::model::QkProjectionMode qkMode = ae::model::QkProjectionMode::Separate;
    int position = -1;  // the selected position; -1: the last token
};

// Throws std::invalid_argument for a head out of range, io::WriteError from the encoder.
QByteArray renderModelView(const ModelViewData& data, const ModelViewImage& image,
                           ImageFormat format);

}  // namespace ae::plot
