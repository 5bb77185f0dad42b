#pragma once
// What every sub-command shares: the exit statuses scripts rely on, one-line output, and the
// refusal of bad input (app/command_line.cpp prints it and exits with kInvalidInput).
#include <QString>
#include <cstdio>

#include "core/scene.h"

class QCommandLineParser;

namespace ae::cli {
enum ExitStatus { kSuccess = 0, kInternalError = 1, kInvalidInput = 2 };

// One line of text on stdout or stderr.
void printLine(FILE* stream, const QString& text);
// An invalid-input refusal: the dispatcher prints `message` as one line and exits with
// kInvalidInput.
[[noreturn]] void refuse(const QString& message);

// The scene a command works on: one SCENE.json positional argument, or --preset NAME; with
// --kv-heads N its K and V shared by groups of heads, as the window's kv heads slider does.
void addSceneArguments(QCommandLineParser& parser);
// Reads what addSceneArguments parsed; refuses neither or both, a scene that does not load, or a
// kv head count that is not a divisor of the heads (or a scene that cannot be grouped), naming
// `command` or the scene (`label`: the file, or "preset NAME", for later error lines).
Scene readSceneArgument(const QCommandLineParser& parser, const QString& command, QString& label);

// The folder a MODEL_DIR argument stands for: `builtin:NAME` is the built-in model of that name
// (io/model/builtin_models.h), anything else is returned as given. An unknown name is refused as
// `command: unknown built-in model "NAME" (built-in models: a, b)`.
QString modelFolderArgument(const QString& argument, const QString& command);
}  // namespace ae::cli
