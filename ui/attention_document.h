#pragma once
// The document: owns the scene (inside its engine), the undo stack, and the computed stages.
// Widgets never change the scene directly: they call the edit methods below, each of which pushes
// an undo command. Every change recomputes at once through the engine's caches and emits
// resultsChanged(); a change of sizes or tokens also emits structureChanged() first.

#include <QObject>
#include <QString>
#include <QUndoStack>

#include "attention_engine.h"

namespace ae::ui {

enum class WeightMatrix { Query, Key, Value, Output, QueryBias, KeyBias, ValueBias, OutputBias };

class AttentionDocument : public QObject {
    Q_OBJECT
public:
    explicit AttentionDocument(QObject* parent = nullptr);

    const Scene& scene() const { return engine_.scene(); }
    // The computed stages (float). Valid unless errorText() is non-empty.
    const AttentionEngine<float>& engine() const { return engine_; }
    QUndoStack* undoStack() { return &undoStack_; }
    // Why the last compute failed ("scores: overflow ..."), or empty.
    QString errorText() const { return errorText_; }
    double lastComputeMilliseconds() const { return lastComputeMs_; }
    QString fileName() const { return fileName_; }
    void setFileName(const QString& fileName);

    // Replaces everything and clears the undo history (open, new, preset). Throws
    // SceneError("scene", "too large: ...") before anything changes if the window could not hold
    // the scene (checkWindowMemory).
    void resetScene(const Scene& scene, const QString& fileName = {});
    // The window's size rule, shared by every path that brings a scene into the document: throws
    // SceneError("scene", "too large: needs about X GiB (...), this machine has Y GiB") if
    // windowBytes(scene) exceed the machine's memory.
    static void checkWindowMemory(const Scene& scene);

    // Edits. Each one is one undo step, except that calls made between beginInteraction() and
    // endInteraction() (a slider drag) merge into one step per kind.
    // Ignored unless heads divides d_proj; refused (false, *error) if the window could not hold
    // that many score matrices, and nothing changes then.
    bool setHeads(int heads, QString* error = nullptr);
    void setScale(const Scale& scale);
    void setMask(const Mask& mask);
    void setMaskFill(double fill);
    // Rejects a non-finite value, or one that makes the scores overflow, keeping the old value;
    // returns false and sets *error to a one-line reason.
    bool setEmbeddingValue(Stream stream, int row, int column, double value,
                           QString* error = nullptr);
    bool setWeightValue(WeightMatrix which, int row, int column, double value,
                        QString* error = nullptr);
    // Structural edits (tokens, d_model, positions, norm, projection mode, re-roll...): the new
    // scene must be valid. Returns false with *error if it is too large for this machine
    // (checked before anything is allocated) or computing it fails; nothing changes then.
    bool replaceScene(const Scene& scene, const QString& description, QString* error = nullptr);

    void beginInteraction();
    void endInteraction();
    int interactionSerial() const { return interactionSerial_; }

    // Used by the undo commands: apply without pushing anything.
    void applyHeads(int heads);
    void applyScale(const Scale& scale);
    void applyMask(const Mask& mask);
    void applyMaskFill(double fill);
    void applyEmbeddingValue(Stream stream, int row, int column, double value);
    void applyWeightValue(WeightMatrix which, int row, int column, double value);
    void applyScene(const Scene& scene);

    static double weightValue(const Scene& scene, WeightMatrix which, int row, int column);

signals:
    void structureChanged();  // sizes, tokens, heads or modes changed: rebuild views
    void resultsChanged();    // new numbers (or a new errorText)
    void fileNameChanged(const QString& fileName);

private:
    void recompute();
    int nextSerial();

    AttentionEngine<float> engine_;
    QUndoStack undoStack_;
    QString errorText_;
    QString fileName_;
    double lastComputeMs_ = 0.0;
    int interactionSerial_ = 0;
    bool interacting_ = false;
};

}  // namespace ae::ui
