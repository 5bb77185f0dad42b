#pragma once
// The alignment view of an encoder–decoder model: the cross-attention weights as target × source,
// the picture Bahdanau et al. made famous, drawn on an EffectMap (its export, its colour scale).
// One head, a layer's mean over its heads, or the mean over every layer; rows are labelled by the
// word each decoder position produces (the next decoder input, and for the last row the argmax of
// its logits), columns by the source tokens. `render --view cross` and the window draw it alike.

#include <QString>
#include <QStringList>
#include <functional>
#include <string>
#include <vector>

class QWidget;

#include "core/model/model.h"

namespace ae::plot {

class EffectMap;

// "Cross-attention of layer 1, head 2", "… mean of its 4 heads", "… mean of 2 layers × 4 heads".
// `decoder`: the decoder stack's config; layer -1: every layer; head -1: the layer's mean.
QString alignmentTitle(const ae::model::Config& decoder, int layer, int head);

// The rows' labels of `decoderRun`'s alignment: decoder position t is labelled by what it
// produces, targetLabels[t + 1] (the next input, teacher forced), and the last position by
// tokenText of its logits' argmax. targetLabels holds one label a decoder input token.
QStringList alignmentRowLabels(const ae::model::ModelRun<float>& decoderRun,
                               const std::vector<std::string>& targetLabels,
                               const std::function<QString(long long)>& tokenText);

// Fills `map` (an EffectMap made with Scale::Sequential) with `decoderRun`'s alignment for
// `layer` and `head` (model::crossAttentionAlignment), titled by alignmentTitle.
void showAlignment(EffectMap* map, const ae::model::Config& decoder,
                   const ae::model::ModelRun<float>& decoderRun, int layer, int head,
                   const QStringList& rowLabels, const QStringList& sourceLabels);

// A new alignment map's colour label and axis names.
EffectMap* newAlignmentMap(QWidget* parent);

}  // namespace ae::plot
