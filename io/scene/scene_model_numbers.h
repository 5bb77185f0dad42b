#pragma once
// A scene made from a model's layer (issue 16) is saved without the model's numbers: the file
// names the model (view.model) and each matrix or vector the model gives is written as
//   {"from_model": true}                                     the model's, unchanged
//   {"from_model": true, "edits": [[row, col, value], ...]}  the model's, with a few entries
//                                                            changed ([[i, value], ...] for a
//                                                            vector)
// For the scene reader and writer only (io/scene/scene_file.h has the public side).
#include <QJsonValue>
#include <QString>
#include <map>

#include "core/scene.h"

namespace ae::io::model_numbers {

// Every matrix and vector of `layer` that a file may take from the model, by the path the file
// gives it ("embeddings", "projections.query", "norm.weight", ...). Vectors as n x 1.
std::map<QString, MatrixD> fieldsOf(const Scene& layer);

// How `m` is written when `model` (from fieldsOf, or null) is what the model gives at that path:
// the marker, the marker with edits when few entries differ, or nothing (write it explicitly).
QJsonValue compactForm(const MatrixD& m, const MatrixD* model, bool isVector);

bool isMarker(const QJsonValue& value);
// The number a marker stands for: the model's matrix at `path` with the marker's edits, each
// checked. Throws SceneError naming `path` when there is no model to take it from, or an edit is
// malformed or out of range.
MatrixD resolve(const QJsonValue& marker, const QString& path,
                const std::map<QString, MatrixD>* model, bool isVector);

// While alive, the reader resolves markers against `fields` (on this thread).
class Scope {
public:
    explicit Scope(const std::map<QString, MatrixD>* fields);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    static const std::map<QString, MatrixD>* current();

private:
    const std::map<QString, MatrixD>* previous_;
};

}  // namespace ae::io::model_numbers
