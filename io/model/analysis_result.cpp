#include "io/model/analysis_result.h"

#include <string>

#include "io/formats/json_numbers.h"

namespace ae::io {
namespace {

void append(QByteArray& out, double value) {
    json::appendNumber(out, value);
}
void append(QByteArray& out, long long value) {
    out.append(QByteArray::number(value));
}
void append(QByteArray& out, int value) {
    out.append(QByteArray::number(value));
}
void append(QByteArray& out, const std::string& value) {
    out.append('"').append(value.c_str()).append('"');
}
void append(QByteArray& out, const model::Matrix<double>& m) {
    json::appendMatrix(out, m, ",");
}
template <typename T>
void append(QByteArray& out, const std::vector<T>& list) {
    out.append('[');
    for (std::size_t i = 0; i < list.size(); ++i) {
        if (i) out.append(',');
        append(out, list[i]);
    }
    out.append(']');
}

// {"format": ..., "analysis": ..., "family": ...[, "tokens": ...]: the object left open.
QByteArray header(const model::Config& config, model::Analysis analysis,
                  const std::vector<long long>* tokens) {
    QByteArray out = "{\"format\":\"attention-explorer/analysis\",\"version\":1,\"analysis\":\"";
    out.append(model::analysisName(analysis)).append("\",\"family\":\"");
    out.append(model::familyName(config.family)).append('"');
    if (tokens) {
        out.append(",\"tokens\":");
        append(out, *tokens);
    }
    return out;
}

template <typename T>
void field(QByteArray& out, const char* key, const T& value) {
    out.append(",\"").append(key).append("\":");
    append(out, value);
}

// A list that the format writes as null when the analysis has none.
void optionalList(QByteArray& out, const char* key, const std::vector<double>& values) {
    if (values.empty()) {
        out.append(",\"").append(key).append("\":null");
    } else {
        field(out, key, values);
    }
}

// An (L·H) x (L·H) matrix as L x H x L x H nested lists.
void byHeads(QByteArray& out, const char* key, const model::Matrix<double>& m, int heads) {
    const auto n = static_cast<int>(m.rows());
    out.append(",\"").append(key).append("\":[");
    for (int l1 = 0; l1 < n / heads; ++l1) {
        if (l1) out.append(',');
        out.append('[');
        for (int h1 = 0; h1 < heads; ++h1) {
            if (h1) out.append(',');
            out.append('[');
            for (int l2 = 0; l2 < n / heads; ++l2) {
                if (l2) out.append(',');
                out.append('[');
                for (int h2 = 0; h2 < heads; ++h2) {
                    if (h2) out.append(',');
                    append(out, m(l1 * heads + h1, l2 * heads + h2));
                }
                out.append(']');
            }
            out.append(']');
        }
        out.append(']');
    }
    out.append(']');
}

}  // namespace

QByteArray lensJson(const model::Config& config, const std::vector<long long>& tokens,
                    const model::LensResult& lens) {
    QByteArray out = header(config, model::Analysis::Lens, &tokens);
    field(out, "top_k", lens.topK);
    field(out, "targets", lens.targets);
    field(out, "top_ids", lens.topIds);
    field(out, "top_probs", lens.topProbabilities);
    field(out, "target_probs", lens.targetProbabilities);
    field(out, "target_ranks", lens.targetRanks);
    out.append("}\n");
    return out;
}

QByteArray attributionJson(const model::Config& config, const std::vector<long long>& tokens,
                           const model::AttributionResult& a) {
    QByteArray out = header(config, model::Analysis::Attribution, &tokens);
    field(out, "position", a.position);
    field(out, "target", a.target);
    if (a.foil >= 0) {
        field(out, "foil", a.foil);
    } else {
        out.append(",\"foil\":null");
    }
    field(out, "logit_difference", a.logitDifference);
    field(out, "embed", a.embed);
    field(out, "heads", a.heads);
    field(out, "attn_bias", a.attentionBias);
    field(out, "mlp", a.mlp);
    field(out, "final_norm_bias", a.finalNormBias);
    field(out, "sum", a.sum);
    out.append(",\"final_norm\":{\"kind\":");
    append(out, a.finalNormKind);
    field(out, "scale", a.finalNormScale);
    out.append('}');
    optionalList(out, "post_attention_scales", a.postAttentionScales);
    optionalList(out, "softcap_factors", a.softCapFactors);
    out.append("}\n");
    return out;
}

QByteArray patchingJson(const model::Config& config, const std::vector<long long>& clean,
                        const std::vector<long long>& corrupt, const model::PatchingResult& p) {
    QByteArray out = header(config, model::Analysis::Patching, &clean);
    field(out, "corrupt_tokens", corrupt);
    field(out, "position", p.position);
    field(out, "target", p.target);
    if (p.foil >= 0) {
        field(out, "foil", p.foil);
    } else {
        out.append(",\"foil\":null");
    }
    field(out, "clean_metric", p.cleanMetric);
    field(out, "corrupt_metric", p.corruptMetric);
    field(out, "heads", p.heads);
    field(out, "resid", p.residual);
    field(out, "pattern", p.pattern);
    out.append("}\n");
    return out;
}

QByteArray valueNormsJson(const model::Config& config, const std::vector<long long>& tokens,
                          const model::ValueNormsResult& v) {
    QByteArray out = header(config, model::Analysis::ValueNorms, &tokens);
    field(out, "norms", v.norms);
    field(out, "sink_weight", v.sinkWeight);
    field(out, "sink_norm", v.sinkNorm);
    out.append("}\n");
    return out;
}

QByteArray compositionJson(const model::Config& config, const model::CompositionResult& c) {
    QByteArray out = header(config, model::Analysis::Composition, nullptr);
    byHeads(out, "q", c.q, config.heads);
    byHeads(out, "k", c.k, config.heads);
    byHeads(out, "v", c.v, config.heads);
    field(out, "reading_fold", c.readingFold);
    out.append(",\"centered_writing\":").append(c.centeredWriting ? "true" : "false");
    out.append("}\n");
    return out;
}

}  // namespace ae::io
