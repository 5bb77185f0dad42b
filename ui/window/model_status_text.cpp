#include "ui/window/model_status_text.h"

#include <QFileInfo>
#include <QLocale>
#include <QObject>

#include "core/key_value_heads.h"
#include "core/model/family.h"
#include "core/model/model.h"

namespace ae::ui {

QString keyValueCacheStatus(const Scene& scene, const model::Model* model,
                            const QString& modelFolder, bool brief) {
    // The window's engines compute in float.
    QString text =
        brief ? QStringLiteral("KV cache %1/token/layer")
                    .arg(QString::fromStdString(byteSizeText(
                        keyValueCacheNumbersPerTokenPerLayer(scene.keyValueHeads(), scene.dHead()) *
                        sizeof(float))))
              : QString::fromStdString(keyValueCacheLayerText(scene.keyValueHeads(), scene.dHead(),
                                                              sizeof(float), "float32"));
    if (model) {
        const QString name = QFileInfo(modelFolder).fileName();
        text += QStringLiteral("; ") +
                QString::fromStdString(keyValueCacheModelText(
                    (name.isEmpty() ? QStringLiteral("model") : name).toStdString(), model->config,
                    attentionWeightsDType(*model)));
    }
    return text;
}

QStringList layerFeatureLines(const Scene& scene, const model::Model* model, int layer) {
    QStringList lines;
    const int dHead = scene.dHead();
    if (scene.rotary) {
        const int turned = scene.rotary->turnedDims(dHead) / 2 * 2;
        lines << (turned < dHead
                      ? QObject::tr("Positions: <b>partial rotary</b>, dimensions 0–%1 of each "
                                    "head's %2 turn; %3–%4 carry no position")
                            .arg(turned - 1)
                            .arg(dHead)
                            .arg(turned)
                            .arg(dHead - 1)
                      : QObject::tr("Positions: <b>rotary</b>, all %1 dimensions of each head "
                                    "turn")
                            .arg(dHead));
    } else if (scene.positional.kind == PositionalKind::Learned) {
        lines << QObject::tr("Positions: <b>learned</b>, added to the tokens");
    } else if (scene.positional.kind == PositionalKind::Sinusoidal) {
        lines << QObject::tr("Positions: <b>sinusoidal</b>, added to the tokens");
    } else if (model && layer >= 0) {
        const model::PositionKind kind = model->config.architecture().positions;
        if (kind == model::PositionKind::Rotary) {
            lines << QObject::tr(
                "Positions: <b>none in this layer</b>: it has no rotary "
                "positions (NoPE); only the causal mask and earlier layers "
                "tell it the order");
        } else if (kind == model::PositionKind::None) {
            lines << QObject::tr("Positions: <b>none</b>");
        } else {
            lines << QObject::tr("Positions: added to the tokens before layer 0, already in X");
        }
    } else {
        lines << QObject::tr("Positions: <b>none</b>");
    }
    if (!scene.scoreTerms.afterScale.empty()) {
        lines << QObject::tr(
            "Relative positions: a learned <b>position bias</b> for each distance key − query, "
            "added to the scaled scores (the position bias stage)");
    }
    if (!scene.scoreTerms.beforeScale.empty()) {
        lines << QObject::tr(
            "Relative positions: <b>disentangled</b> content→position and position→content "
            "scores, added to q·k before the scale (the position terms stage)");
    }
    if (scene.softCap) {
        lines << QObject::tr(
                     "Soft-cap: <b>%1</b>·tanh(x / %1) squashes the scaled scores "
                     "(the capped stage)")
                     .arg(QString::number(*scene.softCap, 'g', 6));
    }
    return lines;
}

QString mapMemoryStatus(bool keepsOnlyDigests, double needed, double budget, bool brief) {
    const QLocale locale;
    const auto size = [&locale](double bytes) {
        return locale.formattedDataSize(static_cast<qint64>(bytes), 1);
    };
    if (brief)
        return keepsOnlyDigests ? QObject::tr("Maps: on demand") : QObject::tr("Maps: all kept");
    if (keepsOnlyDigests)
        return QObject::tr(
                   "With every head's maps this run would need %1, more than the %2 set for "
                   "maps (View › Memory for a model's maps). It keeps each head's summary and "
                   "small map, and recomputes a layer's full maps, exactly, when a view asks.")
            .arg(size(needed), size(budget));
    return QObject::tr(
               "Every head's maps are kept: the run needs %1 of the %2 set for maps "
               "(View › Memory for a model's maps).")
        .arg(size(needed), size(budget));
}

}  // namespace ae::ui
