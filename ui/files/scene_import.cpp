#include "ui/files/scene_import.h"

#include "core/scene_edit.h"
#include "io/formats/matrix_files.h"

namespace ae::ui {

Scene withEmbeddings(const Scene& scene, const MatrixD& embeddings,
                     const std::vector<std::string>* tokens) {
    const long rows = tokens ? static_cast<long>(tokens->size()) : scene.queryCount();
    if (tokens && tokens->empty()) throw io::MatrixFileError("tokens: the file has no tokens");
    io::requireShape(embeddings, rows, scene.dModel(), QStringLiteral("embeddings"));
    Scene result = scene;
    if (tokens) {
        // Old rows keep their place, so the mask and positions of the first tokens stay.
        std::vector<int> fromOld(tokens->size());
        for (size_t i = 0; i < fromOld.size(); ++i)
            fromOld[i] = static_cast<int>(i) < scene.queryCount() ? static_cast<int>(i) : -1;
        retokenize(result, Stream::Query, *tokens, fromOld);
    }
    result.embeddings = embeddings;
    result.init.reset();  // saved explicitly from now on
    return result;
}

Scene withWeight(const Scene& scene, document::WeightMatrix which, const MatrixD& weight) {
    Scene result = scene;
    Projections& p = result.projections;
    const long dModel = scene.dModel(), dProj = scene.dProj();
    switch (which) {
        case document::WeightMatrix::Query:
        case document::WeightMatrix::Key:
        case document::WeightMatrix::Value: {
            const char* names[] = {"W_Q", "W_K", "W_V"};
            const QString name = QLatin1String(names[static_cast<int>(which)]);
            if (p.mode == ProjectionMode::Identity) {
                throw io::MatrixFileError(
                    (name + ": identity mode has no projection matrices").toStdString());
            }
            if (which == document::WeightMatrix::Key && p.mode == ProjectionMode::SharedQK) {
                throw io::MatrixFileError("W_K: keys use W_Q in shared_qk mode");
            }
            // K and V of grouped kv heads are narrower (Scene::dKeyValue).
            io::requireShape(weight, dModel,
                             which == document::WeightMatrix::Query ? dProj : scene.dKeyValue(),
                             name);
            (which == document::WeightMatrix::Query ? p.query
             : which == document::WeightMatrix::Key ? p.key
                                                    : p.value) = weight;
            break;
        }
        case document::WeightMatrix::Output:
            io::requireShape(weight, dProj, -1, QStringLiteral("W_O"));
            if (!p.hasOutput || p.output.cols() != weight.cols())
                p.outputBias = VectorD::Zero(weight.cols());
            p.hasOutput = true;
            p.output = weight;
            break;
        default:
            throw io::MatrixFileError("only W_Q, W_K, W_V and W_O can be imported");
    }
    result.init.reset();
    return result;
}

}  // namespace ae::ui
