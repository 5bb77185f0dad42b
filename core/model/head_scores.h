#pragma once
// The scores a head is summarized by, as one table. Every place that shows them (the model
// view's table and the grid's read-out, `heads` and its JSON, the window's CSV export) lists the
// rows of headScores() in order, so a new score is a field of HeadSummary, its measure and one
// row. docs/models.md, "Head summaries", has the formulas. Plain C++: the names are the rows'
// own, and the window shows them as they are.

#include <cstddef>
#include <string_view>
#include <vector>

#include "core/ops.h"

namespace ae::model {

// One head's behaviour on the current text. Every score is a mean over the query rows it is
// defined for (named below; padded rows never count), so heads of different layers compare. A
// score no row defines (previousToken on one token) is NaN, for the caller to show as "n/a".
struct HeadSummary {
    int layer = 0;
    int head = 0;
    double entropy = 0;  // mean over rows of −Σ_j w_ij·ln w_ij (nats; 0·ln 0 = 0, so the keys a
                         // row cannot see add nothing): 0 for a one-hot row, ln n for n equal keys
    double firstToken = 0;     // mean over rows of the weight on key 0 (BOS for decoders)
    double previousToken = 0;  // mean over rows i ≥ 1 of the weight on key i − 1
    double self = 0;           // mean over rows of the weight on key i (the diagonal)
    // Clark et al. (2019), "What does BERT look at?": the mean over rows of the total weight on
    // the separator tokens ([SEP], </s>). NaN when the text has none.
    double toSeparator = 0;
    // TransformerLens's induction score, on a text repeated twice (tokens t, then t again, after
    // an optional prefix such as BOS): the mean over the second copy's rows of the weight from
    // the copy of token i to the token after i's first occurrence. NaN until measured.
    double induction = 0;
    // Xiao et al. (2023)'s attention sink, measured by what moves (Kobayashi et al. 2020): the
    // mean over rows of key 0's share of α_ij·‖v_j·W_O^h‖ (a row moving nothing counts 0). NaN
    // until measured with the values (addValueNormScores).
    double sinkNorm = 0;
};

// Where a run's tokens are a text repeated twice: a prefix of `prefixLength` tokens (such as
// BOS), then `period` tokens, then the same `period` tokens again. period 0: not such a run.
struct RepeatedText {
    int prefixLength = 0;
    int period = 0;
};

// One head's attention weights on a run, read as double whatever the run computed in: T x T,
// row i query i's weights over the keys; which positions are tokens (bert's padding is not);
// and, on a run of a repeated text, where its copies are. A view: the matrix and the mask must
// outlive it.
class HeadWeights {
public:
    // `separators`: the positions of the separator tokens, or null (none).
    HeadWeights(const ops::RowMajorMatrix<float>& weights, const std::vector<int>& attentionMask,
                RepeatedText repeated = {}, const std::vector<int>* separators = nullptr)
        : floats_(weights.data()),
          tokens_(static_cast<int>(weights.rows())),
          keys_(static_cast<int>(weights.cols())),
          mask_(&attentionMask),
          repeated_(repeated),
          separators_(separators) {}
    HeadWeights(const ops::RowMajorMatrix<double>& weights, const std::vector<int>& attentionMask,
                RepeatedText repeated = {}, const std::vector<int>* separators = nullptr)
        : doubles_(weights.data()),
          tokens_(static_cast<int>(weights.rows())),
          keys_(static_cast<int>(weights.cols())),
          mask_(&attentionMask),
          repeated_(repeated),
          separators_(separators) {}

    int tokens() const { return tokens_; }  // T, the query rows
    int keys() const { return keys_; }      // T, the columns
    // Query `query`'s weight on key `key`.
    double operator()(int query, int key) const {
        const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(query) * keys_ + key;
        return floats_ ? static_cast<double>(floats_[at]) : doubles_[at];
    }
    // Whether `position` is a token rather than padding (every position without a mask).
    bool isToken(int position) const {
        return mask_->empty() || (*mask_)[static_cast<size_t>(position)] != 0;
    }
    const RepeatedText& repeated() const { return repeated_; }
    // The separator tokens' positions (each in [0, keys)); empty when there are none.
    // ‖v_j·W_O^h‖ for every key j (keys() numbers), or null: the scores that need the values
    // are then NaN. The numbers must outlive the view.
    void setValueNorms(const double* norms) { valueNorms_ = norms; }
    const double* valueNorms() const { return valueNorms_; }
    const std::vector<int>& separators() const {
        static const std::vector<int> none;
        return separators_ ? *separators_ : none;
    }

private:
    const float* floats_ = nullptr;
    const double* doubles_ = nullptr;
    int tokens_ = 0;
    int keys_ = 0;
    const std::vector<int>* mask_;
    RepeatedText repeated_;
    const std::vector<int>* separators_ = nullptr;
    const double* valueNorms_ = nullptr;
};

// One score: how every consumer names it, where a summary keeps it, and how it is measured.
struct HeadScore {
    const char* key;         // JSON key and CSV column: "first_token"
    const char* label;       // the table's column title: "First token"
    const char* shortLabel;  // the title of a column too narrow for the label: "First"
    const char* help;        // the column's tooltip, one sentence
    // Measured on a second run, of the text repeated twice (induction): summarizeHeads leaves it
    // NaN and addRepeatedRunScores fills it, and the window says whether it is the run's own.
    bool needsRepeatedRun;
    double HeadSummary::*value;  // the summary's field
    // The score of one head (NaN when no row defines it). A repeated-run score reads where the
    // copies are from head.repeated().
    double (*measure)(const HeadWeights& head);
    // Measured with the values too (HeadWeights::setValueNorms): NaN without them, and
    // addValueNormScores (core/model/workbench.h) fills it.
    bool needsValueNorms = false;
};

// The rows, in the order every consumer lists them: entropy, first_token, previous_token, self,
// induction, to_separator, sink_norm (a new score comes last, so scripts reading the columns keep
// working).
const std::vector<HeadScore>& headScores();
// The row whose key is `key`; throws std::invalid_argument for a key no row has.
const HeadScore& headScore(std::string_view key);

}  // namespace ae::model
