#include "cli/train_command.h"

#include <QCommandLineParser>
#include <QString>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <stdexcept>

#include "cli/command_support.h"
#include "core/training/attention_training.h"
#include "core/training/model_training.h"
#include "io/formats/result_export.h"
#include "io/model/model_writer.h"
#include "io/scene/scene_file.h"

namespace ae::cli {
namespace {

// Upper bound on --steps: a typo such as 1e9 should be refused, not run for days.
constexpr long long kMaxSteps = 10'000'000;

// "L.H" of head index l·heads + h.
QString headName(int index, int heads) {
    return QStringLiteral("%1.%2").arg(index / heads).arg(index % heads);
}

// `train --model`: a small whole model (core/training/model_training.h), saved as a model folder.
int trainModelCommand(const QStringList& arguments) {
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Train a small gpt2- or llama-family model by backpropagation on a toy task and save it "
        "as a model folder (config.json, model.safetensors in F64, a byte-level tokenizer).");
    parser.addHelpOption();
    parser.addOption({"model", "Number of layers (1 to 48).", "layers"});
    parser.addOption({"heads", "Heads per layer (default 4).", "h", "4"});
    parser.addOption({"d-model", "Width d of the residual stream (default 64).", "d", "64"});
    parser.addOption({"family",
                      "llama (RMS norm, rotary positions, SwiGLU) or gpt2 (layer norm, learned "
                      "positions, GELU); default: the one --positions names, else llama.",
                      "family"});
    parser.addOption({"positions", "rotary (llama) or learned (gpt2).", "kind"});
    parser.addOption({"mlp", "Give every layer an MLP (default: attention only)."});
    parser.addOption({"vocab", "Vocabulary size; ids are bytes (default 128).", "v", "128"});
    parser.addOption({"length", "Tokens per training sequence (default 64).", "n", "64"});
    parser.addOption({"task",
                      QString::fromStdString(model::kModelTasks.names() + " (default induction)."),
                      "task", "induction"});
    parser.addOption({"steps", "Adam steps (default 2000).", "n", "2000"});
    parser.addOption({"lr",
                      "Peak learning rate, cosine-decayed to 0 at the last step (default "
                      "0.001).",
                      "x", "0.001"});
    parser.addOption({"previous-token-every",
                      "Every k-th step trains on previous-token sequences (default 0: never).", "k",
                      "0"});
    parser.addOption({"rope-theta", "llama: the rotary base (default 10000).", "x", "10000"});
    parser.addOption({"batch", "Sequences per step (default 16).", "b", "16"});
    parser.addOption({"seed", "Seed of the weights and the sequences (default 1).", "s", "1"});
    parser.addOption({{"o", "output"}, "The model folder to write.", "folder"});
    if (!parser.parse(arguments)) refuse("train: " + parser.errorText());
    if (parser.isSet("help")) {
        printLine(stdout, parser.helpText());
        return kSuccess;
    }
    const auto integer = [&parser](const QString& name, long long low, long long high) {
        bool ok = false;
        const long long value = parser.value(name).toLongLong(&ok);
        if (!ok || value < low || value > high) {
            refuse(QStringLiteral("train: --%1: expected an integer from %2 to %3, got %4")
                       .arg(name)
                       .arg(low)
                       .arg(high)
                       .arg(parser.value(name)));
        }
        return value;
    };
    model::ModelTrainingOptions options;
    options.layers = static_cast<int>(integer("model", 1, 48));
    options.heads = static_cast<int>(integer("heads", 1, 64));
    options.hidden = static_cast<int>(integer("d-model", 1, 2048));
    options.vocab = static_cast<int>(integer("vocab", 2, 65536));
    options.length = static_cast<int>(integer("length", 2, 4096));
    options.batch = static_cast<int>(integer("batch", 1, 4096));
    const long long steps = integer("steps", 1, kMaxSteps);
    options.totalSteps = static_cast<int>(steps);
    options.previousTokenEvery = static_cast<int>(integer("previous-token-every", 0, kMaxSteps));
    options.mlp = parser.isSet("mlp");
    // The architectures to choose from are the family table's trainable rows; --positions names
    // one by its positions axis.
    const std::vector<const model::FamilyRow*> trainable = model::trainableFamilies();
    const auto positionsWord = [](const model::FamilyRow* row) {
        return row->architecture.positions == model::PositionKind::Rotary ? "rotary" : "learned";
    };
    const model::FamilyRow* family = nullptr;
    if (parser.isSet("family")) {
        const QString name = parser.value("family");
        for (const model::FamilyRow* row : trainable) {
            if (name == QLatin1String(row->modelType)) family = row;
        }
        if (!family) {
            refuse("train: --family: expected " +
                   QString::fromStdString(model::trainableFamilyNames()) + ", got " + name);
        }
    }
    if (parser.isSet("positions")) {
        const QString kind = parser.value("positions");
        const model::FamilyRow* implied = nullptr;
        QStringList kinds, pairs;
        for (const model::FamilyRow* row : trainable) {
            if (kind == QLatin1String(positionsWord(row))) implied = row;
            kinds << positionsWord(row);
            // "(llama has rotary positions, gpt2 learned)"
            const QString pair =
                pairs.isEmpty() ? QStringLiteral("%1 has %2 positions") : QStringLiteral("%1 %2");
            pairs << pair.arg(QLatin1String(row->modelType), QLatin1String(positionsWord(row)));
        }
        if (!implied)
            refuse("train: --positions: expected " + kinds.join(" or ") + ", got " + kind);
        if (family && family != implied) {
            refuse("train: --positions " + kind + " does not go with --family " +
                   parser.value("family") + " (" + pairs.join(", ") + ")");
        }
        family = implied;
    }
    options.family = family ? family->modelType : trainable.front()->modelType;
    const std::optional<model::ModelTask> task =
        model::modelTaskFromName(parser.value("task").toStdString());
    if (!task) {
        refuse("train: --task: " + QString::fromStdString(model::kModelTasks.refusal(
                                       parser.value("task").toStdString())));
    }
    options.task = *task;
    bool ok = false;
    options.learningRate = parser.value("lr").toDouble(&ok);
    if (!ok || !std::isfinite(options.learningRate) || options.learningRate <= 0)
        refuse("train: --lr: expected a positive number, got " + parser.value("lr"));
    options.ropeTheta = parser.value("rope-theta").toDouble(&ok);
    if (!ok || !std::isfinite(options.ropeTheta) || options.ropeTheta <= 1)
        refuse("train: --rope-theta: expected a number above 1, got " + parser.value("rope-theta"));
    const model::FamilyRow* chosen = model::familyRowNamed(options.family);
    if (parser.isSet("rope-theta") && chosen->architecture.positions != model::PositionKind::Rotary)
        refuse("train: --rope-theta goes with rotary positions (--family llama)");
    options.seed = parser.value("seed").toULongLong(&ok);
    if (!ok) refuse("train: --seed: expected an unsigned integer, got " + parser.value("seed"));
    if (!parser.isSet("output")) refuse("train: -o FOLDER is required");
    if (!parser.positionalArguments().isEmpty()) {
        refuse("train: --model takes no scene, got " + parser.positionalArguments().first());
    }
    const std::string problem = model::checkTrainingOptions(options);
    if (!problem.empty()) refuse("train: " + QString::fromStdString(problem));

