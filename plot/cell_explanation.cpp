#include "plot/cell_explanation.h"

#include <QCoreApplication>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "core/ops.h"

namespace ae::plot {
namespace {

QString tr(const char* text) {
    return QCoreApplication::translate("CellExplanation", text);
}

QString quoted(const std::vector<std::string>& tokens, int i) {
    return QStringLiteral("“%1”").arg(QString::fromStdString(tokens[static_cast<size_t>(i)]));
}

QString divisorText(const Scene& scene) {
    switch (scene.scale.kind) {
        case ScaleKind::SqrtDk:
            return QStringLiteral("√d_k = √%1").arg(scene.dHead());
        case ScaleKind::SqrtDmodel:
            return QStringLiteral("√d_model = √%1").arg(scene.dModel());
        case ScaleKind::None:
            return tr("no scaling");
        case ScaleKind::Divisor:
            return tr("chosen divisor");
    }
    return {};
}

// "head 2 · softmax weights, query 1 “cat” → key 3 “mat”"
QString heading(const EngineF& engine, Stage stage, int head, int row, int column) {
    const Scene& scene = engine.scene();
    QString text =
        isPerHead(stage) ? tr("head %1 · %2").arg(head).arg(stageName(stage)) : stageName(stage);
    if (isAttentionMatrix(stage)) {
        return text + tr(", query %1 %2 → key %3 %4")
                          .arg(row)
                          .arg(quoted(scene.tokens, row))
                          .arg(column)
                          .arg(quoted(scene.keyTokens(), column));
    }
    const auto& tokens = rowsAreKeys(stage) ? scene.keyTokens() : scene.tokens;
    return text + tr(", token %1 %2, dimension %3").arg(row).arg(quoted(tokens, row)).arg(column);
}

// The softmax of one row as the engine does it: masked entries dropped (-inf fill) or replaced
// by the fill, the row maximum subtracted. Returns the maximum and the sum of exponentials.
struct RowSoftmax {
    double rowMax = 0.0;
    double sum = 0.0;
    bool anyVisible = false;
};

// What the softmax reads: the capped scores when the layer has a soft-cap, else the scaled ones.
const EngineF::Matrix& softmaxInput(const EngineF& engine, int head) {
    return engine.hasStage(Stage::Capped) ? engine.capped(head) : engine.scaled(head);
}

// "2·tanh(3.1 / 2) = 1.8": the soft-cap of one scaled score.
QString capText(double cap, double scaled, double capped) {
    return tr("%1·tanh(%2 / %1) = %3")
        .arg(shortNumber(cap), shortNumber(scaled), shortNumber(capped));
}

// Which dimensions a rotary layer turns, for column `column` of a Q or K row at position
// `position`: the partner it turns with and the angle, or that it does not turn.
QString rotaryText(const Scene& scene, int dHead, int column, int position) {
    const RopeParameters& rope = *scene.rotary;
    const int turned = rope.turnedDims(dHead) / 2 * 2;
    if (column >= turned) {
        return tr("rotary: dimension %1 does not turn (partial rotary turns dimensions 0–%2 of "
                  "%3)")
            .arg(column)
            .arg(turned - 1)
            .arg(dHead);
    }
    const int half = turned / 2, pair = column % half;
    const double theta = ops::ropeInverseFrequencies(dHead, rope)[static_cast<size_t>(pair)];
    return tr("rotary: turned with dimension %1 by position %2 × θ_%3 = %2 × %4 = %5 rad")
        .arg(column < half ? column + half : column - half)
        .arg(position)
        .arg(pair)
        .arg(shortNumber(theta), shortNumber(position * theta));
}

RowSoftmax rowSoftmax(const EngineF& engine, int head, int row) {
    const auto scaled = softmaxInput(engine, head).row(row);
    const auto visible = engine.allowed().row(row);
    const double fill = engine.scene().maskFill;
    const bool infiniteFill = std::isinf(fill);
    const auto filled = [&](Eigen::Index j) {
        if (visible(j)) return static_cast<double>(scaled(j));
        return static_cast<double>(static_cast<float>(
            std::clamp(fill, static_cast<double>(std::numeric_limits<float>::lowest()),
                       static_cast<double>(std::numeric_limits<float>::max()))));
    };
    RowSoftmax s;
    s.rowMax = -std::numeric_limits<double>::infinity();
    for (Eigen::Index j = 0; j < scaled.size(); ++j) {
        s.anyVisible = s.anyVisible || visible(j);
        if (visible(j) || !infiniteFill) s.rowMax = std::max(s.rowMax, filled(j));
    }
    for (Eigen::Index j = 0; j < scaled.size(); ++j) {
        if (visible(j) || !infiniteFill) s.sum += std::exp(filled(j) - s.rowMax);
    }
    return s;
}

bool hasScoreTerms(const EngineF& engine) {
    return engine.hasStage(Stage::PositionTerms) || engine.hasStage(Stage::PositionBias);
}

// The scaling of one score with the layer's score terms, as "(1.2 + 0.3) ÷ 4 + 0.5".
QString scalingText(const EngineF& engine, int head, int row, int column) {
    const double raw = engine.scores(head)(row, column);
    QString text = shortNumber(raw);
    if (engine.hasStage(Stage::PositionTerms)) {
        text = tr("(%1 + %2)").arg(text, shortNumber(engine.positionTerms(head)(row, column)));
    }
    text = tr("%1 ÷ %2").arg(text, shortNumber(engine.divisor()));
    if (engine.hasStage(Stage::PositionBias))
        text = tr("%1 + %2").arg(text, shortNumber(engine.positionBias(head)(row, column)));
    return text;
}

void explainWeight(const EngineF& engine, int head, int row, int column, QStringList& lines) {
    const Scene& scene = engine.scene();
    const double raw = engine.scores(head)(row, column);
    const double scaled = softmaxInput(engine, head)(row, column);
    const QStringList reasons = maskReasons(scene.mask, row, column);
    const bool infiniteFill = std::isinf(scene.maskFill);
    const RowSoftmax s = rowSoftmax(engine, head, row);
    if (!reasons.isEmpty()) lines << tr("masked by %1").arg(reasons.join(tr(", ")));
    if (reasons.isEmpty() || !infiniteFill || !s.anyVisible) {
        const double divided = engine.scaled(head)(row, column);
        QString chain =
            tr("q_%1·k_%2 = %3, %4 = %5")
                .arg(row)
                .arg(column)
                .arg(shortNumber(raw))
                .arg(hasScoreTerms(engine) ? scalingText(engine, head, row, column)
                                           : tr("÷ %1").arg(shortNumber(engine.divisor())))
                .arg(shortNumber(divided));
        if (scene.softCap) chain += tr(", capped %1").arg(capText(*scene.softCap, divided, scaled));
        lines << chain;
    }
    if (!s.anyVisible && infiniteFill) {
        lines << tr("this query sees no key: its weights are all 0, not 0/0");
        return;
    }
    if (!reasons.isEmpty() && infiniteFill) {
        lines << tr("the fill −inf makes exp(−inf) = 0: the weight is exactly 0");
        return;
    }
    const double used =
        reasons.isEmpty() ? scaled : static_cast<double>(static_cast<float>(scene.maskFill));
    const QString replaced =
        reasons.isEmpty()
            ? QString()
            : tr("%1 score replaced by the fill %2: ")
                  .arg(scene.softCap ? tr("capped") : tr("scaled"), shortNumber(used));
    lines << replaced + tr("exp(%1 − %2) / %3 = %4")
                            .arg(shortNumber(used))
                            .arg(shortNumber(s.rowMax))
                            .arg(shortNumber(s.sum))
                            .arg(shortNumber(std::exp(used - s.rowMax) / s.sum));
}

}  // namespace

QString exactFloat(float value) {
    char buffer[32];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    return QString::fromLatin1(buffer, static_cast<qsizetype>(result.ptr - buffer));
}

QString shortNumber(double value) {
    return QString::number(value, 'g', 5);
}

QStringList maskReasons(const Mask& mask, int query, int key) {
    QStringList reasons;
    if (mask.causal && key > query) {
        reasons << tr("causal (key %1 comes after query %2)").arg(key).arg(query);
    }
    if (mask.window && std::abs(query - key) > *mask.window && mask.causal) {
        // A model's sliding window W, which a scene holds as causal with window W − 1: it hides
        // keys too far back (later ones are the causal part's).
        if (key <= query)
            reasons << tr("outside the sliding window (W = %1)").arg(*mask.window + 1);
    } else if (mask.window && std::abs(query - key) > *mask.window) {
        reasons << tr("window (|%1 − %2| = %3 > %4)")
                       .arg(query)
                       .arg(key)
                       .arg(std::abs(query - key))
                       .arg(*mask.window);
    }
    if (!mask.padding.empty() && mask.padding[static_cast<size_t>(key)]) {
        reasons << tr("padding (key %1 is padding)").arg(key);
    }
    if (mask.allowed && !(*mask.allowed)(query, key)) {
        reasons << tr("custom mask (mask.allowed[%1][%2] = 0)").arg(query).arg(key);
    }
    return reasons;
}

bool hiddenByFixedMask(const Mask& mask, int query, int key) {
    Mask fixed = mask;
    fixed.allowed.reset();
    return !maskReasons(fixed, query, key).isEmpty();
}

BoolMatrix slidingWindowCells(const Mask& mask, int queries, int keys) {
    if (!mask.window) return {};
    BoolMatrix cells(queries, keys);
    for (int i = 0; i < queries; ++i) {
        for (int j = 0; j < keys; ++j)
            cells(i, j) = std::abs(i - j) > *mask.window && !(mask.causal && j > i);
    }
    return cells;
}

QString explainCell(const EngineF& engine, Stage stage, int head, int row, int column) {
    const Scene& scene = engine.scene();
    const float value = stageMatrix(engine, stage, head)(row, column);
    QStringList lines{heading(engine, stage, head, row, column),
                      tr("value %1").arg(exactFloat(value))};
    const int dHead = engine.dHead();
    switch (stage) {
        case Stage::Query:
        case Stage::Key:
        case Stage::Value: {
            const char* name = stage == Stage::Query ? "Q" : stage == Stage::Key ? "K" : "V";
            const char* source = stage == Stage::Query ? "X" : scene.hasSource ? "X_source" : "X";
            lines << tr("%1[%2, %3], column %3 of head %4 = column %5 of %6·W_%1 + b_%1")
                         .arg(QLatin1String(name))
                         .arg(row)
                         .arg(column)
                         .arg(head)
                         .arg(head * dHead + column)
                         .arg(QLatin1String(source));
            if (scene.rotary && stage != Stage::Value)
                lines << rotaryText(scene, dHead, column, row);
            break;
        }
        case Stage::Scores: {
            lines << tr("q_%1·k_%2 = Σ over %3 dimensions of Q[%1, d]·K[%2, d]")
                         .arg(row)
                         .arg(column)
                         .arg(dHead);
            const QStringList reasons = maskReasons(scene.mask, row, column);
            if (!reasons.isEmpty()) {
                lines << tr("masked by %1: the softmax does not see this score")
                             .arg(reasons.join(tr(", ")));
            }
            break;
        }
        case Stage::PositionTerms:
        case Stage::PositionBias: {
            const bool before = stage == Stage::PositionTerms;
            lines << (before ? tr("added to q_%1·k_%2 before the scale: the model's relative-"
                                  "position terms (DeBERTa: content→position + position→content)")
                             : tr("added to the scaled score of query %1 and key %2: the model's "
                                  "relative position bias"))
                         .arg(row)
                         .arg(column);
            lines << tr("distance key − query = %1").arg(column - row);
            lines << tr("scaled = %1").arg(scalingText(engine, head, row, column));
            break;
        }
        case Stage::Scaled: {
            lines << tr("%1 = %2 (÷ %3: %4)")
                         .arg(scalingText(engine, head, row, column))
                         .arg(shortNumber(value))
                         .arg(shortNumber(engine.divisor()))
                         .arg(divisorText(scene));
            const QStringList reasons = maskReasons(scene.mask, row, column);
            if (!reasons.isEmpty()) {
                lines << tr("masked by %1: replaced by the fill before the softmax")
                             .arg(reasons.join(tr(", ")));
            }
            break;
        }
        case Stage::Capped: {
            lines << tr("soft-cap: cap·tanh(x/cap), x the scaled score, cap = %1")
                         .arg(shortNumber(*scene.softCap));
            lines << capText(*scene.softCap, engine.scaled(head)(row, column), value);
            lines << tr("scores far from 0 are squashed towards ±%1; small ones pass nearly "
                        "unchanged")
                         .arg(shortNumber(*scene.softCap));
            const QStringList reasons = maskReasons(scene.mask, row, column);
            if (!reasons.isEmpty()) {
                lines << tr("masked by %1: replaced by the fill before the softmax")
                             .arg(reasons.join(tr(", ")));
            }
            break;
        }
        case Stage::Weights:
            explainWeight(engine, head, row, column, lines);
            break;
        case Stage::Context:
            lines << tr("Σ over keys j of weight[%1, j]·V[j, %2]").arg(row).arg(column);
            break;
        case Stage::Concat:
            lines << tr("context of head %1, dimension %2").arg(column / dHead).arg(column % dHead);
            break;
        case Stage::Output:
            lines << tr("(concat·W_O + b_O)[%1, %2]").arg(row).arg(column);
            break;
    }
    return lines.join('\n');
}

QString explainMeanWeight(const EngineF& engine, int row, int column) {
    const Scene& scene = engine.scene();
    double sum = 0.0;
    QStringList parts;
    for (int h = 0; h < engine.heads(); ++h) {
        const float w = engine.weights(h)(row, column);
        sum += w;
        if (h < 8) parts << shortNumber(w);
    }
    if (engine.heads() > 8) parts << QStringLiteral("…");
    QStringList lines{tr("mean weight over %1 heads, query %2 %3 → key %4 %5")
                          .arg(engine.heads())
                          .arg(row)
                          .arg(quoted(scene.tokens, row))
                          .arg(column)
                          .arg(quoted(scene.keyTokens(), column)),
                      tr("value %1").arg(shortNumber(sum / engine.heads())),
                      tr("(%1) / %2").arg(parts.join(QStringLiteral(" + "))).arg(engine.heads())};
    const QStringList reasons = maskReasons(scene.mask, row, column);
    if (!reasons.isEmpty()) lines << tr("masked by %1").arg(reasons.join(tr(", ")));
    return lines.join('\n');
}

}  // namespace ae::plot
