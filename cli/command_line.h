#pragma once

namespace ae::cli {
// Exit statuses, as scripts rely on them.
enum ExitStatus { kSuccess = 0, kInternalError = 1, kInvalidInput = 2 };

// The whole program: a sub-command (export, presets, ...) runs headless; anything else opens the
// window, on a scene file if one is named.
int run(int argc, char** argv);
}  // namespace ae::cli
