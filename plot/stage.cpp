#include "plot/stage.h"

#include <QCoreApplication>

namespace ae::plot {

QString stageName(Stage stage) {
    return QCoreApplication::translate("Stage", stageInfo(stage).label);
}

QString stageKey(Stage stage) {
    return QLatin1String(stageInfo(stage).key);
}

std::optional<Stage> stageFromKey(const QString& key) {
    return stageWithKey(key.toStdString());
}

bool isPerHead(Stage stage) {
    return stageInfo(stage).perHead;
}

bool isAttentionMatrix(Stage stage) {
    return isAttentionStage(stage);
}

bool rowsAreKeys(Stage stage) {
    return stageInfo(stage).rows == StageAxis::Keys;
}

bool stageAvailable(const EngineF& engine, Stage stage) {
    return engine.hasStage(stage);
}

EngineF::ConstBlock stageMatrix(const EngineF& engine, Stage stage, int head) {
    return engine.stageMatrix(stage, head);
}

}  // namespace ae::plot
