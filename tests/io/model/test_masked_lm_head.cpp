// Masked-LM heads (model_reference.load_lm_head): read when a folder holds one, all of it or
// refused by name; a stored tied copy must hold the token table's values; the head's bias under
// its two names; an untied decoder. And the inputs of encoders: token types, checked as the
// reference checks them, and DistilBERT's sinusoid table, computed when none is stored.
#include <QtTest>
#include <cmath>

#include "core/model/model.h"
#include "io/model/model_folder.h"
#include "support/model_checks.h"
#include "support/model_copy.h"
#include "support/safetensors_writer.h"

using namespace ae;
using namespace ae::testing;

namespace {

const std::vector<long long> kIds = {7, 41, 3, 59, 22, 15, 36};

// The message of the ModelError that opening `dir` and checking its values throws ("" if none).
QString checkedOpenError(const QString& dir) {
    try {
        io::ModelFolder folder(dir, io::ModelFolder::Values::Unread);
        folder.checkValues();
    } catch (const model::ModelError& e) {
        return QString::fromUtf8(e.what());
    }
    return {};
}

TestTensor* find(std::vector<TestTensor>& tensors, const QString& name) {
    for (TestTensor& t : tensors)
        if (t.name == name) return &t;
    return nullptr;
}

// A copy of tensor `from` under the name `to`, its F32 values times `factor`.
TestTensor scaledCopy(const TestTensor& from, const QString& to, float factor) {
    TestTensor t = from;
    t.name = to;
    for (qsizetype k = 0; k + 4 <= t.bytes.size(); k += 4) {
        float f;
        std::memcpy(&f, t.bytes.constData() + k, 4);
        f *= factor;
        std::memcpy(t.bytes.data() + k, &f, 4);
    }
    return t;
}

model::ModelRun<double> runOn(const QString& dir) {
    const io::ModelFolder folder(dir);
    return model::runModel<double>(folder.model(), kIds);
}

}  // namespace

class TestMaskedLmHead : public QObject {
    Q_OBJECT

private slots:
    void bareModelHasNoMaskedLmLogits() {
        const auto run = runOn(goldenModelDir("bert-tiny"));
        QCOMPARE(run.maskedLmLogits.size(), 0);
        const auto withHead = runOn(goldenModelDir("bert-tiny-mlm"));
        QCOMPARE(withHead.maskedLmLogits.rows(), 7);
        QCOMPARE(withHead.maskedLmLogits.cols(), 64);
    }

    void partlyStoredHeadIsRefused() {
        ModelCopy m("bert-tiny-mlm");
        m.editTensors([](std::vector<TestTensor>& t) {
            t.erase(t.begin() + (find(t, "cls.predictions.transform.dense.bias") - t.data()));
        });
        QVERIFY_MESSAGE(openError(m.dir),
                        "model.safetensors: the masked-LM head (cls.predictions.*) is only partly "
                        "stored: cls.predictions.transform.dense.bias is missing (stored: "
                        "cls.predictions.bias, cls.predictions.transform.LayerNorm.bias, "
                        "cls.predictions.transform.LayerNorm.weight, ...)");
    }

    void partlyStoredDistilbertHeadNamesItsMarks() {
        ModelCopy m("distilbert-tiny-mlm");
        m.editTensors([](std::vector<TestTensor>& t) {
            t.erase(t.begin() + (find(t, "vocab_projector.bias") - t.data()));
        });
        QVERIFY_MESSAGE(
            openError(m.dir),
            "the masked-LM head (vocab_transform.* / vocab_layer_norm.* / "
            "vocab_projector.*) is only partly stored: vocab_projector.bias is missing");
    }

