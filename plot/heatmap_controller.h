#pragma once
// One heatmap: owns a QCustomPlot with one colour map, its colour bar, an optional entropy strip
// and an overlay (masked cells, numbers, selected row). It knows how to fill them from a
// row-major float matrix; the plot itself stays a plain widget.
//
// Geometry: cell (row i, column j) sits on coordinate (j, i), the y axis is reversed so row 0 is
// at the top, as a matrix is read; rows are tokens, columns are tokens or dimensions.

#include <QColor>
#include <QFont>
#include <QImage>
#include <QObject>
#include <QPoint>
#include <QRect>
#include <QSharedPointer>
#include <QSize>
#include <QStringList>
#include <map>
#include <optional>
#include <vector>

#include "plot/color_maps.h"
#include "plot/pooling.h"
#include "plot/stage.h"

class QCustomPlot;
class QCPAxisRect;
class QCPColorGradient;
class QCPColorMap;
class QCPColorScale;
class QCPMarginGroup;
class QCPTextElement;
class QCPAxisTickerText;
class QCPLayoutGrid;
class QCPAxis;
class QKeyEvent;

namespace ae::plot {

class CellOverlay;
class FocusFrame;

// Decimals for numbers whose largest |value| is `largest`: 2 below 10, 1 below 100, 0 below 1e5;
// -1 beyond, where numbers are written as 2.5e+05.
int automaticDecimals(double largest);

// Colour bar labels with one count of decimals (0.0, 0.2 … 1.0), for every bar: the maps' own
// and the grid's shared one.
void useSameDecimalsTicks(QCPAxis* axis);

// The values a map's colours span, low to high.
struct ValueRange {
    double lower = 0.0;
    double upper = 0.0;
    bool operator==(const ValueRange& other) const {
        return lower == other.lower && upper == other.upper;
    }
};

// Every axis of every plot under `root`, with the point size of its tick labels: presentation mode
// scales them all and must put each back.
std::map<const QObject*, double> axisTickLabelSizes(const QWidget* root);

class HeatmapController : public QObject {
    Q_OBJECT
public:
    // Creates the plot as a child of `parent`; the controller is the plot's child and dies with it.
    explicit HeatmapController(QWidget* parent = nullptr);

    QCustomPlot* plot() const { return plot_; }
    QCPColorMap* colorMap() const { return map_; }
    QCPColorScale* colorScale() const { return scale_; }
    QCPColorMap* entropyMap() const { return entropyMap_; }

