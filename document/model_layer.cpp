#include "document/model_layer.h"

#include <QFileInfo>
#include <QObject>
#include <cmath>

#include "core/model/model_layer_scene.h"
#include "core/model/what_if.h"
#include "core/scene_compare.h"
#include "document/undo_commands.h"

namespace ae::document {

namespace {

bool sameWeights(const Projections& p, const Projections& q) {
    return p.mode == q.mode && sameMatrix(p.query, q.query) && sameMatrix(p.key, q.key) &&
           sameMatrix(p.value, q.value) && sameMatrix(p.queryBias, q.queryBias) &&
           sameMatrix(p.keyBias, q.keyBias) && sameMatrix(p.valueBias, q.valueBias) &&
           p.hasOutput == q.hasOutput && sameMatrix(p.output, q.output) &&
           sameMatrix(p.outputBias, q.outputBias);
}

}  // namespace

Scene modelLayerScene(const model::Model& model, const WindowRun& run, int layer,
                      const ModelReference& reference, const std::vector<std::string>& labels,
                      const Scene* sameLayer) {
    // layerScene reads the layer's residual input and the mask: the float run's, in double.
    model::ModelRun<double> inDouble;
    inDouble.config = run.config;
    inDouble.tokens = run.tokens;
    inDouble.attentionMask = run.attentionMask;
    inDouble.layers.resize(run.layers.size());
    inDouble.layers[static_cast<std::size_t>(layer)].hiddenIn =
        run.layers[static_cast<std::size_t>(layer)].hiddenIn.cast<double>();
    Scene scene;
    if (sameLayer) {
        scene = *sameLayer;
        model::putLayerInput(scene, model, inDouble, layer, labels);
    } else {
        scene = model::layerScene(model, inDouble, layer, labels);
    }
    scene.title = QStringLiteral("%1 · layer %2")
                      .arg(QFileInfo(reference.folder).fileName())
                      .arg(layer)
                      .toStdString();
    scene.viewJson = withModelReference({}, reference);
    return scene;
}

bool sameLayer(const Scene& a, const Scene& b, bool weightsKnownSame, bool ablationAside) {
    return sameMatrix(a.embeddings, b.embeddings) && a.hasSource == b.hasSource &&
           a.positional.kind == b.positional.kind && a.norm.enabled == b.norm.enabled &&
           a.norm.kind == b.norm.kind && sameMatrix(a.norm.weight, b.norm.weight) &&
           sameMatrix(a.norm.bias, b.norm.bias) && a.norm.eps == b.norm.eps &&
           (weightsKnownSame || sameWeights(a.projections, b.projections)) && a.heads == b.heads &&
           a.kvHeads == b.kvHeads && a.qkNorm.enabled == b.qkNorm.enabled &&
           sameMatrix(a.qkNorm.queryWeight, b.qkNorm.queryWeight) &&
           sameMatrix(a.qkNorm.keyWeight, b.qkNorm.keyWeight) && a.qkNorm.eps == b.qkNorm.eps &&
           a.rotary == b.rotary && (ablationAside || a.ablation == b.ablation) &&
           sameValue(a.mask, b.mask) &&
           (a.maskFill == b.maskFill || (std::isnan(a.maskFill) && std::isnan(b.maskFill))) &&
           sameValue(a.scale, b.scale);
}

LayerEdit judgeLayerEdit(const Scene& scene, const Scene& pristine, bool weightsKnownSame,
                         const QString& engineError, const WindowRun& base) {
    LayerEdit edit;
    if (sameLayer(scene, pristine, weightsKnownSame)) return edit;
    edit.kind = LayerEdit::Refused;
    if (!engineError.isEmpty()) {
        edit.problem =
            QObject::tr("The layer does not compute (%1); the later layers show the model as it is")
                .arg(engineError);
        return edit;
    }
    const std::string mismatch =
        model::whatIfShapeProblem(scene, base.config, static_cast<int>(base.tokens.size()));
    if (!mismatch.empty()) {
        edit.problem = QObject::tr("This what-if cannot flow through the model: %1")
                           .arg(QString::fromStdString(mismatch));
        return edit;
    }
    edit.kind = LayerEdit::WhatIf;
    if (!scene.ablation.byMean && sameLayer(scene, pristine, weightsKnownSame, true))
        edit.headsOff = scene.ablation.heads;
    return edit;
}

}  // namespace ae::document
