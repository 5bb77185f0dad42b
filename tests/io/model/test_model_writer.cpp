// Writing model folders (io/model/model_writer.h, io/formats/safetensors_writer.h): a model trained
// by core/training/model_training.h, saved and opened again through io/model/model_folder.h, runs
// to the logits the trainer computes; config.json reads back as the same Config; the byte tokenizer
// gives a text's bytes as ids; the safetensors writer's layout and refusals.
//
// Tolerances: F64 stores every weight exactly, so the reopened model differs from the trainer's
// own forward pass only by the order of floating-point operations: 1e-12 relative to the largest
// logit. F32 rounds each weight (relative 6e-8), which two layers and the norms carry to about
// 1e-6 of the logits: held to 1e-5, and required to be above 1e-12 (the F32 path really rounds).
#include <QTemporaryDir>
#include <QtTest>

#include "core/training/model_training.h"
#include "io/formats/result_export.h"
#include "io/formats/safetensors.h"
#include "io/formats/safetensors_writer.h"
#include "io/model/model_folder.h"
#include "io/model/model_writer.h"
#include "io/tokenizer/tokenizer.h"

using namespace ae;
using namespace ae::model;

namespace {

ModelTrainingOptions trainedOptions(Family family, bool mlp) {
    ModelTrainingOptions o;
    o.family = model::familyName(family);
    o.layers = 2;
    o.heads = 2;
    o.hidden = 16;
    o.mlp = mlp;
    o.vocab = 128;
    o.length = 12;
    o.task = ModelTask::CopyNext;
    o.seed = 3;
    o.initStd = 0.2;
    o.learningRate = 1e-2;
    return o;
}

double relativeDifference(const MatrixD& a, const MatrixD& b) {
    return (a - b).cwiseAbs().maxCoeff() / a.cwiseAbs().maxCoeff();
}

}  // namespace

class TestModelWriter : public QObject {
    Q_OBJECT
private slots:
    void savedModelRunsAsTrained_data() {
        QTest::addColumn<int>("family");
        QTest::addColumn<bool>("mlp");
        QTest::newRow("gpt2") << static_cast<int>(Family::Gpt2) << false;
        QTest::newRow("gpt2 + mlp") << static_cast<int>(Family::Gpt2) << true;
        QTest::newRow("llama") << static_cast<int>(Family::Llama) << false;
        QTest::newRow("llama + mlp") << static_cast<int>(Family::Llama) << true;
    }
    void savedModelRunsAsTrained() {
        QFETCH(int, family);
        QFETCH(bool, mlp);
        ModelTrainer trainer(trainedOptions(static_cast<Family>(family), mlp));
        for (int s = 0; s < 5; ++s)
            trainer.step();
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString f64 = dir.filePath("f64"), f32 = dir.filePath("f32");
        io::writeModelFolder(f64, trainer.model(), DType::F64);
        io::writeModelFolder(f32, trainer.model(), DType::F32);
        io::writeByteTokenizer(f64, 128);

        const std::vector<long long> ids{'A', 'l', 'i', 'c', 'e', ' ', 'w', 'a', 's'};
        const MatrixD own = trainer.logits(ids);
        const io::ModelFolder reopened(f64);
        const Config& c = reopened.model().config;
        QCOMPARE(static_cast<int>(c.family), family);
        QCOMPARE(c.layers, 2);
        QCOMPARE(c.heads, 2);
        QCOMPARE(c.hidden, 16);
        QCOMPARE(c.intermediate, mlp ? 64 : 1);
        QCOMPARE(c.bosToken, -1LL);
        QCOMPARE(c.tieWordEmbeddings, static_cast<Family>(family) == Family::Gpt2);
        const ModelRun<double> run = runModel<double>(reopened.model(), ids);
        const double f64Difference = relativeDifference(own, run.logits);
        QVERIFY2(f64Difference <= 1e-12, qPrintable(QString::number(f64Difference)));

        const io::ModelFolder rounded(f32);
        const double f32Difference =
            relativeDifference(own, runModel<double>(rounded.model(), ids).logits);
        QVERIFY2(f32Difference <= 1e-5 && f32Difference > 1e-12,
                 qPrintable(QString::number(f32Difference)));

        // The tokenizer's ids are the text's bytes, the ids the model was trained on.
        const io::Tokenizer tokenizer = io::Tokenizer::load(f64);
        const std::vector<int> encoded = tokenizer.encode("Alice was", false);
        QCOMPARE(std::vector<long long>(encoded.begin(), encoded.end()), ids);
        QCOMPARE(tokenizer.idCount(), 128);
    }

