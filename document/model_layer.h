#pragma once
// The layer of a model the explorer shows (document/model_session.h): made from a run as a scene
// that names its model (document/model_reference.h), and, once edited, judged against the layer as
// the model has it: the model's own, a what-if that flows through the later layers
// (core/model/what_if.h), or one that cannot.

#include <QString>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/scene.h"
#include "document/model_reference.h"
#include "document/run_analysis.h"

namespace ae::document {

// Layer `layer` of `run` (a run of `model`) as a scene titled after the reference's folder, with
// the tokens `labels` and `reference` in its view. The float run's residual stream is converted to
// double (the scene's numbers) instead of running the model again in double. `sameLayer`, if
// given, is that layer as the model has it for another input: its weights are copied instead of
// converted again.
Scene modelLayerScene(const model::Model& model, const WindowRun& run, int layer,
                      const ModelReference& reference, const std::vector<std::string>& labels,
                      const Scene* sameLayer = nullptr);

// Whether two scenes compute the same layer (title, tokens and view aside). The weights are
// compared unless the caller knows them to be the same; `ablationAside` ignores switched-off heads.
bool sameLayer(const Scene& a, const Scene& b, bool weightsKnownSame, bool ablationAside = false);

// What the explorer's layer scene is to the layer as the model has it.
struct LayerEdit {
    enum Kind {
        ModelsOwn,  // it computes the model's own layer: the base run is the answer
        Refused,    // it cannot flow forward (problem says why): the model's own run is shown
        WhatIf      // it flows forward through the later layers
    };
    Kind kind = ModelsOwn;
    QString problem;
    // A what-if that only switches these heads off by zeros, the one that carries over to the
    // text repeated twice (its induction can be measured); else empty.
    std::vector<int> headsOff;
};

// `scene` (whose engine's error is `engineError`, or empty) judged against `pristine`, the layer
// as the model has it in `base`; `weightsKnownSame`: the document says the weights are pristine's.
LayerEdit judgeLayerEdit(const Scene& scene, const Scene& pristine, bool weightsKnownSame,
                         const QString& engineError, const WindowRun& base);

}  // namespace ae::document
