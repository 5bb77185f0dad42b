// What a model folder, a config or an input the engine refuses, and how: one line naming the
// file, the field or tensor, and the shapes or values. And `attention-explorer run` end to end:
// its JSON and npy outputs, exit statuses 0 and 2.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <functional>

#include "core/model/model.h"
#include "io/formats/matrix_files.h"
#include "io/formats/safetensors.h"
#include "io/model/model_folder.h"
#include "support/model_checks.h"
#include "support/model_copy.h"
#include "support/run_binary.h"
#include "support/safetensors_writer.h"

using namespace ae;
using namespace ae::testing;

class TestModelRefusals : public QObject {
    Q_OBJECT

private slots:
    void missingFiles() {
        ModelCopy m("gpt2-tiny");
        QFile::remove(m.path("model.safetensors"));
        QVERIFY_MESSAGE(openError(m.dir),
                        "neither model.safetensors nor "
                        "model.safetensors.index.json");
        QFile::remove(m.path("config.json"));
        QVERIFY_MESSAGE(openError(m.dir), "config.json: missing");
        QVERIFY_MESSAGE(openError(m.dir + "/nowhere"), "nowhere: not a folder");
    }

    void onlyPytorchBin() {
        ModelCopy m("gpt2-tiny");
        QFile::rename(m.path("model.safetensors"), m.path("pytorch_model.bin"));
        QVERIFY_MESSAGE(openError(m.dir), "only pytorch_model.bin",
                        "only safetensors weights are read", "save_pretrained",
                        "safe_serialization=True");
    }

    void unknownModelType() {
        ModelCopy m("gpt2-tiny");
        m.editConfig([](QJsonObject& c) { c["model_type"] = "mt5"; });
        QVERIFY_MESSAGE(
            openError(m.dir), "config.json: model_type \"mt5\" is not supported",
            "(gpt2, bert, llama, qwen3, qwen2, mistral, gemma, gemma2, gemma3_text, "
            "gemma3, phi3, gpt_neox, olmo2, smollm3, roberta, xlm-roberta, distilbert, mpnet, "
            "modernbert, deberta-v2, t5, bart, marian)");
        m.editConfig([](QJsonObject& c) { c.remove("model_type"); });
        QVERIFY_MESSAGE(openError(m.dir), "model_type null is not supported");
    }

