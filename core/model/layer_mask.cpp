#include "core/model/layer_mask.h"

namespace ae::model {

Mask layerMask(const Config& c, int layer, const std::vector<int>& attentionMask) {
    Mask mask;
    mask.causal = c.isDecoder();
    if (c.slidingWindow(layer) > 0) mask.window = c.slidingWindow(layer) - 1;
    for (int attended : attentionMask)
        mask.padding.push_back(attended == 0);
    return mask;
}

}  // namespace ae::model
