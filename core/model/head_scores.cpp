#include "core/model/head_scores.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace ae::model {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double meanOf(double sum, int count) {
    return count > 0 ? sum / count : kNaN;
}

// Each measure sums over the token rows in order into one double, so a score does not depend on
// how many others are measured with it.

double meanEntropy(const HeadWeights& w) {
    double sum = 0;
    int rows = 0;
    for (int i = 0; i < w.tokens(); ++i) {
        if (!w.isToken(i)) continue;
        ++rows;
        for (int j = 0; j < w.keys(); ++j) {
            const double p = w(i, j);
            if (p > 0) sum -= p * std::log(p);
        }
    }
    return meanOf(sum, rows);
}

double meanFirstTokenWeight(const HeadWeights& w) {
    double sum = 0;
    int rows = 0;
    for (int i = 0; i < w.tokens(); ++i) {
        if (!w.isToken(i)) continue;
        ++rows;
        sum += w(i, 0);
    }
    return meanOf(sum, rows);
}

double meanPreviousTokenWeight(const HeadWeights& w) {
    double sum = 0;
    int rows = 0;
    for (int i = 1; i < w.tokens(); ++i) {
        if (!w.isToken(i)) continue;
        ++rows;
        sum += w(i, i - 1);
    }
    return meanOf(sum, rows);
}

double meanSelfWeight(const HeadWeights& w) {
    double sum = 0;
    int rows = 0;
    for (int i = 0; i < w.tokens(); ++i) {
        if (!w.isToken(i)) continue;
        ++rows;
        sum += w(i, i);
    }
    return meanOf(sum, rows);
}

// Σ over the separator keys of w[i][s], averaged over the token rows; NaN without separators.
double meanSeparatorWeight(const HeadWeights& w) {
    if (w.separators().empty()) return kNaN;
    double sum = 0;
    int rows = 0;
    for (int i = 0; i < w.tokens(); ++i) {
        if (!w.isToken(i)) continue;
        ++rows;
        for (int s : w.separators())
            sum += w(i, s);
    }
    return meanOf(sum, rows);
}

// Key 0's share of α_ij·f_j (f = the value norms) in each token row, averaged; a row moving
// nothing counts 0. NaN without the values.
double meanSinkNormShare(const HeadWeights& w) {
    const double* f = w.valueNorms();
    if (!f) return kNaN;
    double sum = 0;
    int rows = 0;
    for (int i = 0; i < w.tokens(); ++i) {
        if (!w.isToken(i)) continue;
        ++rows;
        double moved = 0;
        for (int j = 0; j < w.keys(); ++j)
            moved += w(i, j) * f[j];
        if (moved > 0) sum += w(i, 0) * f[0] / moved;
    }
    return meanOf(sum, rows);
}

// With P = prefixLength and N = period: (1/N) Σ_{i=0}^{N−1} w[P+N+i][P+i+1], over the second
// copy's token rows.
double meanInductionWeight(const HeadWeights& w) {
    const int P = w.repeated().prefixLength, N = w.repeated().period;
    double sum = 0;
    int rows = 0;
    for (int i = 0; i < N; ++i) {
        if (!w.isToken(P + N + i)) continue;
        sum += w(P + N + i, P + i + 1);
        ++rows;
    }
    return meanOf(sum, rows);
}

}  // namespace

const std::vector<HeadScore>& headScores() {
    static const std::vector<HeadScore> rows = {
        {"entropy", "Entropy", "Ent.",
         "Mean over queries of the weights' entropy (nats): low is focused", false,
         &HeadSummary::entropy, meanEntropy},
        {"first_token", "First token", "First", "Mean weight on the first token (BOS for decoders)",
         false, &HeadSummary::firstToken, meanFirstTokenWeight},
        {"previous_token", "Previous token", "Prev.", "Mean weight on the token just before", false,
         &HeadSummary::previousToken, meanPreviousTokenWeight},
        {"self", "Self", "Self", "Mean weight of each token on itself", false, &HeadSummary::self,
         meanSelfWeight},
        {"induction", "Induction", "Ind.",
         "On the text repeated twice: weight on the token after the earlier copy of the current "
         "one",
         true, &HeadSummary::induction, meanInductionWeight},
        {"to_separator", "To [SEP]", "[SEP]",
         "Mean total weight on the separator tokens ([SEP], </s>): Clark et al. 2019's no-op "
         "attention",
         false, &HeadSummary::toSeparator, meanSeparatorWeight},
        {"sink_norm", "Sink (norms)", "Sink",
         "Share of what the head moves that comes from the first token: its weights times "
         "|v·W_O| (an attention sink looks there but moves little)",
         false, &HeadSummary::sinkNorm, meanSinkNormShare, true},
    };
    return rows;
}

const HeadScore& headScore(std::string_view key) {
    for (const HeadScore& score : headScores())
        if (key == score.key) return score;
    throw std::invalid_argument("no head score is called " + std::string(key));
}

}  // namespace ae::model
