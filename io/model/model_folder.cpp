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

#include "core/scene.h"
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
    const long long layers =
        static_cast<long long>(c.layers) + (c.isEncoderDecoder() ? c.decoderLayers : 0);
    if (static_cast<double>(layers) * 2 > static_cast<double>(where.size())) {
        fail(QStringLiteral("%1: %2 tensors cannot hold the %3 layers config.json asks for")
                 .arg(weightsLabel)
                 .arg(where.size())
                 .arg(layers));
    }
    if (c.isEncoderDecoder()) {
        // Two stacks, each with its own Config and weights; the decoder's holds the LM head.
        const model::Config whole = c;
        model_.config = model::stackConfig(whole, model::Config::Stack::Encoder);
        decoder_ = std::make_shared<model::Model>();
        decoder_->config = model::stackConfig(whole, model::Config::Stack::Decoder);
        decoder_->folder = model_.folder;
        bindStack(where, prefix, weightsLabel, model_);
        bindStack(where, prefix, weightsLabel, *decoder_);
        model_.decoder = decoder_;
    } else {
        bindStack(where, prefix, weightsLabel, model_);
    }
    if (row.maskedLmHead) bindMaskedLmHead(where, row.maskedLmHead(c), weightsLabel);
    if (values == Values::Checked) checkValues();
}

void ModelFolder::bindStack(const std::map<QString, const SafetensorsFile*>& where,
                            const std::string& prefix, const QString& weightsLabel,
                            model::Model& target) {
    const model::Config& c = target.config;
    model::ModelWeights& w = target.weights;
    const auto full = [&](const std::string& name, bool topLevel) {
        return QString::fromStdString(topLevel ? name : prefix + name);
    };
    for (const model::TensorSpec& spec : model::tensorSpecs(c, w)) {
        QString name = full(spec.name, spec.topLevel);
        const QString alias = full(spec.alias, spec.topLevel);
        if (!where.count(name) && !spec.alias.empty() && where.count(alias)) name = alias;
        // Another name of the same parameter, when this one is not stored.
        for (const model::TensorSpec::StoredCopy& copy : spec.copies) {
            if (where.count(name)) break;
            if (copy.mayBeRead && where.count(full(copy.name, copy.topLevel)))
                name = full(copy.name, copy.topLevel);
        }
        if (!where.count(name)) {
            if (spec.optional) continue;
            QStringList others;
            for (const model::TensorSpec::StoredCopy& copy : spec.copies)
                if (copy.mayBeRead) others << full(copy.name, copy.topLevel);
            fail(QStringLiteral("%1: missing tensor %2%3 (expected %4)%5")
                     .arg(weightsLabel, name,
                          others.isEmpty() ? QString() : " (or " + others.join(" / ") + ")",
                          shapeText(spec.shape),
                          spec.whyRequired.empty()
                              ? QString()
                              : ": " + QString::fromStdString(spec.whyRequired)));
        }
        bindTensor(where, name, spec.shape, *spec.slot);
        // Every other stored name of it must hold the same values (compared by checkValues).
        for (const model::TensorSpec::StoredCopy& copy : spec.copies) {
            const QString other = full(copy.name, copy.topLevel);
            if (other == name || !where.count(other)) continue;
            storedCopies_.push_back({});
            bindTensor(where, other, spec.shape, storedCopies_.back(), false);
            mustMatch_.push_back(
                {&storedCopies_.back(), spec.slot,
                 QStringLiteral("%1: %2 differs from %3%4")
                     .arg(weightsLabel, other, name, QString::fromStdString(copy.why))});
        }
    }
    if (c.sinusoidalPositionTable && !w.positionEmbedding.present()) computeSinusoidTable(target);
    // LlamaForCausalLM / GPT2LMHeadModel: with tie_word_embeddings the head is the token table
    // (a stored lm_head.weight is then ignored, or compared when the family lists it as a copy);
    // transformers 5's T5 takes the table when no lm_head.weight is stored.
    if (c.isDecoder() && !w.lmHead.present() && (c.tieWordEmbeddings || c.storedLmHeadWins))
        w.lmHead = w.tokenEmbedding;
}

void ModelFolder::bindTensor(const std::map<QString, const SafetensorsFile*>& where,
                             const QString& name, const std::vector<long long>& shape,
                             model::TensorRef& ref, bool readByRuns) {
    const SafetensorsFile& file = *where.at(name);
    const TensorInfo& info = *file.find(name);
    if (info.shape != shape) {
        fail(QStringLiteral("%1: tensor %2 has shape %3, expected %4")
                 .arg(file.fileName(), name, shapeText(info.shape), shapeText(shape)));
    }
    DType dtype;
    if (!dtypeFromName(info.dtype.toStdString(), &dtype)) {
        fail(QStringLiteral("%1: tensor %2 has dtype %3, expected F32, F16, BF16 or F64")
                 .arg(file.fileName(), name, info.dtype));
    }
    ref.name = name.toStdString();
    ref.file = file.fileName().toStdString();
    ref.dtype = dtype;
    // A vector is 1 x n; a tensor of more dimensions (DeBERTa's Conv1d weight) is its leading
    // dimensions' product x its last.
    ref.rows = 1;
    for (std::size_t i = 0; i + 1 < shape.size(); ++i)
        ref.rows *= shape[i];
    ref.cols = shape.back();
    ref.data = file.tensorData(info);
    scans_.push_back({&ref, file.fileName(), name, shapeText(info.shape)});
    if (readByRuns && !counted_[ref.data]) model_.storedBytes += ref.bytes();
    if (readByRuns) counted_[ref.data] = true;
}