    std::optional<model::ModelTrainer> built;
    try {
        built.emplace(options);  // refuses a model too large for this machine's memory
    } catch (const model::ModelError& error) {
        refuse("train: " + QString::fromStdString(error.what()));
    }
    model::ModelTrainer& trainer = *built;
    const int heads = options.heads;
    printLine(stdout, QStringLiteral("%1 model, %2 layers x %3 heads, d %4, %5, vocab %6, "
                                     "task %7, length %8, seed %9")
                          .arg(QString::fromStdString(options.family))
                          .arg(options.layers)
                          .arg(heads)
                          .arg(options.hidden)
                          .arg(options.mlp ? "with MLP" : "attention only")
                          .arg(options.vocab)
                          .arg(model::modelTaskName(options.task))
                          .arg(options.length)
                          .arg(options.seed));
    const long long every = std::max(1LL, steps / 20);
    const auto start = std::chrono::steady_clock::now();
    const auto report = [&](long long step, double loss) {
        const model::HeadScores scores = trainer.probeHeads();
        printLine(
            stdout,
            QStringLiteral("step %1  loss %2  previous-token head %3 %4  induction head %5 "
                           "%6  (%7 s)")
                .arg(step)
                .arg(loss, 0, 'f', 4)
                .arg(headName(scores.bestPreviousToken, heads))
                .arg(scores.previousToken[scores.bestPreviousToken], 0, 'f', 3)
                .arg(headName(scores.bestInduction, heads))
                .arg(scores.induction[scores.bestInduction], 0, 'f', 3)
                .arg(
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                    0, 'f', 1));
        std::fflush(stdout);  // progress, also when piped to a file
    };
    try {
        for (long long s = 1; s <= steps; ++s) {
            const double loss = trainer.step();  // the batch's loss before this step's update
            if (s == 1 || s % every == 0) report(s, loss);
        }
    } catch (const model::ModelError& error) {
        refuse("train: " + QString::fromStdString(error.what()));
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    printLine(stdout, QStringLiteral("final loss %1 after %2 steps (%3 s)")
                          .arg(trainer.loss(), 0, 'f', 4)
                          .arg(steps)
                          .arg(seconds, 0, 'f', 2));
    const QString folder = parser.value("output");
    try {
        io::writeModelFolder(folder, trainer.model(), DType::F64);
        io::writeByteTokenizer(folder, options.vocab);
    } catch (const io::WriteError& error) {
        refuse(QString::fromStdString(error.what()));
    }
    printLine(stdout, "wrote " + folder);
    return kSuccess;
}

}  // namespace

int trainCommand(const QStringList& arguments) {
    // `train --model ...` trains a whole model; everything else is the one-layer trainer.
    for (const QString& a : arguments)
        if (a == "--model" || a.startsWith("--model=")) return trainModelCommand(arguments);
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Train the layer's weights by backpropagation so its attention learns a toy task.");
    parser.addHelpOption();
    addSceneArguments(parser);
    parser.addOption({"task", QString::fromStdString(kTrainingTasks.names() + "."), "task"});
    parser.addOption({"steps",
                      QStringLiteral("Adam steps (default %1).").arg(kDefaultTrainingSteps), "n",
                      QString::number(kDefaultTrainingSteps)});
    parser.addOption({"lr",
                      QStringLiteral("Peak learning rate, cosine-decayed to 0 (default %1).")
                          .arg(kDefaultLearningRate),
                      "x", QString::number(kDefaultLearningRate)});
    parser.addOption({"seed", "Seed of generated sequences (default 1).", "s", "1"});
    parser.addOption({{"o", "output"}, "The trained scene file.", "out"});
    if (!parser.parse(arguments)) refuse("train: " + parser.errorText());
    if (parser.isSet("help")) {
        printLine(stdout, parser.helpText());
        return kSuccess;
    }

    if (!parser.isSet("task")) {
        refuse("train: --task is required (" + QString::fromStdString(kTrainingTasks.names()) +
               ")");
    }
    const std::optional<TrainingTask> task =
        trainingTaskFromName(parser.value("task").toStdString());
    if (!task) {
        refuse("train: --task: " +
               QString::fromStdString(kTrainingTasks.refusal(parser.value("task").toStdString())));
    }
    bool ok = false;
    const long long steps = parser.value("steps").toLongLong(&ok);
    if (!ok || steps < 1 || steps > kMaxSteps) {
        refuse("train: --steps: expected an integer from 1 to " + QString::number(kMaxSteps) +
               ", got " + parser.value("steps"));
    }
    TrainingOptions options;
    options.learningRate = parser.value("lr").toDouble(&ok);
    if (!ok || !std::isfinite(options.learningRate) || options.learningRate <= 0) {
        refuse("train: --lr: expected a positive number, got " + parser.value("lr"));
    }
    options.seed = parser.value("seed").toULongLong(&ok);
    if (!ok) refuse("train: --seed: expected an unsigned integer, got " + parser.value("seed"));
    options.totalSteps = static_cast<int>(steps);
    if (!parser.isSet("output")) refuse("train: -o TRAINED.json is required");

    QString label;
    const Scene scene = readSceneArgument(parser, "train", label);
    std::optional<Trainer> trainer;
    try {
        trainer.emplace(scene, *task, options);
    } catch (const SceneError& error) {
        refuse(label + ": " + QString::fromStdString(error.what()));
    }

    if (!trainer->note().empty()) {
        for (const QString& line : QString::fromStdString(trainer->note()).split('\n'))
            printLine(stdout, "note: " + line);
    }
    const long long every = std::max(1LL, steps / 20);
    const auto start = std::chrono::steady_clock::now();
    try {
        for (long long s = 1; s <= steps; ++s) {
            const double loss = trainer->step();  // the loss before this step's update
            if (s == 1 || s % every == 0) {
                printLine(stdout, QStringLiteral("step %1  loss %2").arg(s).arg(loss, 0, 'g', 6));
            }
        }
    } catch (const SceneError& error) {
        // Only an overflow of the scores can stop training midway (a learning rate far too big).
        refuse(label + ": step " + QString::number(trainer->stepCount()) + ": " +
               QString::fromStdString(error.what()) + " (try a smaller --lr)");
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const Scene trained = trainer->scene();
    const TargetAttention best = bestHeadTargetAttention(trained, trainer->targets());
    printLine(stdout, QStringLiteral("final loss %1 after %2 steps (%3 s)")
                          .arg(trainer->loss(), 0, 'g', 6)
                          .arg(steps)
                          .arg(seconds, 0, 'f', 2));
    printLine(stdout, QStringLiteral("head %1: mean weight on the target keys %2 (%3 %4)")
                          .arg(best.head)
                          .arg(best.meanWeight, 0, 'f', 4)
                          .arg(best.meanWeight >= kSuccessWeight ? "success, >=" : "not yet, <")
                          .arg(kSuccessWeight));
    try {
        io::writeFileAtomically(parser.value("output"), io::sceneToJson(trained));
    } catch (const io::WriteError& error) {
        refuse(QString::fromStdString(error.what()));
    }
    return kSuccess;
}

}  // namespace ae::cli
