#pragma once
// The model a layer scene came from, as its free-form viewJson records it under the key "model"
// (document/model_session.h): the folder or built-in name, a fingerprint of the model, the input
// and the open layer and head. A saved scene keeps it, so the session can open the same model on
// the same input again.

#include <QString>
#include <optional>
#include <string>
#include <vector>

namespace ae::model {
struct Model;
}

namespace ae::document {

// What the model runs on: a text (empty when the ids were typed), its ids, and padding; and for
// a sentence pair the second text, the token types and where the second sentence starts.
struct ModelInput {
    QString text;
    std::vector<long long> ids;
    std::vector<int> attentionMask;  // empty, or one 0/1 a token (bert padding)
    QString textPair;                // sentence B, or empty
    std::vector<int> tokenTypes;     // empty, or one sentence id a token
    int pairStart = -1;              // the first token of sentence B's part, or -1
    bool operator==(const ModelInput& o) const {
        return text == o.text && ids == o.ids && attentionMask == o.attentionMask &&
               textPair == o.textPair && tokenTypes == o.tokenTypes && pairStart == o.pairStart;
    }
    bool operator!=(const ModelInput& o) const { return !(*this == o); }
};

// What a layer scene's viewJson says about the model it came from, under the key "model".
// A built-in model (io/model/builtin_models.h) is referred to by its name: a saved file holds the
// name alone, and it is looked up again where the file is opened (another machine, another
// prefix).
struct ModelReference {
    QString folder;       // absolute while open; a saved file may hold it relative to itself
    QString builtIn;      // the built-in model's name, or empty (then `folder` says where)
    QString fingerprint;  // modelFingerprint() of the model when the scene was made
    QString text;         // the sentence; empty when the ids were typed
    std::vector<long long> ids;
    std::vector<int> attentionMask;  // empty, or one 0/1 a token (bert padding)
    QString textPair;                // a sentence pair's second text, or empty
    std::vector<int> tokenTypes;     // empty, or one sentence id a token
    int pairStart = -1;
    int layer = 0;
    int head = 0;
    ModelInput input() const { return {text, ids, attentionMask, textPair, tokenTypes, pairStart}; }
    bool operator==(const ModelReference& o) const {
        return folder == o.folder && builtIn == o.builtIn && fingerprint == o.fingerprint &&
               text == o.text && ids == o.ids && attentionMask == o.attentionMask &&
               textPair == o.textPair && tokenTypes == o.tokenTypes && pairStart == o.pairStart &&
               layer == o.layer && head == o.head;
    }
};

// The "model" object of a scene's viewJson, or nothing (no such key, or not readable).
std::optional<ModelReference> modelReference(const std::string& viewJson);
// `viewJson` (an object's text, or empty) with its "model" key set to `reference` (other keys
// kept).
std::string withModelReference(const std::string& viewJson, const ModelReference& reference);
// The reference's folder relative to `sceneFile`'s folder when it is near it (they share a
// folder below the root, and the path needs no more than two "../"), else absolute; a built-in
// model's name alone (no folder). And back: a relative folder resolved against `sceneFile`'s
// folder (a built-in model's reference is left as it is: the session looks the name up).
std::string withFolderRelativeTo(const std::string& viewJson, const QString& sceneFile);
std::string withFolderResolvedFrom(const std::string& viewJson, const QString& sceneFile);

// A short text that changes when the model's shape changes: the family, the sizes of the config
// and a hash of every tensor's name, dtype and shape ("gpt2 L2 H4/4 d32 hd8 V64 I128 #1a2b3c4d").
// Saved scenes keep it, so its form stays as it is.
QString modelFingerprint(const model::Model& model);

}  // namespace ae::document
