#pragma once
// The one legend of dimension names for all of core/: the one-layer engine (a Scene) and whole
// models (core/model/) name the same dimensions the same way. Numeric functions state their
// shapes with these names.
//
//   Lq, Lk   query tokens, and key/value tokens (Lk = Lq except in a scene's cross-attention)
//   T        a whole model's tokens: its layers are self-attention, Lq = Lk = T
//   dModel   the width of an embedding and of the residual stream (d, in the model code)
//   dProj    the width of the Q projection: heads·dHead (dModel in a scene's identity mode)
//   heads    query heads (H); each reads a contiguous block of dHead (hd) columns
//   kvHeads  key/value heads (KV, grouped-query attention): K and V are Lk x kvHeads·dHead, and
//            head h reads kv head h / (heads / kvHeads)
//   dOut     the width of the output projection (the columns of W_O)
//   V        the vocabulary: rows of the token table, columns of the logits
//   I        the MLP's inner width
