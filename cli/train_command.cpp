#include "cli/train_command.h"

#include <QCommandLineParser>
#include <QString>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "cli/command_support.h"
#include "core/attention_training.h"
#include "io/result_export.h"
#include "io/scene_file.h"

namespace ae::cli {
namespace {

// Upper bound on --steps: a typo such as 1e9 should be refused, not run for days.
constexpr long long kMaxSteps = 10'000'000;

}  // namespace

int trainCommand(const QStringList& arguments) {
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Train the layer's weights by backpropagation so its attention learns a toy task.");
    parser.addHelpOption();
    addSceneArguments(parser);
    parser.addOption({"task", "previous-token, match or first-token.", "task"});
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

    if (!parser.isSet("task"))
        refuse("train: --task is required (previous-token, match or first-token)");
    const std::optional<TrainingTask> task =
        trainingTaskFromName(parser.value("task").toStdString());
    if (!task) {
        refuse("train: --task: expected previous-token, match or first-token, got " +
               parser.value("task"));
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