void ModelFolder::computeSinusoidTable(model::Model& target) {
    // modeling_distilbert._create_sinusoidal_embeddings and
    // MarianSinusoidalPositionalEmbedding._init_weight: angle(pos, j) = pos / 10000^(2·(j // 2) /
    // dim) in double, stored as float. DistilBERT's: sin on even columns, cos on odd ones.
    // Marian's: column c < ⌈dim/2⌉ is sin(angle(pos, 2c)), column ⌈dim/2⌉ + c is
    // cos(angle(pos, 2c + 1)).
    const model::Config& c = target.config;
    const long long rows = c.positions, cols = c.hidden;
    const double bytes = static_cast<double>(rows) * static_cast<double>(cols) * 4;
    if (bytes > physicalMemoryBytes() / 4) {
        fail(QStringLiteral("%1: the sinusoid position table [%2, %3] (max_position_embeddings x "
                            "dim) would take %4 GiB")
                 .arg(directory_)
                 .arg(rows)
                 .arg(cols)
                 .arg(bytes / 1073741824.0, 0, 'f', 1));
    }
    const auto angle = [&](long long pos, long long j) {
        return static_cast<double>(pos) /
               std::pow(10000.0, 2.0 * static_cast<double>(j / 2) / static_cast<double>(cols));
    };
    const bool split = c.sinusoidLayout == model::Config::SinusoidLayout::SplitHalves;
    const long long sines = (cols + 1) / 2;
    auto table = std::make_shared<std::vector<float>>(static_cast<std::size_t>(rows * cols));
    for (long long pos = 0; pos < rows; ++pos) {
        for (long long j = 0; j < cols; ++j) {
            double value;
            if (split)
                value = j < sines ? std::sin(angle(pos, 2 * j))
                                  : std::cos(angle(pos, 2 * (j - sines) + 1));
            else
                value = j % 2 == 0 ? std::sin(angle(pos, j)) : std::cos(angle(pos, j));
            (*table)[static_cast<std::size_t>(pos * cols + j)] = static_cast<float>(value);
        }
    }
    model::TensorRef& ref = target.weights.positionEmbedding;
    ref.name = "the position table (sinusoids, computed)";
    ref.file = directory_.toStdString();
    ref.dtype = DType::F32;
    ref.rows = rows;
    ref.cols = cols;
    ref.data = reinterpret_cast<const unsigned char*>(table->data());
    target.computedTensors.push_back(std::move(table));
}

