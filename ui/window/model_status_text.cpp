#include "ui/window/model_status_text.h"

#include <QFileInfo>

#include "core/key_value_heads.h"
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

}  // namespace ae::ui