    void setTitle(const QString& title);
    QString title() const;
    // The title's text colour: black, or the colour of the heads' kv group (grouped-query).
    void setTitleColor(const QColor& color);
    QColor titleColor() const;
    // Figures: no title row at all, so the maps take its room (a paper's caption names them).
    void setTitleShown(bool shown);
    bool isTitleShown() const;
    // Text beside the colour bar (what its colours measure); empty: none.
    void setColorBarLabel(const QString& label);
    // What the rows and columns are ("query", "key", "dimension").
    void setAxisTitles(const QString& rows, const QString& columns);
    // Row labels go down the left, column labels across the bottom. Token columns are turned
    // upright when they do not fit side by side; dimension indices are thinned instead.
    void setLabels(const QStringList& rows, const QStringList& columns, bool columnsAreTokens);
    void setGradient(const QCPColorGradient& gradient);
    void setGradient(ColorMap map);
    // rows x columns; resizes the map when the shape changed. Non-finite values never reach the
    // map (they would stop QCustomPlot's colouring): NaN becomes 0, ±inf the largest float.
    // A map larger than its pixel area is shown pooled (see setPooling); rows() and columns(),
    // hit testing and the overlay keep the matrix's own cells.
    // Touches only this map's own data (no signal, no widget, no layout): different maps may be
    // given their matrices from different threads at once, as the grid does. Same for setAllowed.
    void setMatrix(const EngineF::ConstBlock& matrix);
    void setPooling(Pooling pooling);
    Pooling pooling() const { return pooling_; }
    // How many matrix rows and columns one shown cell pools (1 and 1 when nothing is pooled).
    int rowsPerCell() const { return rowsPerCell_; }
    int columnsPerCell() const { return columnsPerCell_; }
    void setDataRange(double low, double high);
    // Same shape as the matrix, true where the pair is visible; empty: nothing is masked.
    // `outsideWindow`: empty, or the cells a sliding window hides (slidingWindowCells).
    void setAllowed(const BoolMatrix& allowed, const BoolMatrix& outsideWindow = {});
    // One entropy per row, shown in a strip right of the map on a 0..maxBits scale; an empty
    // vector removes the strip.
    void setRowEntropy(const std::vector<double>& bits, double maxBits);
    void setShowValues(bool show);
    // Digits after the point of every number in the cells; -1: one count for the whole map,
    // decided from its largest |value| (2 below 10, 1 below 100, 0 below 1e5, then 1.2e+05).
    void setDecimals(int decimals);
    // Numbers in large cells grow up to 1.5x for a projector; a figure keeps its labels' size.
    void setNumbersMayGrow(bool grow);
    // The number drawn in a cell of the matrix (as shown: its pool's value when pooled), in the
    // map's one format, whether or not the cells have room for numbers.
    QString valueText(int row, int column) const;
    void setSelectedRow(int row);  // -1: none
    // Concatenation: a line between heads every `width` columns (0: none).
    void setColumnGroupWidth(int width);
    // A pale background that marks the plot as part of the current walkthrough step.
    void setHighlighted(bool on);
    bool isHighlighted() const { return highlighted_; }
    // Square cells (presentation mode): the map keeps its cells square and is centred in what
    // is left, rather than stretched to the tile.
    void setSquareCells(bool on);
    // Lays the map out afresh, as a new plot would be: no padding from squaring its cells, and
    // labels turned upright or not from its size now. A pooled plot given another map keeps
    // neither from the map before (presentation mode's square cells and upright labels settle
    // on one of two layouts, and which one depended on the map shown before).
    void restartLayout();
    // Off when the grid shows one colour bar for all its maps.
    void setColorScaleShown(bool shown);
    bool colorScaleShown() const { return scaleShown_; }
    // The side, in pixels, a cell needs for its number and for every token label at the plot's
    // current font: below it the numbers go and the labels thin out.
    int readableCellSide() const;
    // What the plot spends around its cells (title, labels, axis titles, strip and bar), as its
    // last layout measured it; an estimate from the fonts and labels before the first layout.
    QSize chromeSize() const;
    // What the axes draw: every n-th label (1: all of them), and whether the last paint put a
    // number in the cells.
    int rowLabelStep() const { return rowStep_; }
    int columnLabelStep() const { return columnStep_; }
    bool numbersDrawn() const;
    // The keyboard's cell, shown with a ring while the plot has focus; (-1, -1) before any.
    QPoint cursorCell() const { return cursor_; }
    void setCursorCell(int row, int column);

    int rows() const { return rows_; }
    int columns() const { return columns_; }
    // The cell under a pixel of the plot, as (column, row), if there is one.
    std::optional<QPoint> cellAt(const QPointF& pixel) const;
    // The centre of a cell in plot pixels.
    QPointF cellCenter(int row, int column) const;
    bool isMarkedMasked(int row, int column) const;
    bool hasMaskedCells() const;
    // rows x columns, as given to setMatrix.
    const EngineF::Matrix& matrix() const { return full_; }

    // Queued: a burst of changes (a slider drag) paints once.
    void replot();
    // Lays out and paints now, without waiting for the event loop.
    void replotNow();

