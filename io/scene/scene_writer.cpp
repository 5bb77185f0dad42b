#include "io/scene/scene_file.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "io/scene/scene_model_numbers.h"

// Writing: JSON that reads back to the same scene; format version 1 unless the scene uses a
// version 2 field (Scene::usesVersion2), so every version 1 scene is written as before.
namespace ae::io {
namespace {

QJsonArray toJson(const MatrixD& m) {
    QJsonArray rows;
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
        QJsonArray row;
        for (Eigen::Index j = 0; j < m.cols(); ++j)
            row.append(m(i, j));
        rows.append(row);
    }
    return rows;
}

QJsonArray toJson(const VectorD& v) {
    QJsonArray list;
    for (Eigen::Index i = 0; i < v.size(); ++i)
        list.append(v(i));
    return list;
}

QJsonArray toJson(const std::vector<std::string>& strings) {
    QJsonArray list;
    for (const std::string& s : strings)
        list.append(QString::fromStdString(s));
    return list;
}

QString modeName(ProjectionMode mode) {
    switch (mode) {
        case ProjectionMode::Separate:
            return "separate";
        case ProjectionMode::SharedQK:
            return "shared_qk";
        case ProjectionMode::Identity:
            return "identity";
    }
    return "separate";
}

// JSON numbers here are qint64 or double, so a seed of 2^63 or more is written as a double, which
// holds it exactly only when it is a multiple of its spacing there (2048). Every such seed read
// from a file is: it is a double's value modulo 2^64. Another one must not be written as `init`
// (it would come back as a different seed); the matrices are written instead.
bool seedIsWritable(std::uint64_t seed) {
    return seed < (1ULL << 63) || seed % 2048 == 0;
}

QJsonObject initToJson(const InitSpec& init) {
    QJsonObject o;
    // Seeds of 2^63 and more were written as negative qint64s, which the reader refuses.
    o["seed"] = init.seed < (1ULL << 63) ? QJsonValue(static_cast<qint64>(init.seed))
                                         : QJsonValue(static_cast<double>(init.seed));
    switch (init.distribution) {
        case InitDistribution::Normal:
            o["distribution"] = "normal";
            o["std"] = init.std;
            break;
        case InitDistribution::Uniform:
            o["distribution"] = "uniform";
            o["low"] = init.low;
            o["high"] = init.high;
            break;
        case InitDistribution::Integers:
            o["distribution"] = "integers";
            o["low"] = static_cast<qint64>(init.low);
            o["high"] = static_cast<qint64>(init.high);
            break;
    }
    if (init.dModel) o["d_model"] = *init.dModel;
    if (init.dProj) o["d_proj"] = *init.dProj;
    o["mode"] = modeName(init.mode);
    o["output"] = init.output;
    o["bias"] = init.bias;
    return o;
}

QJsonObject rotaryToJson(const RopeParameters& rope) {
    QJsonObject o{{"theta", rope.theta}};
    switch (rope.scaling) {
        case RopeScaling::None:
            o["scaling"] = "none";
            break;
        case RopeScaling::Linear:
            o["scaling"] = "linear";
            o["factor"] = rope.factor;
            break;
        case RopeScaling::Llama3:
            o["scaling"] = "llama3";
            o["factor"] = rope.factor;
            o["low_freq_factor"] = rope.lowFrequencyFactor;
            o["high_freq_factor"] = rope.highFrequencyFactor;
            o["original_max_position_embeddings"] = rope.originalMaxPositions;
            break;
        case RopeScaling::LongRope: {
            o["scaling"] = "longrope";
            QJsonArray factors;
            for (double f : rope.longRopeFactors)
                factors.append(f);
            o["factors"] = factors;
            o["attention_factor"] = rope.attentionFactor;
            break;
        }
    }
    if (rope.rotaryDim > 0) o["rotary_dim"] = rope.rotaryDim;
    return o;
}

}  // namespace

