// The newer families' config.json (io/model/family_configs.cpp against
// shared/reference/decoder_families.py and encoder_families.py): what each golden config reads
// as, and every option the reference refuses, refused with one line naming the field and value.
#include <QJsonArray>
#include <QJsonObject>
#include <QtTest>
#include <cmath>

#include "core/model/model.h"
#include "io/model/model_folder.h"
#include "support/model_checks.h"
#include "support/model_copy.h"

using namespace ae;
using namespace ae::testing;

namespace {

model::Config configOf(const QString& golden) {
    const io::ModelFolder folder(goldenModelDir(golden));
    return folder.model().config;
}

QJsonArray numbers(std::initializer_list<double> values) {
    QJsonArray a;
    for (double v : values)
        a.append(v);
    return a;
}

}  // namespace

class TestDecoderConfigs : public QObject {
    Q_OBJECT

private slots:
    // Which layers slide, and by how much, as the reference reads each family's fields.
    void slidingWindowsByLayer() {
        QCOMPARE(configOf("qwen2-tiny").slidingWindows, (std::vector<int>{0, 3}));
        QCOMPARE(configOf("mistral-tiny-window").slidingWindows, (std::vector<int>{3, 3}));
        QCOMPARE(configOf("gemma2-tiny").slidingWindows, (std::vector<int>{3, 0}));
        QCOMPARE(configOf("gemma3-tiny").slidingWindows, (std::vector<int>{3, 0, 3}));
        QCOMPARE(configOf("phi3-tiny-window").slidingWindows, (std::vector<int>{3, 3}));
        QVERIFY(configOf("phi3-tiny").slidingWindows.empty());
        QVERIFY(configOf("gemma-tiny").slidingWindows.empty());
        QVERIFY(configOf("pythia-tiny").slidingWindows.empty());
        QVERIFY(configOf("olmo2-tiny").slidingWindows.empty());
        QVERIFY(configOf("smollm3-tiny").slidingWindows.empty());
    }

    void positionsByLayer() {
        using LayerRotary = model::Config::LayerRotary;
        const model::Config gemma3 = configOf("gemma3-tiny");
        QCOMPARE(gemma3.layerRotary,
                 (std::vector<LayerRotary>{LayerRotary::Local, LayerRotary::Global,
                                           LayerRotary::Local}));
        QCOMPARE(gemma3.localRope.theta, 1e4);
        QCOMPARE(gemma3.localRope.scaling, RopeScaling::None);
        QCOMPARE(gemma3.rope.theta, 1e6);
        QCOMPARE(gemma3.rope.scaling, RopeScaling::Linear);
        QCOMPARE(gemma3.rope.factor, 8.0);
        QCOMPARE(gemma3.layerRope(1, 7)->theta, 1e6);
        QCOMPARE(gemma3.layerRope(0, 7)->theta, 1e4);

        const model::Config smol = configOf("smollm3-tiny");
        QCOMPARE(smol.layerRotary,
                 (std::vector<LayerRotary>{LayerRotary::Global, LayerRotary::None}));
        QVERIFY(smol.layerRope(0, 7).has_value());
        QVERIFY(!smol.layerRope(1, 7).has_value());

        // Phi-3's longrope: the long factors once the text outgrows the original 4 positions.
        const model::Config phi3 = configOf("phi3-tiny");
        QCOMPARE(phi3.rope.scaling, RopeScaling::LongRope);
        QCOMPARE(phi3.rope.rotaryDim, phi3.headDim / 2);
        QCOMPARE(phi3.rope.attentionFactor, std::sqrt(1 + std::log(8.0) / std::log(4.0)));
        QCOMPARE(phi3.layerRope(0, 7)->longRopeFactors, phi3.longRopeFactors);
        QCOMPARE(phi3.layerRope(0, 4)->longRopeFactors, phi3.shortRopeFactors);
        QVERIFY(phi3.shortRopeFactors != phi3.longRopeFactors);

        const model::Config pythia = configOf("pythia-tiny");
        QCOMPARE(pythia.rope.rotaryDim, 4);
        QCOMPARE(pythia.architecture().placement, model::NormPlacement::Parallel);
        QCOMPARE(configOf("pythia-tiny-sequential").architecture().placement,
                 model::NormPlacement::Pre);
    }