    // What the plot draws, read back from QCustomPlot's own state rather than from what the
    // controller was told, so that a check of it can fail. `row` and `column` are the matrix's.
    QWidget* widget() const;
    // The plot laid out and painted at width x height pixels.
    QImage renderImage(int width, int height);
    // The cells the colour map holds: the matrix's, or its pools when pooled.
    int shownRows() const;
    int shownColumns() const;
    double shownCellValue(int shownRow, int shownColumn) const;
    // The value coloured in the cell of the matrix (its pool's value when pooled).
    double cellValue(int row, int column) const;
    // The colour the map's gradient gives that value over colorRange().
    QColor cellColor(int row, int column) const;
    ValueRange colorRange() const;
    // Where the colour map paints the cell (its pool when pooled), in plot pixels, from the map's
    // data coordinates; after the last layout.
    QRectF drawnCellRect(int row, int column) const;
    // The rectangle the cells fill (the axis rect), in plot pixels.
    QRect cellArea() const;
    // Row 0 drawn at the top, as a matrix is read.
    bool rowsReadDown() const;
    // Colours blended between cells (never, for attention: each cell is one number).
    bool cellsBlended() const;
    // The labels the axes carry now (thinned: every rowLabelStep()-th row) and their fonts.
    QStringList shownRowLabels() const;
    QStringList shownColumnLabels() const;
    bool columnLabelsUpright() const;
    QFont rowLabelFont() const;
    QFont columnLabelFont() const;
    // The colour bar's tick labels as the last layout wrote them, and whether it is drawn.
    QStringList colorBarLabels() const;
    bool colorBarDrawn() const;
    // The entropy strip: drawn, given room in the layout, and the value of each of its rows.
    bool entropyStripDrawn() const;
    bool entropyStripHasRoom() const;
    std::vector<double> entropyValues() const;

signals:
    void cellHovered(int row, int column);  // (-1, -1) when the pointer leaves the cells
    void cellClicked(int row, int column);
    // Double-click or Z: show this map alone (or the grid again).
    void enlargeRequested();
    void focused();
    // The keyboard moved the ring to a cell.
    void cursorMoved(int row, int column);
    // A layout found the plot spending a different room around its cells (new fonts, labels
    // turned upright): a grid that sized its tiles from it sizes them again.
    void chromeChanged();
    // The plot has drawn itself again: what a change costs on screen is timed up to here.
    void replotted();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void updateTicks();
    void showMatrix(bool newValues);
    void fitEntropyStripToFont();
    void arrangeLayout();
    void squareUp();
    bool handleKey(QKeyEvent* event);

    QCustomPlot* plot_;
    QCPTextElement* title_;
    QCPLayoutGrid* row_;
    QCPAxisRect* rect_;
    QCPAxisRect* entropyRect_;
    QCPColorScale* scale_;
    QCPMarginGroup* margins_;
    QCPColorMap* map_;
    QCPColorMap* entropyMap_;
    CellOverlay* overlay_;
    CellOverlay* entropyOverlay_;
    FocusFrame* focusFrame_;
    QSharedPointer<QCPAxisTickerText> rowTicker_, columnTicker_;

    int rows_ = 0, columns_ = 0;
    EngineF::Matrix full_;  // the matrix as given; the map shows it, pooled if need be
    Pooling pooling_ = Pooling::Max;
    int rowsPerCell_ = 1, columnsPerCell_ = 1;
    QStringList rowLabels_, columnLabels_;
    bool columnsAreTokens_ = true;
    int widestRowLabel_ = 0, widestColumnLabel_ = 0;
    int rowStep_ = 0, columnStep_ = 0;
    bool columnsUpright_ = false;
    int relayouts_ = 0;
    bool entropyShown_ = false;
    bool highlighted_ = false;
    bool squareCells_ = false;
    bool scaleShown_ = true;
    int squarePasses_ = 0;
    bool drawWhenPainted_ = false;  // a replot was asked for while the map was hidden
    QPoint cursor_{-1, -1};
    QSize lastChrome_;  // measuredChrome() after the last layout
    // What the plot spends around its cells now, or an empty size when the plot and its cells'
    // rect come from different layouts.
    QSize measuredChrome() const;
    QPoint hovered_{-1, -1};
};

}  // namespace ae::plot
