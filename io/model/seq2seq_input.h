#pragma once
// The decoder input of an encoder–decoder model for a target text, as Hugging Face shifts labels
// right: decoder_start_token_id, then the target's tokens (its tokenizer's, special tokens
// included) without the end token that closes them. BART keeps its leading <s>: its decoder input
// is </s> <s> … . `run --target-text` and the window's typed target share it.

#include <QString>
#include <vector>

#include "core/model/model.h"

namespace ae::io {

class Tokenizer;

// `target` encoded by `targetTokenizer` (Tokenizer::loadTarget's) for a model whose encoder stack
// config is `config`. Throws TokenizerError as encode does.
std::vector<long long> teacherForcedDecoderIds(const Tokenizer& targetTokenizer,
                                               const QString& target, const model::Config& config);

}  // namespace ae::io
