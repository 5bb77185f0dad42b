#pragma once
// A labelled map of a workbench analysis (core/model/workbench.h): rows x columns of numbers.
// Diverging maps (patching effects, attributions) are read around 0 on a colour range symmetric
// about it; sequential ones (probabilities, composition scores, attention weights) from 0 up. Row
// 0 is drawn at the top. A cell may carry a short text (the logit lens's top token). Clicking a
// cell reports it; the map exports as an image (PNG/PDF/SVG) and its numbers as CSV or NPY.

#include <QByteArray>
#include <QSharedPointer>
#include <QSize>
#include <QStringList>
#include <vector>

#include "core/scene.h"
#include "plot/chart.h"
#include "plot/image_export.h"

class QCPAxisTicker;
class QCPColorMap;
class QCPColorScale;
class QCPTextElement;

namespace ae::plot {

class EffectMap : public Chart {
    Q_OBJECT
public:
    enum class Scale {
        Diverging,  // symmetric about 0, at least −1..1 unless freeRange
        Sequential  // 0..1 unless freeRange (then 0..the largest value)
    };
    // `colourLabel` names what the colour scale measures. Without one, a diverging map is a
    // patching map: its scale's tick at 1 reads "1 = clean" (the clean answer restored).
    explicit EffectMap(const QString& title, QWidget* parent = nullptr,
                       Scale scale = Scale::Diverging, const QString& colourLabel = {});
    // The colour range follows the values alone (attributions in logits, composition scores)
    // rather than including the unit range.
    void setFreeRange(bool free) { freeRange_ = free; }
    void setTitle(const QString& title);
    // Without its colour scale: a map beside another of the same scale.
    void setColourScaleShown(bool shown);
    // What the columns (bottom) and the rows (left) are: "head", "layer".
    void setAxisNames(const QString& columns, const QString& rows);
    // values[row][column]; labels along the rows (left) and the columns (bottom). `texts`, when
    // given, holds one short text a cell (same shape), drawn in the cell when it fits.
    void setValues(const std::vector<std::vector<double>>& values, const QStringList& rowLabels,
                   const QStringList& columnLabels,
                   const std::vector<std::vector<QString>>& texts = {});
    void setValues(const MatrixD& values, const QStringList& rowLabels,
                   const QStringList& columnLabels);
    void clear();
    // What the map holds (tests, exports).
    double value(int row, int column) const;
    int rows() const { return rows_; }
    int columns() const { return columns_; }
    MatrixD values() const;
    QString text(int row, int column) const;
    QString title() const { return title_; }
    // The colour range: −range..range (diverging) or 0..range (sequential).
    double range() const { return range_; }

    // The map as an image file's bytes at `size` (logical pixels; raster: times `scale`).
    // Throws io::WriteError when the encoder fails.
    QByteArray image(ImageFormat format, QSize size, double scale = 1.0) const;
    // As a paper's figure: options.size (empty: 640 x 480), scale and print width, and the
    // style's title (none: the map's own; empty: no title), colour-bar label (empty: the map's
    // own) and range (Fixed: low..high; otherwise the map's own). Decimals do not apply: the map
    // prints no numbers.
    QByteArray image(ImageFormat format, const ImageOptions& options) const;

signals:
    void cellClicked(int row, int column);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    // Every label that fits at `size` (the plot's own when empty), a tick for every n-th row or
    // column otherwise.
    void placeTicks(QSize size = {}) const;
    // The colour scale's ticks of a patching map whose colours run low..high.
    static QSharedPointer<QCPAxisTicker> patchingTicks(double low, double high);

    QCPColorMap* map_;
    QCPColorScale* scale_;
    QCPTextElement* titleElement_;
    Scale kind_;
    QString title_;
    bool freeRange_ = false;
    int rows_ = 0, columns_ = 0;
    double range_ = 1;
    std::vector<std::vector<QString>> texts_;
    QStringList rowLabels_, columnLabels_;
};

}  // namespace ae::plot
