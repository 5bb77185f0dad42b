#include "io/model/model_result.h"

#include <QDir>
#include <charconv>
#include <cstring>

#include "io/formats/json_numbers.h"
#include "io/formats/result_export.h"

namespace ae::io {
namespace {

template <typename List>
void appendIntegers(QByteArray& out, const List& values) {
    out.append('[');
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (i) out.append(',');
        out.append(QByteArray::number(static_cast<qlonglong>(values[i])));
    }
    out.append(']');
}

// NPY 1.0 with the given dtype descriptor and shape, then the raw little-endian data.
QByteArray npy(const char* descr, const QString& shape, const char* data, qsizetype bytes) {
    QByteArray header = QStringLiteral("{'descr': '%1', 'fortran_order': False, 'shape': %2, }")
                            .arg(QLatin1String(descr), shape)
                            .toLatin1();
    const qsizetype unpadded = 10 + header.size() + 1;
    header.append(QByteArray((64 - unpadded % 64) % 64, ' '));
    header.append('\n');
    QByteArray out("\x93NUMPY\x01\x00", 8);
    const quint16 length = static_cast<quint16>(header.size());
    out.append(static_cast<char>(length & 0xff));
    out.append(static_cast<char>(length >> 8));
    out.append(header);
    out.append(data, bytes);
    return out;
}

template <typename Derived>
QByteArray matrixNpy(const Eigen::MatrixBase<Derived>& m) {
    using Scalar = typename Derived::Scalar;
    const model::Matrix<Scalar> contiguous = m;  // a head's columns are a strided block
    return npy(sizeof(Scalar) == 8 ? "<f8" : "<f4",
               QStringLiteral("(%1, %2)").arg(contiguous.rows()).arg(contiguous.cols()),
               reinterpret_cast<const char*>(contiguous.data()),
               static_cast<qsizetype>(contiguous.size() * sizeof(Scalar)));
}

// Layer l of `run` as the result's layer object: hidden_in and every head's q, k, v, then, when
// the run kept the layer's maps, its scores and weights and the terms on them (position_bias,
// c2p, p2c); a decoder stack's layer adds its cross_heads.
template <typename Scalar>
void appendLayer(QByteArray& out, const model::ModelRun<Scalar>& run, std::size_t l) {
    const int layer = static_cast<int>(l);
    const model::LayerRecord<Scalar>& record = run.layers[l];
    out.append("\n{\"hidden_in\":");
    json::appendMatrix(out, record.hiddenIn, ",");
    out.append(",\"heads\":[");
    for (int h = 0; h < run.config.heads; ++h) {
        const auto at = static_cast<std::size_t>(h);
        if (h) out.append(",");
        out.append("\n{\"q\":");
        json::appendMatrix(out, run.q(layer, h), ",");
        out.append(",\"k\":");
        json::appendMatrix(out, run.k(layer, h), ",");
        out.append(",\"v\":");
        json::appendMatrix(out, run.v(layer, h), ",");
        if (record.hasMaps()) {
            out.append(",\"scores\":");
            json::appendMatrix(out, record.scores[at], ",");
            out.append(",\"weights\":");
            json::appendMatrix(out, record.weights[at], ",");
            if (!run.positionBias.empty()) {
                out.append(",\"position_bias\":");
                json::appendMatrix(out, run.positionBias[at], ",");
            }
            if (!record.contentToPosition.empty()) {
                out.append(",\"c2p\":");
                json::appendMatrix(out, record.contentToPosition[at], ",");
            }
            if (!record.positionToContent.empty()) {
                out.append(",\"p2c\":");
                json::appendMatrix(out, record.positionToContent[at], ",");
            }
        }
        out.append('}');
    }
    out.append("]");
    if (!record.cross.empty()) {
        const model::CrossRecord<Scalar>& cross = record.cross;
        const Eigen::Index hd = run.config.headDim;
        out.append(",\"cross_heads\":[");
        for (int h = 0; h < run.config.heads; ++h) {
            const auto at = static_cast<std::size_t>(h);
            if (h) out.append(",");
            out.append("\n{\"q\":");
            json::appendMatrix(out, cross.query.middleCols(h * hd, hd), ",");
            out.append(",\"k\":");
            json::appendMatrix(out, cross.key.middleCols(h * hd, hd), ",");
            out.append(",\"v\":");
            json::appendMatrix(out, cross.value.middleCols(h * hd, hd), ",");
            out.append(",\"scores\":");
            json::appendMatrix(out, cross.scores[at], ",");
            out.append(",\"weights\":");
            json::appendMatrix(out, cross.weights[at], ",");
            out.append('}');
        }
        out.append("]");
    }
    out.append("}");
}

template <typename Scalar>
void appendLayers(QByteArray& out, const model::ModelRun<Scalar>& run) {
    out.append('[');
    for (std::size_t l = 0; l < run.layers.size(); ++l) {
        if (l) out.append(",");
        appendLayer(out, run, l);
    }
    out.append("]");
}

}  // namespace

