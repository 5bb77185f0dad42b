#include "core/stages.h"

namespace ae {

std::optional<Stage> stageWithKey(const std::string& key) {
    for (const StageInfo& info : kStages) {
        if (key == info.key) return info.stage;
    }
    return std::nullopt;
}

std::string stageKeyList() {
    std::string list;
    for (int s = 0; s < kStageCount; ++s) {
        if (s > 0) list += s + 1 < kStageCount ? ", " : " or ";
        list += kStages[static_cast<size_t>(s)].key;
    }
    return list;
}

}  // namespace ae
