#pragma once
#include <QStringList>

namespace ae::cli {
// `attention-explorer tokenize (MODEL_DIR | TOKENIZER_FILE) (--text TEXT | --lines FILE)
// [--no-special]`: prints the token ids of TEXT as one JSON array, or of each line of FILE (each
// a JSON string) as one JSON array per line, in order. Throws std::invalid_argument (one line,
// exit status 2) for a tokenizer it cannot read or a bad line.
int tokenizeCommand(const QStringList& arguments);
}  // namespace ae::cli
