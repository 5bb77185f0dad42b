#pragma once
#include <QString>
#include <cstdio>

namespace ae::cli {
// Exit statuses, as scripts rely on them.
enum ExitStatus { kSuccess = 0, kInternalError = 1, kInvalidInput = 2 };

// The whole program: a sub-command (export, presets, ...) runs headless; anything else opens the
// window, on a scene file if one is named.
int run(int argc, char** argv);

// For the sub-commands: one line of text on stdout or stderr.
void printLine(FILE* stream, const QString& text);
// An invalid-input refusal: `run` prints `message` as one line and exits with kInvalidInput.
[[noreturn]] void refuse(const QString& message);
}  // namespace ae::cli
