#pragma once
#include <QString>
#include <QStringList>
#include <string>
#include <vector>

#include "core/model/model.h"

class QCommandLineParser;

namespace ae::cli {
// `attention-explorer run MODEL_DIR (--text TEXT | --ids 1,2,3) [--attention-mask 1,1,0]
// -o RESULT.json [--double] [--format json|npy]`: runs a whole model (core/model/model.h) on one
// sequence and writes what every layer and head computed (io/model/model_result.h). Exit status 2
// with one line on stderr for anything refused: arguments, the model folder, the ids, the memory.
int runModelCommand(const QStringList& arguments);

// `attention-explorer scene MODEL_DIR (--text T | --ids ...) [--attention-mask ...] --layer L
// -o SCENE.json`: layer L of the model on that sequence as a version-2 scene
// (core/model/model_layer_scene.h), computed in double.
int modelSceneCommand(const QStringList& arguments);

// The token ids of `text` for the model in `modelDirectory`, special tokens as its tokenizer's
// post-processor adds them, and each id's readable text in `labels` if given: the one place
// `run --text` and `scene --text` meet the tokenizer.
std::vector<long long> tokenizeForRun(const QString& modelDirectory, const QString& text,
                                      std::vector<std::string>* labels);

// The decoder input of an encoder–decoder model (`config`'s, in `modelDirectory`) for a target
// text, teacher forced as Hugging Face shifts its labels right: decoder_start_token_id, then the
// target side's ids (Marian: target.spm) without the closing end-of-sequence token. `labels`,
// when given, receives each id's text.
std::vector<long long> targetTextDecoderInput(const QString& modelDirectory, const QString& target,
                                              const model::Config& config,
                                              std::vector<std::string>* labels = nullptr);

// The decoder input `parser` gives `command` (scene, render) for an encoder–decoder model: exactly
// one of --decoder-ids, --target-text and --generate N (greedy, in float, on the source `ids`
// with `options`), refused otherwise. `labels` receives each id's text (the number itself without
// a tokenizer).
std::vector<long long> decoderInputFromOptions(
    const QCommandLineParser& parser, const QString& command, const QString& modelDirectory,
    const model::Model& model, const std::vector<long long>& ids, const model::RunOptions& options,
    std::vector<std::string>& labels);

// "1,2,3" → {1, 2, 3}; spaces around the numbers and empty parts ("1,2,") are allowed, as the
// reference's --ids reads them; anything else is refused as "COMMAND: OPTION: ...".
std::vector<long long> integerList(const QString& text, const QString& option,
                                   const QString& command = QStringLiteral("run"));
}  // namespace ae::cli
