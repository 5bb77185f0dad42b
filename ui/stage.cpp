#include "stage.h"

#include <QCoreApplication>

namespace ae::ui {

QString stageName(Stage stage) {
    switch (stage) {
        case Stage::Query:
            return QCoreApplication::translate("Stage", "Q");
        case Stage::Key:
            return QCoreApplication::translate("Stage", "K");
        case Stage::Value:
            return QCoreApplication::translate("Stage", "V");
        case Stage::Scores:
            return QCoreApplication::translate("Stage", "raw scores");
        case Stage::Scaled:
            return QCoreApplication::translate("Stage", "scaled scores");
        case Stage::Weights:
            return QCoreApplication::translate("Stage", "softmax weights");
        case Stage::Context:
            return QCoreApplication::translate("Stage", "context");
        case Stage::Concat:
            return QCoreApplication::translate("Stage", "concatenation");
        case Stage::Output:
            return QCoreApplication::translate("Stage", "output");
    }
    return {};
}

QString stageKey(Stage stage) {
    static const char* const keys[kStageCount] = {
        "q", "k", "v", "scores", "scaled", "weights", "context", "concat", "output"};
    return QLatin1String(keys[static_cast<int>(stage)]);
}

std::optional<Stage> stageFromKey(const QString& key) {
    for (int s = 0; s < kStageCount; ++s) {
        if (stageKey(static_cast<Stage>(s)) == key) return static_cast<Stage>(s);
    }
    return std::nullopt;
}

bool isPerHead(Stage stage) {
    return stage != Stage::Concat && stage != Stage::Output;
}

bool isAttentionMatrix(Stage stage) {
    return stage == Stage::Scores || stage == Stage::Scaled || stage == Stage::Weights;
}

bool rowsAreKeys(Stage stage) {
    return stage == Stage::Key || stage == Stage::Value;
}

bool stageAvailable(const EngineF& engine, Stage stage) {
    return stage != Stage::Output || engine.hasOutput();
}

EngineF::ConstBlock stageMatrix(const EngineF& engine, Stage stage, int head) {
    switch (stage) {
        case Stage::Query:
            return engine.headQuery(head);
        case Stage::Key:
            return engine.headKey(head);
        case Stage::Value:
            return engine.headValue(head);
        case Stage::Scores:
            return engine.scores(head);
        case Stage::Scaled:
            return engine.scaled(head);
        case Stage::Weights:
            return engine.weights(head);
        case Stage::Context:
            return engine.context(head);
        case Stage::Concat:
            return engine.concat();
        case Stage::Output:
            return engine.output();
    }
    return engine.weights(head);
}

}  // namespace ae::ui
