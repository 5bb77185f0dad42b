#pragma once
#include <QStringList>

namespace ae::cli {
// `attention-explorer bench`: medians of the engine's full pass and of each cached change, one
// JSON line per size, then the machine's float matrix-product speed. Throws UsageError-like
// std::invalid_argument for bad arguments.
int benchCommand(const QStringList& arguments);
}  // namespace ae::cli
