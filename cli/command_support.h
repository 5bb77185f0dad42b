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

// The scene a command works on: one SCENE.json positional argument, or --preset NAME.
void addSceneArguments(QCommandLineParser& parser);
// Reads what addSceneArguments parsed; refuses neither or both, or a scene that does not load,
// naming `command` or the scene (`label`: the file, or "preset NAME", for later error lines).
Scene readSceneArgument(const QCommandLineParser& parser, const QString& command, QString& label);
}  // namespace ae::cli
