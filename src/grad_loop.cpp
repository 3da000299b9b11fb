// SPDX-License-Identifier: MIT
// The backward's loop: gathers the operands a recorded tree reads a chunk at a time, hands
// them to the tree's tape (one function pointer) and stores what it produces into the
// gradients. Compiled once: a recorded expression supplies only its tape.
module;
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
module strata.graph;

namespace strata::detail {
std::int64_t grad_inputs::chunk() const {
  std::int64_t bytes = 0;
  for (std::size_t k = 0; k < count; ++k) bytes += itemsize[k];
  // Each gathered operand starts on a 64-byte boundary (room for the rounding kept aside).
  const auto room = grad_scratch - 64 * static_cast<std::int64_t>(count);
  std::int64_t n = bytes == 0 ? grad_chunk : room / bytes;
  n = n < grad_chunk ? n : grad_chunk;
  return n < 1 ? 1 : n;
}

void grad_inputs::gather(char* const* ptrs, const std::int64_t* s, std::int64_t c, std::int64_t len, char* scratch,
                         const char** in) const {
  for (std::size_t k = 0; k < count; ++k) {
    const std::int64_t w = itemsize[k], stride = s[k];
    const char* p = ptrs[k] + c * stride;
    if (stride == w) {
      in[k] = p;
      continue;
    }
    char* out = scratch;
    scratch += (len * w + 63) / 64 * 64;
    in[k] = out;
    detail::gather(p, stride, len, w, out);
  }
}

namespace {
// Asks for operand elements [c, c + len) of a contiguous row ahead of their use. A chunk's
// work touches its streams one after another (the tape reads the inputs, then each gradient
// is stored in turn), so the hardware prefetchers, which follow one stream at a time, leave
// most of them waiting on memory; requesting the next chunk of every stream at once keeps
// them all in flight, as one loop over all the streams would.
void prefetch_chunk(const char* p, std::int64_t stride, std::int64_t c, std::int64_t len, bool write) {
  if (stride <= 0 || stride > 64) return;  // broadcast, reversed or sparse: not a dense stream
  const char* b = p + c * stride;
  const char* e = b + len * stride;
  for (const char* q = b; q < e; q += 64) {
    if (write) __builtin_prefetch(q, 1);
    else __builtin_prefetch(q, 0);
  }
}

struct pass_args {
  const grad_pass* pass;
  const grad_inputs* in;
};

void grad_row(const void* ctx, char* const* ptrs, const std::int64_t* s, std::int64_t n, loop_status* st) {
  const auto& [pass, in] = *static_cast<const pass_args*>(ctx);
  const std::size_t K = pass->targets.size();
  alignas(64) char scratch[grad_scratch];
  alignas(64) char values[grad_values_bytes];
  const char* inp[max_operands];
  void* outs[max_operands] = {};
  grad_write how[max_operands] = {};
  // A contiguous gradient the tape may write is written in place; the others' values go
  // to buffers (each starting on a 64-byte boundary) and are stored after each chunk.
  bool in_place[max_operands] = {};
  std::int64_t bytes = 0;
  for (std::size_t k = 0; k < K; ++k) {
    const grad_target& t = pass->targets[k];
    in_place[k] = t.direct && s[k] == t.itemsize;
    if (in_place[k]) how[t.position] = t.add ? grad_write::add : grad_write::assign;
    else bytes += t.value_size;
  }
  std::int64_t ch = bytes == 0 ? in->chunk()
                               : std::min(in->chunk(), (grad_values_bytes - 64 * static_cast<std::int64_t>(K)) / bytes);
  ch = std::max<std::int64_t>(ch, 1);
  char* at = values;
  for (std::size_t k = 0; k < K; ++k) {
    const grad_target& t = pass->targets[k];
    if (in_place[k]) continue;
    outs[t.position] = at;
    at += (ch * t.value_size + 63) / 64 * 64;
  }
  for (std::int64_t c = 0; c < n; c += ch) {
    const std::int64_t len = n - c < ch ? n - c : ch;
    if (const std::int64_t next = c + len; next < n) {
      const std::int64_t next_len = n - next < ch ? n - next : ch;
      for (std::size_t k = 0; k < K + in->count; ++k) prefetch_chunk(ptrs[k], s[k], next, next_len, k < K);
    }
    in->gather(ptrs + K, s + K, c, len, scratch, inp);
    for (std::size_t k = 0; k < K; ++k)
      if (in_place[k]) outs[pass->targets[k].position] = ptrs[k] + c * s[k];
    pass->run(pass->tree, inp, len, outs, how, st);
    for (std::size_t k = 0; k < K; ++k) {
      const grad_target& t = pass->targets[k];
      if (!in_place[k]) t.store(outs[t.position], len, ptrs[k] + c * s[k], s[k], t.add);
    }
  }
}

}  // namespace

void run_grad_pass(const loop_plan& plan, const grad_pass& pass, const grad_inputs& in) {
  const pass_args args{&pass, &in};
  execute(plan, &grad_row, nullptr, &args);  // a tiled plan's tiles run row by row
}
}  // namespace strata::detail
