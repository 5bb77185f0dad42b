#include "app/command_line.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QFileInfo>
#include <QStringList>
#include <QTextStream>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>

#include "bench/benchmark.h"
#include "bench/model_window_benchmark.h"
#include "bench/window_benchmark.h"
#include "cli/analyse_command.h"
#include "cli/command_support.h"
#include "cli/export_command.h"
#include "cli/heads_command.h"
#include "cli/import_command.h"
#include "cli/render_command.h"
#include "cli/rotary_command.h"
#include "cli/run_command.h"
#include "cli/tokenize_command.h"
#include "cli/train_command.h"
#include "core/attention_engine.h"
#include "core/scene_error.h"
#include "io/formats/result_export.h"
#include "io/scene/scene_file.h"
#include "ui/explorer_window.h"

namespace ae::cli {
namespace {

constexpr const char* kUsage =
    "Usage: attention-explorer [SCENE.json | MODEL_DIR]  open the window (on a model folder)\n"
    "       attention-explorer export (SCENE.json | --preset NAME) -o OUT [--format json|npy|csv]\n"
    "       attention-explorer render (SCENE.json | --preset NAME) -o OUT.(png|jpg|pdf|svg)\n"
    "                          [--stage q|k|v|scores|scaled|weights|context|concat|output]\n"
    "                          [--head N|all] [--width W] [--height H] [--scale S]\n"
    "                          [--colormap viridis|cividis|magma|gray|rdbu] [--values]\n"
    "       attention-explorer render MODEL_DIR (--text TEXT | --ids 1,2,3) -o OUT.(png|pdf|svg)\n"
    "                          --view model|head|rollout|qk [--layer L] [--head H]\n"
    "       attention-explorer presets\n"
    "       attention-explorer bench [--sizes 64,512,2048] [--d 768] [--heads 12] [--reps 7]\n"
    "       attention-explorer bench --ui [--sizes 128,512] [--n 60]\n"
    "       attention-explorer bench --model [--sizes 128,512,1024] [--reps 5] [--cache-dir DIR]\n"
    "       attention-explorer train (SCENE.json | --preset NAME) --task previous-token|match|\n"
    "                          first-token [--steps N] [--lr X] [--seed S] -o TRAINED.json\n"
    "       attention-explorer train --model LAYERS [--heads H] [--d-model D] [--family "
    "llama|gpt2]\n"
    "                          [--mlp] [--task induction|copy-next|...] [--steps S] [--seed S]\n"
    "                          -o MODEL_DIR   (train --model --help for every option)\n"
    "       attention-explorer import MODEL.safetensors (--qkv NAME | --query NAME --key NAME\n"
    "                          --value NAME) --embeddings NAME --rows IDS --heads H\n"
    "                          -o SCENE.json   (import --help for every option)\n"
    "       attention-explorer run MODEL_DIR (--text TEXT [--text-pair B] | --ids 1,2,3)\n"
    "                          [--attention-mask 1,1,0] [--token-types 0,0,1]\n"
    "                          -o RESULT.json [--double] [--format json|npy]\n"
    "                          [--ablate L.H[,L.H...] [--ablate-mode zero|mean]]\n"
    "       attention-explorer scene MODEL_DIR (--text TEXT | --ids 1,2,3) --layer L -o "
    "SCENE.json\n"
    "       attention-explorer tokenize (MODEL_DIR | TOKENIZER_FILE) (--text TEXT | --lines FILE)\n"
    "                          [--no-special]\n"
    "       attention-explorer heads MODEL_DIR (--text TEXT | --ids 1,2,3 | --induction-random N\n"
    "                          [--seed S]) [--json] [--double]\n"
    "       attention-explorer analyse (lens | dla | value_norms) MODEL_DIR (--text TEXT | --ids "
    "1,2,3)\n"
    "                          [--target A[,B...]] [--foil B] [--position P] [--top K] [--double] "
    "-o OUT.json\n"
    "       attention-explorer analyse patch MODEL_DIR (--text T | --ids ...) (--corrupt-text T2 "
    "|\n"
    "                          --corrupt-ids ...) --target A [--foil B] [--position P] [--double] "
    "-o OUT.json\n"
    "       attention-explorer analyse composition MODEL_DIR [--double] -o OUT.json\n"
    "       attention-explorer rotary (SCENE.json | --preset NAME) [--head H] [--query I] [--key "
    "J]\n"
    "                          [--distances FROM:TO] [--starts 0,50] [--theta T] [--scaling KIND]\n"

