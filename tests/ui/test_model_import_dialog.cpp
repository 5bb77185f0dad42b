// File › Import model weights…, driven as a reader would: open a small GPT-2-style file that the
// test writes, check the guesses made from the names, set the fields, press Import. The document
// must then hold exactly the scene io::importModel makes for the same choices (the CLI's too:
// tests/cli/test_import_command), as one undo step; every refusal must show its one line in the
// dialog and leave the document alone.
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QPushButton>
#include <QRadioButton>
#include <QSettings>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>

#include "document/attention_document.h"
#include "io/formats/result_export.h"
#include "io/formats/safetensors.h"
#include "io/model/model_import.h"
#include "io/scene/scene_file.h"
#include "support/model_files.h"
#include "ui/files/model_import_dialog.h"
#include "ui/window/main_window.h"

using namespace ae;
using namespace ae::testing;
using namespace ae::testing::two_gpt2_layers;
using ae::ui::ModelImportDialog;
using Part = ModelImportDialog::Part;

namespace {

// BERT's names for separate nn.Linear projections.
std::vector<TestTensor> bertTensors() {
    const QString a = "encoder.layer.0.attention.";
    return {tensor("embeddings.word_embeddings.weight", pattern(kVocab, kD, 1)),
            tensor("embeddings.position_embeddings.weight", pattern(kPositions, kD, 2)),
            tensor(a + "self.query.weight", pattern(kD, kD, 3)),
            vectorTensor(a + "self.query.bias", patternVector(kD, 4)),
            tensor(a + "self.key.weight", pattern(kD, kD, 5)),
            vectorTensor(a + "self.key.bias", patternVector(kD, 6)),
            tensor(a + "self.value.weight", pattern(kD, kD, 7)),
            vectorTensor(a + "self.value.bias", patternVector(kD, 8)),
            tensor(a + "output.dense.weight", pattern(kD, kD, 9)),
            vectorTensor(a + "output.dense.bias", patternVector(kD, 10))};
}

QString json(const Scene& scene) {
    return QString::fromUtf8(io::sceneToJson(scene));
}

QString comboText(ModelImportDialog& dialog, Part part) {
    return dialog.partCombo(part)->currentText();
}

}  // namespace

class ModelImportDialogTest : public QObject {
    Q_OBJECT
private:
    QTemporaryDir dir_;
    QString gpt2File_, bertFile_, vocabFile_;

    QString path(const QString& name) const { return dir_.filePath(name); }

