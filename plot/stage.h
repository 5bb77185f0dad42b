#pragma once
// The stages of the attention pipeline the window can show, as Qt strings: a thin layer over the
// table in core/stages.h (keys, labels, per head or not, shapes), which io/ reads too.

#include <QString>
#include <optional>

#include "core/attention_engine.h"

namespace ae::plot {

using EngineF = AttentionEngine<float>;

using ae::kStageCount;
using ae::Stage;

QString stageName(Stage stage);
// Short names for files and arguments, as in the result format: q, k, v, scores, scaled,
// weights, context, concat, output.
QString stageKey(Stage stage);
std::optional<Stage> stageFromKey(const QString& key);
// Concat and output are the same for every head: one map, not one per head.
bool isPerHead(Stage stage);
// Scores, scaled scores and weights: rows are queries, columns are keys, the mask applies.
bool isAttentionMatrix(Stage stage);
// K and V rows are keys (source tokens under cross-attention); every other stage's are queries.
bool rowsAreKeys(Stage stage);
// Whether the stage exists for this scene (output only with an output projection).
bool stageAvailable(const EngineF& engine, Stage stage);

// The matrix of `stage` for head `head` (ignored when !isPerHead). A view into the engine.
EngineF::ConstBlock stageMatrix(const EngineF& engine, Stage stage, int head);

}  // namespace ae::plot
