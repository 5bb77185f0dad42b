#pragma once
// The central view: small multiples of heatmaps, either one stage for every head (plus the mean
// over heads for the weights) or every stage for one head, drawn from an engine's results.
// Whoever computes hands the grid its engine: the window's document through ui/window/
// document_maps.h, `render` an engine of its own. Rebuilt after markStructureChanged(), refilled
// otherwise; an error keeps the last maps under a banner. Clicking a cell selects its query row in
// every map, or, in mask edit mode, asks (maskCellClicked) to hide or show that query-key pair.

#include <QList>
#include <QWidget>
#include <map>
#include <optional>
#include <vector>

#include "plot/color_maps.h"
#include "plot/heatmap_controller.h"
#include "plot/stage.h"

class QCustomPlot;
class QCPColorScale;
class QGridLayout;
class QLabel;
class QScrollArea;

namespace ae::plot {

class HeatmapController;

enum class ViewMode { AllHeads, AllStages };

// Everything that decides what the grid draws, apart from the numbers: what a scene file's
// `view` keeps and what an image export reproduces.
struct GridView {
    ViewMode mode = ViewMode::AllHeads;
    Stage stage = Stage::Weights;
    int head = 0;
    ColorMap weightsMap = ColorMap::Viridis;
    ColorMap signedMap = ColorMap::RdBu;
    bool sharedRange = false;
    bool showValues = true;
    int selectedRow = -1;     // -1: none
    bool showEntropy = true;  // the weights' row-entropy strip
    // The weights drawn value-weighted (core/value_weighting.h): each row the share of what the
    // head moves that comes from each key, ‖α_ij·v_j·W_O^h‖ normalised, rather than α_ij.
    bool valueWeighted = false;
};

// How many columns of `tiles` tiles, each `cells` cells (columns x rows) plus its labels and
// bars, make the cells largest in `area`.
int bestGridColumns(int tiles, QSize cells, QSize area);

struct HeatmapTile {
    HeatmapController* controller = nullptr;
    Stage stage = Stage::Weights;
    int head = 0;
    bool meanOverHeads = false;
};

class HeatmapGrid : public QWidget {
    Q_OBJECT
public:
    // More heads than this are not drawn side by side (d_head = 1 on a wide model would be
    // hundreds of plots); one-head mode reaches every head.
    static constexpr int kMaxTiles = 48;

    explicit HeatmapGrid(QWidget* parent = nullptr);

