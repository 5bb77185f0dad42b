#pragma once
// The stages of the pipeline a user can look at, in one table: the result writers (io/), the maps,
// `render --stage` and the walkthrough (ui/, cli/) all read it, so a new stage is one row here
// plus its matrix in AttentionEngine::stageMatrix. Plain C++: the window translates the labels.
//
// Shapes use the legend of core/dimensions.h: Lq x dHead (Q, context), Lk x dHead (K, V), Lq x Lk
// (scores, scaled, capped, weights), Lq x dProj (concat), Lq x dOut (output). Every matrix is
// row-major with one token per row.

#include <array>
#include <optional>
#include <string>

namespace ae {

// PositionTerms: the terms added to the scores before the scale (DeBERTa's c2p + p2c);
// PositionBias: the bias added after it (MPNet's relative position bias); only a layer with such
// score terms has them (Scene::scoreTerms). Capped: the scaled scores after a logit soft-cap,
// cap·tanh(x/cap) (Gemma 2); only a layer with a soft-cap has it.
enum class Stage {
    Query,
    Key,
    Value,
    Scores,
    PositionTerms,
    PositionBias,
    Scaled,
    Capped,
    Weights,
    Context,
    Concat,
    Output
};
constexpr int kStageCount = 12;

// What a stage's rows or columns run over.
enum class StageAxis { Queries, Keys, HeadWidth, ProjectionWidth, OutputWidth };

struct StageInfo {
    Stage stage;
    const char* key;    // in result files and on the command line: q, k, v, scores, ...
    const char* label;  // as the window names it (translated there, context "Stage")
    bool perHead;       // one matrix per head (concat and output: one for the layer)
    StageAxis rows;
    StageAxis columns;
    const char* shape;  // "Lq x dHead", for help texts and documentation
};

// In pipeline order, indexed by Stage.
inline constexpr std::array<StageInfo, kStageCount> kStages = {{
    {Stage::Query, "q", "Q", true, StageAxis::Queries, StageAxis::HeadWidth, "Lq x dHead"},
    {Stage::Key, "k", "K", true, StageAxis::Keys, StageAxis::HeadWidth, "Lk x dHead"},
    {Stage::Value, "v", "V", true, StageAxis::Keys, StageAxis::HeadWidth, "Lk x dHead"},
    {Stage::Scores, "scores", "raw scores", true, StageAxis::Queries, StageAxis::Keys, "Lq x Lk"},
    {Stage::PositionTerms, "position_terms", "position terms", true, StageAxis::Queries,
     StageAxis::Keys, "Lq x Lk"},
    {Stage::PositionBias, "position_bias", "position bias", true, StageAxis::Queries,
     StageAxis::Keys, "Lq x Lk"},
    {Stage::Scaled, "scaled", "scaled scores", true, StageAxis::Queries, StageAxis::Keys,
     "Lq x Lk"},
    {Stage::Capped, "capped", "capped scores", true, StageAxis::Queries, StageAxis::Keys,
     "Lq x Lk"},
    {Stage::Weights, "weights", "softmax weights", true, StageAxis::Queries, StageAxis::Keys,
     "Lq x Lk"},
    {Stage::Context, "context", "context", true, StageAxis::Queries, StageAxis::HeadWidth,
     "Lq x dHead"},
    {Stage::Concat, "concat", "concatenation", false, StageAxis::Queries,
     StageAxis::ProjectionWidth, "Lq x dProj"},
    {Stage::Output, "output", "output", false, StageAxis::Queries, StageAxis::OutputWidth,
     "Lq x dOut"},
}};

constexpr bool stagesInTableOrder() {
    for (int s = 0; s < kStageCount; ++s) {
        if (kStages[static_cast<size_t>(s)].stage != static_cast<Stage>(s)) return false;
    }
    return true;
}
static_assert(stagesInTableOrder(), "kStages must list the stages in the order of enum Stage");

constexpr const StageInfo& stageInfo(Stage stage) {
    return kStages[static_cast<size_t>(stage)];
}
// Scores, scaled scores and weights: rows are queries, columns are keys, the mask applies.
constexpr bool isAttentionStage(Stage stage) {
    return stageInfo(stage).columns == StageAxis::Keys;
}

// The stage with this key, if any.
std::optional<Stage> stageWithKey(const std::string& key);
// Every key, as a sentence lists them: "q, k, v, ..., concat or output".
std::string stageKeyList();

}  // namespace ae
