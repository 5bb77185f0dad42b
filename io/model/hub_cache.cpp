#include "io/model/hub_cache.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStringList>
#include <algorithm>
#include <set>

#include "core/model/family.h"
#include "io/formats/safetensors.h"
#include "io/model/model_folder.h"

namespace ae::io {
namespace {

// refs/main's revision when its snapshot exists, else the most recently changed snapshot.
QString currentSnapshot(const QDir& entry) {
    QFile ref(entry.filePath(QStringLiteral("refs/main")));
    if (ref.open(QIODevice::ReadOnly)) {
        const QString revision = QString::fromUtf8(ref.readAll()).trimmed();
        const QString folder = entry.filePath(QStringLiteral("snapshots/") + revision);
        if (!revision.isEmpty() && !revision.contains(QLatin1Char('/')) &&
            QFileInfo(folder).isDir())
            return folder;
    }
    const QFileInfoList snapshots =
        QDir(entry.filePath(QStringLiteral("snapshots")))
            .entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Time);
    return snapshots.isEmpty() ? QString() : snapshots.first().filePath();
}

// The weights files opening would read, and their size on disk (a symlink's target's size).
qint64 weightsBytes(const QDir& snapshot) {
    qint64 bytes = 0;
    for (const QFileInfo& f :
         snapshot.entryInfoList({QStringLiteral("*.safetensors")}, QDir::Files))
        bytes += f.size();
    return bytes;
}

// The float dtypes of the snapshot's tensors, from the headers: "BF16", or "mixed (BF16, F32)".
// Integer buffers some checkpoints carry (position ids) are not weights.
QString weightsDtype(const QDir& snapshot) {
    std::set<QString> dtypes;
    for (const QFileInfo& f :
         snapshot.entryInfoList({QStringLiteral("*.safetensors")}, QDir::Files)) {
        const SafetensorsFile file(f.filePath());
        for (const TensorInfo& t : file.tensors()) {
            if (t.dtype == QLatin1String("F32") || t.dtype == QLatin1String("F16") ||
                t.dtype == QLatin1String("BF16") || t.dtype == QLatin1String("F64"))
                dtypes.insert(t.dtype);
        }
    }
    if (dtypes.size() == 1) return *dtypes.begin();
    QStringList all(dtypes.begin(), dtypes.end());
    return dtypes.empty() ? QString() : QStringLiteral("mixed (%1)").arg(all.join(", "));
}

// config.json's model_type, for a folder that cannot be opened; empty when unreadable.
QString modelType(const QDir& snapshot) {
    QFile config(snapshot.filePath(QStringLiteral("config.json")));
    if (!config.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(config.readAll()).object().value("model_type").toString();
}

}  // namespace

QString hubCacheFolder() {
    const QString hub = qEnvironmentVariable("HF_HUB_CACHE");
    if (!hub.isEmpty()) return hub;
    const QString home = qEnvironmentVariable("HF_HOME");
    if (!home.isEmpty()) return QDir(home).filePath(QStringLiteral("hub"));
    return QDir::home().filePath(QStringLiteral(".cache/huggingface/hub"));
}

std::vector<HubModel> listHubModels(const QString& hubFolder) {
    std::vector<HubModel> models;
    const QDir hub(hubFolder);
    for (const QFileInfo& entry :
         hub.entryInfoList({QStringLiteral("models--*")}, QDir::Dirs | QDir::NoDotAndDotDot)) {
        const QString snapshot = currentSnapshot(QDir(entry.filePath()));
        if (snapshot.isEmpty()) continue;
        HubModel m;
        // models--ORG--NAME: the hub writes the repository's "/" as "--".
        m.name = entry.fileName().mid(8);
        const qsizetype slash = m.name.indexOf(QStringLiteral("--"));
        if (slash > 0) m.name.replace(slash, 2, QStringLiteral("/"));
        m.snapshot = snapshot;
        m.bytesOnDisk = weightsBytes(QDir(snapshot));
        try {
            const ModelFolder folder(snapshot, ModelFolder::Values::Unread);
            const model::Model& model = folder.model();
            m.family = QString::fromLatin1(model::familyRow(model.config.family).modelType);
            m.dtype = weightsDtype(QDir(snapshot));
        } catch (const model::ModelError& e) {
            m.problem = QString::fromStdString(e.what());
            m.family = modelType(QDir(snapshot));
        } catch (const MatrixFileError& e) {
            m.problem = QString::fromStdString(e.what());
        }
        models.push_back(std::move(m));
    }
    std::sort(models.begin(), models.end(),
              [](const HubModel& a, const HubModel& b) { return a.name < b.name; });
    return models;
}

}  // namespace ae::io