    void gemmaScalesAndCaps() {
        const model::Config gemma = configOf("gemma-tiny");
        QCOMPARE(gemma.embeddingScale, std::sqrt(32.0));
        QCOMPARE(gemma.attentionSoftCap, 0.0);
        const model::Config gemma2 = configOf("gemma2-tiny");
        QCOMPARE(gemma2.attentionSoftCap, 2.0);
        QCOMPARE(gemma2.finalSoftCap, 3.0);
        QCOMPARE(gemma2.attentionScale(0), 1.0 / std::sqrt(12.0));
        QCOMPARE(configOf("gemma3-tiny").finalSoftCap, 3.0);
        const model::Config qwen2 = configOf("qwen2-tiny");
        QVERIFY(qwen2.attentionBias && !qwen2.outputBias);
    }

    void refusals_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QJsonObject>("fields");
        QTest::addColumn<QString>("expected");
        QTest::newRow("rope type")
            << "qwen2-tiny" << QJsonObject{{"rope_scaling", QJsonObject{{"rope_type", "yarn"}}}}
            << "rope type \"yarn\" is not supported (default, linear, llama3)";
        QTest::newRow("phi3 rope type")
            << "phi3-tiny" << QJsonObject{{"rope_scaling", QJsonObject{{"rope_type", "llama3"}}}}
            << "rope type \"llama3\" is not supported (default, longrope)";
        QTest::newRow("gemma3 rope type")
            << "gemma3-tiny"
            << QJsonObject{{"rope_scaling", QJsonObject{{"rope_type", "llama3"}, {"factor", 8}}}}
            << "rope type \"llama3\" is not supported (default, linear)";
        QTest::newRow("partial rotary where none")
            << "mistral-tiny-window" << QJsonObject{{"partial_rotary_factor", 0.5}}
            << "partial_rotary_factor is not supported";
        QTest::newRow("null window gemma2")
            << "gemma2-tiny" << QJsonObject{{"sliding_window", QJsonValue::Null}}
            << "sliding_window is null (Gemma2Model needs it)";
        QTest::newRow("null window gemma3")
            << "gemma3-tiny" << QJsonObject{{"sliding_window", QJsonValue::Null}}
            << "sliding_window is null (Gemma3TextModel needs it)";
        QTest::newRow("sliding layer without window")
            << "qwen2-tiny"
            << QJsonObject{{"use_sliding_window", false},
                           {"layer_types", QJsonArray{"full_attention", "sliding_attention"}}}
            << "layer_types has sliding_attention but sliding_window is null (or "
               "use_sliding_window is false)";
        QTest::newRow("smollm3 sliding without use")
            << "smollm3-tiny"
            << QJsonObject{{"sliding_window", 3},
                           {"layer_types", QJsonArray{"sliding_attention", "full_attention"}}}
            << "layer_types has sliding_attention but use_sliding_window is false or "
               "sliding_window is null";
        QTest::newRow("layer types length")
            << "gemma2-tiny" << QJsonObject{{"layer_types", QJsonArray{"full_attention"}}}
            << "layer_types must be a list of 2 entries";
        QTest::newRow("layer type name")
            << "gemma2-tiny"
            << QJsonObject{{"layer_types", QJsonArray{"full_attention", "chunked_attention"}}}
            << "layer_types entry \"chunked_attention\" is not supported";
        QTest::newRow("soft-cap zero")
            << "gemma2-tiny" << QJsonObject{{"attn_logit_softcapping", 0}}
            << "attn_logit_softcapping must be > 0, got 0";
        QTest::newRow("final soft-cap negative")
            << "gemma2-tiny" << QJsonObject{{"final_logit_softcapping", -1}}
            << "final_logit_softcapping must be > 0, got -1";
        QTest::newRow("gemma3 attention soft-cap")
            << "gemma3-tiny" << QJsonObject{{"attn_logit_softcapping", 50}}
            << "attn_logit_softcapping is set, but Gemma3Attention does not pass it";
        QTest::newRow("bidirectional")
            << "gemma-tiny" << QJsonObject{{"use_bidirectional_attention", true}}
            << "use_bidirectional_attention is not supported";
        QTest::newRow("query_pre_attn_scalar")
            << "gemma2-tiny" << QJsonObject{{"query_pre_attn_scalar", 0}}
            << "query_pre_attn_scalar must be > 0, got 0";
        QTest::newRow("phi3 head_dim")
            << "phi3-tiny" << QJsonObject{{"head_dim", 4}}
            << "head_dim 4 differs from hidden_size // num_attention_heads";
        QTest::newRow("phi3 factor")
            << "phi3-tiny"
            << QJsonObject{{"rope_scaling", QJsonObject{{"rope_type", "longrope"},
                                                        {"factor", 2},
                                                        {"short_factor", numbers({1, 1})},
                                                        {"long_factor", numbers({1, 1})}}}}
            << "rope_scaling.factor 2 differs from max_position_embeddings / "
               "original_max_position_embeddings";
        QTest::newRow("phi3 factor list")
            << "phi3-tiny"
            << QJsonObject{{"rope_scaling", QJsonObject{{"rope_type", "longrope"},
                                                        {"short_factor", numbers({1})},
                                                        {"long_factor", numbers({1, 1})}}}}
            << "rope_scaling.short_factor must be a list of 2 positive numbers";
        QTest::newRow("partial rotary range")
            << "phi3-tiny" << QJsonObject{{"partial_rotary_factor", 1.5}}
            << "partial_rotary_factor 1.5 must be in (0, 1]";
        QTest::newRow("odd rotary dims") << "pythia-tiny" << QJsonObject{{"rotary_pct", 0.1875}}
                                         << "rotary dimension 3 must be even and at least 2";
        QTest::newRow("neox heads") << "pythia-tiny" << QJsonObject{{"num_attention_heads", 5}}
                                    << "hidden_size 32 is not a multiple of num_attention_heads 5";
        QTest::newRow("no_rope_layers")
            << "smollm3-tiny" << QJsonObject{{"no_rope_layers", QJsonArray{1}}}
            << "no_rope_layers must be a list of at least 2 values 0 or 1";
        QTest::newRow("max_window_layers")
            << "qwen2-tiny" << QJsonObject{{"max_window_layers", -1}}
            << "max_window_layers must be a non-negative integer, got -1";
        QTest::newRow("wrapped final soft-cap")
            << "gemma3-wrapped-tiny"
            << QJsonObject{{"text_config", QJsonObject{{"final_logit_softcapping", 30}}}}
            << "text_config.final_logit_softcapping is set, but Gemma3ForConditionalGeneration";
        QTest::newRow("activation") << "olmo2-tiny" << QJsonObject{{"hidden_act", "mish"}}
                                    << "hidden_act \"mish\" is not supported";
        QTest::newRow("roberta null pad")
            << "roberta-tiny" << QJsonObject{{"pad_token_id", QJsonValue::Null}}
            << "pad_token_id is null, but roberta numbers its positions from it";
        QTest::newRow("xlm-roberta negative pad")
            << "xlm-roberta-tiny" << QJsonObject{{"pad_token_id", -1}}
            << "pad_token_id must be an integer >= 0, got -1";
        QTest::newRow("roberta relative positions")
            << "roberta-tiny" << QJsonObject{{"position_embedding_type", "relative_key"}}
            << "position_embedding_type: only \"absolute\" is supported";
        QTest::newRow("roberta decoder") << "roberta-tiny-mlm" << QJsonObject{{"is_decoder", true}}
                                         << "is_decoder / add_cross_attention are not supported";
        QTest::newRow("distilbert heads") << "distilbert-tiny" << QJsonObject{{"n_heads", 5}}
                                          << "dim 32 is not a multiple of n_heads 5";
        QTest::newRow("distilbert activation")
            << "distilbert-tiny-mlm" << QJsonObject{{"activation", "mish"}}
            << "activation \"mish\" is not supported";
        QTest::newRow("distilbert layers") << "distilbert-tiny" << QJsonObject{{"n_layers", "two"}}
                                           << "n_layers must be a positive integer";
        QTest::newRow("mpnet buckets")
            << "mpnet-tiny" << QJsonObject{{"relative_attention_num_buckets", 16}}
            << "relative_attention_num_buckets 16 is not supported: HF computes 32 buckets";
        QTest::newRow("modernbert causal") << "modernbert-tiny" << QJsonObject{{"is_causal", true}}
                                           << "is_causal true is not supported";
        QTest::newRow("modernbert rope scaling")
            << "modernbert-tiny"
            << QJsonObject{{"rope_scaling", QJsonObject{{"rope_type", "linear"}, {"factor", 2}}}}
            << "rope_scaling {";
        QTest::newRow("modernbert rope parameters")
            << "modernbert-tiny"
            << QJsonObject{{"rope_parameters",
                            QJsonObject{{"sliding_attention", QJsonObject{{"rope_type", "yarn"}}}}}}
            << "rope_parameters.sliding_attention {";
        QTest::newRow("modernbert layer types")
            << "modernbert-tiny" << QJsonObject{{"layer_types", QJsonArray{"full_attention"}}}
            << "layer_types";
        QTest::newRow("modernbert odd head")
            << "modernbert-tiny" << QJsonObject{{"num_attention_heads", 32}}
            << "rotary dimension 1 must be even";
        QTest::newRow("deberta terms")
            << "deberta-v2-tiny" << QJsonObject{{"pos_att_type", "c2p|p2p"}}
            << "pos_att_type \"c2p|p2p\" is not supported (a list of \"c2p\", \"p2c\")";
        QTest::newRow("deberta rel norm")
            << "deberta-v2-tiny" << QJsonObject{{"norm_rel_ebd", QJsonArray{"batch_norm"}}}
            << "norm_rel_ebd [\"batch_norm\"] is not supported";
        QTest::newRow("deberta buckets")
            << "deberta-v2-tiny"
            << QJsonObject{{"position_buckets", 4}, {"max_relative_positions", 3}}
            << "position_buckets 4 with max_relative_positions 3: make_log_bucket_position needs";
        QTest::newRow("deberta even kernel")
            << "deberta-v2-tiny-conv" << QJsonObject{{"conv_kernel_size", 2}}
            << "conv_kernel_size 2 is not supported: with padding (k - 1) // 2 an even kernel";
        QTest::newRow("deberta conv groups")
            << "deberta-v2-tiny-conv" << QJsonObject{{"conv_groups", 3}}
            << "conv_groups 3 does not divide hidden_size 32";
        QTest::newRow("deberta conv activation")
            << "deberta-v2-tiny-conv" << QJsonObject{{"conv_act", "mish"}}
            << "conv_act \"mish\" is not supported";
        QTest::newRow("modernbert rope parameters list")
            << "modernbert-tiny" << QJsonObject{{"rope_parameters", QJsonArray{1}}}
            << "rope_parameters must be an object";
        QTest::newRow("deberta head size")
            << "deberta-v2-tiny-conv" << QJsonObject{{"attention_head_size", 4}}
            << "attention_head_size 4 is not supported (only hidden_size / num_attention_heads = "
               "8)";
        QTest::newRow("deberta token types")
            << "deberta-v2-tiny" << QJsonObject{{"type_vocab_size", -1}}
            << "type_vocab_size must be an integer >= 0, got -1";
        QTest::newRow("deberta position type")
            << "deberta-v2-tiny" << QJsonObject{{"position_embedding_type", "relative_key"}}
            << "position_embedding_type \"relative_key\" is not supported (only \"absolute\")";
        QTest::newRow("modernbert head activation")
            << "modernbert-tiny-mlm" << QJsonObject{{"classifier_activation", "mish"}}
            << "classifier_activation (the masked-LM head's) \"mish\" is not supported";
    }
    void refusals() {
        QFETCH(QString, model);
        QFETCH(QJsonObject, fields);
        QFETCH(QString, expected);
        ModelCopy m(model);
        m.editConfig([&](QJsonObject& c) {
            for (auto it = fields.begin(); it != fields.end(); ++it)
                c[it.key()] = it.value();
        });
        const QByteArray expectedText = expected.toUtf8();
        QVERIFY_MESSAGE(openError(m.dir), "config.json: ", expectedText.constData());
    }

    // A padded query whose window holds only padding sees no key: refused, naming it.
    void windowLeavesAPaddedQueryNoKey() {
        model::RunOptions options;
        options.attentionMask = {1, 1, 1, 1, 0, 0, 0};
        QVERIFY_MESSAGE(
            runError(goldenModelDir("mistral-tiny-window"), {7, 41, 3, 59, 22, 15, 36}, options),
            "attention mask: query position 6 sees no key inside its sliding window", "W = 3");
        options.attentionMask = {1, 1, 1, 1, 1, 0, 0};
        QCOMPARE(
            runError(goldenModelDir("mistral-tiny-window"), {7, 41, 3, 59, 22, 15, 36}, options),
            QString());
    }

    // ModernBERT's local layers see |i − j| <= local_attention / 2 either way: a padded query
    // with only padding that near is refused, naming the layer.
    void encoderWindowLeavesAPaddedQueryNoKey() {
        model::RunOptions options;
        options.attentionMask = {1, 1, 1, 1, 0, 0, 0};
        QVERIFY_MESSAGE(
            runError(goldenModelDir("modernbert-tiny"), {7, 41, 3, 59, 22, 15, 36}, options),
            "attention mask: query position 6 sees no key inside its sliding window (layer 1",
            "|query − key| <= 2");
        options.attentionMask = {1, 1, 1, 1, 1, 0, 0};
        QCOMPARE(runError(goldenModelDir("modernbert-tiny"), {7, 41, 3, 59, 22, 15, 36}, options),
                 QString());
    }

    // ModernBERT's layer kinds, windows and RoPE bases as the reference reads them, in both
    // transformers' spellings.
    void modernbertLayers() {
        using LayerRotary = model::Config::LayerRotary;
        const model::Config c = configOf("modernbert-tiny");
        QCOMPARE(c.slidingWindows, (std::vector<int>{0, 3, 0}));
        QCOMPARE(c.layerRotary, (std::vector<LayerRotary>{LayerRotary::Global, LayerRotary::Local,
                                                          LayerRotary::Global}));
        QCOMPARE(c.rope.theta, 160000.0);
        QCOMPARE(c.localRope.theta, 10000.0);
        QCOMPARE(c.architecture().norm, model::NormType::LayerNormNoBias);
        QCOMPARE(configOf("modernbert-tiny-mlm").architecture().norm, model::NormType::LayerNorm);
        ModelCopy v5("modernbert-tiny");
        v5.editConfig([](QJsonObject& o) {
            o.remove("global_attn_every_n_layers");
            o.remove("global_rope_theta");
            o["local_rope_theta"] = QJsonValue::Null;
            o["layer_types"] = QJsonArray{"sliding_attention", "full_attention", "full_attention"};
            o["rope_parameters"] =
                QJsonObject{{"full_attention", QJsonObject{{"rope_theta", 5000.0}}},
                            {"sliding_attention", QJsonObject{{"rope_type", "default"}}}};
        });
        const io::ModelFolder folder(v5.dir);
        const model::Config read = folder.model().config;
        QCOMPARE(read.slidingWindows, (std::vector<int>{3, 0, 0}));
        QCOMPARE(read.rope.theta, 5000.0);
        QCOMPARE(read.localRope.theta, 160000.0);  // null: the global θ before rope_parameters
    }

    // gelu_fast is a newer decoder's activation only, as in the reference.
    void fastGeluOnlyWhereTheReferenceTakesIt() {
        ModelCopy neox("pythia-tiny");
        neox.editConfig([](QJsonObject& c) { c["hidden_act"] = "gelu_fast"; });
        QCOMPARE(openError(neox.dir), QString());
        ModelCopy llama("llama-tiny-gqa");
        llama.editConfig([](QJsonObject& c) { c["hidden_act"] = "gelu_fast"; });
        QVERIFY_MESSAGE(openError(llama.dir), "hidden_act \"gelu_fast\" is not supported");
    }
};

QTEST_GUILESS_MAIN(TestDecoderConfigs)
#include "test_decoder_configs.moc"
