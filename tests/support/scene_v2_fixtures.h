#pragma once
// The version 2 scenes shared by the scene format's tests (tests/io/scene/test_scene_v2_*): the
// fixtures in tests/data/scene-v2 (layers of the golden models, written by
// tests/tools/make_scene_v2_fixtures.py with the whole-model reference's numbers), a small
// version 2 layer built here, and a field-by-field comparison of two scenes.

#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>
#include <QStringList>
#include <functional>

#include "core/scene.h"
#include "io/scene/scene_file.h"
#include "result_check.h"

namespace aetest {

inline QString fixturePath(const QString& name) {
    return aetest::dataPath(QStringLiteral("scene-v2/") + name);
}

inline QStringList fixtureNames() {
    const QDir dir(aetest::dataPath("scene-v2"));
    QStringList names;
    for (const QString& file : dir.entryList({QStringLiteral("*.scene.json")}, QDir::Files))
        names << file.chopped(static_cast<qsizetype>(sizeof(".scene.json") - 1));
    return names;
}

inline ae::Scene fixture(const QString& name) {
    return ae::io::loadSceneFile(fixturePath(name + ".scene.json"));
}

// A small version 2 layer: 3 tokens, d_model 4, 4 heads of 2 over 2 kv heads, RMSNorm, q/k norm,
// rotary with llama3 scaling. `change` edits its JSON before it is written out.
inline QByteArray smallScene(const std::function<void(QJsonObject&)>& change = {}) {
    QJsonObject o = QJsonDocument::fromJson(R"({
        "format": "attention-explorer/scene", "version": 2, "tokens": ["a", "b", "c"],
        "embeddings": [[0.5, -1, 0.25, 2], [1.5, 0.25, -0.5, 1], [-0.5, 2, 1, 0]],
        "norm": {"kind": "rmsnorm", "weight": [1, 0.5, 2, 1], "eps": 1e-6},
        "projections": {"mode": "separate",
            "query": [[1, 0, 0.5, -1, 0, 1, 0.25, 0], [0, 1, -0.5, 2, 1, 0, 0, 0.5],
                      [0.5, 0, 1, 0, 0, 0.25, 1, 0], [0, 0.5, 0, 1, 0.5, 0, 0, 1]],
            "key": [[0.5, 0, 1, 0], [0, 0.5, 0, 1], [1, 0, 0, 0.5], [0, 1, 0.5, 0]],
            "value": [[1, 2, 0, -1], [0, 1, 1, 0], [2, 0, 0, 1], [0, 0, 1, 1]]},
        "heads": 4, "kv_heads": 2, "head_dim": 2,
        "qk_norm": {"query_weight": [1, 2], "key_weight": [0.5, 1], "eps": 1e-6},
        "rotary": {"theta": 10000, "scaling": "llama3", "factor": 8, "low_freq_factor": 1,
                   "high_freq_factor": 4, "original_max_position_embeddings": 8},
        "mask": {"causal": true}})")
                        .object();
    if (change) change(o);
    return QJsonDocument(o).toJson(QJsonDocument::Compact);
}

// Every field of two scenes, version 2's included; `why` names the first difference.
inline bool sameScene(const ae::Scene& a, const ae::Scene& b, QString& why) {
    const auto differ = [&why](const char* name) {
        why = QString::fromLatin1(name);
        return false;
    };
    const auto same = [](const auto& x, const auto& y) {
        return x.rows() == y.rows() && x.cols() == y.cols() && (x.size() == 0 || x == y);
    };
    const ae::Projections &p = a.projections, &q = b.projections;
    if (a.tokens != b.tokens || a.title != b.title || a.hasSource != b.hasSource)
        return differ("tokens");
    if (!same(a.embeddings, b.embeddings)) return differ("embeddings");
    if (a.norm.enabled != b.norm.enabled || a.norm.kind != b.norm.kind ||
        a.norm.eps != b.norm.eps || !same(a.norm.weight, b.norm.weight) ||
        !same(a.norm.bias, b.norm.bias))
        return differ("norm");
    if (p.mode != q.mode || !same(p.query, q.query) || !same(p.key, q.key) ||
        !same(p.value, q.value) || !same(p.output, q.output) || !same(p.queryBias, q.queryBias) ||
        !same(p.keyBias, q.keyBias) || !same(p.valueBias, q.valueBias) ||
        !same(p.outputBias, q.outputBias))
        return differ("projections");
    if (a.heads != b.heads || a.kvHeads != b.kvHeads) return differ("heads");
    if (a.qkNorm.enabled != b.qkNorm.enabled || a.qkNorm.eps != b.qkNorm.eps ||
        !same(a.qkNorm.queryWeight, b.qkNorm.queryWeight) ||
        !same(a.qkNorm.keyWeight, b.qkNorm.keyWeight))
        return differ("qk_norm");
    if (!(a.rotary == b.rotary)) return differ("rotary");
    if (!(a.ablation == b.ablation)) return differ("ablation");
    if (!(a.scoreTerms == b.scoreTerms)) return differ("score_terms");
    if (a.scale.kind != b.scale.kind || a.scale.divisor != b.scale.divisor) return differ("scale");
    if (a.mask.causal != b.mask.causal || a.mask.padding != b.mask.padding) return differ("mask");
    return true;
}

}  // namespace aetest
