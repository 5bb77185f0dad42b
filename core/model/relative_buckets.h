#pragma once
// The buckets of relative positions that T5 and MPNet learn one bias per head for: half of the
// buckets for each direction (bidirectional), the first half of those for exact distances, the
// rest log-spaced up to maxDistance and the last bucket beyond it. Hugging Face takes the log in
// float (`.float()`) and truncates, so the bucket of a distance on a log boundary depends on
// float rounding: this does the same arithmetic in float, in the same order.

namespace ae::model {

// The bucket of `relative` = key position − query position, in [0, buckets).
// (modeling_t5.T5Attention._relative_position_bucket; modeling_mpnet's is the same with
// bidirectional true.)
int relativePositionBucket(long long relative, int buckets, int maxDistance, bool bidirectional);

}  // namespace ae::model
