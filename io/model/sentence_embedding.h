#pragma once
// A sentence-transformers folder (all-MiniLM-L6-v2, all-mpnet-base-v2, bge, e5) is a Hugging Face
// model folder plus modules.json and its modules' folders (1_Pooling/, 2_Normalize/): the model
// opens as it is, and these files only say how the library turns the last hidden states into one
// sentence embedding. Attention is unaffected.

#include <QString>

namespace ae::io {

// What `folder`'s modules.json says about the sentence embedding, as one sentence for the model's
// info ("sentence-transformers: the sentence embedding is the mean of the last hidden states over
// the tokens, then normalized to length 1"); a file that cannot be read says so in the sentence;
// empty when the folder has no modules.json.
QString sentenceEmbeddingNote(const QString& folder);

}  // namespace ae::io
