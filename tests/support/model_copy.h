#pragma once
// A golden model copied into a temporary folder to break, and the one-line refusal that opening
// or running it gives. Shared by the refusal tests of tests/cli and tests/io/model.

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <functional>
#include <vector>

#include "core/model/model.h"
#include "io/formats/safetensors.h"
#include "io/model/model_folder.h"
#include "support/model_checks.h"
#include "support/safetensors_writer.h"

namespace ae::testing {

// A copy of a golden model in a temporary folder, to break.
struct ModelCopy {
    QTemporaryDir temp;
    QString dir;
    // `name`: a golden model of tests/data/models, or any folder's path.
    explicit ModelCopy(const QString& name) : dir(temp.path()) {
        const QString source = name.contains('/') ? name : goldenModelDir(name);
        for (const QString& f : QDir(source).entryList(QDir::Files))
            QFile::copy(source + "/" + f, dir + "/" + f);
    }
    QString path(const QString& file) const { return dir + "/" + file; }

    // config.json with `change` applied.
    void editConfig(const std::function<void(QJsonObject&)>& change) const {
        QJsonObject config = readJsonFile(path("config.json"));
        change(config);
        QFile::remove(path("config.json"));
        writeBytes(path("config.json"), QJsonDocument(config).toJson());
    }
    // model.safetensors rewritten with `change` applied to its tensors.
    void editTensors(const std::function<void(std::vector<TestTensor>&)>& change) const {
        std::vector<TestTensor> tensors;
        {
            const io::SafetensorsFile file(path("model.safetensors"));
            for (const io::TensorInfo& info : file.tensors()) {
                tensors.push_back({info.name, info.dtype, info.shape,
                                   QByteArray(reinterpret_cast<const char*>(file.tensorData(info)),
                                              info.end - info.begin)});
            }
        }
        change(tensors);
        QFile::remove(path("model.safetensors"));
        writeSafetensors(path("model.safetensors"), tensors);
    }
};

// The message of the ModelError that opening `dir` throws ("" if it opens).
inline QString openError(const QString& dir) {
    try {
        const io::ModelFolder folder(dir);
    } catch (const model::ModelError& e) {
        return QString::fromUtf8(e.what());
    }
    return {};
}

inline QString runError(const QString& dir, const std::vector<long long>& ids,
                        const model::RunOptions& options = {}) {
    try {
        const io::ModelFolder folder(dir);
        model::runModel<float>(folder.model(), ids, options);
    } catch (const model::ModelError& e) {
        return QString::fromUtf8(e.what());
    }
    return {};
}

#define QVERIFY_MESSAGE(message, ...)                                                          \
    do {                                                                                       \
        const QString m_ = (message);                                                          \
        QVERIFY2(!m_.isEmpty(), "not refused");                                                \
        QVERIFY2(!m_.contains('\n'), qPrintable(m_));                                          \
        for (const char* part : {__VA_ARGS__})                                                 \
            QVERIFY2(m_.contains(QString::fromUtf8(part)), qPrintable(m_ + " lacks " + part)); \
    } while (0)

}  // namespace ae::testing
