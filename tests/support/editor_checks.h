#pragma once
// Shared by the editor tests (test_editors for the tokens editor, test_weights_editor): the
// document and editors they start from, exact comparison of two scenes, and the document's
// engine against a fresh recompute.

#include <QString>
#include <QTableView>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <sstream>
#include <string>

#include "core/scene.h"
#include "document/attention_document.h"
#include "io/scene/scene_file.h"
#include "ui/editors/token_table_model.h"
#include "ui/editors/tokens_editor.h"
#include "ui/editors/weights_editor.h"

namespace ae::test {

// A document on the four-words preset with both editors on it, made anew for every test function
// (the test class calls setUp from init() and tearDown from cleanup()).
class EditorFixture {
protected:
    void setUp() {
        document_ = std::make_unique<document::AttentionDocument>();
        load("four-words");
        tokens_ = std::make_unique<ui::TokensEditor>(document_.get());
        weights_ = std::make_unique<ui::WeightsEditor>(document_.get());
    }
    void tearDown() {
        tokens_.reset();
        weights_.reset();
        document_.reset();
    }
    void load(const char* preset) {
        document_->resetScene(io::loadPreset(QString::fromLatin1(preset)));
        QVERIFY2(document_->errorText().isEmpty(), qPrintable(document_->errorText()));
    }
    ui::TokenTableModel* queryModel() const {
        auto* model = qobject_cast<ui::TokenTableModel*>(
            tokens_->findChild<QTableView*>(QStringLiteral("queryTable"))->model());
        if (!model) qFatal("no query model");
        return model;
    }
    template <typename T>
    T* child(QWidget* parent, const char* name) const {
        T* found = parent->findChild<T*>(QString::fromLatin1(name));
        if (!found) qFatal("no child %s", name);
        return found;
    }

