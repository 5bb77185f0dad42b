#include "io/scene/scene_file.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>
#include <QSet>
#include <QStringList>
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>

#include "core/init_draw.h"
#include "io/scene/scene_json_text.h"
#include "io/scene/scene_json_values.h"
#include "io/scene/scene_model_numbers.h"

// Reading: every check in the reference's order, so a bad scene gets the same message.
namespace ae::io {
namespace {

using namespace scene_values;
using scene_text::child;
using scene_text::isNonFinite;
using scene_text::withReadableNumbers;

// The text being parsed, while parseScene runs: QJsonObject sorts its keys, but with several
// unknown fields the reference names the first one in document order.
thread_local const QByteArray* tSceneText = nullptr;

QJsonObject onlyKeys(const QJsonValue& value, const QString& path,
                     std::initializer_list<const char*> allowed) {
    if (!isObject(value)) fail(path, "expected an object");
    const QJsonObject object = value.toObject();
    QSet<QString> names;
    for (const char* name : allowed)
        names.insert(QString::fromLatin1(name));
    QStringList unknown;
    for (auto it = object.begin(); it != object.end(); ++it) {
        if (!names.contains(it.key())) unknown << it.key();
    }
    if (unknown.isEmpty()) return object;
    if (unknown.size() > 1 && tSceneText) {
        // Rare: only then is the text scanned for the order the keys were written in.
        for (const QString& key : scene_text::keysInWrittenOrder(*tSceneText, path)) {
            if (unknown.contains(key)) fail(child(path, key), "unknown field");
        }
    }
    fail(child(path, unknown.first()), "unknown field");
}

// init.d_model and init.d_proj as written, checked against the size limit only once the other
// dimension is known.
struct InitSizes {
    std::optional<Integer> dModel, dProj;
};

InitSpec readInit(const QJsonValue& value, InitSizes& sizes) {
    const QJsonObject x = onlyKeys(value, "init",
                                   {"seed", "distribution", "std", "low", "high", "d_model",
                                    "d_proj", "mode", "output", "bias"});
    if (!x.contains("seed")) fail("init.seed", "required");
    InitSpec init;
    init.seed = integer(x["seed"], "init.seed", 0).modulo64();
    const QJsonValue dist = x.contains("distribution") ? x["distribution"] : QJsonValue("normal");
    if (dist == QJsonValue("normal")) {
        init.distribution = InitDistribution::Normal;
    } else if (dist == QJsonValue("uniform")) {
        init.distribution = InitDistribution::Uniform;
    } else if (dist == QJsonValue("integers")) {
        init.distribution = InitDistribution::Integers;
    } else {
        fail("init.distribution", "expected normal, uniform or integers");
    }
    init.std = number(x.contains("std") ? x["std"] : QJsonValue(1.0), "init.std");
    if (init.distribution == InitDistribution::Integers) {
        init.low = integer(x.contains("low") ? x["low"] : QJsonValue(0), "init.low").approx;
        init.high = integer(x.contains("high") ? x["high"] : QJsonValue(3), "init.high").approx;
    } else {
        init.low = number(x.contains("low") ? x["low"] : QJsonValue(-1.0), "init.low");
        init.high = number(x.contains("high") ? x["high"] : QJsonValue(1.0), "init.high");
    }
    if (init.high <= init.low) fail("init.high", "must be greater than init.low");
    if (init.std <= 0) fail("init.std", "must be positive");
    if (x.contains("d_model")) sizes.dModel = integer(x["d_model"], "init.d_model", 1);
    if (x.contains("d_proj")) sizes.dProj = integer(x["d_proj"], "init.d_proj", 1);
    const QJsonValue mode = x.contains("mode") ? x["mode"] : QJsonValue("separate");
    if (mode == QJsonValue("separate")) {
        init.mode = ProjectionMode::Separate;
    } else if (mode == QJsonValue("shared_qk")) {
        init.mode = ProjectionMode::SharedQK;
    } else {
        fail("init.mode", "expected separate or shared_qk");
    }
    init.output = boolean(x.contains("output") ? x["output"] : QJsonValue(false), "init.output");
    init.bias = boolean(x.contains("bias") ? x["bias"] : QJsonValue(false), "init.bias");
    return init;
}

void readPositional(const QJsonObject& pos, Scene& s, int d, qsizetype lq, qsizetype lk) {
    const QJsonValue kind = pos["kind"];
    if (kind == QJsonValue("sinusoidal")) {
        if (pos.contains("table")) fail("positional.table", "only with kind learned");
        s.positional.kind = PositionalKind::Sinusoidal;
        s.positional.base =
            number(pos.contains("base") ? pos["base"] : QJsonValue(10000.0), "positional.base");
        if (s.positional.base <= 1) fail("positional.base", "must be greater than 1");
    } else if (kind == QJsonValue("learned")) {
        if (pos.contains("base")) fail("positional.base", "only with kind sinusoidal");
        s.positional.kind = PositionalKind::Learned;
        s.positional.table = matrix(pos["table"], "positional.table", -1, d);
        const qsizetype needed = std::max(lq, lk);
        if (s.positional.table.rows() < needed) {
            fail("positional.table", QStringLiteral("needs at least %1 rows, got %2")
                                         .arg(needed)
                                         .arg(s.positional.table.rows()));
        }
    } else {
        fail("positional.kind", "expected sinusoidal or learned");
    }
}

void readNorm(const QJsonObject& norm, Scene& s, int d, bool version2) {
    if (version2 && norm["kind"] == QJsonValue("rmsnorm")) {
        s.norm.enabled = true;
        s.norm.kind = NormKind::Rms;
        s.norm.weight =
            norm.contains("weight") ? vector(norm["weight"], "norm.weight", d) : VectorD::Ones(d);
        if (norm.contains("bias")) fail("norm.bias", "only with kind layernorm (RMSNorm has none)");
        s.norm.bias = VectorD::Zero(d);
        s.norm.eps = number(norm.contains("eps") ? norm["eps"] : QJsonValue(1e-6), "norm.eps");
        if (s.norm.eps <= 0) fail("norm.eps", "must be positive");
        return;
    }
    if (norm["kind"] != QJsonValue("layernorm"))
        fail("norm.kind", version2 ? "expected layernorm or rmsnorm" : "expected layernorm");
    s.norm.enabled = true;
    s.norm.weight =
        norm.contains("weight") ? vector(norm["weight"], "norm.weight", d) : VectorD::Ones(d);
    s.norm.bias = norm.contains("bias") ? vector(norm["bias"], "norm.bias", d) : VectorD::Zero(d);
    s.norm.eps = number(norm.contains("eps") ? norm["eps"] : QJsonValue(1e-5), "norm.eps");
    if (s.norm.eps <= 0) fail("norm.eps", "must be positive");
}

// Version 2's grouped-query attention, known before the projections are read: K and V are then
// d_model x kv_heads·head_dim, with head_dim = d_proj / heads.
struct GroupedHeads {
    qint64 heads;
    qint64 kvHeads;
};

// A K or V weight of a grouped layer: d_model rows, kv_heads·head_dim columns.
MatrixD groupedMatrix(const QJsonValue& value, const QString& path, int d, const GroupedHeads& g,
                      qsizetype dp) {
    const MatrixD m = matrix(value, path, d);
    const qsizetype dHead = dp / g.heads;
    if (m.cols() != g.kvHeads * dHead) {
        fail(path, QStringLiteral("expected %1x%2 (d_model x kv_heads·head_dim = %3·%4), got %5x%6")
                       .arg(d)
                       .arg(g.kvHeads * dHead)
                       .arg(g.kvHeads)
                       .arg(dHead)
                       .arg(m.rows())
                       .arg(m.cols()));
    }
    return m;
}

Projections readProjections(const QJsonValue& value, int d, const GroupedHeads* grouped = nullptr) {
    const QJsonObject p =
        onlyKeys(value, "projections", {"mode", "query", "key", "value", "output", "bias"});
    Projections proj;
    const QJsonValue mode = p.contains("mode") ? p["mode"] : QJsonValue("separate");
    if (mode == QJsonValue("separate")) {
        proj.mode = ProjectionMode::Separate;
    } else if (mode == QJsonValue("shared_qk")) {
        proj.mode = ProjectionMode::SharedQK;
    } else if (mode == QJsonValue("identity")) {
        proj.mode = ProjectionMode::Identity;
    } else {
        fail("projections.mode", "expected separate, shared_qk or identity");
    }
    const QJsonObject bias = onlyKeys(p.contains("bias") ? p["bias"] : QJsonValue(QJsonObject()),
                                      "projections.bias", {"query", "key", "value", "output"});
    qsizetype dp = d;
    if (grouped && proj.mode == ProjectionMode::Identity) {
        fail("kv_heads", "needs projections.mode separate (identity has K and V as wide as Q)");
    }
    if (proj.mode == ProjectionMode::Identity) {
        for (const char* k : {"query", "key", "value"}) {
            const QString name = QString::fromLatin1(k);
            if (p.contains(name)) fail("projections." + name, "not allowed with mode identity");
            if (bias.contains(name))
                fail("projections.bias." + name, "not allowed with mode identity");
        }
        proj.queryBias = proj.keyBias = proj.valueBias = VectorD::Zero(d);
    } else {
        QStringList required = {"query", "value"};
        if (proj.mode == ProjectionMode::Separate) required << "key";
        for (const QString& k : required) {
            if (!p.contains(k)) fail("projections." + k, "required");
        }
        if (proj.mode == ProjectionMode::SharedQK) {
            if (p.contains("key")) {
                fail("projections.key",
                     "not allowed with mode shared_qk (keys use the query matrix)");
            }
            if (bias.contains("key"))
                fail("projections.bias.key", "not allowed with mode shared_qk");
        }
        proj.query = matrix(p["query"], "projections.query", d);
        dp = proj.query.cols();
        qsizetype dkv = dp;
        if (grouped) {
            if (dp % grouped->heads != 0) {
                fail("heads", QStringLiteral("%1 does not divide the projection width %2")
                                  .arg(grouped->heads)
                                  .arg(dp));
            }
            if (proj.mode != ProjectionMode::Separate) {
                fail("kv_heads", "needs projections.mode separate (K is Q itself otherwise)");
            }
            dkv = grouped->kvHeads * (dp / grouped->heads);
            proj.key = groupedMatrix(p["key"], "projections.key", d, *grouped, dp);
            proj.value = groupedMatrix(p["value"], "projections.value", d, *grouped, dp);
        } else {
            if (proj.mode == ProjectionMode::Separate)
                proj.key = matrix(p["key"], "projections.key", d, dp);
            proj.value = matrix(p["value"], "projections.value", d, dp);
        }
        proj.queryBias = bias.contains("query")
                             ? vector(bias["query"], "projections.bias.query", dp)
                             : VectorD::Zero(dp);
        if (proj.mode == ProjectionMode::Separate) {
            proj.keyBias = bias.contains("key") ? vector(bias["key"], "projections.bias.key", dkv)
                                                : VectorD::Zero(dkv);
        } else {
            proj.keyBias = proj.queryBias;
        }
        proj.valueBias = bias.contains("value")
                             ? vector(bias["value"], "projections.bias.value", dkv)
                             : VectorD::Zero(dkv);
    }
    if (p.contains("output")) {
        proj.hasOutput = true;
        proj.output = matrix(p["output"], "projections.output", dp);
        proj.outputBias =
            bias.contains("output")
                ? vector(bias["output"], "projections.bias.output", proj.output.cols())
                : VectorD::Zero(proj.output.cols());
    } else if (bias.contains("output")) {
        fail("projections.bias.output", "needs projections.output");
    }
    return proj;
}

Mask readMask(const QJsonValue& value, qsizetype lq, qsizetype lk) {
    const QJsonObject m = onlyKeys(value, "mask", {"causal", "window", "padding", "allowed"});
    Mask mask;
    mask.causal = boolean(m.contains("causal") ? m["causal"] : QJsonValue(false), "mask.causal");
    if (m.contains("window")) {
        // Beyond the largest token count a window hides nothing: clamp it to fit an int.
        const Integer window = integer(m["window"], "mask.window", 0);
        mask.window =
            static_cast<int>(window.exact ? std::min<qint64>(*window.exact, 1LL << 30) : 1LL << 30);
    }
    if (m.contains("padding")) {
        const QJsonValue pad = m["padding"];
        if (!pad.isArray() || pad.toArray().size() != lk) {
            fail("mask.padding", QStringLiteral("expected %1 values (one per key), got %2")
                                     .arg(lk)
                                     .arg(pad.isArray() ? QString::number(pad.toArray().size())
                                                        : QStringLiteral("none")));
        }
        const QJsonArray list = pad.toArray();
        for (qsizetype k = 0; k < list.size(); ++k) {
            mask.padding.push_back(boolean(list[k], index("mask.padding", k)));
        }
    }
    if (m.contains("allowed")) {
        const QJsonValue a = m["allowed"];
        const QJsonArray rows = a.toArray();
        bool shaped = a.isArray() && rows.size() == lq;
        for (const QJsonValue& r : rows)
            shaped = shaped && r.isArray() && r.toArray().size() == lk;
        if (!shaped)
            fail("mask.allowed", QStringLiteral("expected %1x%2 (queries x keys)").arg(lq).arg(lk));
        BoolMatrix allowed(lq, lk);
        for (qsizetype r = 0; r < lq; ++r) {
            const QJsonArray row = rows[r].toArray();
            for (qsizetype c = 0; c < lk; ++c) {
                const QJsonValue v = row[c];
                if (!isNumber(v) || (v.toDouble() != 0.0 && v.toDouble() != 1.0)) {
                    fail(index(index("mask.allowed", r), c), "expected 0 or 1");
                }
                allowed(r, c) = v.toDouble() != 0.0;
            }
        }
        mask.allowed = allowed;
    }
    return mask;
}

Scale readScale(const QJsonValue& value) {
    const QJsonObject sc = onlyKeys(value, "scale", {"kind", "divisor"});
    const QJsonValue kind = sc.contains("kind") ? sc["kind"] : QJsonValue("sqrt_dk");
    Scale scale;
    if (kind == QJsonValue("sqrt_dk")) {
        scale.kind = ScaleKind::SqrtDk;
    } else if (kind == QJsonValue("sqrt_dmodel")) {
        scale.kind = ScaleKind::SqrtDmodel;
    } else if (kind == QJsonValue("none")) {
        scale.kind = ScaleKind::None;
    } else if (kind == QJsonValue("divisor")) {
        scale.kind = ScaleKind::Divisor;
    } else {
        fail("scale.kind", "expected sqrt_dk, sqrt_dmodel, none or divisor");
    }
    if (scale.kind == ScaleKind::Divisor) {
        if (!sc.contains("divisor")) fail("scale.divisor", "required with kind divisor");
        scale.divisor = number(sc["divisor"], "scale.divisor");
        if (scale.divisor <= 0) fail("scale.divisor", "must be positive");
    } else if (sc.contains("divisor")) {
        fail("scale.divisor", "only with kind divisor");
    }
    return scale;
}

// A list of head_dim numbers (qk_norm's weights), with the shape in the message.
VectorD headVector(const QJsonObject& o, const char* key, const QString& path, const Scene& s) {
    const int dHead = s.dHead();
    if (!o.contains(key)) return VectorD::Ones(dHead);
    const QJsonValue v = o[key];
    if (v.isArray() && v.toArray().size() != dHead) {
        fail(path,
             QStringLiteral("expected %1 values (head_dim = d_proj / heads = %2 / %3), got %4")
                 .arg(dHead)
                 .arg(s.dProj())
                 .arg(s.heads)
                 .arg(v.toArray().size()));
    }
    return vector(v, path, dHead);
}

// A list of `width` numbers (a full-width qk_norm's weights: d_proj for Q, d_kv for K).
VectorD widthVector(const QJsonObject& o, const char* key, const QString& path, int width,
                    const char* what) {
    if (!o.contains(key)) return VectorD::Ones(width);
    const QJsonValue v = o[key];
    if (v.isArray() && v.toArray().size() != width) {
        fail(path, QStringLiteral("expected %1 values (%2 with span width), got %3")
                       .arg(width)
                       .arg(what)
                       .arg(v.toArray().size()));
    }
    return vector(v, path, width);
}

HeadNorm readQkNorm(const QJsonValue& value, const Scene& s) {
    const QJsonObject o = onlyKeys(value, "qk_norm", {"query_weight", "key_weight", "eps", "span"});
    HeadNorm norm;
    norm.enabled = true;
    const QJsonValue span = o.contains("span") ? o["span"] : QJsonValue("head");
    if (span != QJsonValue("head") && span != QJsonValue("width"))
        fail("qk_norm.span", "expected head or width");
    norm.fullWidth = span == QJsonValue("width");
    if (norm.fullWidth) {
        norm.queryWeight =
            widthVector(o, "query_weight", "qk_norm.query_weight", s.dProj(), "d_proj");
        norm.keyWeight = widthVector(o, "key_weight", "qk_norm.key_weight", s.dKeyValue(),
                                     "d_kv = kv_heads·head_dim");
    } else {
        norm.queryWeight = headVector(o, "query_weight", "qk_norm.query_weight", s);
        norm.keyWeight = headVector(o, "key_weight", "qk_norm.key_weight", s);
    }
    norm.eps = number(o.contains("eps") ? o["eps"] : QJsonValue(1e-6), "qk_norm.eps");
    if (norm.eps <= 0) fail("qk_norm.eps", "must be positive");
    return norm;
}

// Heads switched off: distinct indices below the head count, and how (zeros or the mean).
Scene::Ablation readAblation(const QJsonValue& value, const Scene& s) {
    const QJsonObject o = onlyKeys(value, "ablation", {"heads", "mode"});
    Scene::Ablation ablation;
    if (!o["heads"].isArray()) fail("ablation.heads", "expected a list of head indices");
    const QJsonArray heads = o["heads"].toArray();
    for (qsizetype i = 0; i < heads.size(); ++i) {
        const QString path = index("ablation.heads", i);
        const Integer head = integer(heads[i], path, 0);
        if (!head.exact || *head.exact >= s.heads) {
            fail(path, QStringLiteral("head %1 is out of range (the layer has %2 heads: 0 to %3)")
                           .arg(head.text())
                           .arg(s.heads)
                           .arg(s.heads - 1));
        }
        const int h = static_cast<int>(*head.exact);
        if (std::find(ablation.heads.begin(), ablation.heads.end(), h) != ablation.heads.end())
            fail(path, QStringLiteral("head %1 is listed twice").arg(h));
        ablation.heads.push_back(h);
    }
    const QJsonValue mode = o.contains("mode") ? o["mode"] : QJsonValue("zero");
    if (mode != QJsonValue("zero") && mode != QJsonValue("mean"))
        fail("ablation.mode", "expected zero or mean");
    ablation.byMean = mode == QJsonValue("mean");
    return ablation;
}

// Per-head terms on the scores: each list present holds one Lq x Lk matrix a head.
ScoreTerms readScoreTerms(const QJsonValue& value, const Scene& s) {
    const QJsonObject o = onlyKeys(value, "score_terms", {"before_scale", "after_scale"});
    ScoreTerms terms;
    const auto list = [&](const char* key, std::vector<MatrixD>& perHead) {
        if (!o.contains(QLatin1String(key)) || o[QLatin1String(key)].isNull()) return;
        const QString path = QStringLiteral("score_terms.%1").arg(QLatin1String(key));
        const QJsonValue heads = o[QLatin1String(key)];
        if (!heads.isArray() || heads.toArray().size() != s.heads) {
            fail(path, QStringLiteral("expected one %1 x %2 matrix for each of the %3 heads")
                           .arg(s.queryCount())
                           .arg(s.keyCount())
                           .arg(s.heads));
        }
        const QJsonArray array = heads.toArray();
        for (int h = 0; h < s.heads; ++h) {
            const QString at = model_numbers::scoreTermPath(key, h);
            perHead.push_back(matrix(array[h], at, s.queryCount(), s.keyCount()));
        }
    };
    list("before_scale", terms.beforeScale);
    list("after_scale", terms.afterScale);
    return terms;
}

RopeParameters readRotary(const QJsonValue& value, const Scene& s) {
    const QJsonObject o =
        onlyKeys(value, "rotary",
                 {"theta", "scaling", "factor", "low_freq_factor", "high_freq_factor",
                  "original_max_position_embeddings", "rotary_dim", "factors", "attention_factor"});
    RopeParameters rope;
    rope.theta = number(o.contains("theta") ? o["theta"] : QJsonValue(10000.0), "rotary.theta");
    if (rope.theta <= 0) fail("rotary.theta", "must be positive");
    const QJsonValue scaling = o.contains("scaling") ? o["scaling"] : QJsonValue("none");
    if (scaling == QJsonValue("none")) {
        rope.scaling = RopeScaling::None;
    } else if (scaling == QJsonValue("linear")) {
        rope.scaling = RopeScaling::Linear;
    } else if (scaling == QJsonValue("llama3")) {
        rope.scaling = RopeScaling::Llama3;
    } else if (scaling == QJsonValue("longrope")) {
        rope.scaling = RopeScaling::LongRope;
    } else {
        fail("rotary.scaling", "expected none, linear, llama3 or longrope");
    }
    const auto positive = [&o](const char* key, RopeScaling needs, RopeScaling kind,
                               double& target) {
        const QString path = QStringLiteral("rotary.") + QLatin1String(key);
        const bool wanted =
            kind == needs || (needs == RopeScaling::Linear && kind == RopeScaling::Llama3);
        if (!wanted) {
            if (o.contains(key)) {
                fail(path, needs == RopeScaling::Linear ? "only with scaling linear or llama3"
                                                        : "only with scaling llama3");
            }
            return;
        }
        if (!o.contains(key))
            fail(path, QStringLiteral("required with scaling %1")
                           .arg(kind == RopeScaling::Linear ? "linear" : "llama3"));
        target = number(o[key], path);
        if (target <= 0) fail(path, "must be positive");
    };
    positive("factor", RopeScaling::Linear, rope.scaling, rope.factor);
    positive("low_freq_factor", RopeScaling::Llama3, rope.scaling, rope.lowFrequencyFactor);
    positive("high_freq_factor", RopeScaling::Llama3, rope.scaling, rope.highFrequencyFactor);
    positive("original_max_position_embeddings", RopeScaling::Llama3, rope.scaling,
             rope.originalMaxPositions);
    if (rope.scaling == RopeScaling::Llama3 &&
        !(rope.highFrequencyFactor > rope.lowFrequencyFactor)) {
        fail("rotary.high_freq_factor",
             QStringLiteral("must exceed low_freq_factor (got %1, low_freq_factor %2)")
                 .arg(rope.highFrequencyFactor)
                 .arg(rope.lowFrequencyFactor));
    }
    if (o.contains("rotary_dim")) {
        const Integer dims = integer(o["rotary_dim"], "rotary.rotary_dim", 2);
        if (std::fmod(dims.approx, 2.0) != 0 || dims.approx > s.dHead()) {
            fail("rotary.rotary_dim",
                 QStringLiteral("expected an even number of at most head_dim = %1, got %2")
                     .arg(s.dHead())
                     .arg(dims.text()));
        }
        rope.rotaryDim = dims.approx == s.dHead() ? 0 : static_cast<int>(dims.approx);
    }
    const bool longRope = rope.scaling == RopeScaling::LongRope;
    for (const char* key : {"factors", "attention_factor"}) {
        if (!longRope && o.contains(key)) {
            fail(QStringLiteral("rotary.") + QLatin1String(key), "only with scaling longrope");
        }
        if (longRope && !o.contains(key))
            fail(QStringLiteral("rotary.") + QLatin1String(key), "required with scaling longrope");
    }
    if (longRope) {
        const int pairs = rope.turnedDims(s.dHead()) / 2;
        const QJsonValue factors = o["factors"];
        if (!factors.isArray() || factors.toArray().size() != pairs) {
            fail("rotary.factors",
                 QStringLiteral("expected %1 positive numbers (one a rotated pair: rotary_dim / 2)")
                     .arg(pairs));
        }
        const VectorD values = vector(factors, "rotary.factors", pairs);
        for (int i = 0; i < pairs; ++i) {
            if (!(values(i) > 0)) fail(index("rotary.factors", i), "must be positive");
            rope.longRopeFactors.push_back(values(i));
        }
        rope.attentionFactor = number(o["attention_factor"], "rotary.attention_factor");
        if (!(rope.attentionFactor > 0)) fail("rotary.attention_factor", "must be positive");
    }
    if (s.dHead() % 2 != 0) {
        fail("rotary", QStringLiteral("needs an even head_dim, got %1 (d_proj %2 / %3 heads)")
                           .arg(s.dHead())
                           .arg(s.dProj())
                           .arg(s.heads));
    }
    return rope;
}

}  // namespace

Scene parseScene(const QByteArray& json) {
    struct TextScope {
        const QByteArray* previous = tSceneText;
        explicit TextScope(const QByteArray& text) { tSceneText = &text; }
        ~TextScope() { tSceneText = previous; }
    } textScope(json);
    QJsonParseError error;
    QJsonDocument doc = QJsonDocument::fromJson(json, &error);
    QByteArray rewritten;
    if (error.error == QJsonParseError::IllegalNumber ||
        error.error == QJsonParseError::IllegalValue) {
        // Perhaps only numbers Qt cannot hold: read them as the reference does, and report the
        // original error if that was not it.
        rewritten = withReadableNumbers(json);
        QJsonParseError second;
        const QJsonDocument retry = QJsonDocument::fromJson(rewritten, &second);
        if (second.error == QJsonParseError::NoError) {
            doc = retry;
            error = second;
            tSceneText = &rewritten;
        }
    }
    if (error.error != QJsonParseError::NoError) {
        fail("", QStringLiteral("invalid JSON at byte %1: %2")
                     .arg(error.offset)
                     .arg(error.errorString()));
    }
    // The top level itself has the empty path (the reference prints it as ": expected an object").
    if (!doc.isObject() || isNonFinite(doc.object())) fail("", "expected an object");
    // Version 2's fields are unknown fields in any other version, as the version 1 reference
    // has them.
    const QJsonValue versionValue = doc.object()["version"];
    const bool version2 = isNumber(versionValue) && versionValue.toDouble() == 2.0;
    const QJsonObject scene =
        version2
            ? onlyKeys(doc.object(), "",
                       {"format", "version",    "title",   "view",        "tokens",   "embeddings",
                        "source", "positional", "norm",    "projections", "init",     "heads",
                        "mask",   "mask_fill",  "scale",   "head_dim",    "kv_heads", "qk_norm",
                        "rotary", "ablation",   "softcap", "score_terms"})
            : onlyKeys(doc.object(), "",
                       {"format", "version", "title", "view", "tokens", "embeddings", "source",
                        "positional", "norm", "projections", "init", "heads", "mask", "mask_fill",
                        "scale"});
    if (scene["format"] != QJsonValue("attention-explorer/scene")) {
        fail("format", "expected \"attention-explorer/scene\"");
    }
    if (!isNumber(scene["version"]) ||
        (scene["version"].toDouble() != 1.0 && scene["version"].toDouble() != 2.0)) {
        fail("version", "unsupported version (this reads versions 1 and 2)");
    }
    Scene s;
    if (scene.contains("title")) {
        if (!scene["title"].isString()) fail("title", "expected a string");
        s.title = scene["title"].toString().toStdString();
    }
    if (scene.contains("view")) {
        if (!isObject(scene["view"])) fail("view", "expected an object");
        s.viewJson =
            QJsonDocument(scene["view"].toObject()).toJson(QJsonDocument::Compact).toStdString();
    }
    s.tokens = tokens(scene["tokens"], "tokens");
    const qsizetype lq = static_cast<qsizetype>(s.tokens.size());
    InitSizes initSizes;
    if (scene.contains("init")) s.init = readInit(scene["init"], initSizes);
    const bool hasInit = s.init.has_value();
    if (hasInit && scene.contains("projections"))
        fail("init", "give either projections or init, not both");
    if (!hasInit && !scene.contains("projections")) fail("projections", "required (or init)");
    std::optional<SplitMix64> rng;
    if (hasInit) rng.emplace(s.init->seed);

    // Embeddings: explicit, or drawn first by init.
    if (scene.contains("embeddings")) {
        if (hasInit && initSizes.dModel)
            fail("init.d_model", "only allowed when embeddings are absent");
        s.embeddings = matrix(scene["embeddings"], "embeddings", lq);
    } else {
        if (!hasInit || !initSizes.dModel) fail("embeddings", "required (or init.d_model)");
        s.init->dModel = checkSize("init.d_model", lq, *initSizes.dModel);
        s.embeddings = drawMatrix(*rng, *s.init, static_cast<int>(lq), *s.init->dModel);
    }
    const int d = static_cast<int>(s.embeddings.cols());
    qsizetype lk = lq;
    if (scene.contains("source") && !scene["source"].isNull()) {
        const QJsonObject src = onlyKeys(scene["source"], "source", {"tokens", "embeddings"});
        s.hasSource = true;
        s.sourceTokens = tokens(src["tokens"], "source.tokens");
        lk = static_cast<qsizetype>(s.sourceTokens.size());
        if (src.contains("embeddings")) {
            MatrixD xs = matrix(src["embeddings"], "source.embeddings", lk);
            if (xs.cols() != d) {
                fail("source.embeddings",
                     QStringLiteral("expected width %1 (d_model of embeddings), got %2")
                         .arg(d)
                         .arg(xs.cols()));
            }
            s.sourceEmbeddings = std::move(xs);
        } else if (hasInit && !scene.contains("embeddings")) {
            s.sourceEmbeddings = drawMatrix(*rng, *s.init, static_cast<int>(lk), d);
            s.init->drawnSource = true;
        } else {
            fail("source.embeddings", "required");
        }
    }

    // Positional encodings and layer norm, applied to both streams.
    if (scene.contains("positional") && !scene["positional"].isNull()) {
        readPositional(onlyKeys(scene["positional"], "positional", {"kind", "base", "table"}), s, d,
                       lq, lk);
    }
    if (scene.contains("norm") && !scene["norm"].isNull()) {
        readNorm(onlyKeys(scene["norm"], "norm", {"kind", "weight", "bias", "eps"}), s, d,
                 version2);
    }

    // Version 2: the head count and the kv heads come first, since they shape K and V.
    std::optional<GroupedHeads> grouped;
    if (version2 && scene.contains("kv_heads")) {
        const Integer kv = integer(scene["kv_heads"], "kv_heads", 1);
        const Integer heads =
            integer(scene.contains("heads") ? scene["heads"] : QJsonValue(1), "heads", 1);
        if (!kv.exact || !heads.exact || *heads.exact % *kv.exact != 0) {
            fail("kv_heads",
                 QStringLiteral("%1 does not divide heads %2").arg(kv.text()).arg(heads.text()));
        }
        if (*kv.exact != *heads.exact) {
            if (hasInit) fail("kv_heads", "needs explicit projections (init draws K as wide as Q)");
            grouped = GroupedHeads{*heads.exact, *kv.exact};
        }
    }

    // Projections: explicit, or drawn by init after the embeddings.
    if (hasInit) {
        const int dProj = checkSize("init.d_proj", d, initSizes.dProj.value_or(integerValue(d)));
        if (initSizes.dProj) s.init->dProj = dProj;
        s.projections = drawProjections(*rng, *s.init, d);
    } else {
        s.projections = readProjections(scene["projections"], d, grouped ? &*grouped : nullptr);
    }
    const int dp = s.dProj();

    const Integer heads =
        integer(scene.contains("heads") ? scene["heads"] : QJsonValue(1), "heads", 1);
    if (!heads.exact || *heads.exact > dp || dp % *heads.exact != 0) {
        fail(
            "heads",
            QStringLiteral("%1 does not divide the projection width %2").arg(heads.text()).arg(dp));
    }
    s.heads = static_cast<int>(*heads.exact);
    if (grouped) s.kvHeads = static_cast<int>(grouped->kvHeads);

    if (version2 && scene.contains("head_dim")) {
        const Integer headDim = integer(scene["head_dim"], "head_dim", 1);
        if (!headDim.exact || *headDim.exact != s.dHead()) {
            fail("head_dim",
                 QStringLiteral("%1 does not match the projection width %2 / %3 heads = %4")
                     .arg(headDim.text())
                     .arg(dp)
                     .arg(s.heads)
                     .arg(s.dHead()));
        }
    }
    if (version2 && scene.contains("qk_norm") && !scene["qk_norm"].isNull())
        s.qkNorm = readQkNorm(scene["qk_norm"], s);
    if (version2 && scene.contains("rotary") && !scene["rotary"].isNull())
        s.rotary = readRotary(scene["rotary"], s);
    if (version2 && scene.contains("ablation") && !scene["ablation"].isNull())
        s.ablation = readAblation(scene["ablation"], s);
    if (version2 && scene.contains("softcap") && !scene["softcap"].isNull()) {
        s.softCap = number(scene["softcap"], "softcap");
        if (!(*s.softCap > 0)) fail("softcap", "must be positive (cap·tanh(x / cap))");
    }

    s.mask = readMask(scene.contains("mask") ? scene["mask"] : QJsonValue(QJsonObject()), lq, lk);
    if (version2 && scene.contains("score_terms") && !scene["score_terms"].isNull())
        s.scoreTerms = readScoreTerms(scene["score_terms"], s);

    const QJsonValue fill = scene.contains("mask_fill") ? scene["mask_fill"] : QJsonValue("-inf");
    if (fill == QJsonValue("-inf")) {
        s.maskFill = -std::numeric_limits<double>::infinity();
    } else if (fill.isString()) {
        fail("mask_fill", "expected \"-inf\" or a finite number");
    } else {
        s.maskFill = number(fill, "mask_fill");
    }
    s.scale = readScale(scene.contains("scale") ? scene["scale"] : QJsonValue(QJsonObject()));
    return s;
}

bool takesNumbersFromModel(const QByteArray& json) {
    // A cheap look first: a file without the word has no marker. With it, the word may still be
    // only a token's text, so the fields are looked at.
    if (!json.contains("\"from_model\"")) return false;
    const QJsonDocument doc = QJsonDocument::fromJson(json);
    const QJsonObject o = doc.object();
    auto marked = [](const QJsonValue& v) { return model_numbers::isMarker(v); };
    auto anyIn = [&](const QJsonValue& v) {
        const QJsonObject inner = v.toObject();
        for (auto it = inner.begin(); it != inner.end(); ++it) {
            if (marked(it.value())) return true;
            if (it.value().isObject()) {
                const QJsonObject deeper = it.value().toObject();
                for (auto d = deeper.begin(); d != deeper.end(); ++d)
                    if (marked(d.value())) return true;
            }
        }
        return false;
    };
    return marked(o.value("embeddings")) || anyIn(o.value("projections")) ||
           anyIn(o.value("norm")) || anyIn(o.value("qk_norm"));
}

Scene parseScene(const QByteArray& json, const Scene& modelLayer) {
    const model_numbers::Fields fields = model_numbers::fieldsOf(modelLayer);
    const model_numbers::Scope scope(&fields);
    return parseScene(json);
}

Scene loadSceneFile(const QString& fileName) {
    QFile file(fileName);
    if (QFileInfo(fileName).isDir()) fail("", "cannot open: is a directory");
    if (!file.open(QIODevice::ReadOnly)) fail("", "cannot open: " + file.errorString());
    return parseScene(file.readAll());
}

}  // namespace ae::io
