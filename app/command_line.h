#pragma once
// The dispatcher: the first argument names a sub-command (cli/, bench/), which runs headless;
// anything else opens the window (ui/), on a scene file if one is named.

namespace ae::cli {
// The whole program; returns the exit status (cli/command_support.h's ExitStatus).
int run(int argc, char** argv);
}  // namespace ae::cli
