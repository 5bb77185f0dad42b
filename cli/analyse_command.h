#pragma once
#include <QStringList>

namespace ae::cli {
// `attention-explorer analyse MODE MODEL_DIR [--ids 1,2,3 | --text T] [--position P]
// [--target A[,B...]] [--foil B] [--top K] [--double] -o OUT.json`: one of the workbench's
// analyses (core/model/workbench.h) written in shared/reference/analysis_reference.py's result
// format. MODE is lens, dla, value_norms or composition (which takes no ids). Every option but
// --text, --double and -o is the reference's own, so the same arguments given to
// `analysis_reference.py --check MODE MODEL_DIR ... OUT.json` check the file. Exit status 2 with
// one line for bad input or an analysis the family does not define, as the reference words it.
int analyseCommand(const QStringList& arguments);
}  // namespace ae::cli
