#pragma once
// Exports of many images at once: one file per head, and sweeps that step one control across a
// range (a numbered PNG sequence plus an animated GIF). Each frame is drawn by a hidden grid, like
// every other export, so the user's document and undo history are never touched.

#include <QImage>
#include <QStringList>
#include <vector>

#include "plot/image_export.h"

namespace ae::document {
class AttentionDocument;
}  // namespace ae::document

namespace ae::plot {
class HeatmapGrid;
struct ModelViewData;
}  // namespace ae::plot

namespace ae::ui {

// An export's grid names the model layer its maps come from ("layer 5 · head 3 · softmax
// weights"), as the model's every-head export does, when the document's scene is a layer of a
// model; else it leaves the titles as they are.
void nameModelLayer(plot::HeatmapGrid& grid, const document::AttentionDocument& document);

// `<base>-<stage>-head03.<ext>` in `folder` for every head of view.stage (two digits, three from
// 100 heads on). Returns the files written; throws io::WriteError.
QStringList exportEveryHead(document::AttentionDocument* document, const plot::GridView& view,
                            const QString& folder, const QString& base, plot::ImageFormat format,
                            const plot::ImageOptions& options);

// A whole model's run (data.run) as files in `folder`: `<base>-L03-H07.<ext>` for every head (its
// weight map, drawn as the window draws a head, titled "layer 3, head 7"; two digits, three from
// 100 layers or heads on), `<base>-heads.csv` (layer, head and the scores of
// core/model/head_scores.h by key: entropy, first_token, previous_token, self, induction;
// induction empty until measured) and the model view's parts:
// `<base>-grid`, `<base>-rollout` and `<base>-qk` (the open head's query-key map) at `viewSize`.
// Every file is written atomically. Returns the files written; throws io::WriteError,
// std::invalid_argument for data without a run.
QStringList exportEveryModelHead(const plot::ModelViewData& data, const QString& folder,
                                 const QString& base, plot::ImageFormat format,
                                 const plot::ImageOptions& options,
                                 QSize viewSize = QSize(1280, 800));

enum class SweepParameter { Divisor, Heads, Window };

struct SweepRequest {
    SweepParameter parameter = SweepParameter::Divisor;
    double from = 0.5, to = 8.0;  // divisor: log-spaced; heads: the divisors of d_proj in range
    int steps = 12;               // divisor only; heads and window take every value in range
    bool gif = true;
};

// The values a sweep steps through, in order (never empty for a valid range).
std::vector<double> sweepValues(const Scene& scene, const SweepRequest& request);

// `<base>-<parameter>-000.png`, … in `folder`, each captioned with its value, all of one size
// (options.size, else the first frame's natural size), and `<base>-<parameter>.gif` when asked.
// Returns the files written. Throws io::WriteError; std::invalid_argument for an empty range or a
// value the scene cannot compute.
QStringList exportSweep(const Scene& scene, const plot::GridView& view, const SweepRequest& request,
                        const QString& folder, const QString& base, plot::ImageOptions options);

// An animated GIF (looping, `delayCentiseconds` a frame) of frames of one size, each reduced to
// its own 256-colour palette by giflib's median cut. Throws io::WriteError.
QByteArray gifBytes(const std::vector<QImage>& frames, int delayCentiseconds);

}  // namespace ae::ui
