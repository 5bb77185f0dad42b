#pragma once
#include <QStringList>

namespace ae::cli {
// `attention-explorer train (SCENE.json | --preset NAME) --task TASK [--steps N] [--lr X]
// [--seed S] -o TRAINED.json`: trains the layer's weights by backpropagation so its attention
// learns the task (core/attention_training.h), prints the loss as it goes and writes the trained
// scene. Throws std::invalid_argument (one line, exit status 2) for bad arguments or scenes.
int trainCommand(const QStringList& arguments);
}  // namespace ae::cli
