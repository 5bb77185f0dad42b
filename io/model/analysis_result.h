#pragma once
// The workbench's analyses (core/model/workbench.h) as result JSON, in
// shared/reference/analysis_reference.py's format ("attention-explorer/analysis", version 1), so
// that `analysis_reference.py --check MODE ...` compares them field by field.

#include <QByteArray>
#include <vector>

#include "core/model/workbench.h"

namespace ae::io {

// `tokens`: the ids the analysis ran on (not written for composition).
QByteArray lensJson(const model::Config& config, const std::vector<long long>& tokens,
                    const model::LensResult& lens);
QByteArray attributionJson(const model::Config& config, const std::vector<long long>& tokens,
                           const model::AttributionResult& attribution);
QByteArray patchingJson(const model::Config& config, const std::vector<long long>& clean,
                        const std::vector<long long>& corrupt,
                        const model::PatchingResult& patching);
QByteArray valueNormsJson(const model::Config& config, const std::vector<long long>& tokens,
                          const model::ValueNormsResult& norms);
QByteArray compositionJson(const model::Config& config,
                           const model::CompositionResult& composition);

}  // namespace ae::io
