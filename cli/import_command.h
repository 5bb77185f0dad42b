#pragma once
#include <QStringList>

namespace ae::cli {
// `attention-explorer import MODEL.safetensors (--qkv NAME | --query NAME --key NAME --value
// NAME) ... --embeddings NAME --rows IDS --heads H -o SCENE.json`: builds a scene from one
// attention layer of a real model (io/model/model_import.h) and writes it; `--list` prints the
// file's tensors instead. Throws std::invalid_argument (one line, exit status 2) for bad arguments,
// files, tensors or shapes.
int importCommand(const QStringList& arguments);
}  // namespace ae::cli