    ViewMode viewMode() const { return mode_; }
    Stage stage() const { return stage_; }
    int head() const { return head_; }
    bool maskEditMode() const { return maskEdit_; }
    int selectedRow() const { return selectedRow_; }
    GridView view() const;
    const std::vector<HeatmapTile>& tiles() const { return tiles_; }
    // The tile showing `stage` for `head` (for the mean, head -1), or nullptr.
    HeatmapController* tile(Stage stage, int head) const;
    const QList<Stage>& highlightedStages() const { return highlighted_; }
    // The error shown over the maps, empty when there is none.
    QString errorBanner() const;
    QScrollArea* scrollArea() const { return scroll_; }
    bool presentationLayout() const { return presentation_; }
    // Presentation mode's one colour bar beside the grid, shown when every map has the same
    // range and colours.
    QWidget* sharedColorBar() const;
    // The range the shared bar draws, read from its plot: that of the one colour scale the plot
    // holds; none when it holds anything else.
    std::optional<ValueRange> sharedColorBarRange() const;
    // What the shared bar's axis says ("softmax weights", "value-weighted share").
    QString sharedColorBarLabel() const;
    bool sharedColorBarShown() const;
    // The map shown alone (index into tiles()), or -1 when the grid shows them all.
    int enlargedTile() const { return enlarged_; }
    // The map the keyboard works on: the focused one, else the last one used, else the first
    // marked one, else the first.
    int currentTile() const;
    int arrangedColumns() const { return arrangedColumns_; }
    // The results drawn, or null before the first.
    const EngineF* engine() const { return engine_; }

public slots:
    // Draws `engine`'s results (null: nothing), and hides the error banner. The engine must stay
    // alive and unchanged until the next call: the grid reads it again whenever the view changes.
    // The maps are rebuilt if the structure changed since the last call, refilled otherwise.
    void showResults(const EngineF* engine);
    // The next results have other tokens, heads, stages or sizes: rebuild rather than refill.
    void markStructureChanged();
    // The latest change cannot be computed: `message` over the maps, which keep the last results.
    void showError(const QString& message);
    // A computation in the background: a note over the maps until it is done.
    void setComputing(bool computing);
    void setViewMode(ViewMode mode);
    void setStage(Stage stage);
    void setHead(int head);
    void setView(const GridView& view);  // one rebuild for the lot
    // Put before every map's title: "layer 5 · " where the maps are a model's layer, so that an
    // exported figure says which (empty by default). Takes effect at the next rebuild.
    void setTitlePrefix(const QString& prefix) { titlePrefix_ = prefix; }
    void setWeightsMap(ColorMap map);
    void setSignedMap(ColorMap map);
    void setSharedRange(bool shared);
    // How maps with more cells than pixels are reduced: max keeps peaks, mean keeps averages.
    void setPooling(Pooling pooling);
    void setShowValues(bool show);
    void setShowEntropy(bool show);
    // The weights' maps (and their mean) value-weighted (GridView::valueWeighted).
    void setValueWeighted(bool on);
    bool valueWeighted() const { return valueWeighted_; }
    // Presentation mode: square cells as large as fit but never smaller than their numbers and
    // labels need (the grid scrolls instead), and one colour bar for the grid when it can.
    void setPresentationLayout(bool on);
    // Shows one map alone, filling the grid; the same index again (or -1) shows them all.
    void setEnlargedTile(int index);
    void toggleEnlargeCurrent();
    // Scrolls so that the marked maps are in view (the walkthrough's steps).
    void revealHighlighted();
    void setMaskEditMode(bool on);
    void setSelectedRow(int row);
    // The walkthrough's marks: these stages' tiles get a highlighted background.
    void setHighlightedStages(const QList<Stage>& stages);
    // Fonts changed (presentation mode): measure labels again and lay the tiles out anew.
    void restyle();

signals:
    void statusMessage(const QString& text);
    // The value-weighted maps were switched off because they would not fit in memory.
    void valueWeightedChanged(bool on);
    void selectedRowChanged(int row);
    // In mask edit mode, a click on an attention cell: the owner of the scene decides.
    void maskCellClicked(int query, int key);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void rebuild();
    void refill();
    // Whether the tiles moved.
    bool arrangeTiles();
    void updateSharedBar();
    void scrollToHighlighted();
    void configureTile(const HeatmapTile& tile);
    // What a map's numbers give its range and strip: row entropies (weights only) and max |value|.
    struct TileNumbers {
        std::vector<double> entropyBits;
        double maxAbs = 1.0;
    };
    // The numbers of one map: its matrix (pooled) and its mask. Safe to run for different tiles
    // on different threads.
    TileNumbers fillNumbers(const HeatmapTile& tile);
    void hovered(const HeatmapTile& tile, int row, int column);
    void clicked(const HeatmapTile& tile, int row, int column);
    bool canShow() const;

    const EngineF* engine_ = nullptr;
    QString error_;
    QString titlePrefix_;  // setTitlePrefix
    QLabel* banner_;
    QLabel* note_;
    QLabel* computing_;  // while a background compute shows progress
    QScrollArea* scroll_;
    QWidget* canvas_;
    QGridLayout* layout_;
    QCustomPlot* sharedBar_;
    QCPColorScale* sharedScale_;
    std::vector<HeatmapTile> tiles_;
    std::vector<HeatmapController*> pool_;
    int arrangedColumns_ = 0;
    QSize arrangedMinimum_;
    bool presentation_ = false;
    bool arrangePending_ = false;
    int enlarged_ = -1;
    int lastUsed_ = -1;

    ViewMode mode_ = ViewMode::AllHeads;
    Stage stage_ = Stage::Weights;
    int head_ = 0;
    ColorMap weightsMap_ = ColorMap::Viridis;
    ColorMap signedMap_ = ColorMap::RdBu;
    bool sharedRange_ = false;
    Pooling pooling_ = Pooling::Max;
    bool showValues_ = true;
    bool showEntropy_ = true;
    bool maskEdit_ = false;
    int selectedRow_ = -1;
    QList<Stage> highlighted_;
    bool structurePending_ = true;
    EngineF::Matrix meanWeights_;
    bool valueWeighted_ = false;
    // While valueWeighted_: the value-weighted maps of the heads a weights map shows (by head),
    // and each such head's value norms ‖v_j·W_O^h‖, from the engine last refilled from.
    std::map<int, EngineF::Matrix> weighedMaps_;
    std::map<int, Eigen::RowVectorXd> valueNorms_;
    // The matrix a weights tile draws: the engine's weights, or weighedMaps_'s.
    EngineF::ConstBlock weightsOf(int head) const;
    QString weightsName() const;
    QString explainValueWeighted(int head, int row, int column) const;
    // The cells the scene's sliding window hides (empty without a window), and the mask parts
    // they were built from.
    BoolMatrix outsideWindow_;
    struct WindowOf {
        bool causal = false;
        std::optional<int> window;
    } outsideWindowOf_;
};

}  // namespace ae::plot
