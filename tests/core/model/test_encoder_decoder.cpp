// Encoder–decoder models against the reference: the seq2seq golden models
// (tests/data/seq2seq-models: t5, flan-t5, bart and marian, made by
// shared/reference/model_reference.py with seq2seq_families.py in float64) run in double match
// every field of their expected results to 1e-4 relative, as the reference's --check measures;
// greedy decoding takes the reference's argmax at every step; and what the reference refuses is
// refused, naming what.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "core/attention_engine.h"
#include "core/model/model.h"
#include "core/model/model_analysis.h"
#include "core/model/model_layer_scene.h"
#include "core/model/what_if.h"
#include "core/model/workbench.h"
#include "io/model/model_folder.h"
#include "io/scene/scene_file.h"
#include "io/tokenizer/tokenizer.h"
#include "support/model_checks.h"
#include "support/model_copy.h"

using namespace ae;
using namespace ae::testing;

namespace {

constexpr double kTolerance = 1e-4;  // model_reference.py's

const QStringList kModels = {"bart-tiny", "flan-t5-tiny", "marian-tiny", "t5-tiny"};

void addCaseRows(const QString& pattern) {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("file");
    for (const QString& name : kModels)
        for (const QString& file : QDir(seq2seqDir(name)).entryList({pattern}, QDir::Files))
            QTest::newRow(qPrintable(name + "/" + file)) << name << file;
}

template <typename Scalar>
model::EncoderDecoderRun<Scalar> runCase(const io::ModelFolder& folder,
                                         const QJsonObject& expected) {
    model::RunOptions options;
    options.attentionMask = maskOf(expected);
    return model::runEncoderDecoder<Scalar>(
        folder.model(), jsonIds(expected.value("tokens").toArray()),
        jsonIds(expected.value("decoder_tokens").toArray()), options);
}

std::vector<std::string> labelsOf(const std::vector<long long>& ids) {
    std::vector<std::string> labels;
    for (long long id : ids)
        labels.push_back(std::to_string(id));
    return labels;
}

// A scene through the file and the one-layer engine in double, against the reference's heads.
void compareScene(const Scene& written, const QJsonArray& heads, const QString& where,
                  Difference& d) {
    const Scene scene = io::parseScene(io::sceneToJson(written));
    AttentionEngine<double> engine(scene);
    engine.compute();
    if (heads.size() != engine.heads()) {
        d.worst = INFINITY;
        d.where = where + ": head count";
        return;
    }
    for (int h = 0; h < heads.size(); ++h) {
        const QJsonObject head = heads[h].toObject();
        const QString p = where + QStringLiteral("[%1].").arg(h);
        compareMatrix(head.value("q"), engine.stageMatrix(Stage::Query, h), p + "q", d);
        compareMatrix(head.value("k"), engine.stageMatrix(Stage::Key, h), p + "k", d);
        compareMatrix(head.value("v"), engine.stageMatrix(Stage::Value, h), p + "v", d);
        compareMatrix(head.value("scores"), engine.stageMatrix(Stage::Scores, h), p + "scores", d);
        compareMatrix(head.value("weights"), engine.stageMatrix(Stage::Weights, h), p + "weights",
                      d);
    }
}

QString encoderDecoderError(const QString& dir, const std::vector<long long>& ids,
                            const std::vector<long long>& decoderIds,
                            const model::RunOptions& options = {}) {
    try {
        const io::ModelFolder folder(dir);
        model::runEncoderDecoder<double>(folder.model(), ids, decoderIds, options);
    } catch (const model::ModelError& e) {
        return QString::fromUtf8(e.what());
    }
    return {};
}

}  // namespace

class TestEncoderDecoder : public QObject {
    Q_OBJECT

private slots:
    void matchesReferenceInDouble_data() { addCaseRows("expected-ids-*.json"); }
    void matchesReferenceInDouble() {
        QFETCH(QString, name);
        QFETCH(QString, file);
        const QJsonObject expected = readJsonFile(seq2seqDir(name) + "/" + file);
        QVERIFY(!expected.isEmpty());
        const io::ModelFolder folder(seq2seqDir(name));
        const auto run = runCase<double>(folder, expected);
        const Difference d = compareEncoderDecoder(run, expected);
        qInfo("%s %s: worst relative error %.3g at %s", qPrintable(name), qPrintable(file), d.worst,
              qPrintable(d.where));
        QVERIFY2(d.worst <= kTolerance, qPrintable(d.where));
        // In double the agreement is far closer than the tolerance: a wrong step (a missing
        // rescale, a scale, the other sinusoid layout) moves numbers by far more.
        QVERIFY2(d.worst < 1e-9, qPrintable(d.where));
    }

