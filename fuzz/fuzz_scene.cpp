// Fuzz target: scene files. io::parseScene on arbitrary bytes; a scene it accepts is written back
// with io::sceneToJson and must read again (a saved scene must always reopen), and when it is
// small it is computed with AttentionEngine<double>, as `export` would. A refusal (SceneError) is
// the expected answer to garbage; anything else that escapes, and every sanitizer report, is a
// finding.
#include <QByteArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "core/attention_engine.h"
#include "io/scene/scene_file.h"

namespace {

// The engine's working set above which a scene is only parsed, not computed: the fuzzer runs with
// -rss_limit_mb=2048, and a big but valid scene is not a bug.
constexpr double kMaxEngineBytes = 64.0 * (1 << 20);

// `init` may legitimately draw matrices of up to 2^28 elements each (docs/scene-format.md, "Size
// limit"), so a 60-byte scene can ask for gigabytes and minutes of drawing. Such inputs are
// skipped before parsing. Sizes outside what the reader accepts are kept: they must be refused
// before anything is allocated, and that is worth testing.
bool drawsTooMuch(const QByteArray& bytes) {
    const QJsonObject init = QJsonDocument::fromJson(bytes).object().value("init").toObject();
    for (const char* key : {"d_model", "d_proj"}) {
        const double n = init.value(QLatin1String(key)).toDouble();
        if (n > 1024 && n <= static_cast<double>(ae::io::kMaxDrawnElements)) return true;
    }
    return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const QByteArray bytes =
        QByteArray::fromRawData(reinterpret_cast<const char*>(data), static_cast<qsizetype>(size));
    if (drawsTooMuch(bytes)) return -1;  // -1: not added to the corpus
    ae::Scene scene;
    try {
        scene = ae::io::parseScene(bytes);
    } catch (const ae::SceneError&) {
        return 0;
    }
    // A scene that was accepted must survive a save and a reopen; an error here is a finding.
    const QByteArray saved = ae::io::sceneToJson(scene);
    try {
        ae::io::parseScene(saved);
    } catch (const ae::SceneError& error) {
        fprintf(stderr, "saved scene does not reopen: %s\n%s\n", error.what(), saved.constData());
        __builtin_trap();
    }
    if (ae::engineBytes(scene, sizeof(double)) > kMaxEngineBytes) return 0;
    try {
        ae::AttentionEngine<double> engine(scene);
        engine.compute();
    } catch (const ae::SceneError&) {
        // scores: overflow, the one error the computation may raise.
    }
    return 0;
}
