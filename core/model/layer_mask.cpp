#include "core/model/layer_mask.h"

#include <algorithm>
#include <limits>

namespace ae::model {

Mask layerMask(const Config& c, int layer, const std::vector<int>& attentionMask) {
    Mask mask;
    mask.causal = c.isDecoder();
    if (c.slidingWindow(layer) > 0) mask.window = c.slidingWindow(layer) - 1;
    for (int attended : attentionMask)
        mask.padding.push_back(attended == 0);
    const bool anyPadding =
        std::find(attentionMask.begin(), attentionMask.end(), 0) != attentionMask.end();
    if (c.architecture().maskedPadding && anyPadding) {
        const auto T = static_cast<Eigen::Index>(attentionMask.size());
        BoolMatrix allowed = BoolMatrix::Constant(T, T, true);
        for (Eigen::Index i = 0; i < T; ++i)
            if (attentionMask[static_cast<std::size_t>(i)] == 0) allowed.row(i).setConstant(false);
        mask.allowed = std::move(allowed);
    }
    return mask;
}

double layerMaskFill(const Config& c) {
    return c.architecture().maskedPadding
               ? static_cast<double>(std::numeric_limits<float>::lowest())
               : -std::numeric_limits<double>::infinity();
}

}  // namespace ae::model