    void configReadsBackTheSame() {
        for (Family family : {Family::Gpt2, Family::Llama}) {
            ModelTrainingOptions o = trainedOptions(family, true);
            const Config c = trainingConfig(o);
            const Config back = io::parseModelConfig(io::modelConfigJson(c), "config.json");
            QCOMPARE(static_cast<int>(back.family), static_cast<int>(c.family));
            QCOMPARE(back.hidden, c.hidden);
            QCOMPARE(back.layers, c.layers);
            QCOMPARE(back.heads, c.heads);
            QCOMPARE(back.kvHeads, c.kvHeads);
            QCOMPARE(back.headDim, c.headDim);
            QCOMPARE(back.vocab, c.vocab);
            QCOMPARE(back.intermediate, c.intermediate);
            QCOMPARE(back.positions, c.positions);
            QCOMPARE(static_cast<int>(back.activation), static_cast<int>(c.activation));
            QCOMPARE(back.normEps, c.normEps);
            QCOMPARE(back.tieWordEmbeddings, c.tieWordEmbeddings);
            QCOMPARE(back.rope.theta, c.rope.theta);
            QCOMPARE(back.bosToken, -1LL);
        }
        Config bert;
        bert.family = Family::Bert;
        QVERIFY_THROWS_EXCEPTION(io::WriteError, io::modelConfigJson(bert));
    }

    void safetensorsLayoutAndRoundTrip() {
        QTemporaryDir dir;
        const QString file = dir.filePath("t.safetensors");
        const MatrixD a = (MatrixD(2, 3) << 1.0 / 3, -2, 3e-300, 4, 5, 6).finished();
        const VectorD b = (VectorD(3) << 0.1, 0.2, 0.3).finished();
        io::writeSafetensors(
            file, {{{"a", DType::F64, {2, 3}}, a.data()}, {{"b", DType::F32, {3}}, b.data()}},
            {{"format", "pt"}});
        const io::SafetensorsFile read(file);
        QCOMPARE(read.tensors().size(), std::size_t(2));
        QVERIFY(read.matrix("a") == a);  // F64: exact
        const MatrixD readB = read.matrix("b");
        for (int i = 0; i < 3; ++i)
            QCOMPARE(readB(0, i), static_cast<double>(static_cast<float>(b(i))));
        QCOMPARE(read.metadata().value("format"), QStringLiteral("pt"));
        // The header is padded so that the data (and each F64 tensor) starts 8-byte aligned.
        const io::SafetensorsLayout layout =
            io::safetensorsLayout({{"a", DType::F64, {2, 3}}, {"b", DType::F32, {3}}});
        QCOMPARE(layout.header.size() % 8, 0);
        QCOMPARE(layout.dataBytes, 2 * 3 * 8LL + 3 * 4);

        QVERIFY_THROWS_EXCEPTION(io::WriteError, io::safetensorsLayout({{"a", DType::F32, {1}},
                                                                        {"a", DType::F32, {1}}}));
        QVERIFY_THROWS_EXCEPTION(io::WriteError,
                                 io::safetensorsLayout({{"__metadata__", DType::F32, {1}}}));
        QVERIFY_THROWS_EXCEPTION(io::WriteError, io::safetensorsLayout({{"", DType::F32, {1}}}));
        QVERIFY_THROWS_EXCEPTION(io::WriteError, io::safetensorsLayout({{"n", DType::F32, {-1}}}));
        QVERIFY_THROWS_EXCEPTION(io::WriteError,
                                 io::writeSafetensors(file, {{{"h", DType::F16, {3}}, b.data()}}));
        // A refused write leaves the earlier file as it was.
        QVERIFY(io::SafetensorsFile(file).matrix("a") == a);
    }
};

QTEST_GUILESS_MAIN(TestModelWriter)
#include "test_model_writer.moc"
