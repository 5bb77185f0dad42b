#include "io/model/model_folder.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>
#include <QMap>
#include <QSet>
#include <QVariant>
#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>

#include "io/formats/matrix_files.h"
#include "io/formats/safetensors.h"
#include "io/model/config_reader.h"

namespace ae::io {
namespace {

using model::Activation;
using model::Config;
using model::Family;
using model::ModelError;

[[noreturn]] void fail(const QString& message) {
    failConfig(message);
}

}  // namespace

model::Config parseModelConfig(const QByteArray& json, const QString& file) {
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(json, &error);
    if (error.error != QJsonParseError::NoError) {
        fail(QStringLiteral("%1: not JSON (%2 at byte %3)")
                 .arg(file, error.errorString())
                 .arg(error.offset));
    }
    if (!document.isObject()) fail(file + ": not a JSON object");
    const QJsonObject o = document.object();
    const QJsonValue type = o.value("model_type");
    const QString name = type.isString() ? type.toString() : QString();
    const model::FamilyRow* row = model::familyRowNamed(name.toStdString());
    const ConfigRead read = row ? configReaderFor(row->family) : nullptr;
    if (!read) {
        fail(QStringLiteral("%1: model_type %2 is not supported (%3)")
                 .arg(file, jsonText(type), QString::fromStdString(model::supportedFamilies())));
    }
    const std::string missing = model::unimplementedAxes(row->architecture);
    if (!missing.empty()) {
        fail(QStringLiteral("%1: model_type %2: not implemented: %3")
                 .arg(file, jsonText(type), QString::fromStdString(missing)));
    }
    Config c;
    c.family = row->family;
    const ConfigReader r(o, file, topLevelFloatLiterals(json));
    read(r, c);
    // GPT2Config and LlamaConfig default it (50256, 1); BertConfig and Qwen3Config do not (the
    // row's bosDefault). Only the induction measurement reads it, so a value that is no token id
    // means "no BOS" rather than refusing a model that runs.
    const QJsonValue bos = o.value("bos_token_id");
    const long long bosDefault = row->bosDefault;
    const long long bosId = bos.isUndefined() ? bosDefault
                            : isJsonInteger(bos, topLevelFloatLiterals(json), "bos_token_id")
                                ? bos.toInteger()
                                : -1;
    c.bosToken = bosId >= 0 && bosId < c.vocab ? bosId : -1;
    return c;
}

std::vector<std::pair<QString, QString>> parseSafetensorsIndex(const QByteArray& json,
                                                               const QString& file) {
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(json, &error);
    if (error.error != QJsonParseError::NoError) {
        fail(QStringLiteral("%1: not JSON (%2 at byte %3)")
                 .arg(file, error.errorString())
                 .arg(error.offset));
    }
    if (!document.isObject() || !document.object().value("weight_map").isObject())
        fail(file + ": weight_map: expected an object of tensor name -> file name");
    const QJsonObject map = document.object().value("weight_map").toObject();
    std::vector<std::pair<QString, QString>> entries;
    for (auto it = map.begin(); it != map.end(); ++it) {
        const QString shard = it.value().toString();
        if (!it.value().isString() || shard.isEmpty() || shard == "." || shard == ".." ||
            shard.contains('/') || shard.contains('\\')) {
            fail(QStringLiteral("%1: weight_map[%2] is %3, not a file name in the folder")
                     .arg(file, it.key(), jsonText(it.value())));
        }
        entries.emplace_back(it.key(), shard);
    }
    return entries;
}

ModelFolder::~ModelFolder() = default;

ModelFolder::ModelFolder(const QString& directory, Values values) : directory_(directory) {
    const QDir dir(directory);
    if (!QFileInfo(directory).isDir()) fail(directory + ": not a folder");
    const QString configPath = dir.filePath("config.json");
    QFile configFile(configPath);
    if (!configFile.exists()) fail(configPath + ": missing (a model folder needs config.json)");
    if (!configFile.open(QIODevice::ReadOnly))
        fail(configPath + ": cannot read: " + configFile.errorString());
    model_.config = parseModelConfig(configFile.readAll(), configPath);
    model_.folder = directory.toStdString();
    const model::Config& c = model_.config;

    // Where each tensor is: one file, or the index's shards (each opened once).
    std::map<QString, const SafetensorsFile*> where;
    const QString single = dir.filePath("model.safetensors");
    const QString indexPath = dir.filePath("model.safetensors.index.json");
    QString weightsLabel;  // what a missing tensor is reported against
    try {
        if (QFileInfo(single).isFile()) {
            files_.push_back(std::make_unique<SafetensorsFile>(single));
            for (const TensorInfo& t : files_.back()->tensors())
                where[t.name] = files_.back().get();
            weightsLabel = single;
        } else if (QFileInfo(indexPath).isFile()) {
            QFile indexFile(indexPath);
            if (!indexFile.open(QIODevice::ReadOnly))
                fail(indexPath + ": cannot read: " + indexFile.errorString());
            std::map<QString, const SafetensorsFile*> shards;
            for (const auto& [name, shard] :
                 parseSafetensorsIndex(indexFile.readAll(), indexPath)) {
                auto found = shards.find(shard);
                if (found == shards.end()) {
                    const QString path = dir.filePath(shard);
                    if (!QFileInfo(path).isFile())
                        fail(QStringLiteral("%1: shard %2 is missing").arg(indexPath, path));
                    files_.push_back(std::make_unique<SafetensorsFile>(path));
                    found = shards.emplace(shard, files_.back().get()).first;
                }
                if (!found->second->find(name))
                    fail(QStringLiteral("%1: %2 is not in %3").arg(indexPath, name, shard));
                where[name] = found->second;
            }
            weightsLabel = indexPath;
        } else if (QFileInfo(dir.filePath("pytorch_model.bin")).isFile() ||
                   QFileInfo(dir.filePath("pytorch_model.bin.index.json")).isFile()) {
            fail(directory +
                 ": holds only pytorch_model.bin: only safetensors weights are read (a pickle "
                 "can run code when loaded). Convert it once with Python: "
                 "transformers' AutoModel.from_pretrained(DIR).save_pretrained(DIR, "
                 "safe_serialization=True) writes model.safetensors");
        } else {
            fail(directory + ": neither model.safetensors nor model.safetensors.index.json");
        }
    } catch (const MatrixFileError& e) {
        fail(QString::fromStdString(e.what()));
    }

    // The prefix this checkpoint uses, then every tensor the family needs, shape-checked.
    const model::FamilyRow& row = model::familyRow(c.family);
    const std::vector<std::string>& prefixes = row.prefixes;
    const std::string probe = row.prefixProbe;
    std::string prefix;
    bool found = false;
    for (const std::string& p : prefixes) {
        if (where.count(QString::fromStdString(p + probe))) {
            prefix = p;
            found = true;
            break;
        }
    }
    if (!found) {
        QStringList names;
        for (const std::string& p : prefixes)
            names << QString::fromStdString(p + probe);
        fail(weightsLabel + ": no " + names.join(" or "));
    }
    // Every layer has at least two tensors: a config asking for more layers than that is refused
    // before a slot is made for each (n_layer may say a billion).
    if (static_cast<double>(c.layers) * 2 > static_cast<double>(where.size())) {
        fail(QStringLiteral("%1: %2 tensors cannot hold the %3 layers config.json asks for")
                 .arg(weightsLabel)
                 .arg(where.size())
                 .arg(c.layers));
    }
    model::ModelWeights& w = model_.weights;
    std::map<const unsigned char*, bool> counted;  // a tensor read twice is stored once
    for (const model::TensorSpec& spec : model::tensorSpecs(c, w)) {
        QString name = QString::fromStdString(spec.topLevel ? spec.name : prefix + spec.name);
        const QString alias =
            QString::fromStdString(spec.topLevel ? spec.alias : prefix + spec.alias);
        if (!where.count(name) && !spec.alias.empty() && where.count(alias)) name = alias;
        const auto it = where.find(name);
        if (it == where.end()) {
            fail(QStringLiteral("%1: missing tensor %2 (expected %3)")
                     .arg(weightsLabel, name, shapeText(spec.shape)));
        }
        const SafetensorsFile& file = *it->second;
        const TensorInfo& info = *file.find(name);
        if (info.shape != spec.shape) {
            fail(QStringLiteral("%1: tensor %2 has shape %3, expected %4")
                     .arg(file.fileName(), name, shapeText(info.shape), shapeText(spec.shape)));
        }
        DType dtype;
        if (!dtypeFromName(info.dtype.toStdString(), &dtype)) {
            fail(QStringLiteral("%1: tensor %2 has dtype %3, expected F32, F16, BF16 or F64")
                     .arg(file.fileName(), name, info.dtype));
        }
        model::TensorRef& ref = *spec.slot;
        ref.name = name.toStdString();
        ref.file = file.fileName().toStdString();
        ref.dtype = dtype;
        ref.rows = spec.shape.size() == 2 ? spec.shape[0] : 1;
        ref.cols = spec.shape.back();
        ref.data = file.tensorData(info);
        scans_.push_back({&ref, file.fileName(), name, shapeText(info.shape)});
        if (!counted[ref.data]) model_.storedBytes += ref.bytes();
        counted[ref.data] = true;
    }
    // LlamaForCausalLM / GPT2LMHeadModel: with tie_word_embeddings the head is the token table
    // (a stored lm_head.weight is then ignored).
    if (c.isDecoder() && c.tieWordEmbeddings) w.lmHead = w.tokenEmbedding;
    if (values == Values::Checked) checkValues();
}

void ModelFolder::checkValues(const std::function<bool(double fraction)>& progress) {
    if (valuesChecked_) return;
    // Opening reads a big checkpoint's every page once here, and one thread faulting them in took
    // 12.7 s on 15 GiB: the tensors are shared out among the cores.
    double total = 0;
    for (const ValueScan& scan : scans_)
        total += scan.ref->bytes();
    std::vector<long long> firstBad(scans_.size(), -1);
    std::atomic<bool> stopped{false};
    double scanned = 0;
    std::mutex counting;
#pragma omp parallel for schedule(dynamic, 1)
    for (long long i = 0; i < static_cast<long long>(scans_.size()); ++i) {
        if (stopped.load()) continue;
        const model::TensorRef& ref = *scans_[static_cast<std::size_t>(i)].ref;
        firstBad[static_cast<std::size_t>(i)] = firstNonFinite(ref.data, ref.dtype, ref.count());
        if (!progress) continue;
        const std::lock_guard<std::mutex> lock(counting);
        scanned += ref.bytes();
        if (!progress(total > 0 ? scanned / total : 1.0)) stopped.store(true);
    }
    if (stopped.load()) throw model::RunCancelled();
    for (std::size_t i = 0; i < scans_.size(); ++i) {
        if (firstBad[i] < 0) continue;
        fail(QStringLiteral("%1: tensor %2 %3 has a non-finite value at element %4")
                 .arg(scans_[i].file, scans_[i].name, scans_[i].shape)
                 .arg(firstBad[i]));
    }
    valuesChecked_ = true;
}

}  // namespace ae::io
