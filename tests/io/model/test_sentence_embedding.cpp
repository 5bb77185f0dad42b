// sentence-transformers folders: modules.json and 1_Pooling/ say how the sentence embedding is
// made (io/model/sentence_embedding.h), in the layouts all-MiniLM-L6-v2 (mean, normalized) and
// bge (the [CLS] token) ship; a broken file is named; and the folder opens and runs as the plain
// model does, since attention is unaffected.
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "core/model/model.h"
#include "io/model/model_folder.h"
#include "io/model/sentence_embedding.h"
#include "support/model_checks.h"

using namespace ae;
using namespace ae::testing;

namespace {

void write(const QString& path, const QByteArray& text) {
    QDir().mkpath(QFileInfo(path).path());
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(text);
}

const QByteArray kModules =
    "[\n"
    "  {\"idx\": 0, \"name\": \"0\", \"path\": \"\", \"type\": "
    "\"sentence_transformers.models.Transformer\"},\n"
    "  {\"idx\": 1, \"name\": \"1\", \"path\": \"1_Pooling\", \"type\": "
    "\"sentence_transformers.models.Pooling\"},\n"
    "  {\"idx\": 2, \"name\": \"2\", \"path\": \"2_Normalize\", \"type\": "
    "\"sentence_transformers.models.Normalize\"}\n"
    "]";

}  // namespace

class TestSentenceEmbedding : public QObject {
    Q_OBJECT
private slots:
    void plainFolderHasNoNote() {
        QCOMPARE(io::sentenceEmbeddingNote(goldenModelDir("bert-tiny")), QString());
    }

    void meanPoolingNormalized() {
        QTemporaryDir dir;
        write(dir.filePath("modules.json"), kModules);
        write(dir.filePath("1_Pooling/config.json"),
              "{\"word_embedding_dimension\": 384, \"pooling_mode_cls_token\": false,\n"
              "                  \"pooling_mode_mean_tokens\": true, \"pooling_mode_max_tokens\": "
              "false,\n"
              "                  \"pooling_mode_mean_sqrt_len_tokens\": false}");
        QCOMPARE(io::sentenceEmbeddingNote(dir.path()),
                 QStringLiteral("sentence-transformers: the sentence embedding is the mean of the "
                                "last hidden states over the tokens, then normalized to length 1; "
                                "attention is the model's"));
    }

    void clsPooling() {
        QTemporaryDir dir;
        write(dir.filePath("modules.json"), kModules);
        write(dir.filePath("1_Pooling/config.json"),
              "{\"pooling_mode_cls_token\": true, \"pooling_mode_mean_tokens\": false}");
        QVERIFY(io::sentenceEmbeddingNote(dir.path())
                    .contains("the last hidden state of the first token ([CLS])"));
    }

    void brokenFilesAreNamed() {
        QTemporaryDir dir;
        write(dir.filePath("modules.json"), "[{");
        QVERIFY2(io::sentenceEmbeddingNote(dir.path()).contains("modules.json: not JSON"),
                 qPrintable(io::sentenceEmbeddingNote(dir.path())));
        write(dir.filePath("modules.json"), kModules);
        QVERIFY(
            io::sentenceEmbeddingNote(dir.path()).contains("1_Pooling/config.json: cannot read"));
    }

    void folderRunsAsThePlainModel() {
        QTemporaryDir dir;
        for (const QString& f : QDir(goldenModelDir("bert-tiny")).entryList(QDir::Files))
            QVERIFY(QFile::copy(goldenModelDir("bert-tiny") + "/" + f, dir.filePath(f)));
        write(dir.filePath("modules.json"), kModules);
        write(dir.filePath("1_Pooling/config.json"), "{\"pooling_mode_mean_tokens\": true}");
        const io::ModelFolder plain(goldenModelDir("bert-tiny")), sentence(dir.path());
        const std::vector<long long> ids = {7, 41, 3, 59, 22, 15, 36};
        const auto a = model::runModel<double>(plain.model(), ids);
        const auto b = model::runModel<double>(sentence.model(), ids);
        QCOMPARE(a.lastHidden, b.lastHidden);
        QCOMPARE(a.layers[1].weights[2], b.layers[1].weights[2]);
    }
};

QTEST_GUILESS_MAIN(TestSentenceEmbedding)
#include "test_sentence_embedding.moc"