template <typename Scalar>
QByteArray modelResultJson(const model::ModelRun<Scalar>& run) {
    // By hand rather than through QJsonDocument: a GPT-2 run on 128 tokens holds ~15 million
    // numbers.
    QByteArray out;
    out.append("{\"format\":\"attention-explorer/model-result\",\"version\":1,\"family\":\"");
    out.append(model::familyName(run.config.family));
    out.append("\",\"tokens\":");
    appendIntegers(out, run.tokens);
    if (!run.attentionMask.empty()) {
        out.append(",\"attention_mask\":");
        appendIntegers(out, run.attentionMask);
    }
    if (!run.options.tokenTypes.empty()) {
        out.append(",\"token_types\":");
        appendIntegers(out, run.options.tokenTypes);
    }
    if (run.options.keptMaps == model::RunOptions::KeptMaps::Chosen) {
        // A run written with `run --layers`: only these layers' heads have scores and weights.
        std::vector<long long> withMaps;
        for (std::size_t l = 0; l < run.layers.size(); ++l)
            if (run.layers[l].hasMaps()) withMaps.push_back(static_cast<long long>(l));
        out.append(",\"map_layers\":");
        appendIntegers(out, withMaps);
    }
    out.append(",\"layers\":");
    appendLayers(out, run);
    out.append(",\n");
    if (run.config.isDecoder()) {
        out.append("\"logits\":");
        json::appendMatrix(out, run.logits, ",");
    } else {
        out.append("\"last_hidden\":");
        json::appendMatrix(out, run.lastHidden, ",");
        if (run.maskedLmLogits.size() > 0) {
            out.append(",\n\"mlm_logits\":");
            json::appendMatrix(out, run.maskedLmLogits, ",");
        }
    }
    out.append("}\n");
    return out;
}

template <typename Scalar>
QByteArray encoderDecoderResultJson(const model::EncoderDecoderRun<Scalar>& run) {
    const model::ModelRun<Scalar>& encoder = run.encoder;
    const model::ModelRun<Scalar>& decoder = run.decoder;
    QByteArray out;
    out.append("{\"format\":\"attention-explorer/model-result\",\"version\":1,\"family\":\"");
    out.append(model::familyName(encoder.config.family));
    out.append("\",\"tokens\":");
    appendIntegers(out, encoder.tokens);
    out.append(",\"decoder_tokens\":");
    appendIntegers(out, decoder.tokens);
    if (!encoder.attentionMask.empty()) {
        out.append(",\"attention_mask\":");
        appendIntegers(out, encoder.attentionMask);
    }
    out.append(",\"encoder_layers\":");
    appendLayers(out, encoder);
    out.append(",\n\"encoder_last_hidden\":");
    json::appendMatrix(out, encoder.lastHidden, ",");
    out.append(",\n\"decoder_layers\":");
    appendLayers(out, decoder);
    out.append(",\n\"logits\":");
    json::appendMatrix(out, decoder.logits, ",");
    out.append("}\n");
    return out;
}