    // ModernBERT's head.* is also its classifiers' head: beside classifier.* and without a
    // decoder it is no masked-LM head; without a classifier it is one, stored in part.
    void modernbertClassifierHeadGivesNoMaskedLmLogits() {
        const auto removeDecoderBias = [](std::vector<TestTensor>& t) {
            t.erase(t.begin() + (find(t, "decoder.bias") - t.data()));
        };
        ModelCopy classifier("modernbert-tiny-mlm");
        classifier.editTensors([&](std::vector<TestTensor>& t) {
            removeDecoderBias(t);
            t.push_back(tensor("classifier.weight", MatrixD::Constant(2, 32, 0.5)));
            t.push_back(tensor("classifier.bias", MatrixD::Zero(1, 2), "F32", {2}));
        });
        QCOMPARE(runOn(classifier.dir).maskedLmLogits.size(), 0);
        ModelCopy partial("modernbert-tiny-mlm");
        partial.editTensors(removeDecoderBias);
        QVERIFY_MESSAGE(openError(partial.dir),
                        "the masked-LM head (decoder.* / head.*) is only partly stored: "
                        "decoder.bias is missing");
        // decoder_bias false: the head has no bias, and a stored one is not read.
        partial.editConfig([](QJsonObject& c) { c["decoder_bias"] = false; });
        QCOMPARE(runOn(partial.dir).maskedLmLogits.cols(), 64);
    }

    // DeBERTa's `legacy` picks the head: the stored other one is not read. legacy false
    // multiplies by the word embeddings, so embeddings narrower than d are refused with it.
    void debertaLegacyPicksTheHead() {
        QCOMPARE(runOn(goldenModelDir("deberta-v2-tiny")).maskedLmLogits.size(), 0);
        QCOMPARE(runOn(goldenModelDir("deberta-v2-tiny-mlm")).maskedLmLogits.cols(), 64);
        ModelCopy narrow("deberta-v2-tiny-mlm-legacy");  // embedding_size 16, hidden 32
        narrow.editConfig([](QJsonObject& c) { c["legacy"] = false; });
        QCOMPARE(runOn(narrow.dir).maskedLmLogits.size(), 0);  // no lm_predictions.* stored
        narrow.editTensors([](std::vector<TestTensor>& t) {
            t.push_back(tensor("lm_predictions.lm_head.dense.weight", MatrixD::Zero(32, 32)));
            t.push_back(
                tensor("lm_predictions.lm_head.dense.bias", MatrixD::Zero(1, 32), "F32", {32}));
            t.push_back(tensor("lm_predictions.lm_head.LayerNorm.weight", MatrixD::Ones(1, 32),
                               "F32", {32}));
            t.push_back(
                tensor("lm_predictions.lm_head.LayerNorm.bias", MatrixD::Zero(1, 32), "F32", {32}));
            t.push_back(tensor("lm_predictions.lm_head.bias", MatrixD::Zero(1, 64), "F32", {64}));
        });
        QVERIFY_MESSAGE(openError(narrow.dir),
                        "config.json: embedding_size 16 != hidden_size 32 with legacy false");
    }

    void storedTiedDecoderMustEqualTheTokenTable() {
        ModelCopy same("bert-tiny-mlm");
        same.editTensors([](std::vector<TestTensor>& t) {
            t.push_back(scaledCopy(*find(t, "bert.embeddings.word_embeddings.weight"),
                                   "cls.predictions.decoder.weight", 1.0f));
        });
        QCOMPARE(checkedOpenError(same.dir), QString());

        ModelCopy differs("bert-tiny-mlm");
        differs.editTensors([](std::vector<TestTensor>& t) {
            t.push_back(scaledCopy(*find(t, "bert.embeddings.word_embeddings.weight"),
                                   "cls.predictions.decoder.weight", 2.0f));
        });
        QVERIFY_MESSAGE(checkedOpenError(differs.dir),
                        "cls.predictions.decoder.weight differs from the word embeddings although "
                        "tie_word_embeddings is true");
    }

