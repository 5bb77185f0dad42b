#include "plot/alignment_figure.h"

#include <QObject>

#include "core/model/model_analysis.h"
#include "plot/effect_map.h"

namespace ae::plot {

QString alignmentTitle(const ae::model::Config& decoder, int layer, int head) {
    if (head >= 0) return QObject::tr("Cross-attention of layer %1, head %2").arg(layer).arg(head);
    if (layer >= 0)
        return QObject::tr("Cross-attention of layer %1, mean of its %2 heads")
            .arg(layer)
            .arg(decoder.heads);
    return QObject::tr("Cross-attention, mean of %1 layers × %2 heads")
        .arg(decoder.layers)
        .arg(decoder.heads);
}

QStringList alignmentRowLabels(const ae::model::ModelRun<float>& decoderRun,
                               const std::vector<std::string>& targetLabels,
                               const std::function<QString(long long)>& tokenText) {
    QStringList rows;
    for (std::size_t i = 1; i < targetLabels.size(); ++i)
        rows << QString::fromStdString(targetLabels[i]);
    if (decoderRun.logits.rows() > 0) {
        Eigen::Index choice = 0;
        decoderRun.logits.row(decoderRun.logits.rows() - 1).maxCoeff(&choice);
        rows << (tokenText ? tokenText(static_cast<long long>(choice)) : QString::number(choice));
    }
    return rows;
}

EffectMap* newAlignmentMap(QWidget* parent) {
    auto* map = new EffectMap(QString(), parent, EffectMap::Scale::Sequential,
                              QObject::tr("attention weight"));
    map->setAxisNames(QObject::tr("source"), QObject::tr("output"));
    return map;
}

void showAlignment(EffectMap* map, const ae::model::Config& decoder,
                   const ae::model::ModelRun<float>& decoderRun, int layer, int head,
                   const QStringList& rowLabels, const QStringList& sourceLabels) {
    map->setTitle(alignmentTitle(decoder, layer, head));
    const Eigen::MatrixXd alignment = ae::model::crossAttentionAlignment(decoderRun, layer, head);
    map->setValues(MatrixD(alignment), rowLabels, sourceLabels);
}

}  // namespace ae::plot