    void badConfigValues_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("field");
        QTest::addColumn<QJsonValue>("value");
        QTest::addColumn<QString>("expected");
        QTest::newRow("heads do not divide")
            << "gpt2-tiny"
            << "n_head" << QJsonValue(5) << "n_embd 32 is not a multiple of n_head 5";
        QTest::newRow("text for a number")
            << "gpt2-tiny"
            << "n_layer" << QJsonValue("two") << "n_layer must be a positive integer, got \"two\"";
        QTest::newRow("fraction") << "bert-tiny"
                                  << "num_hidden_layers" << QJsonValue(1.5)
                                  << "num_hidden_layers must be a positive integer, got 1.5";
        QTest::newRow("zero") << "bert-tiny"
                              << "hidden_size" << QJsonValue(0)
                              << "hidden_size must be a positive integer, got 0";
        QTest::newRow("bool for a number")
            << "llama-tiny-gqa"
            << "rms_norm_eps" << QJsonValue(true) << "rms_norm_eps must be a number, got true";
        QTest::newRow("activation")
            << "llama-tiny-gqa"
            << "hidden_act" << QJsonValue("mish") << "hidden_act \"mish\" is not supported";
        QTest::newRow("gqa") << "llama-tiny-gqa"
                             << "num_key_value_heads" << QJsonValue(3)
                             << "num_attention_heads 4 is not a multiple of num_key_value_heads 3";
        QTest::newRow("odd head_dim")
            << "qwen3-tiny"
            << "head_dim" << QJsonValue(15) << "head_dim 15 must be even for RoPE";
        QTest::newRow("rope type")
            << "llama-tiny-gqa"
            << "rope_scaling" << QJsonValue(QJsonObject{{"rope_type", "yarn"}, {"factor", 2}})
            << "rope type \"yarn\" is not supported (default, linear, llama3)";
        QTest::newRow("llama3 field")
            << "llama-tiny-gqa"
            << "rope_scaling" << QJsonValue(QJsonObject{{"rope_type", "llama3"}, {"factor", 8}})
            << "rope_scaling.low_freq_factor is missing";
        QTest::newRow("sliding") << "qwen3-tiny"
                                 << "use_sliding_window" << QJsonValue(true)
                                 << "sliding-window attention is not supported";
        QTest::newRow("bert positions") << "bert-tiny"
                                        << "position_embedding_type" << QJsonValue("relative_key")
                                        << "only \"absolute\" is supported";
    }
    void badConfigValues() {
        QFETCH(QString, model);
        QFETCH(QString, field);
        QFETCH(QJsonValue, value);
        QFETCH(QString, expected);
        ModelCopy m(model);
        m.editConfig([&](QJsonObject& c) { c[field] = value; });
        // Held here: qPrintable's buffer would be gone before the macro's loop reads it.
        const QByteArray expectedText = expected.toUtf8();
        QVERIFY_MESSAGE(openError(m.dir), "config.json: ", expectedText.constData());
    }

    // Python reads 2.0 as a float, and the reference refuses it where an integer belongs; Qt
    // keeps it as the integer 2, so the reader looks at the text.
    void integralFloatIsNotAnInteger() {
        ModelCopy m("gpt2-tiny");
        QFile f(m.path("config.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QByteArray text = f.readAll();
        f.close();
        QVERIFY(text.contains("\"n_layer\": 2,"));
        text.replace("\"n_layer\": 2,", "\"n_layer\": 2.0,");
        QFile::remove(m.path("config.json"));
        QVERIFY(writeBytes(m.path("config.json"), text));
        QVERIFY_MESSAGE(openError(m.dir), "config.json: n_layer must be a positive integer, got 2");
        text.replace("\"n_layer\": 2.0,", "\"n_layer\": 2, \"n_layer\": 2,");
        QFile::remove(m.path("config.json"));
        QVERIFY(writeBytes(m.path("config.json"), text));
        QCOMPARE(openError(m.dir), QString());
        // Nested objects do not confuse the scan: a float inside rope_scaling is its own.
        QCOMPARE(openError(goldenModelDir("llama-tiny-rope-scaled")), QString());
    }

    // A billion layers are refused from the tensor count, before a slot is made for each.
    void moreLayersThanTensors() {
        ModelCopy m("llama-tiny-gqa");
        m.editConfig([](QJsonObject& c) { c["num_hidden_layers"] = 1000000000; });
        QVERIFY_MESSAGE(openError(m.dir), "model.safetensors: ",
                        "tensors cannot hold the 1000000000 layers config.json asks for");
        m.editConfig([](QJsonObject& c) { c["num_hidden_layers"] = 3; });
        QVERIFY_MESSAGE(openError(m.dir),
                        "missing tensor model.layers.2.input_layernorm.weight "
                        "(expected [32])");
    }

    void notJson() {
        ModelCopy m("bert-tiny");
        QFile::remove(m.path("config.json"));
        writeBytes(m.path("config.json"), "{\"model_type\": \"bert\",");
        QVERIFY_MESSAGE(openError(m.dir), "config.json: not JSON");
    }

    void missingTensor() {
        ModelCopy m("gpt2-tiny");
        m.editTensors([](std::vector<TestTensor>& t) {
            t.erase(std::remove_if(
                        t.begin(), t.end(),
                        [](const TestTensor& x) { return x.name == "transformer.h.1.ln_2.bias"; }),
                    t.end());
        });
        QVERIFY_MESSAGE(openError(m.dir),
                        "model.safetensors: missing tensor "
                        "transformer.h.1.ln_2.bias (expected [32])");
    }

    void noTokenTable() {
        ModelCopy m("llama-tiny-gqa");
        m.editTensors([](std::vector<TestTensor>& t) {
            for (TestTensor& x : t)
                if (x.name == "model.embed_tokens.weight") x.name = "embeddings";
        });
        QVERIFY_MESSAGE(openError(m.dir),
                        "model.safetensors: no model.embed_tokens.weight or embed_tokens.weight");
    }

    void misshapenTensor() {
        ModelCopy m("gpt2-tiny");
        m.editTensors([](std::vector<TestTensor>& t) {
            for (TestTensor& x : t)
                if (x.name == "transformer.h.0.attn.c_attn.weight") x.shape = {96, 32};
        });
        QVERIFY_MESSAGE(openError(m.dir),
                        "model.safetensors: tensor "
                        "transformer.h.0.attn.c_attn.weight has shape [96, 32], "
                        "expected [32, 96]");
    }

    void integerTensorWhereWeightsBelong() {
        ModelCopy m("bert-tiny");
        m.editTensors([](std::vector<TestTensor>& t) {
            for (TestTensor& x : t)
                if (x.name == "embeddings.LayerNorm.bias") x.dtype = "I32";
        });
        QVERIFY_MESSAGE(openError(m.dir),
                        "tensor embeddings.LayerNorm.bias has dtype I32, "
                        "expected F32, F16, BF16 or F64");
    }

    void nonFiniteWeight() {
        ModelCopy m("qwen3-tiny");
        m.editTensors([](std::vector<TestTensor>& t) {
            for (TestTensor& x : t) {
                if (x.name == "model.layers.1.self_attn.k_norm.weight") {
                    const float nan = std::numeric_limits<float>::quiet_NaN();
                    std::memcpy(x.bytes.data() + 12, &nan, 4);
                }
            }
        });
        QVERIFY_MESSAGE(openError(m.dir),
                        "tensor model.layers.1.self_attn.k_norm.weight [16] "
                        "has a non-finite value at element 3");
        // The headers alone open; the check, when asked for, refuses the same way, every time,
        // and stops when its progress says so.
        io::ModelFolder headers(m.dir, io::ModelFolder::Values::Unread);
        for (int attempt = 0; attempt < 2; ++attempt) {
            QString message;
            try {
                headers.checkValues();
            } catch (const model::ModelError& e) {
                message = QString::fromUtf8(e.what());
            }
            QVERIFY2(message.endsWith("tensor model.layers.1.self_attn.k_norm.weight [16] "
                                      "has a non-finite value at element 3"),
                     qPrintable(message));
            QVERIFY(!headers.valuesChecked());
        }
        QVERIFY_THROWS_EXCEPTION(model::RunCancelled,
                                 headers.checkValues([](double) { return false; }));
    }

    // A sound folder's check reports its progress up to the whole, then passes once for all.
    void valuesAreCheckedOnce() {
        io::ModelFolder headers(goldenModelDir("qwen3-tiny"), io::ModelFolder::Values::Unread);
        QVERIFY(!headers.valuesChecked());
        std::vector<double> seen;
        headers.checkValues([&](double fraction) {
            seen.push_back(fraction);
            return true;
        });
        QVERIFY(headers.valuesChecked());
        QVERIFY(!seen.empty());
        QVERIFY(std::is_sorted(seen.begin(), seen.end()));
        QCOMPARE(seen.back(), 1.0);
        seen.clear();
        headers.checkValues([&](double fraction) {
            seen.push_back(fraction);
            return true;
        });
        QVERIFY(seen.empty());
    }

    void textLongerThanPositionTable() {
        // gpt2-tiny has n_positions 32; bert-tiny its max_position_embeddings.
        QVERIFY_MESSAGE(runError(goldenModelDir("gpt2-tiny"), std::vector<long long>(33, 1)),
                        "33 tokens exceed the model's 32 learned positions (n_positions)");
        QCOMPARE(runError(goldenModelDir("gpt2-tiny"), std::vector<long long>(32, 1)), QString());
        const int bertPositions =
            readJsonFile(goldenModelDir("bert-tiny") + "/config.json")["max_position_embeddings"]
                .toInt();
        QVERIFY_MESSAGE(
            runError(goldenModelDir("bert-tiny"), std::vector<long long>(bertPositions + 1, 1)),
            "learned positions (max_position_embeddings)");
    }

    void badIdsAndMasks() {
        const QString gpt2 = goldenModelDir("gpt2-tiny");
        QVERIFY_MESSAGE(runError(gpt2, {1, 64}), "token ids[1]: 64 is not in [0, 64) (vocab_size)");
        QVERIFY_MESSAGE(runError(gpt2, {}), "token ids: expected at least one");
        model::RunOptions left;
        left.attentionMask = {0, 1, 1};
        QVERIFY_MESSAGE(runError(gpt2, {1, 2, 3}, left), "query position 0 sees no key",
                        "left padding", "pad on the right");
        // bert has no causal mask: left padding is fine there, all padding is not.
        QCOMPARE(runError(goldenModelDir("bert-tiny"), {1, 2, 3}, left), QString());
        model::RunOptions none;
        none.attentionMask = {0, 0};
        QVERIFY_MESSAGE(runError(goldenModelDir("bert-tiny"), {1, 2}, none),
                        "query position 0 sees no key");
        model::RunOptions shortMask;
        shortMask.attentionMask = {1};
        QVERIFY_MESSAGE(runError(gpt2, {1, 2}, shortMask), "attention mask: 1 values for 2 tokens");
    }

    // A text too long for this machine is refused before anything its size exists, naming the
    // memory it would need.
    void tooLargeRefusedBeforeAllocating() {
        const double memory = physicalMemoryBytes();
        if (memory <= 0) QSKIP("physical memory unknown on this machine");
        // 2 layers x 4 heads x 2 T x T matrices of 400000^2 floats: ~10 TB.
        QVERIFY_MESSAGE(
            runError(goldenModelDir("llama-tiny-gqa"), std::vector<long long>(400000, 1)),
            "llama-tiny-gqa: too large: needs about ",
            "GiB (the model in float), "
            "this machine has ");
    }

    // The limit follows the stored size: a BF16 checkpoint counts its 2-byte weights plus one
    // layer converted at a time, so it fits where a float32 copy of the same model would not.
    void bf16LimitFollowsStoredSize() {
        const io::ModelFolder bf16(goldenModelDir("llama-tiny-bf16"));
        const io::ModelFolder f32(goldenModelDir("llama-tiny-gqa"));
        const model::RunMemory asStored = model::runMemory(bf16.model(), 7, sizeof(float));
        const model::RunMemory copy = model::runMemory(f32.model(), 7, sizeof(float));
        QCOMPARE(asStored.storedWeights * 2, copy.storedWeights);
        QVERIFY(asStored.convertedLayer > 0);
        QVERIFY(asStored.convertedLayer < copy.storedWeights / 2);
        QCOMPARE(asStored.kept, copy.kept);
        QVERIFY(asStored.total() < copy.total());
        // A machine with exactly the BF16 run's need opens it, and refuses the float32 copy.
        model::checkRunFitsInMemory(bf16.model(), asStored.total(), "x", asStored.total());
        QVERIFY_EXCEPTION_THROWN(
            model::checkRunFitsInMemory(f32.model(), copy.total(), "x", asStored.total()),
            model::ModelError);
    }

    // ------------------------------------------------------------ the command line
    void runWritesTheReferenceJson() {
        QTemporaryDir temp;
        const QString out = temp.filePath("result.json");
        const auto r =
            test::runBinary({"run", goldenModelDir("bert-tiny"), "--ids", "7,41,3,59,22,0,0",
                             "--attention-mask", "1,1,1,1,1,0,0", "--double", "-o", out});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonObject result = readJsonFile(out);
        const QJsonObject expected =
            readJsonFile(goldenModelDir("bert-tiny") + "/expected-ids-B.json");
        for (const char* key : {"format", "version", "family", "tokens", "attention_mask"})
            QCOMPARE(result.value(key), expected.value(key));
        QVERIFY(!result.contains("logits"));
        // Every number of the file within the reference's tolerance of the expected one.
        double worst = 0;
        const QJsonArray layers = result["layers"].toArray(), want = expected["layers"].toArray();
        QCOMPARE(layers.size(), want.size());
        std::function<void(const QJsonValue&, const QJsonValue&)> walk = [&](const QJsonValue& a,
                                                                             const QJsonValue& b) {
            if (a.isArray()) {
                QCOMPARE(a.toArray().size(), b.toArray().size());
                for (int i = 0; i < a.toArray().size(); ++i)
                    walk(a.toArray()[i], b.toArray()[i]);
            } else if (a.isObject()) {
                QCOMPARE(a.toObject().keys(), b.toObject().keys());
                for (const QString& k : a.toObject().keys())
                    walk(a.toObject()[k], b.toObject()[k]);
            } else {
                worst = std::max(
                    worst, std::fabs(a.toDouble() - b.toDouble()) / (1 + std::fabs(b.toDouble())));
            }
        };
        walk(result["layers"], expected["layers"]);
        walk(result["last_hidden"], expected["last_hidden"]);
        QVERIFY2(worst <= 1e-4, qPrintable(QString::number(worst)));
    }

    // A sentence pair's token types reach the embeddings, and the result echoes them and holds
    // the masked-LM logits, as the reference's case P does.
    void runTakesTokenTypes() {
        QTemporaryDir temp;
        const QString out = temp.filePath("result.json");
        const auto r =
            test::runBinary({"run", goldenModelDir("bert-tiny-mlm"), "--ids", "7,41,3,59,22,15,36",
                             "--token-types", "0,0,0,1,1,1,1", "--double", "-o", out});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonObject result = readJsonFile(out);
        const QJsonObject expected =
            readJsonFile(goldenModelDir("bert-tiny-mlm") + "/expected-ids-P.json");
        QCOMPARE(result.value("token_types"), expected.value("token_types"));
        const QJsonArray got = result.value("mlm_logits").toArray();
        const QJsonArray want = expected.value("mlm_logits").toArray();
        QCOMPARE(got.size(), want.size());
        double worst = 0;
        for (int i = 0; i < got.size(); ++i)
            for (int j = 0; j < want[i].toArray().size(); ++j) {
                const double b = want[i].toArray()[j].toDouble();
                worst = std::max(
                    worst, std::fabs(got[i].toArray()[j].toDouble() - b) / (1 + std::fabs(b)));
            }
        QVERIFY2(worst <= 1e-12, qPrintable(QString::number(worst)));
        // Without token types the last four rows read type 0 and come out otherwise.
        const auto plain = test::runBinary({"run", goldenModelDir("bert-tiny-mlm"), "--ids",
                                            "7,41,3,59,22,15,36", "--double", "-o", out});
        QVERIFY2(plain.exitCode == 0, plain.err.constData());
        const QJsonObject single = readJsonFile(out);
        QVERIFY(!single.contains("token_types"));
        QVERIFY(single.value("mlm_logits").toArray()[6] != result.value("mlm_logits").toArray()[6]);
    }

    void runWritesNpyFiles() {
        QTemporaryDir temp;
        const QString out = temp.filePath("npy");
        const auto r = test::runBinary(
            {"run", goldenModelDir("qwen3-tiny"), "--ids", "7,41,3", "--format", "npy", "-o", out});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QDir dir(out);
        // 1 tokens + 2 layers x (1 + 4 heads x 5) + logits
        QCOMPARE(dir.entryList({"*.npy"}, QDir::Files).size(), 1 + 2 * (1 + 4 * 5) + 1);
        QCOMPARE(io::readNpyInfo(dir.filePath("layer1_head3_k.npy")).shape,
                 (std::vector<long long>{3, 16}));
        QCOMPARE(io::readNpyInfo(dir.filePath("layer0_head0_weights.npy")).dtype,
                 QStringLiteral("float32"));
        QCOMPARE(io::readNpyInfo(dir.filePath("logits.npy")).shape,
                 (std::vector<long long>{3, 64}));
        QVERIFY(dir.exists("tokens.npy") && !dir.exists("last_hidden.npy"));
        // Head 3 reads kv head 1 (GQA, 4 heads on 2): its k is head 2's.
        QCOMPARE(io::readMatrixFile(dir.filePath("layer1_head3_k.npy")),
                 io::readMatrixFile(dir.filePath("layer1_head2_k.npy")));
        QVERIFY(io::readMatrixFile(dir.filePath("layer1_head3_k.npy")) !=
                io::readMatrixFile(dir.filePath("layer1_head1_k.npy")));

        // bert in double: float64 files and its last hidden state instead of logits.
        const QString bertOut = temp.filePath("bert");
        const auto b = test::runBinary({"run", goldenModelDir("bert-tiny"), "--ids", "7,41,3",
                                        "--double", "--format", "npy", "-o", bertOut});
        QVERIFY2(b.exitCode == 0, b.err.constData());
        const QDir bert(bertOut);
        QVERIFY(bert.exists("last_hidden.npy") && !bert.exists("logits.npy"));
        QCOMPARE(io::readNpyInfo(bert.filePath("last_hidden.npy")).dtype,
                 QStringLiteral("float64"));
        QCOMPARE(io::readNpyInfo(bert.filePath("layer0_hidden_in.npy")).shape,
                 (std::vector<long long>{3, 32}));
    }

    void runExitStatuses() {
        QTemporaryDir temp;
        const QString out = temp.filePath("r.json");
        const QString gpt2 = goldenModelDir("gpt2-tiny");
        struct Case {
            QStringList arguments;
            const char* message;
        };
        const std::vector<Case> cases = {
            {{"run", gpt2, "-o", out}, "run: give --text TEXT or --ids 1,2,3"},
            {{"run", gpt2, "--ids", "1,x", "-o", out}, "--ids: expected comma-separated integers"},
            {{"run", gpt2, "--ids", "1,2"}, "run: -o OUT is required"},
            {{"run", gpt2, "--ids", " , ", "-o", out}, "token ids: expected at least one"},
            {{"run", gpt2, "--ids", "1,99", "-o", out}, "gpt2-tiny: token ids[1]: 99 is not in"},
            {{"run", gpt2, "--ids", "1,2", "--format", "csv", "-o", out}, "expected json or npy"},
            {{"run", gpt2, "--ids", "1,2", "--attention-mask", "0,1", "-o", out}, "sees no key"},
            {{"run", gpt2 + "-missing", "--ids", "1", "-o", out}, "not a folder"},
            {{"run", gpt2, "--ids", "1,2", "--token-types", "0,1", "-o", out},
             "gpt2-tiny: token types: gpt2 has no token-type embeddings"},
            {{"run", gpt2, "--ids", "1,2", "--text-pair", "b", "-o", out},
             "run: --text-pair needs --text (sentence A)"},
            {{"run", gpt2, "--text", "a", "--text-pair", "b", "--token-types", "0", "-o", out},
             "run: --text-pair gives the token types itself"},
            {{"run", gpt2, "--text", "hello", "-o", out},
             "gpt2-tiny: no tokenizer.json, vocab.json + merges.txt, vocab.txt, or Marian's "
             "source.spm + vocab.json in this folder"},
            {{"scene", gpt2, "--ids", "1,2", "--layer", "2", "-o", out},
             "scene: --layer: expected 0 to 1, got 2"},
            {{"scene", gpt2, "--ids", "1,2", "-o", out}, "scene: --layer L is required"},
            {{"run", gpt2, "--ids", "1,2", "--ablate", "0.x", "-o", out},
             "run: --ablate: expected LAYER.HEAD[,LAYER.HEAD...] with layer 0 to 1 and head 0 to 3 "
             "(the model has 2 layers of 4 heads), got \"0.x\""},
            {{"run", gpt2, "--ids", "1,2", "--ablate", "1.2,", "-o", out},
             "run: --ablate: expected LAYER.HEAD[,LAYER.HEAD...] with layer 0 to 1 and head 0 to 3 "
             "(the model has 2 layers of 4 heads), got \"\""},
            {{"run", gpt2, "--ids", "1,2", "--ablate", "0.1.2", "-o", out}, "got \"0.1.2\""},
            {{"run", gpt2, "--ids", "1,2", "--ablate", "2.0", "-o", out},
             "run: --ablate: 2.0 is outside the model: layer 0 to 1 and head 0 to 3 (the model has "
             "2 layers of 4 heads)"},
            {{"run", gpt2, "--ids", "1,2", "--ablate", "0.-1", "-o", out},
             "run: --ablate: 0.-1 is outside the model"},
            {{"run", gpt2, "--ids", "1,2", "--ablate", "0.1, 0.1", "-o", out},
             "run: --ablate: 0.1 is listed twice"},
            {{"run", gpt2, "--ids", "1,2", "--ablate", "0.1", "--ablate-mode", "half", "-o", out},
             "run: --ablate-mode: expected zero or mean, got half"},
            {{"run", gpt2, "--ids", "1,2", "--ablate-mode", "mean", "-o", out},
             "run: --ablate-mode needs --ablate LAYER.HEAD[,LAYER.HEAD...]"},
            {{"scene", gpt2, "--ids", "1,99", "--layer", "0", "-o", out},
             "gpt2-tiny: token ids[1]: 99 is not in"},
        };
        for (const Case& c : cases) {
            const auto r = test::runBinary(c.arguments);
            QVERIFY2(r.exitCode == 2, qPrintable(c.arguments.join(' ') + ": " + r.err));
            QVERIFY2(r.err.contains(c.message), r.err.constData());
            QCOMPARE(r.err.count('\n'), 1);
        }
        QVERIFY(!QFile::exists(out));
        const auto ok = test::runBinary({"run", gpt2, "--ids", "1, 2,", "-o", out});
        QVERIFY2(ok.exitCode == 0, ok.err.constData());
        QCOMPARE(readJsonFile(out).value("tokens").toArray(), (QJsonArray{1, 2}));
    }

    // `run --ablate`: the layers up to the ablated one are written as without, the later ones
    // and the logits differ; zero and mean differ; and the file holds what the engine computes
    // in process with the same heads switched off.
    void runAblateChangesOnlyTheLaterLayers() {
        QTemporaryDir temp;
        const QString gpt2 = goldenModelDir("gpt2-tiny");
        const auto run = [&](const QString& name, const QStringList& extra) {
            const QString out = temp.filePath(name);
            const auto r = test::runBinary(
                QStringList{"run", gpt2, "--ids", "5,17,3,42,8", "--double", "-o", out} + extra);
            if (r.exitCode != 0) qWarning("%s", r.err.constData());
            return readJsonFile(out);
        };
        const QJsonObject plain = run("plain.json", {});
        const QJsonObject zero = run("zero.json", {"--ablate", "0.1"});
        const QJsonObject mean = run("mean.json", {"--ablate", "0.1", "--ablate-mode", "mean"});
        const QJsonObject last = run("last.json", {"--ablate", "1.3,1.0"});
        QVERIFY(!plain.isEmpty() && !zero.isEmpty() && !mean.isEmpty() && !last.isEmpty());
        const auto layer = [](const QJsonObject& r, int l) {
            return QJsonValue(r.value("layers").toArray().at(l));
        };
        QCOMPARE(layer(zero, 0), layer(plain, 0));
        QCOMPARE(layer(mean, 0), layer(plain, 0));
        QVERIFY(layer(zero, 1).toObject()["hidden_in"] != layer(plain, 1).toObject()["hidden_in"]);
        QVERIFY(layer(zero, 1).toObject()["heads"] != layer(plain, 1).toObject()["heads"]);
        QVERIFY(layer(mean, 1).toObject()["hidden_in"] != layer(zero, 1).toObject()["hidden_in"]);
        QVERIFY(zero.value("logits") != plain.value("logits"));
        QVERIFY(mean.value("logits") != zero.value("logits"));
        // In the last layer: every layer as without, only the logits move.
        QCOMPARE(last.value("layers"), plain.value("layers"));
        QVERIFY(last.value("logits") != plain.value("logits"));

        const io::ModelFolder folder(gpt2);
        model::RunOptions options;
        options.ablations = {{0, 1}};
        options.ablationMode = model::AblationMode::Mean;
        const auto expected = model::runModel<double>(folder.model(), {5, 17, 3, 42, 8}, options);
        Difference d;
        compareMatrix(mean.value("logits"), expected.logits, "logits", d);
        compareMatrix(layer(mean, 1).toObject()["hidden_in"], expected.layers[1].hiddenIn,
                      "layers[1].hidden_in", d);
        QVERIFY2(d.worst <= 1e-12, qPrintable(d.where));
    }

    // --text goes through the folder's own tokenizer: GPT-2's vocab.json and merges.txt beside
    // the tiny model's weights. "!" is GPT-2's token 0 (inside the tiny vocabulary); "!!" is
    // 3228, which the tiny model refuses by name, so the id did come from the tokenizer.
    void textRunsThroughTheFoldersTokenizer() {
        ModelCopy copy("gpt2-tiny");
        for (const char* file : {"vocab.json", "merges.txt"}) {
            QVERIFY(QFile::copy(QStringLiteral(AE_TEST_DATA_DIR "/tokenizers/gpt2/") + file,
                                copy.path(file)));
        }
        QTemporaryDir temp;
        const QString out = temp.filePath("r.json");
        const auto ok = test::runBinary({"run", copy.dir, "--text", "!", "-o", out});
        QVERIFY2(ok.exitCode == 0, ok.err.constData());
        QCOMPARE(readJsonFile(out).value("tokens").toArray(), (QJsonArray{0}));
        const auto refused = test::runBinary({"run", copy.dir, "--text", "!!", "-o", out});
        QCOMPARE(refused.exitCode, 2);
        QVERIFY2(refused.err.contains("token ids[0]: 3228 is not in [0, 64)"),
                 refused.err.constData());
    }

    // `scene` writes a layer as a version-2-capable scene that export computes; its tokens are
    // the tokenizer's text, or the ids.
    void sceneCommandWritesALayer() {
        QTemporaryDir temp;
        const QString sceneFile = temp.filePath("layer.scene.json");
        const auto r = test::runBinary({"scene", goldenModelDir("llama-tiny-gqa"), "--ids",
                                        "7,41,3,59,22,15,36", "--layer", "1", "-o", sceneFile});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonObject scene = readJsonFile(sceneFile);
        QCOMPARE(scene.value("version").toInt(), 2);
        QCOMPARE(scene.value("kv_heads").toInt(), 2);
        QCOMPARE(scene.value("tokens").toArray().first().toString(), QStringLiteral("7"));
        const QString result = temp.filePath("layer.json");
        const auto e = test::runBinary({"export", sceneFile, "-o", result});
        QVERIFY2(e.exitCode == 0, e.err.constData());
        // Head 3's weights: the reference's layer 1, head 3 (the tolerance of the reference).
        const QJsonObject expected =
            readJsonFile(goldenModelDir("llama-tiny-gqa") + "/expected-ids-A.json");
        const QJsonArray want = expected.value("layers")
                                    .toArray()[1]
                                    .toObject()
                                    .value("heads")
                                    .toArray()[3]
                                    .toObject()
                                    .value("weights")
                                    .toArray();
        const QJsonArray got =
            readJsonFile(result).value("heads").toArray()[3].toObject().value("weights").toArray();
        QCOMPARE(got.size(), want.size());
        for (int i = 0; i < want.size(); ++i)
            for (int j = 0; j < want[i].toArray().size(); ++j)
                QVERIFY(std::abs(got[i].toArray()[j].toDouble() -
                                 want[i].toArray()[j].toDouble()) <= 1e-12);
    }
};

QTEST_GUILESS_MAIN(TestModelRefusals)
#include "test_model_refusals.moc"
