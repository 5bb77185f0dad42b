#pragma once
// The models a user already has: the Hugging Face hub cache as huggingface_hub lays it out,
// HUB/models--ORG--NAME/snapshots/REVISION/ (files there are symlinks to ../../blobs/), with
// refs/main naming the revision the hub calls current. Listing reads config.json and the
// safetensors headers only, never the weights.

#include <QString>
#include <vector>

namespace ae::io {

// $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub.
QString hubCacheFolder();

struct HubModel {
    QString name;      // "ORG/NAME", from the folder's name
    QString snapshot;  // the folder to open: refs/main's snapshot, else the newest one
    QString family;    // config.json's model_type; empty when unreadable
    QString dtype;     // the weights' dtype ("BF16"), or "mixed (BF16, F32)"; empty if unknown
    qint64 bytesOnDisk = 0;  // every weights file of the snapshot (symlinks followed)
    // Why it cannot be opened: the one-line message opening it gives (io/model/model_folder.h),
    // except for non-finite values, which only reading the weights finds; empty when it opens.
    QString problem;
};

// Every models--*/ entry of `hubFolder` that has a snapshot, sorted by name; an empty list when
// the folder does not exist. Datasets and spaces (datasets--, spaces--) are not models.
std::vector<HubModel> listHubModels(const QString& hubFolder);

}  // namespace ae::io
