#pragma once
// A map of patching effects (core/model/workbench.h): rows x columns of numbers read around 0,
// on the diverging colour map centred at 0 and symmetric (at least −1..1), its colour scale
// marking 1 as "restores the clean answer". Row 0 is drawn at the top.

#include <QStringList>
#include <vector>

#include "plot/chart.h"

class QCPColorMap;
class QCPColorScale;

namespace ae::plot {

class EffectMap : public Chart {
    Q_OBJECT
public:
    explicit EffectMap(const QString& title, QWidget* parent = nullptr);
    // values[row][column]; labels along the rows (left) and the columns (bottom).
    void setValues(const std::vector<std::vector<double>>& values, const QStringList& rowLabels,
                   const QStringList& columnLabels);
    void clear();
    // What the map holds (tests).
    double value(int row, int column) const;
    int rows() const { return rows_; }
    int columns() const { return columns_; }
    // The colour range's upper end (the lower is its negative).
    double range() const { return range_; }

private:
    QCPColorMap* map_;
    QCPColorScale* scale_;
    int rows_ = 0, columns_ = 0;
    double range_ = 1;
};

}  // namespace ae::plot
