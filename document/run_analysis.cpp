#include "document/run_analysis.h"

#include <QObject>
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/model/layer_digest.h"
#include "core/model/workbench.h"
#include "core/value_weighting.h"

namespace ae::document {

std::vector<model::LayerDigest> valueWeightedDigests(const model::Model& model,
                                                     const WindowRun& run,
                                                     const std::function<bool(int)>& layerDone) {
    std::vector<model::LayerDigest> digests;
    const int layers = static_cast<int>(run.layers.size());
    for (int l = 0; l < layers; ++l) {
        const auto& record = run.layers[static_cast<std::size_t>(l)];
        const std::vector<model::Matrix<float>> weights =
            record.hasMaps() ? record.weights : model::recomputedLayerMaps(model, run, l).weights;
        const Eigen::MatrixXd norms = model::valueOutputNorms(model, run, l);
        std::vector<model::Matrix<float>> weighted;
        for (std::size_t h = 0; h < weights.size(); ++h)
            weighted.push_back(
                ae::valueWeightedMap(weights[h], norms.row(static_cast<Eigen::Index>(h))));
        digests.push_back(
            model::digestLayer(weighted, run.attentionMask, run.config.isDecoder(), l));
        if (layerDone && !layerDone(l + 1)) throw model::RunCancelled();
    }
    return digests;
}

double defaultMapBudget() {
    return physicalMemoryBytes() / 2;
}

model::RunOptions windowRunOptions(const model::Model& model, const ModelInput& input,
                                   double mapBudget, long long separatorToken) {
    model::RunOptions options;
    options.logitsForEveryPosition = false;  // predictions: logitsAt
    options.attentionMask = input.attentionMask;
    options.tokenTypes = input.tokenTypes;
    for (std::size_t i = 0; i < input.ids.size(); ++i)
        if (separatorToken >= 0 && input.ids[i] == separatorToken)
            options.separators.push_back(static_cast<int>(i));
    options.keepDigest = true;
    const long long tokens = static_cast<long long>(input.ids.size());
    const double everything = model::runMemory(model, tokens, sizeof(float), -1, true).total();
    if (everything > mapBudget) options.keptMaps = model::RunOptions::KeptMaps::Chosen;
    return options;
}

bool keepsOnlyDigests(const WindowRun& run) {
    return run.options.keptMaps == model::RunOptions::KeptMaps::Chosen;
}

bool hasPredictions(const WindowRun& run) {
    return run.config.isDecoder() ||
           (!run.tokens.empty() &&
            run.maskedLmLogits.rows() == static_cast<Eigen::Index>(run.tokens.size()));
}

int defaultPredictionPosition(const WindowRun& run, long long maskToken) {
    const int tokens = static_cast<int>(run.tokens.size());
    if (!run.config.isDecoder() && maskToken >= 0) {
        const auto mask = std::find(run.tokens.begin(), run.tokens.end(), maskToken);
        if (mask != run.tokens.end()) return static_cast<int>(mask - run.tokens.begin());
    }
    return tokens - 1;
}

AnalysedRun runAndAnalyse(const model::Model& model, const ModelInput& input, int selectedPosition,
                          double mapBudget, const WindowRun* previous, const PassReports& reports,
                          const SpecialTokenIds& special) {
    model::RunOptions options = windowRunOptions(model, input, mapBudget, special.separator);
    const int layers = model.config.layers;
    if (reports.afterLayer)
        options.afterLayer = [report = reports.afterLayer, layers](int done) {
            return report(done, layers);
        };
    if (reports.digestReady)
        options.digestReady = [report = reports.digestReady, layers](
                                  int layer, const model::LayerDigest& digest) {
            report(layer, layers, digest);
        };
    auto run = std::make_shared<const WindowRun>(
        previous ? model::rerunModel<float>(model, *previous, input.ids, options)
                 : model::runModel<float>(model, input.ids, options));
    RunAnalysis analysis = analyse(*run, model, selectedPosition, nullptr, 0, special.mask);
    return {std::move(run), std::move(analysis)};
}

AnalysedRun resumeAndAnalyse(const model::Model& model, const WindowRun& base,
                             const RunAnalysis& baseAnalysis, model::EditedLayer<float> edited,
                             int selectedPosition, long long maskToken) {
    const int layer = edited.layer;
    // As the model's own run was made: its maps kept or dropped, its digests.
    model::RunOptions options = base.options;
    options.afterLayer = {};
    auto run = std::make_shared<const WindowRun>(
        model::resumeWhatIf<float>(model, base, std::move(edited), options));
    RunAnalysis analysis = analyse(*run, model, selectedPosition, &baseAnalysis, layer, maskToken);
    analysis.basePredictions = baseAnalysis.predictions;
    return {std::move(run), std::move(analysis)};
}

RunAnalysis analyse(const WindowRun& run, const model::Model& model, int selectedPosition,
                    const RunAnalysis* sameBefore, int firstChangedLayer, long long maskToken) {
    RunAnalysis a;
    const std::size_t kept =
        static_cast<std::size_t>(std::max(firstChangedLayer, 0)) * run.config.heads;
    if (sameBefore && sameBefore->summaries.size() >= kept) {
        a.summaries.assign(sameBefore->summaries.begin(), sameBefore->summaries.begin() + kept);
        const std::vector<model::HeadSummary> later = model::summarizeHeads(run, firstChangedLayer);
        a.summaries.insert(a.summaries.end(), later.begin(), later.end());
    } else {
        a.summaries = model::summarizeHeads(run);
    }
    const int tokens = static_cast<int>(run.tokens.size());
    if (hasPredictions(run) && tokens > 0) {
        a.position = selectedPosition >= 0 && selectedPosition < tokens
                         ? selectedPosition
                         : defaultPredictionPosition(run, maskToken);
        a.predictions = model::topPredictions(model, run, a.position, 10);
    }
    return a;
}

// TransformerLens measures induction on a text repeated twice; the text itself serves. It needs a
// second pass on twice the tokens, so it follows the run's results instead of holding them up. A
// decoder's first copy is `run` itself (its rows never see a later token), so only the second
// copy's rows are computed, with the run as their cache (model::rerunModel), unless heads are
// switched off.
InductionResult inductionOf(const WindowRun& run, const model::Model& model,
                            const std::vector<model::HeadAblation>& ablations,
                            const std::function<bool()>& keepGoing) {
    const int tokens = static_cast<int>(run.tokens.size());
    const model::Config& c = run.config;
    if (tokens < 2)
        return {{}, QObject::tr("induction needs a text of at least 2 tokens, repeated twice")};
    if (!run.attentionMask.empty())
        return {{},
                QObject::tr("induction is measured on the text repeated twice, which padding "
                            "does not allow: unmark the padding")};
    if (c.positions != 0 && 2 * tokens > c.positions)
        return {{},
                QObject::tr("induction runs the text repeated twice: %1 tokens, more than the "
                            "model's %2 positions. A text of %3 tokens or fewer can be "
                            "measured")
                    .arg(2 * tokens)
                    .arg(c.positions)
                    .arg(c.positions / 2)};
    std::vector<long long> twice = run.tokens;
    twice.insert(twice.end(), run.tokens.begin(), run.tokens.end());
    model::RunOptions options;
    options.logitsForEveryPosition = false;  // only the weights are read
    options.ablations = ablations;
    if (keepGoing) options.afterLayer = [keepGoing](int) { return keepGoing(); };
    // A run that dropped its maps measures the repeated one as its pass makes each head's
    // weights, and drops them too (twice the tokens: four times the maps).
    if (keepsOnlyDigests(run)) {
        options.keepDigest = true;
        options.repeated = {0, tokens};
        options.keptMaps = model::RunOptions::KeptMaps::Chosen;
    }
    try {
        const WindowRun repeated = ablations.empty()
                                       ? model::rerunModel<float>(model, run, twice, options)
                                       : model::runModel<float>(model, twice, options);
        return {model::inductionScores(repeated, 0, tokens), {}};
    } catch (const model::ModelError& e) {
        // Twice the tokens may not fit where the text did: the run stands, induction says why.
        return {{},
                QObject::tr("induction runs the text repeated twice, %1 tokens: %2")
                    .arg(2 * tokens)
                    .arg(QString::fromStdString(e.what()))};
    }
}

void setInduction(std::vector<model::HeadSummary>& summaries, const std::vector<double>& scores) {
    for (std::size_t i = 0; i < summaries.size(); ++i)
        summaries[i].induction =
            i < scores.size() ? scores[i] : std::numeric_limits<double>::quiet_NaN();
}

void takeModelInduction(const InductionResult& result, RunAnalysis& base, RunAnalysis& shown,
                        bool shownIsBase) {
    const bool measured = result.problem.isEmpty();
    setInduction(base.summaries, result.scores);
    base.induction =
        measured ? model::InductionState::Measured : model::InductionState::Unmeasurable;
    base.inductionNote = result.problem;
    if (shownIsBase) {
        setInduction(shown.summaries, result.scores);
        shown.induction = base.induction;
        shown.inductionNote = base.inductionNote;
    } else if (shown.induction == model::InductionState::Stale) {
        // The what-if shows the model's own scores, which have just come.
        setInduction(shown.summaries, result.scores);
        if (!measured) {
            shown.induction = model::InductionState::Unmeasurable;
            shown.inductionNote = result.problem;
        }
    }
}

void showModelInductionOnWhatIf(RunAnalysis& whatIf, const RunAnalysis& base, bool ownComing,
                                int layer) {
    std::vector<double> own;
    for (const model::HeadSummary& h : base.summaries)
        own.push_back(h.induction);
    setInduction(whatIf.summaries, own);
    whatIf.induction = base.induction;
    whatIf.inductionNote = base.inductionNote;
    if (base.induction == model::InductionState::Unmeasurable) return;
    whatIf.induction = model::InductionState::Stale;
    whatIf.inductionNote =
        ownComing ? QObject::tr(
                        "these are the model's scores without the what-if, until it is "
                        "measured with the heads switched off")
                  : QObject::tr(
                        "these are the model's scores without the what-if. Induction is "
                        "measured on the text repeated twice, and this what-if edits "
                        "layer %1's numbers for this text only; heads switched off (by "
                        "zeros) are measured on the what-if")
                        .arg(layer);
}

bool predictAt(int at, const model::Model& model, const WindowRun& current, RunAnalysis& analysis,
               const WindowRun& base, RunAnalysis& baseAnalysis) {
    const bool whatIf = &current != &base;
    bool changed = false;
    if (analysis.position != at) {
        analysis.position = at;
        analysis.predictions = model::topPredictions(model, current, at, 10);
        changed = true;
    }
    if (baseAnalysis.position != at) {
        baseAnalysis.position = at;
        baseAnalysis.predictions =
            whatIf ? model::topPredictions(model, base, at, 10) : analysis.predictions;
        changed = true;
    }
    // A "before" only for a what-if: the model's own run has nothing to compare with.
    if (changed)
        analysis.basePredictions =
            whatIf ? baseAnalysis.predictions : std::vector<model::Prediction>();
    return changed;
}

std::vector<std::pair<int, int>> changedHeads(const WindowRun& base, const WindowRun& current,
                                              double threshold) {
    std::vector<std::pair<int, int>> changed;
    for (std::size_t l = 0; l < base.layers.size() && l < current.layers.size(); ++l) {
        if (!base.layers[l].hasMaps() || !current.layers[l].hasMaps()) {
            const model::LayerDigest& before = base.layers[l].digest;
            const model::LayerDigest& after = current.layers[l].digest;
            for (std::size_t h = 0; h < before.heads.size() && h < after.heads.size(); ++h) {
                const std::vector<float>& a = before.heads[h].pooled;
                const std::vector<float>& b = after.heads[h].pooled;
                bool differs = a.size() != b.size();
                for (std::size_t i = 0; !differs && i < a.size(); ++i)
                    differs = std::abs(a[i] - b[i]) > threshold;
                if (differs) changed.emplace_back(static_cast<int>(l), static_cast<int>(h));
            }
            continue;
        }
        const auto& before = base.layers[l].weights;
        const auto& after = current.layers[l].weights;
        for (std::size_t h = 0; h < before.size() && h < after.size(); ++h) {
            if (before[h].rows() != after[h].rows() || before[h].cols() != after[h].cols() ||
                (before[h] - after[h]).cwiseAbs().maxCoeff() > threshold)
                changed.emplace_back(static_cast<int>(l), static_cast<int>(h));
        }
    }
    return changed;
}

}  // namespace ae::document
