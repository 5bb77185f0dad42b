// What each step of the walkthrough says and shows: the steps' titles and grid stages, and the
// heading, formula, explanation and matrix map the panel shows for the current step, in either
// tour, with the live numbers of the engine (or of the model's run).

#include <QCoreApplication>
#include <QLabel>
#include <QPushButton>
#include <cmath>

#include "core/model/family.h"
#include "core/model/workbench.h"
#include "core/ops.h"
#include "document/attention_document.h"
#include "document/model_session.h"
#include "document/translation_session.h"
#include "plot/color_maps.h"
#include "plot/heatmap_controller.h"
#include "plot/heatmap_grid.h"
#include "ui/classroom/map_labels.h"
#include "ui/classroom/refresh_when_shown.h"
#include "ui/classroom/walkthrough_panel.h"

namespace ae::ui {
namespace {

QString num(double v) {
    return QString::number(v, 'g', 4).replace(QLatin1Char('-'), QChar(0x2212));
}

// The first few entries of a row: enough to read aloud, never a wall of digits.
template <typename Row>
QString vec(const Row& row) {
    QStringList parts;
    const Eigen::Index shown = std::min<Eigen::Index>(row.size(), 4);
    for (Eigen::Index c = 0; c < shown; ++c)
        parts << num(row(c));
    if (row.size() > shown) parts << QStringLiteral("…");
    return QStringLiteral("(") + parts.join(QStringLiteral(", ")) + QStringLiteral(")");
}

QString quoted(const std::vector<std::string>& tokens, int i) {
    return QStringLiteral("“%1”").arg(QString::fromStdString(tokens[static_cast<size_t>(i)]));
}

// X before the layer norm: embeddings plus positions, as the engine prepares them.
MatrixD inputsBeforeNorm(const Scene& scene) {
    return inputsWithPositions(scene, scene.embeddings);
}

}  // namespace

namespace {

// On a translation model's cross-attention (document/translation_session.h opens it): where the
// step's rows come from in the real model, with its tokens and numbers; empty on any other scene.
QString crossAttentionNote(const Scene& scene, const plot::EngineF& engine, WalkStep step, int h,
                           int i) {
    const std::optional<document::TranslationLayer> layer =
        document::translationLayer(scene.viewJson);
    if (!layer || layer->kind != model::AttentionKind::Cross || !scene.hasSource) return {};
    const std::vector<std::string>& source = scene.sourceTokens;
    QStringList words;
    for (const std::string& token : source)
        words << QString::fromStdString(token).trimmed();
    const QString sentence = words.join(QLatin1Char(' '));
    switch (step) {
        case WalkStep::Inputs:
        case WalkStep::Query:
            return QCoreApplication::translate(
                       "Walkthrough",
                       " <b>On this translation model</b>, layer %1 of the decoder: the queries "
                       "come from the <b>target</b>, the decoder's stream after its own "
                       "self-attention, one row for each output token so far (%2 here).")
                .arg(layer->layer)
                .arg(scene.queryCount());
        case WalkStep::Key:
        case WalkStep::Value:
            return QCoreApplication::translate(
                       "Walkthrough",
                       " <b>On this translation model</b> the keys and values come from the "
                       "<b>source</b>: the encoder's output on “%1”, %2 rows that every decoder "
                       "layer reads. The decoder asks; the source answers.")
                .arg(sentence.toHtmlEscaped())
                .arg(scene.keyCount());
        case WalkStep::Mix: {
            const auto w = engine.weights(h).row(i);
            Eigen::Index top = 0;
            w.maxCoeff(&top);
            return QCoreApplication::translate(
                       "Walkthrough",
                       " <b>This is where the translation reads the source:</b> output row %1 "
                       "(“%2”) takes the most from source word “%3”. The Translation tab's "
                       "alignment draws these weights for every output word.")
                .arg(i)
                .arg(QString::fromStdString(scene.tokens[static_cast<size_t>(i)])
                         .trimmed()
                         .toHtmlEscaped(),
                     words.value(static_cast<int>(top)).toHtmlEscaped());
        }
        default:
            return {};
    }
}

}  // namespace

std::optional<Stage> walkStepStage(WalkStep step, bool softCap) {
    switch (step) {
        case WalkStep::Inputs:
        case WalkStep::Norm:
            return std::nullopt;
        case WalkStep::Query:
            return Stage::Query;
        case WalkStep::Key:
            return Stage::Key;
        case WalkStep::Value:
            return Stage::Value;
        case WalkStep::Scores:
            return Stage::Scores;
        case WalkStep::Divide:
            return Stage::Scaled;
        case WalkStep::Mask:
            return softCap ? Stage::Capped : Stage::Scaled;
        case WalkStep::Softmax:
            return Stage::Weights;
        case WalkStep::Mix:
            return Stage::Context;
        case WalkStep::Concat:
            return Stage::Concat;
        case WalkStep::OutputProjection:
            return Stage::Output;
    }
    return std::nullopt;
}

QList<Stage> walkStepStages(WalkStep step, bool softCap) {
    switch (step) {
        case WalkStep::Inputs:
        case WalkStep::Norm:
            return {};
        case WalkStep::Scores:
            return {Stage::Query, Stage::Key, Stage::Scores};
        case WalkStep::Divide:
            if (softCap) return {Stage::Scores, Stage::Scaled, Stage::Capped};
            return {Stage::Scores, Stage::Scaled};
        case WalkStep::Softmax:
            return {softCap ? Stage::Capped : Stage::Scaled, Stage::Weights};
        case WalkStep::Mix:
            return {Stage::Value, Stage::Weights, Stage::Context};
        case WalkStep::Concat:
            return {Stage::Context, Stage::Concat};
        case WalkStep::OutputProjection:
            return {Stage::Concat, Stage::Output};
        default:
            return {*walkStepStage(step, softCap)};
    }
}

QList<Stage> walkStepStages(WalkStep step, const Scene& scene) {
    QList<Stage> stages = walkStepStages(step, scene.softCap.has_value());
    if (step == WalkStep::Divide) {
        // In pipeline order, after the raw scores.
        if (!scene.scoreTerms.afterScale.empty()) stages.insert(1, Stage::PositionBias);
        if (!scene.scoreTerms.beforeScale.empty()) stages.insert(1, Stage::PositionTerms);
    }
    return stages;
}

QString walkStepTitle(WalkStep step) {
    const char* titles[kWalkStepCount] = {"Inputs: embeddings + positions",
                                          "Layer norm",
                                          "Queries: Q = X·W_Q",
                                          "Keys: K = X·W_K",
                                          "Values: V = X·W_V",
                                          "Raw scores: QKᵀ",
                                          "Divide by the divisor",
                                          "Mask",
                                          "Softmax",
                                          "Mix the values: weights·V",
                                          "Concatenate the heads",
                                          "Output projection: ·W_O"};
    return QCoreApplication::translate("Walkthrough", titles[static_cast<int>(step)]);
}

QString walkStepTitle(WalkStep step, const Scene& scene) {
    if (step == WalkStep::Norm && scene.norm.kind == NormKind::Rms)
        return QCoreApplication::translate("Walkthrough", "RMS norm");
    if (step == WalkStep::Divide && scene.softCap)
        return QCoreApplication::translate("Walkthrough", "Divide, then soft-cap");
    if (step == WalkStep::Divide && !scene.scoreTerms.empty())
        return QCoreApplication::translate("Walkthrough", "Add the positions, divide");
    return walkStepTitle(step);
}

QString modelTourStepTitle(ModelTourStep step) {
    const char* titles[kModelTourStepCount] = {
        "A model trained here, on a repeated sequence", "The previous-token head",
        "The induction head", "How the two heads compose", "Switch the previous-token head off"};
    return QCoreApplication::translate("Walkthrough", titles[static_cast<int>(step)]);
}

WalkthroughPanel::TourComposition WalkthroughPanel::tourComposition() const {
    if (composition_) return *composition_;
    const ModelTourPlan& p = *plan_;
    const model::Model& m = *session_->model();
    const model::CompositionResult scores = model::compositionScores(m);
    const int H = m.config.heads;
    TourComposition c;
    c.score =
        scores.k(p.previousLayer * H + p.previousHead, p.inductionLayer * H + p.inductionHead);
    c.baseline = model::randomCompositionBaseline(m.config.hidden, m.config.headDim);
    c.rank = 1;
    for (Eigen::Index i = 0; i < scores.k.rows(); ++i)
        for (Eigen::Index j = 0; j < scores.k.cols(); ++j)
            if (i / H < j / H) {
                ++c.pairs;
                if (scores.k(i, j) > c.score) ++c.rank;
            }
    composition_ = c;
    return c;
}

double WalkthroughPanel::tourLoss(bool previousOff) const {
    std::optional<double>& held = previousOff ? lossOff_ : lossOn_;
    if (held) return *held;
    const ModelTourPlan& p = *plan_;
    model::RunOptions options;
    if (previousOff) options.ablations = {{p.previousLayer, p.previousHead}};
    const auto run = model::runModel<float>(*session_->model(), p.ids, options);
    held = model::nextTokenLoss(run, static_cast<int>(p.ids.size() / 2));
    return *held;
}

void WalkthroughPanel::refreshModelTour() {
    const auto step = static_cast<ModelTourStep>(step_);
    heading_->setText(tr("Step %1 of %2 · %3")
                          .arg(step_ + 1)
                          .arg(kModelTourStepCount)
                          .arg(modelTourStepTitle(step)));
    back_->setEnabled(step_ > 0);
    next_->setEnabled(step_ < kModelTourStepCount - 1);
    map_->widget()->hide();
    const ModelTourPlan& p = *plan_;
    const int period = static_cast<int>(p.ids.size() / 2);
    const QString previous = tr("layer %1, head %2").arg(p.previousLayer).arg(p.previousHead);
    const QString induction = tr("layer %1, head %2").arg(p.inductionLayer).arg(p.inductionHead);
    if (!tourModelIsOpen()) {
        formula_->setText(tr("Opening builtin:%1 …").arg(tourModelName()));
        explanation_->setText(
            tr("The tour opens the built-in model <b>%1</b> on its sequence of %2 tokens, then "
               "the same %2 again.")
                .arg(tourModelName())
                .arg(period));
        return;
    }
    const std::shared_ptr<const document::ModelSession::Run> base = session_->baseRun();
    const std::shared_ptr<const document::ModelSession::Run> now = session_->currentRun();
    const double stripeBase =
        inductionStripe(session_->headWeights(*base, p.inductionLayer, p.inductionHead), p.ids);
    const double stripeNow =
        now ? inductionStripe(session_->headWeights(*now, p.inductionLayer, p.inductionHead), p.ids)
            : stripeBase;
    const model::Matrix<float> back = session_->headWeights(*base, p.previousLayer, p.previousHead);
    double previousWeight = 0;
    for (Eigen::Index i = 1; i < back.rows(); ++i)
        previousWeight += back(i, i - 1);
    previousWeight /= static_cast<double>(std::max<Eigen::Index>(1, back.rows() - 1));
    const QString config = tr("%1 layers × %2 heads")
                               .arg(session_->model()->config.layers)
                               .arg(session_->model()->config.heads);
    QString formula, text;
    switch (step) {
        case ModelTourStep::Open:
            formula = tr("%1 random tokens, then the same %1 again").arg(period);
            text = tr("This model (%1) was trained in this program, by <i>attention-explorer "
                      "train</i>, on one task only: a random sequence, then the same sequence "
                      "again, where every token of the second copy must predict the next one. "
                      "Only the first copy can tell what comes next, so the model had to learn to "
                      "look it up. It is open on such a sequence (the <b>Model</b> tab shows "
                      "every head). Two heads do the work; the next steps open them.")
                       .arg(config);
            break;
        case ModelTourStep::PreviousToken:
            formula = tr("%1: token i looks at token i − 1").arg(previous);
            text = tr("In %1 every row puts its weight just left of the diagonal, on the token "
                      "before it (mean weight %2 here). After layer %3, each position therefore "
                      "also carries <i>which token came before it</i>. That predicts nothing on "
                      "its own: the next head uses it.")
                       .arg(previous)
                       .arg(num(previousWeight))
                       .arg(p.previousLayer);
            break;
        case ModelTourStep::Induction:
            formula = tr("%1: token i looks at the token after its earlier copy").arg(induction);
            text = tr("In the second copy the weight of %1 sits on a stripe parallel to the "
                      "diagonal, %2 tokens to its left: on the token that <i>followed</i> the "
                      "earlier occurrence of the current token (mean weight %3 on that stripe). "
                      "The head looks for the key whose previous token, written there by %4, is "
                      "the current token, and copies that key's token: what comes next. In the "
                      "first copy there is nothing to find and the weight spreads out. (The "
                      "Heads table's induction column reads lower: it measures on this text "
                      "repeated once more, where each token has several earlier copies.)")
                       .arg(induction)
                       .arg(period - 1)
                       .arg(num(stripeBase))
                       .arg(previous);
            break;
        case ModelTourStep::Composition: {
            const TourComposition c = tourComposition();
            formula = tr("K-composition %1 → %2 = %3 (random weights: %4)")
                          .arg(QStringLiteral("L%1H%2").arg(p.previousLayer).arg(p.previousHead),
                               QStringLiteral("L%1H%2").arg(p.inductionLayer).arg(p.inductionHead),
                               num(c.score), num(c.baseline));
            text =
                tr("The weights alone show the circuit. K-composition measures how much of what "
                   "%1 writes (its W_O·W_V) the keys of %2 read (its W_Q·W_Kᵀ): "
                   "‖W_OV·W_QKᵀ‖ / (‖W_OV‖·‖W_QKᵀ‖). Here it is %3, %4 times what heads of random "
                   "weights of the same shape give (%5), and it ranks %6 of the %7 pairs of "
                   "heads in different layers. The <b>Workbench</b> tab shows the whole K-"
                   "composition matrix: the previous-token head's row stands out at the "
                   "induction heads' columns.")
                    .arg(previous, induction, num(c.score))
                    .arg(num(c.score / c.baseline))
                    .arg(num(c.baseline))
                    .arg(c.rank)
                    .arg(c.pairs);
            break;
        }
        case ModelTourStep::SwitchOff: {
            formula = tr("%1 → 0").arg(previous);
            // The column's own number, named as such: the stripe's mean weight is another measure
            // (on this sequence), and the two must not be read as one.
            QString column = tr("is being measured");
            const document::RunAnalysis& analysis = session_->analysis();
            const std::size_t row = static_cast<std::size_t>(
                p.inductionLayer * session_->model()->config.heads + p.inductionHead);
            if (analysis.induction == model::InductionState::Measured &&
                row < analysis.summaries.size())
                column = tr("reads %1").arg(num(analysis.summaries[row].induction));
            text = tr("Layer %1, head %2 now adds zeros (it is switched off in the controls' "
                      "heads). Look at %3 in the <b>Model</b> tab: its stripe fades. The mean "
                      "weight on the stripe (step 3's measure, on this sequence) falls from %4 "
                      "with every head on to %5 now. The Heads table's induction score, "
                      "measured on this sequence repeated once more, %6 for it now. Without the "
                      "previous-token head no position says which token came before it, and the "
                      "induction head no longer finds where to look. The model's loss on the "
                      "second copy's next tokens jumps from %7 to %8 nats a token (guessing "
                      "among the first copy's %9 tokens would cost %10). Back (or Ctrl+Z) "
                      "switches it on again.")
                       .arg(p.previousLayer)
                       .arg(p.previousHead)
                       .arg(induction)
                       .arg(num(stripeBase))
                       .arg(num(stripeNow))
                       .arg(column)
                       .arg(num(tourLoss(false)), num(tourLoss(true)))
                       .arg(period)
                       .arg(num(std::log(static_cast<double>(period))));
            break;
        }
    }
    formula_->setText(formula);
    explanation_->setText(text);
}

void WalkthroughPanel::refresh() {
    refresher_->refreshed();
    if (tour_ == WalkTour::TrainedModel && plan_) {
        refreshModelTour();
        return;
    }
    const Scene& scene = document_->engine().scene();  // the scene of the shown results
    heading_->setText(tr("Step %1 of %2 · %3")
                          .arg(step_ + 1)
                          .arg(kWalkStepCount)
                          .arg(walkStepTitle(currentStep(), scene)));
    back_->setEnabled(step_ > 0);
    next_->setEnabled(step_ < kWalkStepCount - 1);
    if (scene.tokens.empty() || !document_->errorText().isEmpty()) {
        explanation_->setText(tr("Nothing computed yet."));
        return;
    }
    const plot::EngineF& engine = document_->engine();
    const int h = std::clamp(grid_->head(), 0, engine.heads() - 1);
    const int i = std::clamp(grid_->selectedRow(), 0, scene.queryCount() - 1);
    const QString qi = quoted(scene.tokens, i);
    const int dh = engine.dHead();
    const std::vector<std::string>& keys = scene.keyTokens();
    QString formula, text;
    switch (currentStep()) {
        case WalkStep::Inputs: {
            formula = QStringLiteral("X = embeddings + positions");
            const QString positions =
                scene.positional.kind == PositionalKind::None
                    ? tr("This scene adds no positions, so X is the embeddings as they are and "
                         "word order is invisible to the layer (see Explain › Why positions).")
                : scene.positional.kind == PositionalKind::Sinusoidal
                    ? tr("Sinusoidal positions (base %1) are added: token t gets sin and cos "
                         "waves of t, a different pattern for every place in the sentence.")
                          .arg(num(scene.positional.base))
                    : tr("Learned positions are added: row t of a trained table goes to the "
                         "token at place t.");
            const MatrixD x = inputsBeforeNorm(scene);
            text = tr("Each of the <b>%1</b> tokens is a row of <b>%2</b> numbers (d_model). %3 "
                      "Row %4 (%5) is now %6.")
                       .arg(scene.queryCount())
                       .arg(scene.dModel())
                       .arg(positions)
                       .arg(i)
                       .arg(qi, vec(x.row(i)));
            if (scene.hasSource) {
                text += tr(" The source sentence (%1 tokens) is prepared the same way; it will "
                           "give the keys and values.")
                            .arg(scene.keyCount());
            }
            break;
        }
        case WalkStep::Norm: {
            const bool rms = scene.norm.kind == NormKind::Rms;
            formula = rms ? QStringLiteral("x̂ = x / √(mean(x²) + ε) · γ   (per token)")
                          : QStringLiteral("x̂ = (x − mean) / √(var + ε) · γ + β   (per token)");
            if (!scene.norm.enabled) {
                text =
                    tr("<b>Layer norm is off in this scene:</b> X goes to the projections "
                       "unchanged. Open the gpt2-style example to see it at work.");
            } else if (rms) {
                // Llama's and Qwen's norm: no mean is taken away and there is no β.
                const MatrixD before = inputsBeforeNorm(scene);
                const double rootMeanSquare =
                    std::sqrt(before.row(i).squaredNorm() / static_cast<double>(before.cols()));
                const auto after = engine.x().row(i);
                text = tr("Each token's row is divided by its root mean square, so no token "
                          "shouts louder than the others. Unlike layer norm (GPT-2, BERT) it "
                          "takes no mean away and adds no β: Llama and Qwen use it because it is "
                          "cheaper and works as well. Row %1 (%2) had root mean square %3; "
                          "divided by it the row's is 1, then γ scales each dimension, and it "
                          "reads %4.")
                           .arg(i)
                           .arg(qi, num(rootMeanSquare), vec(after));
            } else {
                const MatrixD before = inputsBeforeNorm(scene);
                const ops::RowMoments moments = ops::rowMoments(before.row(i));
                const double mean = moments.mean;
                const double sd = std::sqrt(moments.variance);
                const auto after = engine.x().row(i);
                const double meanAfter = after.cast<double>().mean();
                text = tr("Each token's row is rescaled on its own, so no token shouts louder "
                          "than the others. Row %1 (%2) had mean %3 and spread %4; after the "
                          "norm its mean is %5 (then γ and β shift it a little), and it reads "
                          "%6.")
                           .arg(i)
                           .arg(qi, num(mean), num(sd), num(meanAfter), vec(after));
            }
            break;
        }
        case WalkStep::Query:
        case WalkStep::Key:
        case WalkStep::Value: {
            const bool query = currentStep() == WalkStep::Query;
            const bool key = currentStep() == WalkStep::Key;
            const QString name = query ? QStringLiteral("Q")
                                 : key ? QStringLiteral("K")
                                       : QStringLiteral("V");
            const QString from =
                query || !scene.hasSource ? QStringLiteral("X") : QStringLiteral("X_source");
            formula = QStringLiteral("%1 = %2 · W_%1 + b_%1\nhead %3: columns %4–%5")
                          .arg(name, from)
                          .arg(h)
                          .arg(h * dh)
                          .arg((h + 1) * dh - 1);
            const QString role = query ? tr("Every token asks a question: its query.")
                                 : key ? tr("Every token offers a label to be matched: its key.")
                                       : tr("Every token has content to hand over: its value.");
            const ProjectionMode mode = scene.projections.mode;
            QString modeNote;
            if (mode == ProjectionMode::Identity) {
                modeNote = tr(" This scene has no projections (identity): %1 = X.").arg(name);
            } else if (key && mode == ProjectionMode::SharedQK) {
                modeNote = tr(" This scene shares one matrix: W_K = W_Q, so keys are queries.");
            }
            // Rotary positions turn Q and K (not V) after the projection: say which dimensions.
            if ((query || key) && scene.rotary) {
                const int turned = scene.rotary->turnedDims(dh) / 2 * 2;
                modeNote +=
                    turned < dh
                        ? tr(" Then rotary positions turn it by the token's place, but only "
                             "dimensions 0–%1 (partial rotary): %2–%3 keep no position, so they "
                             "match by content alone.")
                              .arg(turned - 1)
                              .arg(turned)
                              .arg(dh - 1)
                        : tr(" Then rotary positions turn each pair of its dimensions by an "
                             "angle that grows with the token's place (Explain › Why rotary).");
            } else if ((query || key) && session_ && session_->model() && session_->layer() >= 0 &&
                       session_->model()->config.architecture().positions ==
                           model::PositionKind::Rotary) {
                // A layer of a rotary model left without rotation (SmolLM3's NoPE layers).
                modeNote +=
                    tr(" This layer turns nothing by position: no rotary positions "
                       "(NoPE), so only the causal mask tells it the order.");
            }
            const plot::EngineF::ConstBlock m = query ? engine.headQuery(h)
                                                : key ? engine.headKey(h)
                                                      : engine.headValue(h);
            const int row = query ? i : 0;
            const std::vector<std::string>& names = query ? scene.tokens : keys;
            text = tr("%1 Head %2 multiplies each row of %3 (%4 wide) by its %5 columns of W_%6, "
                      "giving d_head = %5 numbers per token.%7 %8 of %9 is %10.")
                       .arg(role)
                       .arg(h)
                       .arg(from)
                       .arg(scene.dModel())
                       .arg(dh)
                       .arg(name, modeNote, QStringLiteral("%1_%2").arg(name.toLower()).arg(row),
                            quoted(names, row), vec(m.row(row)));
            break;
        }
        case WalkStep::Scores: {
            formula = QStringLiteral("scores = Q_h · K_hᵀ     score_ij = q_i · k_j");
            const auto s = engine.scores(h).row(i);
            Eigen::Index hi = 0, lo = 0;
            s.maxCoeff(&hi);
            s.minCoeff(&lo);
            text = tr("Every query is compared with every key by a dot product: large when they "
                      "point the same way. Query %1 (%2) matches %3 best (%4) and %5 least (%6). "
                      "The matrix is %7 × %8.")
                       .arg(i)
                       .arg(qi, quoted(keys, static_cast<int>(hi)), num(s(hi)),
                            quoted(keys, static_cast<int>(lo)), num(s(lo)))
                       .arg(scene.queryCount())
                       .arg(scene.keyCount());
            break;
        }
        case WalkStep::Divide: {
            const bool before = !scene.scoreTerms.beforeScale.empty();
            const bool after = !scene.scoreTerms.afterScale.empty();
            formula = QStringLiteral("scaled = %1 / %2%3")
                          .arg(before ? QStringLiteral("(scores + position terms)")
                                      : QStringLiteral("scores"),
                               num(engine.divisor()),
                               after ? QStringLiteral(" + position bias") : QString());
            QString why;
            switch (scene.scale.kind) {
                case ScaleKind::SqrtDk:
                    why = tr("√d_k with d_k = %1").arg(dh);
                    break;
                case ScaleKind::SqrtDmodel:
                    why = tr("√d_model with d_model = %1").arg(scene.dModel());
                    break;
                case ScaleKind::None:
                    why = tr("no scaling");
                    break;
                case ScaleKind::Divisor:
                    why = tr("set by hand; √d_k would be %1").arg(num(std::sqrt(dh)));
                    break;
            }
            const auto raw = engine.scores(h).row(i);
            const auto scaled = engine.scaled(h).row(i);
            text = tr("<b>The divisor is now %1</b> (%2). Query %3's scores ran from %4 to %5; "
                      "divided, from %6 to %7. Dot products of d_k numbers grow like √d_k, and "
                      "without the divisor the softmax would pick one key and ignore the rest "
                      "(Explain › Why √d_k).")
                       .arg(num(engine.divisor()), why)
                       .arg(i)
                       .arg(num(raw.minCoeff()), num(raw.maxCoeff()), num(scaled.minCoeff()),
                            num(scaled.maxCoeff()));
            if (before || after) {
                // DeBERTa's disentangled terms and MPNet's relative bias: how far apart two
                // tokens are enters the score itself, not the embeddings.
                const Eigen::Index near = std::min<Eigen::Index>(i + 1, scene.keyCount() - 1);
                const double term =
                    before ? engine.positionTerms(h)(i, near) : engine.positionBias(h)(i, near);
                text += tr(" <b>This model adds where the tokens are to the scores themselves</b>"
                           ": %1 for each query and key, %2. Query "
                           "%3 and key %4 get %5. See the %6 map.")
                            .arg(before ? tr("a content→position and a position→content term "
                                             "before the division")
                                        : tr("a learned bias after the division"),
                                 before ? tr("from their distance and what they hold")
                                        : tr("from their distance alone"))
                            .arg(i)
                            .arg(near)
                            .arg(num(term))
                            .arg(before ? tr("position terms") : tr("position bias"));
            }
            if (scene.softCap) {
                // Gemma 2's logit soft-cap: the classroom's clearest look at a bounded score.
                const double cap = *scene.softCap;
                const auto capped = engine.capped(h).row(i);
                Eigen::Index top = 0;
                scaled.maxCoeff(&top);
                formula += QStringLiteral("\ncapped = %1 · tanh(scaled / %1)").arg(num(cap));
                text += tr(" <b>Then the soft-cap</b>: every scaled score x becomes %1·tanh(x / "
                           "%1), so none can pass ±%1 and no key can win the softmax by an "
                           "enormous score. Query %2's largest, %3, becomes %4; its row now "
                           "runs from %5 to %6. Small scores pass almost unchanged: compare the "
                           "scaled map with the capped one.")
                            .arg(num(cap))
                            .arg(i)
                            .arg(num(scaled(top)), num(capped(top)), num(capped.minCoeff()),
                                 num(capped.maxCoeff()));
            }
            break;
        }
        case WalkStep::Mask: {
            const QString fill =
                std::isinf(scene.maskFill) ? QStringLiteral("−∞") : num(scene.maskFill);
            formula =
                QStringLiteral("%1_ij = %2 where the mask hides (i, j)")
                    .arg(scene.softCap ? QStringLiteral("capped") : QStringLiteral("scaled"), fill);
            const BoolMatrix& allowed = engine.allowed();
            const long hidden = static_cast<long>(allowed.size() - allowed.count());
            if (hidden == 0) {
                text =
                    tr("<b>Nothing is masked in this scene:</b> every query sees every key. "
                       "Tick <i>causal</i> (or press C) to hide the future, as a language "
                       "model must.");
            } else {
                QStringList kinds;
                if (scene.mask.causal) kinds << tr("causal");
                if (scene.mask.window && scene.mask.causal) {
                    // A model's sliding window W, held as the causal part with window W − 1.
                    kinds << tr("a sliding window of W = %1: each query sees itself and the %2 "
                                "keys before it, older ones hatched the other way")
                                 .arg(*scene.mask.window + 1)
                                 .arg(*scene.mask.window);
                } else if (scene.mask.window) {
                    kinds << tr("window ±%1").arg(*scene.mask.window);
                }
                if (!scene.mask.padding.empty()) kinds << tr("padding");
                if (scene.mask.allowed) kinds << tr("custom cells");
                text = tr("%1 of %2 query–key pairs are hidden (%3; hatched in the maps). Their "
                          "scores become %4 before the softmax, so their weights are %5. Query "
                          "%6 (%7) sees %8 of %9 keys.")
                           .arg(hidden)
                           .arg(allowed.size())
                           .arg(kinds.join(QStringLiteral(", ")), fill,
                                std::isinf(scene.maskFill) ? tr("exactly 0") : tr("close to 0"))
                           .arg(i)
                           .arg(qi)
                           .arg(allowed.row(i).count())
                           .arg(scene.keyCount());
            }
            break;
        }
        case WalkStep::Softmax: {
            formula = QStringLiteral("w_ij = exp(scaled_ij − max_j) / Σ_j exp(scaled_ij − max_j)");
            const auto w = engine.weights(h).row(i);
            Eigen::Index top = 0;
            w.maxCoeff(&top);
            double bits = 0;
            for (Eigen::Index j = 0; j < w.size(); ++j) {
                if (w(j) > 0) bits -= w(j) * std::log2(static_cast<double>(w(j)));
            }
            text = tr("Each row turns into positive weights that add up to 1. Query %1 (%2) "
                      "gives %3 of its attention to %4; its row's entropy is %5 bits (0: one "
                      "key only, %6: all keys alike).")
                       .arg(i)
                       .arg(qi, num(w(top)), quoted(keys, static_cast<int>(top)), num(bits),
                            num(std::log2(static_cast<double>(w.size()))));
            break;
        }
        case WalkStep::Mix: {
            formula = QStringLiteral("context_i = Σ_j w_ij · v_j");
            const auto w = engine.weights(h).row(i);
            Eigen::Index top = 0;
            w.maxCoeff(&top);
            text = tr("Each query takes a weighted average of the value rows. The biggest share "
                      "of query %1's (%2): %3 × v of %4. Its context is %5: %6 numbers, one head's "
                      "answer. The Neuron view (F4) shows every term.")
                       .arg(i)
                       .arg(qi, num(w(top)), quoted(keys, static_cast<int>(top)),
                            vec(engine.context(h).row(i)))
                       .arg(dh);
            break;
        }
        case WalkStep::Concat: {
            formula =
                QStringLiteral("concat = [context_0 | … | context_%1]").arg(engine.heads() - 1);
            text = engine.heads() == 1
                       ? tr("With one head there is nothing to join: the concatenation is head "
                            "0's context, %1 wide.")
                             .arg(dh)
                       : tr("The %1 heads' contexts are put side by side: %1 × %2 = %3 columns "
                            "(lines mark where each head starts). Each head looked for something "
                            "different; here their findings sit next to each other.")
                             .arg(engine.heads())
                             .arg(dh)
                             .arg(scene.dProj());
            break;
        }
        case WalkStep::OutputProjection: {
            formula = QStringLiteral("output = concat · W_O + b_O");
            if (!engine.hasOutput()) {
                text =
                    tr("<b>This scene has no output projection (W_O):</b> the concatenation is "
                       "the layer's result. Weights › output projection adds one.");
            } else {
                text = tr("W_O (%1 × %2) mixes the heads' findings into one vector per token, "
                          "ready to be added back to the token's embedding. Output row %3 (%4) "
                          "is %5.")
                           .arg(scene.dProj())
                           .arg(scene.dOut())
                           .arg(i)
                           .arg(qi, vec(engine.output().row(i)));
            }
            break;
        }
    }
    text += crossAttentionNote(scene, engine, currentStep(), h, i);
    formula_->setText(formula);
    explanation_->setText(text);
    fillMatrixMap();
    if (active_) grid_->setHighlightedStages(walkStepStages(currentStep(), scene));
}

// Inputs and weight matrices are not grid stages: the panel shows the one the step uses.
void WalkthroughPanel::fillMatrixMap() {
    const plot::EngineF& engine = document_->engine();
    const Scene& scene = engine.scene();
    const int h = std::clamp(grid_->head(), 0, engine.heads() - 1);
    const int dh = engine.dHead();
    plot::EngineF::Matrix m;
    QString title, rowTitle = tr("dimension");
    QStringList rows;
    const Projections& p = scene.projections;
    const bool projected = p.mode != ProjectionMode::Identity;
    switch (currentStep()) {
        case WalkStep::Inputs:
            m = inputsBeforeNorm(scene).cast<float>();
            title = tr("X = embeddings + positions");
            break;
        case WalkStep::Norm:
            m = engine.x();
            title = !scene.norm.enabled                ? tr("X (no layer norm)")
                    : scene.norm.kind == NormKind::Rms ? tr("X after RMS norm")
                                                       : tr("X after layer norm");
            break;
        case WalkStep::Query:
            if (projected) m = p.query.middleCols(h * dh, dh).cast<float>();
            title = tr("W_Q, head %1's columns").arg(h);
            break;
        case WalkStep::Key:
            if (projected) {
                const MatrixD& w = p.mode == ProjectionMode::SharedQK ? p.query : p.key;
                // With grouped kv heads, head h reads kv head h / (H / H_kv) of W_K and W_V.
                m = w.middleCols(scene.keyValueHeadOf(h) * dh, dh).cast<float>();
            }
            title = tr("W_K, head %1's columns").arg(h);
            break;
        case WalkStep::Value:
            if (projected) m = p.value.middleCols(scene.keyValueHeadOf(h) * dh, dh).cast<float>();
            title = tr("W_V, head %1's columns").arg(h);
            break;
        case WalkStep::OutputProjection:
            if (p.hasOutput) m = p.output.cast<float>();
            title = tr("W_O");
            break;
        default:
            break;
    }
    const bool inputs = currentStep() == WalkStep::Inputs || currentStep() == WalkStep::Norm;
    map_->widget()->setVisible(m.size() > 0);
    if (m.size() == 0) return;
    rows = inputs ? tokenLabels(scene.tokens) : indexLabels(m.rows());
    if (inputs) rowTitle = tr("token");
    map_->setTitle(title);
    map_->setAxisTitles(rowTitle, tr("dimension"));
    map_->setLabels(rows, indexLabels(m.cols()), false);
    map_->setGradient(plot::ColorMap::RdBu);
    map_->setMatrix(m);
    const double a = m.cwiseAbs().maxCoeff();
    map_->setDataRange(-(a > 0 ? a : 1.0), a > 0 ? a : 1.0);
    map_->setShowValues(true);
    map_->setSelectedRow(inputs ? std::clamp(grid_->selectedRow(), 0, scene.queryCount() - 1) : -1);
    map_->replot();
}

}  // namespace ae::ui