    void pressImport(ModelImportDialog& dialog) {
        QPushButton* button = dialog.findChild<QPushButton*>("importButton");
        QVERIFY(button);
        QTest::mouseClick(button, Qt::LeftButton);
    }

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName("attention-explorer-tests");
        QCoreApplication::setApplicationName("test_model_import_dialog");
        QVERIFY(dir_.isValid());
        gpt2File_ = path("gpt2.safetensors");
        bertFile_ = path("bert.safetensors");
        vocabFile_ = path("vocab.json");
        QVERIFY(writeSafetensors(gpt2File_, gpt2Tensors()));
        QVERIFY(writeSafetensors(bertFile_, bertTensors()));
        // GPT-2's byte-level spelling: "Ġ" marks a token that follows a space.
        QVERIFY(writeBytes(vocabFile_, QString(R"({"The": 0, "Ġdog": 3, "Ġsat": 1, "dog": 4,
                                                  "Ġon": 5, "Ġthe": 7, "Ġmat": 9})")
                                           .toUtf8()));
    }
    void init() { QSettings().clear(); }

    void fileMenuHasTheEntry() {
        ui::MainWindow window;
        QStringList entries;
        for (QAction* menu : window.menuBar()->actions()) {
            if (menu->text() != "&File") continue;
            for (QAction* entry : menu->menu()->actions())
                entries << entry->text();
        }
        QVERIFY2(entries.contains(QString::fromUtf8("Import &model weights…")),
                 qPrintable(entries.join(" | ")));
    }

    void listsTheTensorsAndFilters() {
        document::AttentionDocument document;
        ModelImportDialog dialog(&document);
        QVERIFY(dialog.openModel(gpt2File_));
        QCOMPARE(dialog.tensorNames().size(), qsizetype(gpt2Tensors().size()));
        QVERIFY(dialog.tensorNames().contains("h.1.attn.c_attn.weight"));
        dialog.findChild<QLineEdit*>("filter")->setText("LN_1");  // case-insensitive
        QCOMPARE(dialog.visibleTensorNames(), QStringList({"h.1.ln_1.weight", "h.1.ln_1.bias",
                                                           "h.0.ln_1.weight", "h.0.ln_1.bias"}));
    }

    void guessesGpt2FromNames() {
        document::AttentionDocument document;
        ModelImportDialog dialog(&document);
        QVERIFY(dialog.openModel(gpt2File_));
        QCOMPARE(comboText(dialog, Part::Qkv), QString("h.0.attn.c_attn.weight"));
        QCOMPARE(comboText(dialog, Part::QkvBias), QString("h.0.attn.c_attn.bias"));
        QCOMPARE(comboText(dialog, Part::Output), QString("h.0.attn.c_proj.weight"));
        QCOMPARE(comboText(dialog, Part::OutputBias), QString("h.0.attn.c_proj.bias"));
        QCOMPARE(comboText(dialog, Part::Embeddings), QString("wte.weight"));
        QCOMPARE(comboText(dialog, Part::Positions), QString("wpe.weight"));
        QCOMPARE(comboText(dialog, Part::NormWeight), QString("h.0.ln_1.weight"));
        QCOMPARE(comboText(dialog, Part::NormBias), QString("h.0.ln_1.bias"));
        QCOMPARE(comboText(dialog, Part::Query), QString());
        QCOMPARE(dialog.findChild<QComboBox*>("layout")->currentIndex(), 0);  // xw
        QVERIFY(dialog.findChild<QRadioButton*>("fused")->isChecked());
        QCOMPARE(dialog.findChild<QSpinBox*>("heads")->value(), 2);  // 128 / 64
        QVERIFY(dialog.findChild<QCheckBox*>("causal")->isChecked());
        QVERIFY(dialog.findChild<QLabel*>("guessNote")->text().contains("Guessed"));
    }

    void guessesBertFromNames() {
        document::AttentionDocument document;
        ModelImportDialog dialog(&document);
        QVERIFY(dialog.openModel(bertFile_));
        const QString a = "encoder.layer.0.attention.";
        QCOMPARE(comboText(dialog, Part::Qkv), QString());
        QCOMPARE(comboText(dialog, Part::Query), a + "self.query.weight");
        QCOMPARE(comboText(dialog, Part::KeyBias), a + "self.key.bias");
        QCOMPARE(comboText(dialog, Part::Value), a + "self.value.weight");
        QCOMPARE(comboText(dialog, Part::Output), a + "output.dense.weight");
        QCOMPARE(comboText(dialog, Part::Embeddings), QString("embeddings.word_embeddings.weight"));
        QCOMPARE(comboText(dialog, Part::Positions),
                 QString("embeddings.position_embeddings.weight"));
        QCOMPARE(comboText(dialog, Part::NormWeight), QString());
        QCOMPARE(dialog.findChild<QComboBox*>("layout")->currentIndex(), 1);  // linear
        QVERIFY(dialog.findChild<QRadioButton*>("separate")->isChecked());
        QVERIFY(!dialog.findChild<QCheckBox*>("causal")->isChecked());  // an encoder
    }

    // The guesses plus tokens: exactly the scene of io::importModel (which the CLI writes too:
    // tests/cli/test_import_command), as one undo step that undo takes back.
    void importGivesTheImportersSceneAsOneUndoStep() {
        document::AttentionDocument document;
        const QString before = json(document.scene());
        const int steps = document.undoStack()->count();
        ModelImportDialog dialog(&document);
        QVERIFY(dialog.openModel(gpt2File_));
        dialog.findChild<QLineEdit*>("tokens")->setText("3, 1, 4, 1, 5");
        pressImport(dialog);
        QCOMPARE(dialog.problemText(), QString());
        QCOMPARE(dialog.result(), int(QDialog::Accepted));

        const io::SafetensorsFile file(gpt2File_);
        const Scene expected = io::importModel(io::tensorReader(file), gpt2Spec());
        QCOMPARE(json(document.scene()), json(expected));
        QCOMPARE(document.scene().dModel(), long(kD));
        QCOMPARE(document.errorText(), QString());
        QCOMPARE(document.undoStack()->count(), steps + 1);

        document.undoStack()->undo();
        QCOMPARE(json(document.scene()), before);
    }

    // Separate nn.Linear weights, chosen by hand in the combos (not guessed), transposed on import.
    void separateLinearWeightsChosenByHand() {
        document::AttentionDocument document;
        ModelImportDialog dialog(&document);
        QVERIFY(dialog.openModel(gpt2File_));
        // Replace the guess: W_Q, W_K, W_V and W_O all from c_proj [128, 128], read as nn.Linear.
        dialog.findChild<QRadioButton*>("separate")->setChecked(true);
        dialog.findChild<QComboBox*>("layout")->setCurrentIndex(1);
        for (Part part : {Part::Query, Part::Key, Part::Value, Part::Output})
            dialog.partCombo(part)->setCurrentText("h.1.attn.c_proj.weight");
        dialog.partCombo(Part::OutputBias)->setCurrentText("");
        dialog.findChild<QLineEdit*>("tokens")->setText("0,11");
        pressImport(dialog);
        QCOMPARE(dialog.problemText(), QString());
        const MatrixD stored = pattern(kD, kD, 17);
        QVERIFY(document.scene().projections.query == stored.transpose());
        QVERIFY(document.scene().projections.output == stored.transpose());
        QVERIFY(document.scene().projections.outputBias == VectorD::Zero(kD));
        QVERIFY(document.scene().embeddings.row(1) == pattern(kVocab, kD, 1).row(11));
    }

    void wordsAreLookedUpInTheVocabulary() {
        document::AttentionDocument document;
        ModelImportDialog dialog(&document);
        QVERIFY(dialog.openModel(gpt2File_));
        dialog.findChild<QComboBox*>("tokenKind")->setCurrentIndex(1);
        dialog.findChild<QLineEdit*>("vocabulary")->setText(vocabFile_);
        dialog.findChild<QLineEdit*>("tokens")->setText("The dog sat");
        QVERIFY2(dialog.findChild<QLabel*>("tokenPreview")->text().contains("0 The · 3 Ġdog"),
                 qPrintable(dialog.findChild<QLabel*>("tokenPreview")->text()));
        QCOMPARE(dialog.spec().tokenIds, (std::vector<long long>{0, 3, 1}));
        pressImport(dialog);
        QCOMPARE(dialog.problemText(), QString());
        QCOMPARE(document.scene().tokens, (std::vector<std::string>{"The", "Ġdog", "Ġsat"}));
    }

    void refusalsStayInTheDialog_data() {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("expected");
        QTest::newRow("heads not dividing the width")
            << "heads"
            << "3"
            << "Heads 3: must divide the projection width 128 (Q is [128, 128])";
        QTest::newRow("missing tensor") << "qkv"
                                        << "h.0.attn.nope"
                                        << "no tensor named h.0.attn.nope (16 tensors)";
        QTest::newRow("unknown vocabulary word")
            << "words"
            << "The zebra sat"
            << "tokens: \"zebra\" is not in the vocabulary (nor \"Ġzebra\")";
        QTest::newRow("token id past the table")
            << "tokens"
            << "1, 12"
            << "Tokens: token id 12 is past the end of tensor wte.weight [12, 128]";
        QTest::newRow("token ids that are not numbers")
            << "tokens"
            << "1, two"
            << "Tokens: expected token ids such as 464,3290, got 1, two";
        QTest::newRow("fused qkv of the wrong shape")
            << "qkv"
            << "wte.weight"
            << "tensor wte.weight: expected [128, 3p] for a fused QKV with dModel 128 in layout "
               "xw, got [12, 128]";
        QTest::newRow("norm weight without bias") << "normBias"
                                                  << ""
                                                  << "layer norm: choose both its weight and its "
                                                     "bias, or neither";
    }
    void refusalsStayInTheDialog() {
        QFETCH(QString, field);
        QFETCH(QString, value);
        QFETCH(QString, expected);
        document::AttentionDocument document;
        const QString before = json(document.scene());
        const int steps = document.undoStack()->count();
        ModelImportDialog dialog(&document);
        QVERIFY(dialog.openModel(gpt2File_));
        dialog.findChild<QLineEdit*>("tokens")->setText("3, 1, 4");
        if (field == "heads") dialog.findChild<QSpinBox*>("heads")->setValue(value.toInt());
        if (field == "qkv") dialog.partCombo(Part::Qkv)->setCurrentText(value);
        if (field == "normBias") dialog.partCombo(Part::NormBias)->setCurrentText(value);
        if (field == "tokens") dialog.findChild<QLineEdit*>("tokens")->setText(value);
        if (field == "words") {
            dialog.findChild<QComboBox*>("tokenKind")->setCurrentIndex(1);
            dialog.findChild<QLineEdit*>("vocabulary")->setText(vocabFile_);
            dialog.findChild<QLineEdit*>("tokens")->setText(value);
        }
        pressImport(dialog);
        const QString shown = dialog.problemText();
        QVERIFY2(shown.contains(expected), qPrintable(shown + " | expected: " + expected));
        QCOMPARE(shown.count('\n'), 0);
        QVERIFY(!shown.contains("--list"));
        QVERIFY(dialog.result() != QDialog::Accepted);
        QCOMPARE(json(document.scene()), before);
        QCOMPARE(document.undoStack()->count(), steps);
        // The choices are still there to correct.
        if (field == "qkv") QCOMPARE(comboText(dialog, Part::Qkv), value);
        if (field == "heads") QCOMPARE(dialog.findChild<QSpinBox*>("heads")->value(), 3);
        QCOMPARE(comboText(dialog, Part::Embeddings), QString("wte.weight"));
    }

    void corruptFileIsRefused() {
        QFile source(gpt2File_);
        QVERIFY(source.open(QIODevice::ReadOnly));
        const QByteArray bytes = source.readAll();
        const QString corrupt = path("corrupt.safetensors");
        QVERIFY(writeBytes(corrupt, bytes.left(bytes.size() - 20)));

        document::AttentionDocument document;
        const QString before = json(document.scene());
        ModelImportDialog dialog(&document);
        QString error;
        QVERIFY(!dialog.openModel(corrupt, &error));
        QVERIFY2(error.contains("past the end of the data (") && error.startsWith(corrupt),
                 qPrintable(error));
        QCOMPARE(dialog.problemText(), error);
        QVERIFY(dialog.tensorNames().isEmpty());
        pressImport(dialog);
        QVERIFY(dialog.problemText().contains("Open a .safetensors file"));
        QCOMPARE(json(document.scene()), before);
    }

    // .npy files alone: each is one tensor named by its file name; the guess reads through ".npy".
    void npyFilesAreTensors() {
        const io::SafetensorsFile source(gpt2File_);
        QStringList files;
        for (const char* name : {"wte.weight", "h.0.attn.c_attn.weight", "h.0.attn.c_attn.bias"}) {
            files << path(QString(name) + ".npy");
            QVERIFY(writeBytes(files.last(), io::npyBytes(source.matrix(name))));
        }
        document::AttentionDocument document;
        ModelImportDialog dialog(&document);
        QVERIFY(dialog.addNpyFiles(files));
        QCOMPARE(dialog.tensorNames(), QStringList({"wte.weight.npy", "h.0.attn.c_attn.weight.npy",
                                                    "h.0.attn.c_attn.bias.npy"}));
        QCOMPARE(comboText(dialog, Part::Qkv), QString("h.0.attn.c_attn.weight.npy"));
        QCOMPARE(comboText(dialog, Part::QkvBias), QString("h.0.attn.c_attn.bias.npy"));
        QCOMPARE(comboText(dialog, Part::Embeddings), QString("wte.weight.npy"));
        dialog.findChild<QLineEdit*>("tokens")->setText("2, 7");
        pressImport(dialog);
        QCOMPARE(dialog.problemText(), QString());

        io::ModelImportSpec spec;
        spec.qkv = files[1];
        spec.qkvBias = files[2];
        spec.embeddings = files[0];
        spec.tokenIds = {2, 7};
        spec.heads = 2;
        spec.causal = true;
        Scene expected = io::importModel(io::npyTensorReader(), spec);
        QVERIFY(document.scene().title.rfind("Imported from ", 0) == 0);
        expected.title = document.scene().title;
        QCOMPARE(json(document.scene()), json(expected));

        QString error;
        QVERIFY(!dialog.addNpyFiles({gpt2File_}, &error));
        QVERIFY2(error.contains("not an .npy file"), qPrintable(error));
    }

    void choicesAreRemembered() {
        document::AttentionDocument document;
        {
            ModelImportDialog dialog(&document);
            QVERIFY(dialog.openModel(gpt2File_));
            dialog.partCombo(Part::Positions)->setCurrentText("");  // a change from the guess
            dialog.findChild<QLineEdit*>("tokens")->setText("5, 6");
            dialog.findChild<QSpinBox*>("heads")->setValue(4);
            pressImport(dialog);
            QCOMPARE(dialog.problemText(), QString());
        }
        ModelImportDialog again(&document);
        QCOMPARE(again.findChild<QLineEdit*>("modelPath")->text(),
                 QDir::toNativeSeparators(gpt2File_));
        QCOMPARE(comboText(again, Part::Qkv), QString("h.0.attn.c_attn.weight"));
        QCOMPARE(comboText(again, Part::Positions), QString());
        QCOMPARE(again.findChild<QLineEdit*>("tokens")->text(), QString("5, 6"));
        QCOMPARE(again.findChild<QSpinBox*>("heads")->value(), 4);
        // Another file gets guesses, not the other file's choices.
        QVERIFY(again.openModel(bertFile_));
        QCOMPARE(comboText(again, Part::Qkv), QString());
    }
};

QTEST_MAIN(ModelImportDialogTest)
#include "test_model_import_dialog.moc"
