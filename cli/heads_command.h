#pragma once
#include <QStringList>

namespace ae::cli {
// `attention-explorer heads MODEL_DIR (--text T | --ids 1,2,3 | --induction-random N [--seed S])
// [--json] [--double]`: every head's summary (core/model/model_analysis.h), one line a head, layer
// by layer: a table, or with --json one object a line with exactly the keys layer, head and one per
// score of core/model/head_scores.h (entropy, first_token, previous_token, self and induction;
// null for a score no row defines), in that order.
//
// With --text or --ids every score but induction is measured on that sequence, induction on it
// repeated twice: --ids exactly as given, twice; --text's tokens twice after a leading BOS when
// the tokenizer put the model's BOS first (so a llama text is BOS t t, a gpt2 text t t). With
// --induction-random N every score is measured on N random ids (never the BOS, uniform over the
// rest of the vocabulary; mt19937_64 seeded with S, 0 by default, the same on every machine)
// repeated twice, after the BOS token when the model has one (config.json's bos_token_id).
// Exit status 2 with one line on stderr for anything refused, as `run`.
int headsCommand(const QStringList& arguments);
}  // namespace ae::cli