    void theBiasUnderBothNamesMustAgree() {
        ModelCopy same("bert-tiny-mlm");
        same.editTensors([](std::vector<TestTensor>& t) {
            t.push_back(
                scaledCopy(*find(t, "cls.predictions.bias"), "cls.predictions.decoder.bias", 1.0f));
        });
        QCOMPARE(checkedOpenError(same.dir), QString());

        ModelCopy differs("bert-tiny-mlm");
        differs.editTensors([](std::vector<TestTensor>& t) {
            t.push_back(
                scaledCopy(*find(t, "cls.predictions.bias"), "cls.predictions.decoder.bias", 3.0f));
        });
        QVERIFY_MESSAGE(checkedOpenError(differs.dir),
                        "cls.predictions.bias and cls.predictions.decoder.bias differ");
    }

    void untiedDecoderIsReadWithItsOwnBias() {
        // Untied with only the head's bias: transformers 4 and 5 disagree, so it is refused.
        ModelCopy headBiasOnly("bert-tiny-mlm");
        headBiasOnly.editConfig([](QJsonObject& c) { c.insert("tie_word_embeddings", false); });
        headBiasOnly.editTensors([](std::vector<TestTensor>& t) {
            t.push_back(scaledCopy(*find(t, "bert.embeddings.word_embeddings.weight"),
                                   "cls.predictions.decoder.weight", 2.0f));
        });
        QVERIFY_MESSAGE(openError(headBiasOnly.dir),
                        "tie_word_embeddings is false and cls.predictions.decoder.bias is missing");

        // With decoder.bias = 2·bias and the decoder 2·E (both exact in float): logits =
        // 2 (tied logits).
        ModelCopy untied("bert-tiny-mlm");
        untied.editConfig([](QJsonObject& c) { c.insert("tie_word_embeddings", false); });
        untied.editTensors([](std::vector<TestTensor>& t) {
            t.push_back(scaledCopy(*find(t, "bert.embeddings.word_embeddings.weight"),
                                   "cls.predictions.decoder.weight", 2.0f));
            const TestTensor bias = *find(t, "cls.predictions.bias");
            t.erase(t.begin() + (find(t, "cls.predictions.bias") - t.data()));
            t.push_back(scaledCopy(bias, "cls.predictions.decoder.bias", 2.0f));
        });
        const auto tied = runOn(goldenModelDir("bert-tiny-mlm"));
        const auto run = runOn(untied.dir);
        QVERIFY((run.maskedLmLogits - 2.0 * tied.maskedLmLogits).cwiseAbs().maxCoeff() < 1e-9);
        QVERIFY((run.maskedLmLogits - tied.maskedLmLogits).cwiseAbs().maxCoeff() > 0.1);
    }

    void misshapenHeadTensorIsRefused() {
        ModelCopy m("roberta-tiny-mlm");
        m.editTensors([](std::vector<TestTensor>& t) {
            TestTensor* dense = find(t, "lm_head.dense.bias");
            dense->shape = {dense->shape[0] / 2, 2};
        });
        QVERIFY_MESSAGE(openError(m.dir), "tensor lm_head.dense.bias has shape");
    }

    // ---- Token types ----

    void tokenTypesAreCheckedAsTheReferenceDoes() {
        const io::ModelFolder bert(goldenModelDir("bert-tiny-mlm"));
        auto refusal = [](const model::Config& c, std::vector<int> types) -> QString {
            model::RunOptions options;
            options.tokenTypes = std::move(types);
            try {
                model::checkInputs(c, kIds, options);
            } catch (const model::ModelError& e) {
                return QString::fromUtf8(e.what());
            }
            return {};
        };
        const model::Config& c = bert.model().config;
        QCOMPARE(refusal(c, {0, 0, 0, 1, 1, 1, 1}), QString());
        QCOMPARE(refusal(c, {0, 0, 1}), "token types: expected 7 values, one per token id");
        QCOMPARE(refusal(c, {0, 0, 0, 2, 1, 1, 1}),
                 "token types[3]: 2 is not an integer in [0, type_vocab_size 2)");
        QCOMPARE(refusal(c, {0, -1, 0, 1, 1, 1, 1}),
                 "token types[1]: -1 is not an integer in [0, type_vocab_size 2)");
        model::Config none = c;
        none.tokenTypes = 0;
        QCOMPARE(refusal(none, {0, 0, 0, 0, 0, 0, 0}),
                 "token types: type_vocab_size is 0, so this bert model has no token-type "
                 "embeddings (transformers ignores token_type_ids then)");
        const io::ModelFolder distilbert(goldenModelDir("distilbert-tiny"));
        QCOMPARE(refusal(distilbert.model().config, {0, 0, 0, 0, 0, 0, 0}),
                 "token types: distilbert has no token-type embeddings (its model takes no "
                 "token_type_ids)");
    }