namespace {

QByteArray writeScene(const Scene& s, const model_numbers::Fields* modelFields,
                      const std::string& viewJson) {
    // A matrix or vector at `path`: the model's marker when the model gives it, else explicit.
    auto field = [modelFields](const QString& path, const auto& m) -> QJsonValue {
        if (modelFields) {
            const auto found = modelFields->find(path);
            constexpr bool isVector = !std::is_same_v<std::decay_t<decltype(m)>, MatrixD>;
            const QJsonValue compact = model_numbers::compactForm(
                model_numbers::viewOf(m), found == modelFields->end() ? nullptr : &found->second,
                isVector);
            if (!compact.isUndefined()) return compact;
        }
        return toJson(m);
    };
    QJsonObject o;
    o["format"] = "attention-explorer/scene";
    const bool version2 = s.usesVersion2();
    o["version"] = version2 ? 2 : 1;
    if (!s.title.empty()) o["title"] = QString::fromStdString(s.title);
    if (!viewJson.empty())
        o["view"] = QJsonDocument::fromJson(QByteArray::fromStdString(viewJson)).object();
    o["tokens"] = toJson(s.tokens);
    // Drawn embeddings are written as the init that draws them; everything else explicitly.
    // Grouped K and V are narrower than init draws them.
    const bool writeInit = s.init && seedIsWritable(s.init->seed) && !s.kvHeads;
    const bool drawnEmbeddings = writeInit && s.init->dModel;
    if (!drawnEmbeddings) o["embeddings"] = field("embeddings", s.embeddings);
    if (s.hasSource) {
        QJsonObject source;
        source["tokens"] = toJson(s.sourceTokens);
        // Given explicitly next to drawn embeddings, they must stay explicit: drawing them
        // would also shift every later draw.
        if (!drawnEmbeddings || !s.init->drawnSource)
            source["embeddings"] = toJson(s.sourceEmbeddings);
        o["source"] = source;
    }
    if (s.positional.kind == PositionalKind::Sinusoidal) {
        o["positional"] = QJsonObject{{"kind", "sinusoidal"}, {"base", s.positional.base}};
    } else if (s.positional.kind == PositionalKind::Learned) {
        o["positional"] = QJsonObject{{"kind", "learned"}, {"table", toJson(s.positional.table)}};
    }
    if (s.norm.enabled && s.norm.kind == NormKind::Rms) {
        o["norm"] = QJsonObject{{"kind", "rmsnorm"},
                                {"weight", field("norm.weight", s.norm.weight)},
                                {"eps", s.norm.eps}};
    } else if (s.norm.enabled) {
        o["norm"] = QJsonObject{{"kind", "layernorm"},
                                {"weight", field("norm.weight", s.norm.weight)},
                                {"bias", field("norm.bias", s.norm.bias)},
                                {"eps", s.norm.eps}};
    }
    if (writeInit) {
        o["init"] = initToJson(*s.init);
    } else {
        const Projections& p = s.projections;
        QJsonObject proj{{"mode", modeName(p.mode)}};
        QJsonObject bias;
        if (p.mode != ProjectionMode::Identity) {
            proj["query"] = field("projections.query", p.query);
            if (p.mode == ProjectionMode::Separate) proj["key"] = field("projections.key", p.key);
            proj["value"] = field("projections.value", p.value);
            if (!p.queryBias.isZero(0))
                bias["query"] = field("projections.bias.query", p.queryBias);
            if (p.mode == ProjectionMode::Separate && !p.keyBias.isZero(0))
                bias["key"] = field("projections.bias.key", p.keyBias);
            if (!p.valueBias.isZero(0))
                bias["value"] = field("projections.bias.value", p.valueBias);
        }
        if (p.hasOutput) {
            proj["output"] = field("projections.output", p.output);
            if (!p.outputBias.isZero(0))
                bias["output"] = field("projections.bias.output", p.outputBias);
        }
        if (!bias.isEmpty()) proj["bias"] = bias;
        o["projections"] = proj;
    }
    o["heads"] = s.heads;
    if (version2) o["head_dim"] = s.dHead();  // redundant, but says what a head is at a glance
    if (s.kvHeads) o["kv_heads"] = *s.kvHeads;
    if (s.qkNorm.enabled) {
        QJsonObject norm{{"query_weight", field("qk_norm.query_weight", s.qkNorm.queryWeight)},
                         {"key_weight", field("qk_norm.key_weight", s.qkNorm.keyWeight)},
                         {"eps", s.qkNorm.eps}};
        if (s.qkNorm.fullWidth) norm["span"] = "width";
        o["qk_norm"] = norm;
    }
    if (s.rotary) o["rotary"] = rotaryToJson(*s.rotary);
    if (s.softCap) o["softcap"] = *s.softCap;
    if (!s.scoreTerms.empty()) {
        QJsonObject terms;
        const auto list = [&](const char* key, const std::vector<MatrixD>& perHead) {
            if (perHead.empty()) return;
            QJsonArray heads;
            for (std::size_t h = 0; h < perHead.size(); ++h)
                heads.append(
                    field(model_numbers::scoreTermPath(key, static_cast<int>(h)), perHead[h]));
            terms[QLatin1String(key)] = heads;
        };
        list("before_scale", s.scoreTerms.beforeScale);
        list("after_scale", s.scoreTerms.afterScale);
        o["score_terms"] = terms;
    }
    if (!s.ablation.heads.empty()) {
        QJsonArray heads;
        for (int h : s.ablation.heads)
            heads.append(h);
        o["ablation"] =
            QJsonObject{{"heads", heads}, {"mode", s.ablation.byMean ? "mean" : "zero"}};
    }
    QJsonObject mask;
    if (s.mask.causal) mask["causal"] = true;
    if (s.mask.window) mask["window"] = *s.mask.window;
    if (!s.mask.padding.empty()) {
        QJsonArray pad;
        for (bool p : s.mask.padding)
            pad.append(p);
        mask["padding"] = pad;
    }
    if (s.mask.allowed) {
        QJsonArray rows;
        for (Eigen::Index i = 0; i < s.mask.allowed->rows(); ++i) {
            QJsonArray row;
            for (Eigen::Index j = 0; j < s.mask.allowed->cols(); ++j)
                row.append((*s.mask.allowed)(i, j) ? 1 : 0);
            rows.append(row);
        }
        mask["allowed"] = rows;
    }
    if (!mask.isEmpty()) o["mask"] = mask;
    if (std::isinf(s.maskFill)) {
        o["mask_fill"] = "-inf";
    } else {
        o["mask_fill"] = s.maskFill;
    }
    static const char* kScaleNames[] = {"sqrt_dk", "sqrt_dmodel", "none", "divisor"};
    QJsonObject scale{{"kind", kScaleNames[static_cast<int>(s.scale.kind)]}};
    if (s.scale.kind == ScaleKind::Divisor) scale["divisor"] = s.scale.divisor;
    o["scale"] = scale;
    return QJsonDocument(o).toJson(QJsonDocument::Indented);
}

}  // namespace

QByteArray sceneToJson(const Scene& s) {
    return writeScene(s, nullptr, s.viewJson);
}

QByteArray sceneToJson(const Scene& s, const Scene& modelLayer) {
    const model_numbers::Fields fields = model_numbers::fieldsOf(modelLayer);
    return writeScene(s, &fields, s.viewJson);
}

QByteArray sceneToJson(const Scene& s, const Scene* modelLayer, const std::string& viewJson) {
    if (!modelLayer) return writeScene(s, nullptr, viewJson);
    const model_numbers::Fields fields = model_numbers::fieldsOf(*modelLayer);
    return writeScene(s, &fields, viewJson);
}

}  // namespace ae::io
