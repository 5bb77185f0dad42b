#pragma once
// Model files the import tests write: GPT-2-style tensors from deterministic patterns, and the
// import spec each one is expected to give. Shared by tests/io/test_model_import,
// tests/ui/test_model_import_dialog and tests/cli/test_import_command.

#include <QString>
#include <vector>

#include "core/scene.h"
#include "io/model/model_import.h"
#include "support/safetensors_writer.h"

namespace ae::testing {

// Deterministic values, exact in F32: multiples of 1/16.
inline MatrixD pattern(int rows, int cols, int salt) {
    MatrixD m(rows, cols);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
            m(r, c) = ((r * 7 + c * 3 + salt * 5) % 17 - 8) / 16.0;
    return m;
}
inline VectorD patternVector(int n, int salt) {
    return pattern(1, n, salt).row(0).transpose();
}

// One small layer (d = 4): its GPT-2 tensors and the spec that imports it.
namespace small_gpt2 {

constexpr int kVocab = 7, kD = 4, kPositions = 6;

struct Layer {
    MatrixD wte = pattern(kVocab, kD, 1), wpe = pattern(kPositions, kD, 2);
    MatrixD wq = pattern(kD, kD, 3), wk = pattern(kD, kD, 4), wv = pattern(kD, kD, 5);
    MatrixD wo = pattern(kD, kD, 6);
    VectorD bq = patternVector(kD, 7), bk = patternVector(kD, 8), bv = patternVector(kD, 9);
    VectorD bo = patternVector(kD, 10), lnw = patternVector(kD, 11), lnb = patternVector(kD, 12);
};

// GPT-2: c_attn.weight [d, 3d] = [W_Q W_K W_V] (X·W), c_attn.bias [3d], c_proj [d, d].
inline std::vector<TestTensor> gpt2Tensors(const Layer& l, const QString& dtype = "F32") {
    MatrixD qkv(kD, 3 * kD);
    qkv << l.wq, l.wk, l.wv;
    VectorD bias(3 * kD);
    bias << l.bq, l.bk, l.bv;
    return {tensor("wte.weight", l.wte, dtype),
            tensor("wpe.weight", l.wpe, dtype),
            vectorTensor("h.0.ln_1.weight", l.lnw, dtype),
            vectorTensor("h.0.ln_1.bias", l.lnb, dtype),
            tensor("h.0.attn.c_attn.weight", qkv, dtype),
            vectorTensor("h.0.attn.c_attn.bias", bias, dtype),
            tensor("h.0.attn.c_proj.weight", l.wo, dtype),
            vectorTensor("h.0.attn.c_proj.bias", l.bo, dtype)};
}

inline io::ModelImportSpec gpt2Spec() {
    io::ModelImportSpec s;
    s.layout = io::WeightLayout::XW;
    s.qkv = "h.0.attn.c_attn.weight";
    s.qkvBias = "h.0.attn.c_attn.bias";
    s.output = "h.0.attn.c_proj.weight";
    s.outputBias = "h.0.attn.c_proj.bias";
    s.embeddings = "wte.weight";
    s.positions = "wpe.weight";
    s.normWeight = "h.0.ln_1.weight";
    s.normBias = "h.0.ln_1.bias";
    s.tokenIds = {3, 1, 4, 1};
    s.heads = 2;
    s.causal = true;
    return s;
}

}  // namespace small_gpt2

// d = 128, so that the dialog's head guess (d_proj / 64) has something to say: 2 heads.
namespace two_gpt2_layers {

constexpr int kVocab = 12, kD = 128, kPositions = 8;

// Two GPT-2 layers (the guess must pick layer 0), the tables, and a final norm as GPT-2 has.
inline std::vector<TestTensor> gpt2Tensors() {
    std::vector<TestTensor> t = {tensor("wte.weight", pattern(kVocab, kD, 1)),
                                 tensor("wpe.weight", pattern(kPositions, kD, 2))};
    for (int layer : {1, 0}) {  // layer 1 first in the file: the guess must not take the first
        const QString h = QStringLiteral("h.%1.").arg(layer);
        const int s = 10 * layer;
        t.push_back(vectorTensor(h + "ln_1.weight", patternVector(kD, 3 + s)));
        t.push_back(vectorTensor(h + "ln_1.bias", patternVector(kD, 4 + s)));
        t.push_back(tensor(h + "attn.c_attn.weight", pattern(kD, 3 * kD, 5 + s)));
        t.push_back(vectorTensor(h + "attn.c_attn.bias", patternVector(3 * kD, 6 + s)));
        t.push_back(tensor(h + "attn.c_proj.weight", pattern(kD, kD, 7 + s)));
        t.push_back(vectorTensor(h + "attn.c_proj.bias", patternVector(kD, 8 + s)));
    }
    t.push_back(vectorTensor("ln_f.weight", patternVector(kD, 30)));
    t.push_back(vectorTensor("ln_f.bias", patternVector(kD, 31)));
    return t;
}

// What the test expects the dialog to import, written out independently of the dialog: layer 0,
// every tensor named, as for the small file, with five tokens and the title naming the file.
inline io::ModelImportSpec gpt2Spec() {
    io::ModelImportSpec s = small_gpt2::gpt2Spec();
    s.tokenIds = {3, 1, 4, 1, 5};
    s.title = "Imported from gpt2.safetensors";
    return s;
}

}  // namespace two_gpt2_layers

}  // namespace ae::testing
