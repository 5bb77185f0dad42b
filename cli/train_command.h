#pragma once
#include <QStringList>

namespace ae::cli {
// `attention-explorer train (SCENE.json | --preset NAME) --task TASK [--steps N] [--lr X]
// [--seed S] -o TRAINED.json`: trains the layer's weights by backpropagation so its attention
// learns the task (core/training/attention_training.h), prints the loss as it goes and writes the
// trained scene. Throws std::invalid_argument (one line, exit status 2) for bad arguments or
// scenes.
//
// `attention-explorer train --model LAYERS [--heads H] [--d-model D] [--family llama|gpt2]
// [--positions learned|rotary] [--mlp] [--vocab V] [--length N] [--task TASK] [--steps S]
// [--lr X] [--batch B] [--seed S] -o FOLDER`: trains a small whole model
// (core/training/model_training.h) and writes it as a model folder that `run`, `heads` and the
// window open (docs/training.md).
int trainCommand(const QStringList& arguments);
}  // namespace ae::cli
