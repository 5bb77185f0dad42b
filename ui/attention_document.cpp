#include "attention_document.h"

#include <QElapsedTimer>
#include <cmath>

#include "undo_commands.h"

namespace ae::ui {
namespace {

double& weightCell(Projections& p, WeightMatrix which, int row, int column) {
    switch (which) {
        case WeightMatrix::Query:
            return p.query(row, column);
        case WeightMatrix::Key:
            return p.key(row, column);
        case WeightMatrix::Value:
            return p.value(row, column);
        case WeightMatrix::Output:
            return p.output(row, column);
        case WeightMatrix::QueryBias:
            return p.queryBias(column);
        case WeightMatrix::KeyBias:
            return p.keyBias(column);
        case WeightMatrix::ValueBias:
            return p.valueBias(column);
        case WeightMatrix::OutputBias:
            return p.outputBias(column);
    }
    return p.query(row, column);
}

}  // namespace

AttentionDocument::AttentionDocument(QObject* parent) : QObject(parent) {}

void AttentionDocument::setFileName(const QString& fileName) {
    fileName_ = fileName;
    emit fileNameChanged(fileName_);
}

namespace {
const char* const kWindowMemoryUse = "the layer in float, and the scene before and after";
}

void AttentionDocument::checkWindowMemory(const Scene& scene) {
    checkFitsInMemory(windowBytes(scene), kWindowMemoryUse);
}

void AttentionDocument::resetScene(const Scene& scene, const QString& fileName) {
    checkWindowMemory(scene);
    undoStack_.clear();
    fileName_ = fileName;
    engine_.setScene(scene);
    emit structureChanged();
    recompute();
    undoStack_.setClean();
    emit fileNameChanged(fileName_);
}

void AttentionDocument::recompute() {
    QElapsedTimer timer;
    timer.start();
    try {
        engine_.compute();
        errorText_.clear();
    } catch (const SceneError& error) {
        errorText_ = QString::fromStdString(error.what());
    }
    lastComputeMs_ = static_cast<double>(timer.nsecsElapsed()) / 1e6;
    emit resultsChanged();
}

int AttentionDocument::nextSerial() {
    return interacting_ ? interactionSerial_ : ++interactionSerial_;
}

void AttentionDocument::beginInteraction() {
    interacting_ = true;
    ++interactionSerial_;
}

void AttentionDocument::endInteraction() {
    interacting_ = false;
    ++interactionSerial_;
}

bool AttentionDocument::setHeads(int heads, QString* error) {
    if (heads < 1 || scene().dProj() % heads != 0 || heads == scene().heads) return false;
    try {
        // Only the number of score, scaled and weight matrices (Lq x Lk each) changes.
        const double cells = static_cast<double>(scene().queryCount()) * scene().keyCount();
        checkFitsInMemory(
            windowBytes(scene()) + 3.0 * (heads - scene().heads) * cells * sizeof(float),
            kWindowMemoryUse);
    } catch (const SceneError& refusal) {
        if (error) *error = QString::fromStdString(refusal.what());
        return false;
    }
    nextSerial();
    undoStack_.push(new ChangeValueCommand<int>(
        this, kHeadsCommand, [this](const int& h) { applyHeads(h); }, scene().heads, heads,
        tr("Change head count")));
    return true;
}

void AttentionDocument::setScale(const Scale& scale) {
    nextSerial();
    undoStack_.push(new ChangeValueCommand<Scale>(
        this, kScaleCommand, [this](const Scale& s) { applyScale(s); }, scene().scale, scale,
        tr("Change scaling")));
}

void AttentionDocument::setMask(const Mask& mask) {
    nextSerial();
    undoStack_.push(new ChangeValueCommand<Mask>(
        this, kMaskCommand, [this](const Mask& m) { applyMask(m); }, scene().mask, mask,
        tr("Change mask")));
}

void AttentionDocument::setMaskFill(double fill) {
    nextSerial();
    undoStack_.push(new ChangeValueCommand<double>(
        this, kMaskFillCommand, [this](const double& f) { applyMaskFill(f); }, scene().maskFill,
        fill, tr("Change mask fill")));
}

bool AttentionDocument::setEmbeddingValue(Stream stream, int row, int column, double value,
                                          QString* error) {
    const bool source = stream == Stream::Source && scene().hasSource;
    const double old = (source ? scene().sourceEmbeddings : scene().embeddings)(row, column);
    if (!std::isfinite(value)) {
        if (error) *error = tr("%1 is not a finite number; kept %2").arg(value).arg(old);
        return false;
    }
    if (value == old) return true;
    applyEmbeddingValue(stream, row, column, value);
    if (!errorText_.isEmpty()) {
        if (error) *error = tr("%1 refused: %2; kept %3").arg(value).arg(errorText_).arg(old);
        applyEmbeddingValue(stream, row, column, old);
        return false;
    }
    nextSerial();
    undoStack_.push(new EmbeddingValueCommand(this, stream, row, column, old, value));
    return true;
}

bool AttentionDocument::setWeightValue(WeightMatrix which, int row, int column, double value,
                                       QString* error) {
    const double old = weightValue(scene(), which, row, column);
    if (!std::isfinite(value)) {
        if (error) *error = tr("%1 is not a finite number; kept %2").arg(value).arg(old);
        return false;
    }
    if (value == old) return true;
    applyWeightValue(which, row, column, value);
    if (!errorText_.isEmpty()) {
        if (error) *error = tr("%1 refused: %2; kept %3").arg(value).arg(errorText_).arg(old);
        applyWeightValue(which, row, column, old);
        return false;
    }
    nextSerial();
    undoStack_.push(new WeightValueCommand(this, which, row, column, old, value));
    return true;
}

bool AttentionDocument::replaceScene(const Scene& newScene, const QString& description,
                                     QString* error) {
    try {
        checkWindowMemory(newScene);
    } catch (const SceneError& refusal) {
        if (error) *error = QString::fromStdString(refusal.what());
        return false;
    }
    const Scene old = scene();
    applyScene(newScene);
    if (!errorText_.isEmpty()) {
        if (error) *error = errorText_;
        applyScene(old);
        return false;
    }
    nextSerial();
    undoStack_.push(new ReplaceSceneCommand(this, old, newScene, description));
    return true;
}

void AttentionDocument::applyHeads(int heads) {
    engine_.setHeads(heads);
    emit structureChanged();
    recompute();
}

void AttentionDocument::applyScale(const Scale& scale) {
    engine_.setScale(scale);
    recompute();
}

void AttentionDocument::applyMask(const Mask& mask) {
    engine_.setMask(mask);
    recompute();
}

void AttentionDocument::applyMaskFill(double fill) {
    engine_.setMaskFill(fill);
    recompute();
}

void AttentionDocument::applyEmbeddingValue(Stream stream, int row, int column, double value) {
    engine_.forgetInit();
    engine_.setEmbeddingValue(stream, row, column, value);
    recompute();
}

void AttentionDocument::applyWeightValue(WeightMatrix which, int row, int column, double value) {
    Projections p = scene().projections;
    weightCell(p, which, row, column) = value;
    engine_.forgetInit();
    engine_.setProjections(p);
    recompute();
}

void AttentionDocument::applyScene(const Scene& scene) {
    engine_.setScene(scene);
    emit structureChanged();
    recompute();
}

double AttentionDocument::weightValue(const Scene& scene, WeightMatrix which, int row, int column) {
    // weightCell only reads here.
    return weightCell(const_cast<Projections&>(scene.projections), which, row, column);
}

}  // namespace ae::ui