    void floatCloseToReference_data() { addCaseRows("expected-ids-*.json"); }
    void floatCloseToReference() {
        QFETCH(QString, name);
        QFETCH(QString, file);
        const QJsonObject expected = readJsonFile(seq2seqDir(name) + "/" + file);
        const io::ModelFolder folder(seq2seqDir(name));
        const Difference d = compareEncoderDecoder(runCase<float>(folder, expected), expected);
        QVERIFY2(d.worst <= kTolerance, qPrintable(d.where));
        QVERIFY(d.worst > 0);  // it really ran in float
    }

    // Every encoder layer, decoder layer and cross-attention of every golden, written as a scene
    // (a cross scene for the cross-attention: the decoder's queries, the encoder's output as the
    // source), saved, read back and computed by the one-layer engine, reproduces the reference's
    // q, k, v, scores and weights.
    void everyLayerRoundTripsThroughAScene_data() { addCaseRows("expected-ids-*.json"); }
    void everyLayerRoundTripsThroughAScene() {
        QFETCH(QString, name);
        QFETCH(QString, file);
        const QJsonObject expected = readJsonFile(seq2seqDir(name) + "/" + file);
        const io::ModelFolder folder(seq2seqDir(name));
        const model::Model& m = folder.model();
        const auto run = runCase<double>(folder, expected);
        const auto source = labelsOf(run.encoder.tokens), target = labelsOf(run.decoder.tokens);
        Difference d;
        const QJsonArray encoderLayers = expected.value("encoder_layers").toArray();
        for (int l = 0; l < encoderLayers.size(); ++l) {
            const Scene scene = model::layerScene(m, run.encoder, l, source);
            QVERIFY(!scene.mask.causal);
            compareScene(scene, encoderLayers[l].toObject().value("heads").toArray(),
                         QStringLiteral("encoder_layers[%1].heads").arg(l), d);
        }
        const QJsonArray decoderLayers = expected.value("decoder_layers").toArray();
        for (int l = 0; l < decoderLayers.size(); ++l) {
            const QJsonObject layer = decoderLayers[l].toObject();
            const Scene self = model::layerScene(*m.decoder, run.decoder, l, target);
            QVERIFY(self.mask.causal);
            compareScene(self, layer.value("heads").toArray(),
                         QStringLiteral("decoder_layers[%1].heads").arg(l), d);
            const Scene cross =
                model::crossLayerScene(*m.decoder, run.decoder, run.encoder, l, target, source);
            QVERIFY(cross.hasSource);
            QCOMPARE(cross.keyCount(), static_cast<int>(source.size()));
            compareScene(cross, layer.value("cross_heads").toArray(),
                         QStringLiteral("decoder_layers[%1].cross_heads").arg(l), d);
        }
        qInfo("%s %s: worst relative error %.3g at %s", qPrintable(name), qPrintable(file), d.worst,
              qPrintable(d.where));
        QVERIFY2(d.worst <= 1e-10, qPrintable(d.where));
        // An encoder stack has no cross-attention to write.
        try {
            model::crossLayerScene(m, run.encoder, run.encoder, 0, source, source);
            QFAIL("an encoder layer was written as a cross scene");
        } catch (const model::ModelError& e) {
            QVERIFY(QString(e.what()).contains("no cross-attention"));
        }
    }