    void tokenTypesChangeTheEmbeddings() {
        const io::ModelFolder folder(goldenModelDir("bert-tiny-mlm"));
        model::RunOptions pair;
        pair.tokenTypes = {0, 0, 0, 1, 1, 1, 1};
        const auto a = model::runModel<double>(folder.model(), kIds);
        const auto b = model::runModel<double>(folder.model(), kIds, pair);
        // Sentence A's rows read type 0 either way; sentence B's read type 1.
        QVERIFY((a.layers[0].hiddenIn.topRows(3) - b.layers[0].hiddenIn.topRows(3))
                    .cwiseAbs()
                    .maxCoeff() == 0);
        QVERIFY((a.layers[0].hiddenIn.bottomRows(4) - b.layers[0].hiddenIn.bottomRows(4))
                    .cwiseAbs()
                    .maxCoeff() > 1e-3);
    }

    // ---- DistilBERT's sinusoids ----

    void sinusoidTableIsComputedWhenNoneIsStored() {
        ModelCopy m("distilbert-tiny");
        m.editConfig([](QJsonObject& c) { c.insert("sinusoidal_pos_embds", true); });
        m.editTensors([](std::vector<TestTensor>& t) {
            t.erase(t.begin() +
                    (find(t, "distilbert.embeddings.position_embeddings.weight") - t.data()));
        });
        const io::ModelFolder folder(m.dir);
        const model::TensorRef& table = folder.model().weights.positionEmbedding;
        QCOMPARE(table.rows, 16);
        QCOMPARE(table.cols, 32);
        std::vector<double> values(static_cast<std::size_t>(table.count()));
        convertElements(table.data, table.dtype, 0, table.count(), values.data());
        for (long long pos : {0LL, 1LL, 7LL, 15LL}) {
            for (long long j : {0LL, 1LL, 6LL, 7LL, 31LL}) {
                const double angle = static_cast<double>(pos) /
                                     std::pow(10000.0, 2.0 * static_cast<double>(j / 2) / 32.0);
                const float want = static_cast<float>(j % 2 ? std::cos(angle) : std::sin(angle));
                QCOMPARE(values[static_cast<std::size_t>(pos * 32 + j)], static_cast<double>(want));
            }
        }
        // A stored table wins over the flag, as from_pretrained loads it over the init.
        ModelCopy stored("distilbert-tiny");
        stored.editConfig([](QJsonObject& c) { c.insert("sinusoidal_pos_embds", true); });
        const io::ModelFolder withTable(stored.dir);
        QVERIFY(withTable.model().weights.positionEmbedding.file.find("model.safetensors") !=
                std::string::npos);
        // Without the flag the table is required.
        ModelCopy missing("distilbert-tiny");
        missing.editTensors([](std::vector<TestTensor>& t) {
            t.erase(t.begin() +
                    (find(t, "distilbert.embeddings.position_embeddings.weight") - t.data()));
        });
        QVERIFY_MESSAGE(
            openError(missing.dir),
            "missing tensor distilbert.embeddings.position_embeddings.weight (expected [16, 32])");
    }
};

QTEST_GUILESS_MAIN(TestMaskedLmHead)
#include "test_masked_lm_head.moc"
