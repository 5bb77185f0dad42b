#include "core/model/relative_buckets.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace ae::model {

int relativePositionBucket(long long relative, int buckets, int maxDistance, bool bidirectional) {
    int base = 0;
    long long distance = 0;
    if (bidirectional) {
        buckets /= 2;
        if (relative > 0) base = buckets;  // a later key: the upper half
        distance = std::llabs(relative);
    } else {
        distance = relative < 0 ? -relative : 0;  // later keys share bucket 0
    }
    const int exact = buckets / 2;
    if (distance < exact) return base + static_cast<int>(distance);
    // log(distance / exact) / log(maxDistance / exact) · (buckets − exact), each step in float as
    // torch does it on a float tensor, then truncated toward zero.
    const float ratio = static_cast<float>(distance) / static_cast<float>(exact);
    const float span =
        static_cast<float>(std::log(static_cast<double>(maxDistance) / static_cast<double>(exact)));
    const float scaled = std::log(ratio) / span * static_cast<float>(buckets - exact);
    const long long large = exact + static_cast<long long>(scaled);
    return base + static_cast<int>(std::min<long long>(large, buckets - 1));
}

long long logBucketPosition(long long relative, int bucketSize, int maxPosition) {
    const long long mid = bucketSize / 2;
    if (relative < mid && relative > -mid) return relative;
    const long long distance = std::llabs(relative);
    if (distance <= mid) return relative;
    // Each step in float, in HF's order: the ratio, the two logs, the product, the ceiling.
    const float ratio = static_cast<float>(distance) / static_cast<float>(mid);
    const float span = std::log(
        static_cast<float>(static_cast<double>(maxPosition - 1) / static_cast<double>(mid)));
    const float position =
        std::ceil(std::log(ratio) / span * static_cast<float>(mid - 1)) + static_cast<float>(mid);
    return relative < 0 ? -static_cast<long long>(position) : static_cast<long long>(position);
}

}  // namespace ae::model