    // The cross-attention reads the encoder: its keys and values are the encoder output's
    // projections, padding keys weigh exactly 0 in every cross row, and the decoder's own rows
    // see no later key.
    void crossAttentionReadsTheEncoder() {
        const QJsonObject expected = readJsonFile(seq2seqDir("bart-tiny") + "/expected-ids-B.json");
        const io::ModelFolder folder(seq2seqDir("bart-tiny"));
        const auto run = runCase<double>(folder, expected);
        const auto T = static_cast<Eigen::Index>(run.encoder.tokens.size());
        const auto S = static_cast<Eigen::Index>(run.decoder.tokens.size());
        for (const auto& layer : run.decoder.layers) {
            QCOMPARE(layer.cross.key.rows(), T);
            QCOMPARE(layer.cross.query.rows(), S);
            for (const auto& w : layer.cross.weights) {
                QCOMPARE(w.rows(), S);
                QCOMPARE(w.cols(), T);
                for (Eigen::Index i = 0; i < S; ++i) {
                    QVERIFY(std::fabs(w.row(i).sum() - 1.0) < 1e-12);
                    QCOMPARE(w(i, T - 1), 0.0);  // padding
                    QCOMPARE(w(i, T - 2), 0.0);
                    QVERIFY(w(i, 0) > 0);
                }
            }
            for (const auto& w : layer.weights)
                for (Eigen::Index i = 0; i < S; ++i)
                    for (Eigen::Index j = i + 1; j < S; ++j)
                        QCOMPARE(w(i, j), 0.0);
        }
        // A source token changed changes every cross-attention's keys and the logits; the
        // decoder's layer-0 self-attention, which sees no source, stays the same.
        model::RunOptions options;
        options.attentionMask = maskOf(expected);
        std::vector<long long> ids = run.encoder.tokens;
        ids[1] = ids[1] == 5 ? 6 : 5;
        const auto other =
            model::runEncoderDecoder<double>(folder.model(), ids, run.decoder.tokens, options);
        QCOMPARE(other.decoder.layers[0].weights[0], run.decoder.layers[0].weights[0]);
        QVERIFY((other.decoder.layers[0].cross.key - run.decoder.layers[0].cross.key)
                    .cwiseAbs()
                    .maxCoeff() > 1e-6);
        QVERIFY((other.decoder.logits - run.decoder.logits).cwiseAbs().maxCoeff() > 1e-6);
    }

    // T5's one bias table per stack: bidirectional in the encoder, causal in the decoder (a later
    // key gets bucket 0), reused by every layer.
    void t5BiasPerStack() {
        const io::ModelFolder folder(seq2seqDir("t5-tiny"));
        const auto run =
            model::runEncoderDecoder<double>(folder.model(), {7, 41, 3, 59}, {0, 12, 5});
        QCOMPARE(run.encoder.positionBias.size(), std::size_t(2));
        QCOMPARE(run.decoder.positionBias.size(), std::size_t(2));
        const auto& encoderBias = run.encoder.positionBias[0];
        const auto& decoderBias = run.decoder.positionBias[0];
        // Encoder: keys before and after the query sit in different halves of the buckets.
        QVERIFY(encoderBias(1, 0) != encoderBias(1, 2));
        // Decoder: every later key reads bucket 0, the same as the query's own position.
        QCOMPARE(decoderBias(0, 1), decoderBias(0, 0));
        QCOMPARE(decoderBias(0, 2), decoderBias(1, 1));
        QVERIFY(decoderBias(1, 0) != decoderBias(1, 1));
        QVERIFY(folder.model().decoder->config.logitScale < 1.0);  // t5: tied and rescaled
    }

    // Greedy decoding takes, at every step, the argmax of the reference's logits on the ids so
    // far, and stops at eos_token_id (flan-t5-tiny's first choice) or after max_new_tokens.
    void generationFollowsTheReference_data() { addCaseRows("expected-generate-*.json"); }
    void generationFollowsTheReference() {
        QFETCH(QString, name);
        QFETCH(QString, file);
        const QJsonObject expected = readJsonFile(seq2seqDir(name) + "/" + file);
        const io::ModelFolder folder(seq2seqDir(name));
        model::RunOptions options;
        options.attentionMask = maskOf(expected);
        const std::vector<long long> ids = jsonIds(expected.value("tokens").toArray());
        const std::vector<long long> want = jsonIds(expected.value("decoder_tokens").toArray());
        const int steps = expected.value("max_new_tokens").toInt();
        std::vector<std::vector<long long>> seen;
        const std::vector<long long> got = model::generateGreedy<double>(
            folder.model(), ids, steps, options, [&](const std::vector<long long>& so) {
                seen.push_back(so);
                return true;
            });
        QCOMPARE(got, want);
        QCOMPARE(seen.size(), want.size() - 1);  // told after each token
        QCOMPARE(got.front(), folder.model().config.decoderStartToken);
        // Each step's choice is the argmax of the teacher-forced run's row on the ids before it.
        const auto run = model::runEncoderDecoder<double>(folder.model(), ids, got, options);
        for (std::size_t t = 0; t + 1 < got.size(); ++t) {
            Eigen::Index best = 0;
            run.decoder.logits.row(static_cast<Eigen::Index>(t)).maxCoeff(&best);
            QCOMPARE(static_cast<long long>(best), got[t + 1]);
        }
        // Cancelled after two tokens: the ids so far.
        const std::vector<long long> stopped = model::generateGreedy<double>(
            folder.model(), ids, steps, options,
            [](const std::vector<long long>& so) { return so.size() < 3; });
        QCOMPARE(stopped.size(), std::min<std::size_t>(3, want.size()));
    }

