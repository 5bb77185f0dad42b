#pragma once
// RotaryView's drawn items, shared by its two files: rotary_view.cpp (the controls and what they
// choose) and rotary_view_plots.cpp (the plots, made once and moved on every redraw).

#include <vector>

#include "ui/classroom/rotary_view.h"

class QCPBars;
class QCPCurve;
class QCPItemLine;
class QCPItemStraightLine;
class QCPItemText;
class QCPTextElement;

namespace ae::ui {

// Everything drawn that a redraw moves, made once.
struct RotaryView::Items {
    struct Pair {
        QCPTextElement* title = nullptr;
        QCPCurve* queryCircle = nullptr;
        QCPCurve* keyCircle = nullptr;
        QCPItemLine* queryGhost = nullptr;  // before rotation (position 0)
        QCPItemLine* keyGhost = nullptr;
        QCPItemLine* query = nullptr;
        QCPItemLine* key = nullptr;
        QCPItemText* queryLabel = nullptr;
        QCPItemText* keyLabel = nullptr;
    };
    Pair pairs[kLargePairs];
    QCPTextElement* sharesTitle = nullptr;
    QCPBars* shownShares = nullptr;
    QCPBars* otherShares = nullptr;
    QCPTextElement* rotaryTitle = nullptr;
    QCPTextElement* sinusoidalTitle = nullptr;
    QCPItemStraightLine* rotaryMarker = nullptr;
    QCPItemStraightLine* sinusoidalMarker = nullptr;
    QCPTextElement* frequencyTitle = nullptr;
    QCPItemStraightLine* shortLimit = nullptr;  // llama3: original / high factor
    QCPItemStraightLine* longLimit = nullptr;   // llama3: original / low factor
    QCPItemText* shortLimitLabel = nullptr;
    QCPItemText* longLimitLabel = nullptr;
    // The sinusoidal curves depend on the start only (not on θ): kept until it changes.
    int sinusoidalStart = -1;
    std::vector<double> sinusoidal;
};

}  // namespace ae::ui
