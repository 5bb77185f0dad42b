#pragma once
// Writing a whole model's run (core/model/model.h): the result JSON that
// shared/reference/model_reference.py documents and checks (format
// "attention-explorer/model-result", version 1), or a directory of .npy files. Files are written
// atomically (io/formats/result_export.h); a failure throws WriteError naming the file.

#include <QByteArray>
#include <QString>

#include "core/model/model.h"

namespace ae::io {

// The result JSON: format, version, family, tokens, attention_mask (when one was given), layers
// (hidden_in, heads with q, k, v, scores, weights), then logits (decoders) or last_hidden (bert).
// Numbers in shortest round-trip form of the run's own type.
template <typename Scalar>
QByteArray modelResultJson(const model::ModelRun<Scalar>& run);

// An encoder–decoder run's result JSON, the reference's extension (seq2seq_families.py): tokens,
// decoder_tokens, attention_mask (the encoder's, when one was given), encoder_layers,
// encoder_last_hidden, decoder_layers (each with cross_heads: q, k, v, scores, weights), logits.
template <typename Scalar>
QByteArray encoderDecoderResultJson(const model::EncoderDecoderRun<Scalar>& run);

// tokens.npy (int64, shape (T,)), layer{l}_hidden_in.npy,
// layer{l}_head{h}_{q,k,v,scores,weights}.npy and logits.npy or last_hidden.npy (float32 for a
// float run, float64 for a double one), l and h from 0, into `directory` (created if missing).
template <typename Scalar>
void writeModelNpyDirectory(const model::ModelRun<Scalar>& run, const QString& directory);

// An encoder–decoder run as .npy files: tokens.npy and decoder_tokens.npy (int64),
// encoder_layer{l}_hidden_in.npy and encoder_layer{l}_head{h}_{q,k,v,scores,weights}.npy (T5:
// _position_bias too), encoder_last_hidden.npy, the decoder's layers as decoder_layer{l}_… with
// its cross-attention as decoder_layer{l}_cross{h}_{q,k,v,scores,weights}.npy, and logits.npy.
template <typename Scalar>
void writeEncoderDecoderNpyDirectory(const model::EncoderDecoderRun<Scalar>& run,
                                     const QString& directory);

}  // namespace ae::io