    // A what-if in any of the three kinds of attention flows forward: an unedited scene gives the
    // run back, and a scene whose W_V and its bias are doubled gives what the model does with
    // that tensor doubled in its file (the encoder's: through every cross-attention).
    void whatIfsFlowForward_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("kind");
        QTest::addColumn<int>("layer");
        for (const QString& name : {QStringLiteral("t5-tiny"), QStringLiteral("bart-tiny"),
                                    QStringLiteral("marian-tiny")})
            for (int kind = 0; kind < 3; ++kind)
                for (int layer = 0; layer < 2; ++layer)
                    QTest::newRow(
                        qPrintable(QStringLiteral("%1 %2 layer %3")
                                       .arg(name, QStringList{"encoder", "decoder", "cross"}[kind])
                                       .arg(layer)))
                        << name << kind << layer;
    }
    void whatIfsFlowForward() {
        QFETCH(QString, name);
        QFETCH(int, kind);
        QFETCH(int, layer);
        const auto attention = static_cast<model::AttentionKind>(kind);
        const QJsonObject expected = readJsonFile(seq2seqDir(name) + "/expected-ids-B.json");
        const io::ModelFolder folder(seq2seqDir(name));
        const model::Model& m = folder.model();
        model::RunOptions options;
        options.attentionMask = maskOf(expected);
        const auto base = runCase<double>(folder, expected);
        const auto source = labelsOf(base.encoder.tokens), target = labelsOf(base.decoder.tokens);
        const auto sceneOf = [&] {
            switch (attention) {
                case model::AttentionKind::EncoderSelf:
                    return model::layerScene(m, base.encoder, layer, source);
                case model::AttentionKind::DecoderSelf:
                    return model::layerScene(*m.decoder, base.decoder, layer, target);
                case model::AttentionKind::Cross:
                    break;
            }
            return model::crossLayerScene(*m.decoder, base.decoder, base.encoder, layer, target,
                                          source);
        };
        const auto resumed = [&](const Scene& scene) {
            AttentionEngine<double> engine(scene);
            engine.compute();
            model::EditedLayer<double> edited =
                model::editedLayer(scene, engine, layer, scene.keyValueHeads());
            return model::resumeEncoderDecoder<double>(
                m, base, attention, layer, std::move(edited.record), edited.attentionOut, options);
        };
        Scene scene = sceneOf();
        if (attention == model::AttentionKind::Cross)
            QVERIFY(model::crossWhatIfShapeProblem(scene, m.decoder->config,
                                                   static_cast<int>(target.size()),
                                                   static_cast<int>(source.size()))
                        .empty());
        if (attention == model::AttentionKind::Cross) {
            const int S = static_cast<int>(target.size()), T = static_cast<int>(source.size());
            QVERIFY(QString::fromStdString(
                        model::crossWhatIfShapeProblem(scene, m.decoder->config, S + 1, T))
                        .contains("target tokens, the decoder input"));
            QVERIFY(QString::fromStdString(
                        model::crossWhatIfShapeProblem(scene, m.decoder->config, S, T - 1))
                        .contains("source tokens, the source"));
            QVERIFY(QString::fromStdString(model::whatIfShapeProblem(scene, m.decoder->config, S))
                        .contains("has a source"));
            const Scene self = model::layerScene(*m.decoder, base.decoder, layer, target);
            QVERIFY(QString::fromStdString(
                        model::crossWhatIfShapeProblem(self, m.decoder->config, S, T))
                        .contains("no source"));
        }
        const auto same = resumed(scene);
        QVERIFY(same.decoder.whatIf);
        QVERIFY(worstRelative(same.decoder.logits, base.decoder.logits) < 1e-12);
        QVERIFY(worstRelative(same.encoder.lastHidden, base.encoder.lastHidden) < 1e-12);

        scene.projections.value *= 2.0;
        scene.projections.valueBias *= 2.0;
        const auto edited = resumed(scene);
        // The same tensor doubled in the file (float32 times 2 is exact).
        const bool t5 = name.startsWith(QLatin1String("t5"));
        const QString stack =
            attention == model::AttentionKind::EncoderSelf ? "encoder" : "decoder";
        const QString prefix =
            t5 ? QStringLiteral("%1.block.%2.layer.%3.")
                         .arg(stack)
                         .arg(layer)
                         .arg(attention == model::AttentionKind::Cross ? 1 : 0) +
                     (attention == model::AttentionKind::Cross ? "EncDecAttention.v."
                                                               : "SelfAttention.v.")
               : QStringLiteral("model.%1.layers.%2.").arg(stack).arg(layer) +
                     (attention == model::AttentionKind::Cross ? "encoder_attn.v_proj."
                                                               : "self_attn.v_proj.");
        const ModelCopy copy(seq2seqDir(name));
        int doubled = 0;
        copy.editTensors([&](std::vector<TestTensor>& tensors) {
            for (TestTensor& t : tensors) {
                if (!t.name.startsWith(prefix)) continue;
                auto* values = reinterpret_cast<float*>(t.bytes.data());
                for (qsizetype i = 0; i < t.bytes.size() / 4; ++i)
                    values[i] *= 2.0f;
                ++doubled;
            }
        });
        QCOMPARE(doubled, t5 ? 1 : 2);
        const io::ModelFolder editedFolder(copy.dir);
        const auto truth = model::runEncoderDecoder<double>(
            editedFolder.model(), base.encoder.tokens, base.decoder.tokens, options);
        const double worst = worstRelative(edited.decoder.logits, truth.decoder.logits);
        qInfo("%s: the flowed what-if against the edited model: %.3g", qPrintable(name), worst);
        QVERIFY2(worst < 1e-10, qPrintable(QString::number(worst)));
        QVERIFY(worstRelative(edited.encoder.lastHidden, truth.encoder.lastHidden) < 1e-10);
        for (std::size_t l = 0; l < truth.decoder.layers.size(); ++l)
            for (std::size_t h = 0; h < truth.decoder.layers[l].cross.weights.size(); ++h)
                QVERIFY(worstRelative(edited.decoder.layers[l].cross.weights[h],
                                      truth.decoder.layers[l].cross.weights[h]) < 1e-10);
        QVERIFY(worstRelative(edited.decoder.logits, base.decoder.logits) > 1e-6);
    }

    // tiny-translate, trained to put adjectives after their nouns, translates a sentence it did
    // not see in training, and its cross-attention is the alignment: from each output word,
    // layer 0 head 0 looks most at the source word it translates, crossing at the swaps; the
    // mean over a layer's heads and over every layer are averages of such rows.
    void trainedModelTranslatesAndAligns() {
        const QString dir = tinyTranslateDir();
        const io::ModelFolder folder(dir);
        const io::Tokenizer tokenizer = io::Tokenizer::load(dir);
        std::vector<long long> source;
        for (int id : tokenizer.encode("the red cat sees a big dog"))
            source.push_back(id);
        for (const bool inDouble : {true, false}) {
            const std::vector<long long> out =
                inDouble ? model::generateGreedy<double>(folder.model(), source, 20)
                         : model::generateGreedy<float>(folder.model(), source, 20);
            const std::vector<int> produced(out.begin() + 1, out.end());
            QCOMPARE(tokenizer.decode(produced),
                     QStringLiteral("le chat rouge voit un chien grand</s>"));
        }
        std::vector<long long> target{folder.model().config.decoderStartToken};
        for (int id : tokenizer.encode("le chat rouge voit un chien grand", false))
            target.push_back(id);
        const auto run = model::runEncoderDecoder<double>(folder.model(), source, target);
        const Eigen::MatrixXd head = model::crossAttentionAlignment(run.decoder, 0, 0);
        // Row i produces output word i: le chat rouge voit un chien grand, read from
        // the(0) cat(2) red(1) sees(3) a(4) dog(6) big(5).
        const std::vector<Eigen::Index> aligned{0, 2, 1, 3, 4, 6, 5};
        for (std::size_t i = 0; i < aligned.size(); ++i) {
            Eigen::Index best = 0;
            head.row(static_cast<Eigen::Index>(i)).maxCoeff(&best);
            QCOMPARE(best, aligned[i]);
            QVERIFY(head(static_cast<Eigen::Index>(i), best) > 0.6);
        }
        const Eigen::MatrixXd layerMean = model::crossAttentionAlignment(run.decoder, 1);
        const Eigen::MatrixXd everyLayer = model::crossAttentionAlignment(run.decoder);
        Eigen::MatrixXd byHand = Eigen::MatrixXd::Zero(head.rows(), head.cols());
        for (int h = 0; h < 4; ++h)
            byHand += run.decoder.layers[1].cross.weights[static_cast<std::size_t>(h)] / 4.0;
        QVERIFY((layerMean - byHand).cwiseAbs().maxCoeff() < 1e-15);
        for (Eigen::Index i = 0; i < everyLayer.rows(); ++i)
            QVERIFY(std::fabs(everyLayer.row(i).sum() - 1.0) < 1e-12);
        QVERIFY((everyLayer - layerMean).cwiseAbs().maxCoeff() > 1e-3);
        for (const auto& [layer, h] : {std::pair{2, -1}, std::pair{-1, 0}, std::pair{0, 4}}) {
            try {
                model::crossAttentionAlignment(run.decoder, layer, h);
                QFAIL("an alignment outside the run was drawn");
            } catch (const model::ModelError&) {
            }
        }
    }

    // The cross-attention heads' scores, against the same means taken by hand: entropy, the
    // weight on the source's first token and on its </s>, and the first token's share of what
    // the head moves (α_ij·‖v_j·W_O^h‖); the scores that compare positions in one sequence are
    // NaN.
    void crossHeadScores() {
        const QJsonObject expected = readJsonFile(seq2seqDir("bart-tiny") + "/expected-ids-B.json");
        const io::ModelFolder folder(seq2seqDir("bart-tiny"));
        const model::Model& m = folder.model();
        const auto run = runCase<double>(folder, expected);
        const std::vector<int> separators{4};
        const auto heads = model::summarizeCrossHeads(*m.decoder, run.decoder, separators);
        QCOMPARE(heads.size(), std::size_t(4));
        const model::Config& c = m.decoder->config;
        const MatrixD outputRows = [&] {
            const model::TensorRef& o = m.decoder->weights.layers[1].crossOutput;
            MatrixD stored(o.rows, o.cols);
            convertElements(o.data, o.dtype, 0, o.count(), stored.data());
            return MatrixD(stored.transpose());
        }();
        const model::HeadSummary& s = heads[3];  // layer 1, head 1
        QCOMPARE(s.layer, 1);
        QCOMPARE(s.head, 1);
        const MatrixD& w = run.decoder.layers[1].cross.weights[1];
        const Eigen::Index S = w.rows(), T = w.cols(), hd = c.headDim;
        double entropy = 0, first = 0, separator = 0, sink = 0;
        for (Eigen::Index i = 0; i < S; ++i) {
            double moved = 0;
            std::vector<double> f(static_cast<std::size_t>(T));
            for (Eigen::Index j = 0; j < T; ++j) {
                if (w(i, j) > 0) entropy -= w(i, j) * std::log(w(i, j));
                const Eigen::RowVectorXd v =
                    run.decoder.layers[1].cross.value.row(j).segment(hd, hd);
                f[static_cast<std::size_t>(j)] = (v * outputRows.middleRows(hd, hd)).norm();
                moved += w(i, j) * f[static_cast<std::size_t>(j)];
            }
            first += w(i, 0);
            separator += w(i, 4);
            sink += w(i, 0) * f[0] / moved;
        }
        QVERIFY(std::fabs(s.entropy - entropy / S) < 1e-12);
        QVERIFY(std::fabs(s.firstToken - first / S) < 1e-12);
        QVERIFY(std::fabs(s.toSeparator - separator / S) < 1e-12);
        QVERIFY(std::fabs(s.sinkNorm - sink / S) < 1e-12);
        QVERIFY(std::isnan(s.previousToken) && std::isnan(s.self) && std::isnan(s.induction));
        try {
            model::summarizeCrossHeads(m, run.encoder, separators);
            QFAIL("an encoder run's cross heads were summarized");
        } catch (const model::ModelError&) {
        }
    }

    // BART and Marian cannot number more decoder positions than their tables hold: generation
    // stops there, and a longer teacher-forced input is refused.
    void generationStopsAtThePositionTable() {
        const io::ModelFolder folder(seq2seqDir("marian-tiny"));
        const std::vector<long long> ids =
            model::generateGreedy<double>(folder.model(), {7, 41, 3}, 40);
        QVERIFY(ids.size() <= 16);
        QVERIFY(ids.size() == 16 || ids.back() == folder.model().config.eosToken);
    }

    // Each refusal of seq2seq_families.py, in its words.
    void refusesInputs() {
        const QString bart = seq2seqDir("bart-tiny");
        QVERIFY_MESSAGE(encoderDecoderError(bart, {7, 41}, {}),
                        "decoder ids: bart is an encoder-decoder model: give the decoder input "
                        "(--decoder-ids), starting with decoder_start_token_id (teacher forcing)");
        try {
            const io::ModelFolder folder(bart);
            model::runModel<double>(folder.model(), {7, 41});
            QFAIL("runModel ran an encoder-decoder model");
        } catch (const model::ModelError& e) {
            QVERIFY2(QString(e.what()).contains("bart is an encoder-decoder model: it runs with "
                                                "its decoder input too"),
                     e.what());
        }
        model::RunOptions types;
        types.tokenTypes = {0, 1};
        QVERIFY_MESSAGE(encoderDecoderError(bart, {7, 41}, {2, 5}, types),
                        "token types: bart has no token-type embeddings (its model takes no "
                        "token_type_ids)");
        model::RunOptions offset;
        offset.positionOffset = 2;
        QVERIFY_MESSAGE(encoderDecoderError(bart, {7, 41}, {2, 5}, offset),
                        "position offset: bart numbers the positions of both stacks from 0");
        model::RunOptions padding;
        padding.attentionMask = {0, 0};
        QVERIFY_MESSAGE(encoderDecoderError(bart, {7, 41}, {2, 5}, padding),
                        "attention mask: every encoder token is padding, so no query sees a key");
        QVERIFY_MESSAGE(encoderDecoderError(bart, {7, 64}, {2, 5}),
                        "token ids[1]: 64 is not in [0, 64)");
        QVERIFY_MESSAGE(encoderDecoderError(bart, {7, 41}, {2, 99}),
                        "decoder ids[1]: 99 is not in [0, 64)");
        const std::vector<long long> seventeen(17, 5);
        QVERIFY_MESSAGE(encoderDecoderError(bart, seventeen, {2, 5}),
                        "token ids: 17 tokens exceed the model's 16 learned positions "
                        "(max_position_embeddings)");
        QVERIFY_MESSAGE(encoderDecoderError(seq2seqDir("marian-tiny"), {7}, seventeen),
                        "decoder ids: 17 tokens exceed the model's 16 learned positions");
        QVERIFY(encoderDecoderError(bart, std::vector<long long>(16, 5), {2, 5}).isEmpty());
        QVERIFY_MESSAGE(encoderDecoderError(goldenModelDir("gpt2-tiny"), {7, 41}, {2, 5}),
                        "decoder ids: gpt2 is not an encoder-decoder model");
    }

    void refusesConfigs_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("field");
        QTest::addColumn<QJsonValue>("value");
        QTest::addColumn<QString>("message");
        QTest::newRow("buckets") << "t5-tiny"
                                 << "relative_attention_num_buckets" << QJsonValue(3)
                                 << "relative_attention_num_buckets 3 is not supported";
        QTest::newRow("distance") << "t5-tiny"
                                  << "relative_attention_max_distance" << QJsonValue(4)
                                  << "relative_attention_max_distance 4 is not supported: it must "
                                     "exceed relative_attention_num_buckets // 2 = 4";
        QTest::newRow("feed-forward") << "t5-tiny"
                                      << "feed_forward_proj" << QJsonValue("gelu-relu")
                                      << "feed_forward_proj \"gelu-relu\" is not supported";
        QTest::newRow("activation") << "flan-t5-tiny"
                                    << "dense_act_fn" << QJsonValue("tanh")
                                    << "feed_forward_proj / dense_act_fn \"tanh\" is not supported";
        QTest::newRow("null activation")
            << "flan-t5-tiny"
            << "dense_act_fn" << QJsonValue() << "dense_act_fn null is not supported";
        QTest::newRow("null tie") << "t5-tiny"
                                  << "tie_word_embeddings" << QJsonValue()
                                  << "tie_word_embeddings null is not supported (transformers 4 "
                                     "reads it as false, 5 as true)";
        QTest::newRow("null rescale") << "t5-tiny"
                                      << "scale_decoder_outputs" << QJsonValue()
                                      << "scale_decoder_outputs null is not supported";
        QTest::newRow("heads") << "bart-tiny"
                               << "decoder_attention_heads" << QJsonValue(3)
                               << "d_model 8 is not a multiple of decoder_attention_heads 3";
        QTest::newRow("bart activation")
            << "bart-tiny"
            << "activation_function" << QJsonValue("mish") << "activation_function \"mish\"";
        QTest::newRow("marian vocab") << "marian-tiny"
                                      << "share_encoder_decoder_embeddings" << QJsonValue(false)
                                      << "decoder_vocab_size 65 != vocab_size 64";
    }
    void refusesConfigs() {
        QFETCH(QString, name);
        QFETCH(QString, field);
        QFETCH(QJsonValue, value);
        QFETCH(QString, message);
        const ModelCopy copy(seq2seqDir(name));
        copy.editConfig([&](QJsonObject& config) {
            config[field] = value;
            // Marian without shared tables, with a decoder vocabulary of its own size.
            if (field == "share_encoder_decoder_embeddings") config["decoder_vocab_size"] = 65;
        });
        const QString error = openError(copy.dir);
        QVERIFY2(error.contains(message), qPrintable(error));
    }

    // Tied copies of one parameter must agree; an untied head must be stored.
    void refusesWeights() {
        {
            const ModelCopy copy(seq2seqDir("flan-t5-tiny"));  // stores encoder.embed_tokens
            copy.editTensors([](std::vector<TestTensor>& tensors) {
                for (TestTensor& t : tensors)
                    if (t.name == "encoder.embed_tokens.weight") t.bytes[0] = char(t.bytes[0] ^ 1);
            });
            QVERIFY_MESSAGE(openError(copy.dir),
                            "encoder.embed_tokens.weight differs from shared.weight: transformers "
                            "holds the three names as one parameter");
        }
        {
            const ModelCopy copy(seq2seqDir("flan-t5-tiny"));  // untied: lm_head.weight needed
            copy.editTensors([](std::vector<TestTensor>& tensors) {
                tensors.erase(
                    std::remove_if(tensors.begin(), tensors.end(),
                                   [](const TestTensor& t) { return t.name == "lm_head.weight"; }),
                    tensors.end());
            });
            QVERIFY_MESSAGE(openError(copy.dir),
                            "missing tensor lm_head.weight (expected [64, 8]): "
                            "tie_word_embeddings is false");
        }
        {
            // bart: a stored lm_head.weight beside a tied head must equal the table.
            const ModelCopy copy(seq2seqDir("bart-tiny"));
            copy.editTensors([](std::vector<TestTensor>& tensors) {
                for (const TestTensor& t : std::vector<TestTensor>(tensors))
                    if (t.name == "model.shared.weight") {
                        TestTensor head = t;
                        head.name = "lm_head.weight";
                        head.bytes[3] = char(head.bytes[3] ^ 4);
                        tensors.push_back(head);
                    }
            });
            QVERIFY_MESSAGE(openError(copy.dir),
                            "lm_head.weight differs from model.shared.weight although "
                            "tie_word_embeddings is true");
        }
        {
            // A transformers 5 config: its stored head is read even when tied.
            const ModelCopy copy(seq2seqDir("flan-t5-tiny"));
            copy.editConfig([](QJsonObject& config) {
                config["tie_word_embeddings"] = true;
                config["scale_decoder_outputs"] = false;
            });
            const io::ModelFolder folder(copy.dir);
            QCOMPARE(QString::fromStdString(folder.model().decoder->weights.lmHead.name),
                     QStringLiteral("lm_head.weight"));
            QCOMPARE(folder.model().decoder->config.logitScale, 1.0);
        }
    }
};

QTEST_APPLESS_MAIN(TestEncoderDecoder)
#include "test_encoder_decoder.moc"