namespace {

// The folder's writer: NAME.npy, atomically.
struct NpyFolder {
    QDir dir;
    explicit NpyFolder(const QString& directory) : dir(directory) {
        if (!QDir().mkpath(directory))
            throw WriteError(
                QStringLiteral("%1: cannot create the folder").arg(directory).toStdString());
    }
    void write(const QString& name, const QByteArray& bytes) const {
        writeFileAtomically(dir.filePath(name + ".npy"), bytes);
    }
    void writeIds(const QString& name, const std::vector<long long>& ids) const {
        std::vector<qint64> values(ids.begin(), ids.end());  // little-endian host
        write(name, npy("<i8", QStringLiteral("(%1,)").arg(values.size()),
                        reinterpret_cast<const char*>(values.data()),
                        static_cast<qsizetype>(values.size() * sizeof(qint64))));
    }
    // Every layer of `run` under `prefix` ("layer", "encoder_layer"): hidden_in, each head's q,
    // k, v and, with the layer's maps, scores, weights and the terms on them; a decoder stack's
    // cross-attention as PREFIX{l}_cross{h}_{q,k,v,scores,weights}.
    template <typename Scalar>
    void writeLayers(const model::ModelRun<Scalar>& run, const QString& prefix) const {
        const Eigen::Index hd = run.config.headDim;
        for (std::size_t l = 0; l < run.layers.size(); ++l) {
            const int layer = static_cast<int>(l);
            const model::LayerRecord<Scalar>& record = run.layers[l];
            const QString p = prefix + QStringLiteral("%1_").arg(l);
            write(p + "hidden_in", matrixNpy(record.hiddenIn));
            for (int h = 0; h < run.config.heads; ++h) {
                const auto at = static_cast<std::size_t>(h);
                const QString ph = p + QStringLiteral("head%1_").arg(h);
                write(ph + "q", matrixNpy(run.q(layer, h)));
                write(ph + "k", matrixNpy(run.k(layer, h)));
                write(ph + "v", matrixNpy(run.v(layer, h)));
                if (!record.cross.empty()) {
                    const QString pc = p + QStringLiteral("cross%1_").arg(h);
                    write(pc + "q", matrixNpy(record.cross.query.middleCols(h * hd, hd)));
                    write(pc + "k", matrixNpy(record.cross.key.middleCols(h * hd, hd)));
                    write(pc + "v", matrixNpy(record.cross.value.middleCols(h * hd, hd)));
                    write(pc + "scores", matrixNpy(record.cross.scores[at]));
                    write(pc + "weights", matrixNpy(record.cross.weights[at]));
                }
                if (!record.hasMaps()) continue;  // run --layers: not one of its layers
                write(ph + "scores", matrixNpy(record.scores[at]));
                write(ph + "weights", matrixNpy(record.weights[at]));
                if (!run.positionBias.empty())
                    write(ph + "position_bias", matrixNpy(run.positionBias[at]));
                if (!record.contentToPosition.empty())
                    write(ph + "c2p", matrixNpy(record.contentToPosition[at]));
                if (!record.positionToContent.empty())
                    write(ph + "p2c", matrixNpy(record.positionToContent[at]));
            }
        }
    }
};

}  // namespace

template <typename Scalar>
void writeModelNpyDirectory(const model::ModelRun<Scalar>& run, const QString& directory) {
    const NpyFolder folder(directory);
    folder.writeIds("tokens", run.tokens);
    folder.writeLayers(run, "layer");
    if (run.config.isDecoder()) {
        folder.write("logits", matrixNpy(run.logits));
    } else {
        folder.write("last_hidden", matrixNpy(run.lastHidden));
        if (run.maskedLmLogits.size() > 0)
            folder.write("mlm_logits", matrixNpy(run.maskedLmLogits));
    }
}

template <typename Scalar>
void writeEncoderDecoderNpyDirectory(const model::EncoderDecoderRun<Scalar>& run,
                                     const QString& directory) {
    const NpyFolder folder(directory);
    folder.writeIds("tokens", run.encoder.tokens);
    folder.writeIds("decoder_tokens", run.decoder.tokens);
    folder.writeLayers(run.encoder, "encoder_layer");
    folder.write("encoder_last_hidden", matrixNpy(run.encoder.lastHidden));
    folder.writeLayers(run.decoder, "decoder_layer");
    folder.write("logits", matrixNpy(run.decoder.logits));
}

template QByteArray modelResultJson<float>(const model::ModelRun<float>&);
template QByteArray modelResultJson<double>(const model::ModelRun<double>&);
template QByteArray encoderDecoderResultJson<float>(const model::EncoderDecoderRun<float>&);
template QByteArray encoderDecoderResultJson<double>(const model::EncoderDecoderRun<double>&);
template void writeModelNpyDirectory<float>(const model::ModelRun<float>&, const QString&);
template void writeModelNpyDirectory<double>(const model::ModelRun<double>&, const QString&);
template void writeEncoderDecoderNpyDirectory<float>(const model::EncoderDecoderRun<float>&,
                                                     const QString&);
template void writeEncoderDecoderNpyDirectory<double>(const model::EncoderDecoderRun<double>&,
                                                      const QString&);

}  // namespace ae::io