    std::unique_ptr<document::AttentionDocument> document_;
    std::unique_ptr<ui::TokensEditor> tokens_;
    std::unique_ptr<ui::WeightsEditor> weights_;
};

inline std::string shape(const MatrixD& m) {
    return std::to_string(m.rows()) + "x" + std::to_string(m.cols());
}

// The first difference between two scenes, or an empty string: every matrix compared exactly.
inline QString sceneDifference(const Scene& a, const Scene& b) {
    std::ostringstream out;
    auto matrix = [&out](const char* name, const MatrixD& x, const MatrixD& y) {
        if (x.rows() != y.rows() || x.cols() != y.cols()) {
            out << name << ": " << shape(x) << " vs " << shape(y);
            return false;
        }
        if (x != y) {
            out << name << ": values differ (max " << (x - y).cwiseAbs().maxCoeff() << ")";
            return false;
        }
        return true;
    };
    auto vector = [&out](const char* name, const VectorD& x, const VectorD& y) {
        if (x.size() != y.size() || x != y) {
            out << name << " differs";
            return false;
        }
        return true;
    };
    const Projections& p = a.projections;
    const Projections& q = b.projections;
    if (a.tokens != b.tokens)
        out << "tokens differ";
    else if (a.sourceTokens != b.sourceTokens)
        out << "source tokens differ";
    else if (a.hasSource != b.hasSource)
        out << "hasSource differs";
    else if (!matrix("embeddings", a.embeddings, b.embeddings)) {
    } else if (!matrix("source embeddings", a.sourceEmbeddings, b.sourceEmbeddings)) {
    } else if (a.positional.kind != b.positional.kind || a.positional.base != b.positional.base)
        out << "positional differs";
    else if (!matrix("positional.table", a.positional.table, b.positional.table)) {
    } else if (a.norm.enabled != b.norm.enabled || a.norm.eps != b.norm.eps)
        out << "norm differs";
    else if (!vector("norm.weight", a.norm.weight, b.norm.weight)) {
    } else if (!vector("norm.bias", a.norm.bias, b.norm.bias)) {
    } else if (p.mode != q.mode || p.hasOutput != q.hasOutput)
        out << "projection mode/output differs";
    else if (!matrix("W_Q", p.query, q.query) || !matrix("W_K", p.key, q.key) ||
             !matrix("W_V", p.value, q.value) || !matrix("W_O", p.output, q.output)) {
    } else if (!vector("b_Q", p.queryBias, q.queryBias) || !vector("b_K", p.keyBias, q.keyBias) ||
               !vector("b_V", p.valueBias, q.valueBias) ||
               !vector("b_O", p.outputBias, q.outputBias)) {
    } else if (a.heads != b.heads)
        out << "heads " << a.heads << " vs " << b.heads;
    else if (a.mask.padding != b.mask.padding)
        out << "mask.padding differs";
    else if (a.mask.allowed.has_value() != b.mask.allowed.has_value() ||
             (a.mask.allowed && (*a.mask.allowed != *b.mask.allowed).any()))
        out << "mask.allowed differs";
    else if (a.mask.causal != b.mask.causal || a.mask.window != b.mask.window)
        out << "mask differs";
    else if (a.init.has_value() != b.init.has_value())
        out << "init presence differs";
    return QString::fromStdString(out.str());
}

#define COMPARE_SCENES(a, b)                                    \
    do {                                                        \
        const QString difference = sceneDifference((a), (b));   \
        QVERIFY2(difference.isEmpty(), qPrintable(difference)); \
    } while (false)

// A fresh float engine on `scene`: what a full recompute gives. Q, K and V must match exactly (a
// row is the same dot products either way). An edited row of the scores is recomputed as a
// row·matrix product while a fresh engine runs one matrix product, and the two may add the dHead
// terms in a different order (they do under -O2, not under -O3 -march=native), so the scores must
// agree within the rounding bound of a dHead-term dot product, dHead·eps·(|q|·|k|ᵀ), and the
// weights within what that moves a softmax.
inline void verifyEngineMatchesRecompute(const document::AttentionDocument& document) {
    QVERIFY2(document.errorText().isEmpty(), qPrintable(document.errorText()));
    AttentionEngine<float> fresh(document.scene());
    fresh.compute();
    const AttentionEngine<float>& live = document.engine();
    QCOMPARE(live.heads(), fresh.heads());
    QVERIFY(live.query() == fresh.query());
    QVERIFY(live.key() == fresh.key());
    QVERIFY(live.value() == fresh.value());
    const float eps = std::numeric_limits<float>::epsilon();
    for (int h = 0; h < fresh.heads(); ++h) {
        const Eigen::MatrixXf magnitude =
            fresh.headQuery(h).cwiseAbs() * fresh.headKey(h).cwiseAbs().transpose();
        const Eigen::MatrixXf bound = magnitude * (fresh.dHead() * eps);
        const Eigen::MatrixXf scoreError = (live.scores(h) - fresh.scores(h)).cwiseAbs();
        QVERIFY2((scoreError.array() <= bound.array()).all(),
                 qPrintable(QStringLiteral("head %1 scores differ by %2 (bound %3)")
                                .arg(h)
                                .arg(scoreError.maxCoeff())
                                .arg(bound.maxCoeff())));
        // exp(s + δ) = exp(s)·(1 + δ + …): a weight moves by at most about 2·max|δ| relative, plus
        // the rounding of the row sum.
        const double weightTolerance =
            2.0 * bound.maxCoeff() / fresh.divisor() + 4.0 * fresh.scores(h).cols() * eps;
        const double weightError = (live.weights(h) - fresh.weights(h)).cwiseAbs().maxCoeff();
        QVERIFY2(weightError <= weightTolerance,
                 qPrintable(QStringLiteral("head %1 weights differ by %2 (tolerance %3)")
                                .arg(h)
                                .arg(weightError)
                                .arg(weightTolerance)));
    }
}

}  // namespace ae::test
