#pragma once
// Opening a Hugging Face model folder: config.json, and model.safetensors or the shards that
// model.safetensors.index.json lists (an HF cache snapshot, whose files are symlinks to blobs,
// opens the same way). The files stay memory-mapped for as long as the ModelFolder lives; the
// core::Model it holds points into them. Every refusal is a model::ModelError of one line that
// names the file, the field or tensor, and the values or shapes involved.

#include <QByteArray>
#include <QString>
#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "core/model/model.h"

namespace ae::io {

class SafetensorsFile;

// config.json's text → Config, with Hugging Face's defaults, refusing an unknown model_type (the
// supported ones listed), a field of the wrong type or value, or a combination the model cannot
// compute. `fileName` starts every message.
model::Config parseModelConfig(const QByteArray& json, const QString& fileName);

// model.safetensors.index.json's text → (tensor name, shard file name) pairs, refusing anything
// but an object with a "weight_map" object of plain file names (no folders).
std::vector<std::pair<QString, QString>> parseSafetensorsIndex(const QByteArray& json,
                                                               const QString& fileName);

class ModelFolder {
public:
    // Checked: every value is read once, here. Unread: the headers alone (listing a folder among
    // many must not read gigabytes, and the window shows a big model before its values are
    // read); its model must not be run until checkValues() has passed.
    enum class Values { Checked, Unread };

    // Reads config.json, maps the weights and checks every tensor the family needs: present,
    // of the expected shape and a float dtype, and, with Values::Checked, finite (checkValues).
    // Throws model::ModelError.
    explicit ModelFolder(const QString& directory, Values values = Values::Checked);
    ~ModelFolder();
    ModelFolder(const ModelFolder&) = delete;
    ModelFolder& operator=(const ModelFolder&) = delete;

    // Every tensor's exponent bits, scanned at memory speed without converting anything, tensors
    // shared out among the cores: throws model::ModelError naming the first tensor (in the
    // family's order) with an inf or NaN, and the element. `progress` (may be null) hears the
    // fraction of bytes scanned after each tensor, on any thread; returning false stops the scan
    // (model::RunCancelled is thrown). Once it has passed, later calls return at once.
    void checkValues(const std::function<bool(double fraction)>& progress = {});
    bool valuesChecked() const { return valuesChecked_; }

    const model::Model& model() const { return model_; }
    const QString& directory() const { return directory_; }

private:
    // `name` (in `where`) into `ref`, refused unless it has `shape` and a float dtype; its values
    // are scanned by checkValues. readByRuns: it counts in the stored bytes a run reads (a tied
    // copy, only compared, does not).
    void bindTensor(const std::map<QString, const SafetensorsFile*>& where, const QString& name,
                    const std::vector<long long>& shape, model::TensorRef& ref,
                    bool readByRuns = true);
    // The masked-LM head, when any of its tensors is stored (model_reference.load_lm_head).
    void bindMaskedLmHead(const std::map<QString, const SafetensorsFile*>& where,
                          const model::MaskedLmHeadNames& head, const QString& weightsLabel);
    // Every tensor `target`'s config needs (its family row's names), after `prefix`, into its
    // weights; stored copies of the same parameter are kept to be compared.
    void bindStack(const std::map<QString, const SafetensorsFile*>& where,
                   const std::string& prefix, const QString& weightsLabel, model::Model& target);
    // The fixed sinusoids of a family with no stored position table (DistilBERT's
    // sinusoidal_pos_embds, Marian's), laid out as the config says, into `target`.
    void computeSinusoidTable(model::Model& target);

    QString directory_;
    std::vector<std::unique_ptr<SafetensorsFile>> files_;
    model::Model model_;
    // An encoder–decoder model's decoder stack (model_ is then its encoder's), which model_.decoder
    // shares.
    std::shared_ptr<model::Model> decoder_;
    struct ValueScan {
        const model::TensorRef* ref;
        QString file, name, shape;
    };
    std::vector<ValueScan> scans_;                  // every tensor read, in the family's order
    std::map<const unsigned char*, bool> counted_;  // a tensor read twice is stored once
    // Stored tied copies (an MLM decoder's weight beside the token table, a second name of its
    // bias): never read by a run, but checkValues requires the same values as what is read.
    std::deque<model::TensorRef> storedCopies_;
    struct SameValues {
        const model::TensorRef* copy;
        const model::TensorRef* read;
        QString message;
    };
    std::vector<SameValues> mustMatch_;
    std::atomic<bool> valuesChecked_{false};
};

}  // namespace ae::io
