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

// DeBERTa's log-bucketed relative position of `relative` = query − key: itself within
// bucketSize / 2 of 0, beyond that sign · (mid + ⌈log(|r| / mid) / log((maxPosition − 1) / mid) ·
// (mid − 1)⌉), mid = bucketSize / 2, in float as HF takes it
// (modeling_deberta_v2.make_log_bucket_position). Needs (maxPosition − 1) / mid > 1.
long long logBucketPosition(long long relative, int bucketSize, int maxPosition);

}  // namespace ae::model
