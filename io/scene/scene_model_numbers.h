#pragma once
// A scene made from a model's layer is saved without the model's numbers: the file
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

// A matrix, or a vector as n x 1, read in place: an 8B model's layer holds half a gigabyte of
// numbers, which saving compares and must not copy.
using FieldView = Eigen::Map<const MatrixD>;
using Fields = std::map<QString, FieldView>;
FieldView viewOf(const MatrixD& m);
FieldView viewOf(const VectorD& v);

// The path of head h's matrix in score_terms' list `list` ("before_scale", "after_scale"):
// "score_terms.after_scale[3]".
QString scoreTermPath(const char* list, int head);

// Every matrix and vector of `layer` that a file may take from the model, by the path the file
// gives it ("embeddings", "projections.query", "norm.weight", ...), as views into `layer`, which
// must outlive them.
Fields fieldsOf(const Scene& layer);

// How `m` is written when `model` (from fieldsOf, or null) is what the model gives at that path:
// the marker, the marker with edits when few entries differ, or nothing (write it explicitly).
QJsonValue compactForm(const FieldView& m, const FieldView* model, bool isVector);

bool isMarker(const QJsonValue& value);
// The number a marker stands for: the model's matrix at `path` with the marker's edits, each
// checked. Throws SceneError naming `path` when there is no model to take it from, or an edit is
// malformed or out of range.
MatrixD resolve(const QJsonValue& marker, const QString& path, const Fields* model, bool isVector);

// While alive, the reader resolves markers against `fields` (on this thread).
class Scope {
public:
    explicit Scope(const Fields* fields);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    static const Fields* current();

private:
    const Fields* previous_;
};

}  // namespace ae::io::model_numbers
