#pragma once
#include <QStringList>

namespace ae::cli {
// `attention-explorer rotary (SCENE.json | --preset NAME) [--head H] [--query I] [--key J]
// [--distances FROM:TO] [--starts 0,50] [--theta T] [--scaling none|linear|llama3|longrope]
// [--factor F]
// [--low-frequency-factor L] [--high-frequency-factor H] [--original-max-positions N]`: the
// numbers of Explain › Why rotary positions? (core/rotary_study.h) for scripts, as JSON lines:
//   {"parameters": {...}, "scene_has_rotary": bool, "head_dim": d}   first
//   {"pair": i, "wavelength": w, "unscaled_wavelength": u}            one a frequency pair
//   {"distance": m, "start": s, "query_position": p, "key_position": q,
//    "rotary": score, "sinusoidal": score}                            one a distance and start
// The rotary score is the head's raw q·k with the query at p and the key at q (equal for every
// start: the property that makes rotary positions relative); the sinusoidal one the same tokens'
// raw score with sinusoidal positions added to their vectors instead. Exit status 2 with one
// line on stderr for anything refused.
int rotaryCommand(const QStringList& arguments);
}  // namespace ae::cli