void ModelFolder::bindMaskedLmHead(const std::map<QString, const SafetensorsFile*>& where,
                                   const model::MaskedLmHeadNames& head,
                                   const QString& weightsLabel) {
    using Bias = model::MaskedLmHeadNames::Bias;
    // head.marks, and marksUnlessClassifier when no classifier is stored.
    std::vector<std::string> headMarks = head.marks;
    const bool classifier =
        !head.classifierMark.empty() &&
        std::any_of(where.begin(), where.end(), [&](const auto& entry) {
            return entry.first.startsWith(QString::fromStdString(head.classifierMark));
        });
    if (!classifier)
        headMarks.insert(headMarks.end(), head.marksUnlessClassifier.begin(),
                         head.marksUnlessClassifier.end());
    QStringList stored;
    for (const auto& entry : where) {
        for (const std::string& mark : headMarks) {
            if (entry.first.startsWith(QString::fromStdString(mark))) {
                stored << entry.first;
                break;
            }
        }
    }
    if (stored.isEmpty()) return;  // a bare base model: no masked-LM logits
    stored.sort();
    const model::Config& c = model_.config;
    model::ModelWeights& w = model_.weights;
    QStringList marks;
    for (const std::string& mark : headMarks)
        marks << QString::fromStdString(mark) + "*";
    if (!c.maskedLm.activationProblem.empty())
        fail(QString::fromStdString(c.maskedLm.activationProblem));
    const long long V = c.vocab, d = c.hidden, E = head.denseOut;
    if (head.decoder.empty() && E != w.tokenEmbedding.cols) {
        // DebertaV2LMPredictionHead multiplies its [T, E] output by the word embeddings.
        fail(QStringLiteral("%1: embedding_size %2 != hidden_size %3 with legacy false: the "
                            "masked-LM head (%4) multiplies its hidden_size output by the [vocab, "
                            "embedding_size] word embeddings, which fails in Hugging Face")
                 .arg(QDir(directory_).filePath("config.json"))
                 .arg(w.tokenEmbedding.cols)
                 .arg(E)
                 .arg(marks.join(" / ")));
    }
    // model_reference.load_lm_head's get: the name (or its legacy alias), all of it or refused.
    auto need = [&](const QString& name, const QString& alias = {}) {
        if (where.count(name)) return name;
        if (!alias.isEmpty() && where.count(alias)) return alias;
        fail(QStringLiteral("%1: the masked-LM head (%2) is only partly stored: %3 is missing "
                            "(stored: %4%5); transformers would initialize it at random, so give "
                            "all of the head's tensors or none")
                 .arg(weightsLabel, marks.join(" / "), name, stored.mid(0, 3).join(", "),
                      stored.size() > 3 ? ", ..." : ""));
    };
    const QString dense = QString::fromStdString(head.dense);
    const QString norm = QString::fromStdString(head.norm);
    bindTensor(where, need(dense + ".weight"), {E, d}, w.maskedLmDense);
    if (head.denseBias) bindTensor(where, need(dense + ".bias"), {E}, w.maskedLmDenseBias);
    bindTensor(where, need(norm + ".weight", norm + ".gamma"), {E}, w.maskedLmNorm);
    if (head.normBias)
        bindTensor(where, need(norm + ".bias", norm + ".beta"), {E}, w.maskedLmNormBias);
    const QString decoder = QString::fromStdString(head.decoder);
    const QString decoderWeight = decoder + ".weight", decoderBias = decoder + ".bias";
    const bool tied = decoder.isEmpty() || c.tieWordEmbeddings;
    if (tied) {
        if (!decoder.isEmpty() && where.count(decoderWeight)) {
            storedCopies_.push_back({});
            bindTensor(where, decoderWeight, {V, E}, storedCopies_.back(), false);
            mustMatch_.push_back(
                {&storedCopies_.back(), &w.tokenEmbedding,
                 QStringLiteral("%1: %2 differs from the word embeddings although "
                                "tie_word_embeddings is true (transformers 4 loads both names "
                                "into one tied parameter, so which values it keeps depends on "
                                "the file, and 5 may keep them apart): set tie_word_embeddings "
                                "false or store the same values")
                     .arg(weightsLabel, decoderWeight)});
        }
        w.maskedLmDecoder = w.tokenEmbedding;
    } else {
        bindTensor(where, need(decoderWeight), {V, E}, w.maskedLmDecoder);
    }
    const QString headBias = QString::fromStdString(head.headBias);
    switch (head.bias) {
        case Bias::None:
            break;
        case Bias::Decoder:
            bindTensor(where, need(decoderBias), {V}, w.maskedLmDecoderBias);
            break;
        case Bias::Head:
            bindTensor(where, need(headBias), {V}, w.maskedLmDecoderBias);
            break;
        case Bias::Shared: {
            const bool hasHead = where.count(headBias), hasDecoder = where.count(decoderBias);
            if (hasHead && hasDecoder) {
                // Both stored: the one transformers reads (the head's when tied, the decoder's
                // untied), and the other must hold the same values.
                const QString read = tied ? headBias : decoderBias;
                const QString other = tied ? decoderBias : headBias;
                bindTensor(where, read, {V}, w.maskedLmDecoderBias);
                storedCopies_.push_back({});
                bindTensor(where, other, {V}, storedCopies_.back(), false);
                mustMatch_.push_back(
                    {&storedCopies_.back(), &w.maskedLmDecoderBias,
                     QStringLiteral("%1: %2 and %3 differ (transformers 4 holds them as one "
                                    "parameter, 5 ties or unties them by tie_word_embeddings): "
                                    "store one of them, or equal values")
                         .arg(weightsLabel, headBias, decoderBias)});
            } else if (tied) {
                bindTensor(where, need(hasHead || !hasDecoder ? headBias : decoderBias), {V},
                           w.maskedLmDecoderBias);
            } else if (!hasDecoder && hasHead) {
                fail(QStringLiteral("%1: tie_word_embeddings is false and %2 is missing: "
                                    "transformers 5 gives the untied decoder its own bias (then "
                                    "initialized to 0), 4 used %3; store %2")
                         .arg(weightsLabel, decoderBias, headBias));
            } else {
                bindTensor(where, need(decoderBias), {V}, w.maskedLmDecoderBias);
            }
            break;
        }
    }
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
    // A tied copy stored beside what is read must hold the same values (torch.equal).
    for (const SameValues& same : mustMatch_) {
        const long long count = same.read->count(), chunk = 1 << 16;
        std::vector<double> a, b;
        for (long long first = 0; first < count; first += chunk) {
            const long long n = std::min(chunk, count - first);
            a.resize(static_cast<std::size_t>(n));
            b.resize(static_cast<std::size_t>(n));
            convertElements(same.read->data, same.read->dtype, first, n, a.data());
            convertElements(same.copy->data, same.copy->dtype, first, n, b.data());
            if (a != b) fail(same.message);
        }
    }
    valuesChecked_ = true;
}

}  // namespace ae::io
