#pragma once
// Writing a model folder that io/model/model_folder.h opens and io/tokenizer/tokenizer.h reads:
// config.json in the family's Hugging Face layout, model.safetensors
// (io/formats/safetensors_writer.h), and a byte-level tokenizer. For models made here
// (core/training/model_training.h): gpt2 and llama only.

#include <QString>

#include "core/model/model.h"

namespace ae::io {

// config.json's text for `config` (gpt2 or llama, default rotary scaling, no q/k norm): what
// parseModelConfig reads back as the same Config. Throws WriteError for anything else.
QByteArray modelConfigJson(const model::Config& config);

// config.json and model.safetensors for `model` into `folder` (created if missing): every tensor
// the family needs (core/model/model.h's tensorSpecs, in that order, under the names the model's
// TensorRefs carry; a tied LM head is not stored), converted to `dtype` (F32 or F64). Throws
// WriteError naming the file.
void writeModelFolder(const QString& folder, const model::Model& model, DType dtype);

// GPT-2's classic tokenizer files for a vocabulary of bytes: vocab.json maps byte b's byte-level
// character (GPT-2's bytes_to_unicode) to id b, for b < min(vocab, 256); merges.txt has no
// merges. So a text's ids are its bytes, one token each. Throws WriteError.
void writeByteTokenizer(const QString& folder, int vocab);

}  // namespace ae::io
