#pragma once
// A copy of a ModelTrainer's model that owns its weights: the trainer's model() points into the
// trainer's own parameters, which the next Adam step changes, so the window, a test or the folder
// writer needs a frozen copy to read while the worker trains on.

#include <memory>
#include <vector>

#include "core/model/model.h"
#include "core/training/model_training.h"

namespace ae::ui {

struct OwnedModel {
    std::vector<MatrixD> tensors;  // the parameters, in the trainer's (tensorSpecs) order
    model::Model model;            // its TensorRefs point into `tensors` (F64)

    OwnedModel() = default;
    // `model` points into `tensors`: neither copied nor moved.
    OwnedModel(const OwnedModel&) = delete;
    OwnedModel& operator=(const OwnedModel&) = delete;
};

// The trainer's current weights, copied (about 8 bytes a parameter).
std::shared_ptr<const OwnedModel> snapshotModel(model::ModelTrainer& trainer);

}  // namespace ae::ui