    "       attention-explorer --help | --version\n"
    "\n"
    "Every SCENE.json command also takes --kv-heads N (K and V shared by groups of heads).\n"
    "MODEL_DIR may be builtin:NAME, a small model that ships with the app (docs/models.md).\n"
    "Sub-commands need no display. Exit status: 0 success, 2 invalid input or arguments,\n"
    "1 internal error. Errors are one line on stderr: FILE: FIELD.PATH: PROBLEM.\n"
    "A scene the window cannot load is reported the same way, and in the window, which opens\n"
    "the default scene instead.\n";

// An invalid-input failure: the one line to print, already prefixed with what it is about.
struct UsageError {
    QString message;
};

QtMessageHandler defaultMessageHandler = nullptr;

void skipRuntimeDirNote(QtMsgType type, const QMessageLogContext& context, const QString& text) {
    if (text.startsWith(QLatin1String("QStandardPaths: XDG_RUNTIME_DIR"))) return;
    defaultMessageHandler(type, context, text);
}

// `bench`, whose --ui half measures the window at the size the figures are quoted for.
int benchWithWindow(const QStringList& arguments) {
    return benchCommand(
        arguments,
        [](int length, int samples) {
            return ui::measureWindowLatency(length, samples, 1600, 1000);
        },
        [](const QString& folder, int length, int samples) {
            return ui::measureModelWindowLatency(folder, length, samples, 1600, 1000);
        });
}

// Every sub-command, by name: the one list both dispatch and recognition read.
const std::map<QString, std::function<int(const QStringList&)>>& commands() {
    static const std::map<QString, std::function<int(const QStringList&)>> table = {
        {"export", exportCommand}, {"presets", presetsCommand},   {"bench", benchWithWindow},
        {"train", trainCommand},   {"render", renderCommand},     {"import", importCommand},
        {"run", runModelCommand},  {"tokenize", tokenizeCommand}, {"scene", modelSceneCommand},
        {"heads", headsCommand},   {"rotary", rotaryCommand},     {"analyse", analyseCommand},

    };
    return table;
}

int runCommand(const QString& command, const QStringList& arguments) {
    return commands().at(command)(arguments);
}

bool isCommand(const QString& word) {
    return commands().count(word) > 0;
}

}  // namespace

int run(int argc, char** argv) {
    const QString first = argc > 1 ? QString::fromLocal8Bit(argv[1]) : QString();
    QCoreApplication::setApplicationName("attention-explorer");
    QCoreApplication::setOrganizationName("attention-explorer");
    QCoreApplication::setApplicationVersion(AE_VERSION);
    try {
        if (first == "--help" || first == "-h") {
            std::fputs(kUsage, stdout);
            return kSuccess;
        }
        if (first == "--version") {
            printLine(stdout, QStringLiteral("attention-explorer %1").arg(AE_VERSION));
            return kSuccess;
        }
        if (first == "render") {
            // Drawing needs a GUI application but never a display: offscreen, unless the user
            // chose a platform.
            if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM"))
                qputenv("QT_QPA_PLATFORM", "offscreen");
            // Errors are one line: Qt's note about a missing XDG_RUNTIME_DIR (usual in
            // containers and cron jobs) is not one of them.
            defaultMessageHandler = qInstallMessageHandler(skipRuntimeDirNote);
            QApplication app(argc, argv);
            QStringList arguments = QCoreApplication::arguments();
            arguments.removeAt(1);
            return runCommand(first, arguments);
        }
        if (isCommand(first)) {
            // Commands that draw need widgets but never a display: they use the offscreen
            // platform unless the caller chose one.
            bool drawing = false;
            for (int i = 2; i < argc; ++i)
                drawing = drawing || (first == "bench" && qstrcmp(argv[i], "--ui") == 0);
            if (drawing && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
                qputenv("QT_QPA_PLATFORM", "offscreen");
            std::unique_ptr<QCoreApplication> app(drawing ? new QApplication(argc, argv)
                                                          : new QCoreApplication(argc, argv));
            QStringList arguments = QCoreApplication::arguments();
            arguments.removeAt(1);  // parse the command's own options: argv[0] + the rest
            return runCommand(first, arguments);
        }
        if (first.startsWith('-') && !first.isEmpty()) {
            throw UsageError{"unknown option " + first + " (see --help)"};
        }
        if (argc > 2) throw UsageError{"give at most one scene file (see --help)"};
        QApplication app(argc, argv);
        return ui::runExplorerWindow(first);
    } catch (const UsageError& error) {
        printLine(stderr, error.message);
        return kInvalidInput;
    } catch (const std::invalid_argument& error) {
        printLine(stderr, QString::fromStdString(error.what()));
        return kInvalidInput;
    } catch (const SceneError& error) {
        printLine(stderr, QString::fromStdString(error.what()));
        return kInvalidInput;
    } catch (const std::exception& error) {
        printLine(stderr,
                  QStringLiteral("attention-explorer: internal error: %1").arg(error.what()));
        return kInternalError;
    }
}

}  // namespace ae::cli
