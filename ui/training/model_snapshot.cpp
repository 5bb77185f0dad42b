#include "ui/training/model_snapshot.h"

namespace ae::ui {

std::shared_ptr<const OwnedModel> snapshotModel(model::ModelTrainer& trainer) {
    auto owned = std::make_shared<OwnedModel>();
    const model::Model& source = trainer.model();
    owned->tensors = trainer.parameters();
    model::Model& m = owned->model;
    m.config = source.config;
    m.folder = source.folder;
    m.storedBytes = source.storedBytes;
    // The trainer keeps its parameters in tensorSpecs order (model_training.h, parameters()):
    // slot i of a fresh layout is tensor i.
    const std::vector<model::TensorSpec> specs = model::tensorSpecs(m.config, m.weights);
    if (specs.size() != owned->tensors.size())
        throw model::ModelError("training snapshot: the trainer's tensors do not match its config");
    for (std::size_t i = 0; i < specs.size(); ++i) {
        model::TensorRef& ref = *specs[i].slot;
        const MatrixD& tensor = owned->tensors[i];
        ref.name = trainer.parameterNames()[i];
        ref.file = m.folder;
        ref.dtype = DType::F64;
        ref.rows = tensor.rows();
        ref.cols = tensor.cols();
        ref.data = reinterpret_cast<const unsigned char*>(tensor.data());
    }
    if (m.config.tieWordEmbeddings) m.weights.lmHead = m.weights.tokenEmbedding;
    return owned;
}

}  // namespace ae::ui
