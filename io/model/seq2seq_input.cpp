#include "io/model/seq2seq_input.h"

#include "io/tokenizer/tokenizer.h"

namespace ae::io {

std::vector<long long> teacherForcedDecoderIds(const Tokenizer& targetTokenizer,
                                               const QString& target, const model::Config& config) {
    std::vector<long long> ids{config.decoderStartToken};
    for (int id : targetTokenizer.encode(target, true))
        ids.push_back(id);
    if (ids.size() > 1 && ids.back() == config.eosToken) ids.pop_back();
    return ids;
}

}  // namespace ae::io
