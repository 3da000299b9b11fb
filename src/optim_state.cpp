// SPDX-License-Identifier: MIT
// An optimizer's state in and out of a .npz archive, laid out as PyTorch's
// optimizer.state_dict() flattened with dots: `state.<id>.step` (int64; not for SGD, as in
// PyTorch) and
// `state.<id>.<buffer>` (the parameter's type) for every parameter that has state, with ids
// counted across the groups in order; `param_groups.<g>.params` (int64 ids) and
// `param_groups.<g>.<option>` (float64; betas a pair, flags 0 or 1) for every group.
module;
#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module strata.optim;
import strata.io;

namespace strata::detail {
namespace {
using option_values = std::vector<std::pair<std::string, std::vector<double>>>;
// Named option values read from a file (few: a linear search).
struct option_lookup {
  option_values values;
  const std::vector<double>* find(std::string_view name) const {
    for (const auto& [n, v] : values)
      if (n == name) return &v;
    return nullptr;
  }
  double operator[](std::string_view name) const { return (*find(name))[0]; }
  double second(std::string_view name) const { return (*find(name))[1]; }
};

double flag(bool b) { return b ? 1.0 : 0.0; }

option_values options_of(const optim::SGDOptions& o) {
  return {{"lr", {o.lr()}},
          {"momentum", {o.momentum()}},
          {"dampening", {o.dampening()}},
          {"weight_decay", {o.weight_decay()}},
          {"nesterov", {flag(o.nesterov())}},
          {"maximize", {flag(o.maximize())}}};
}
template <class O>
option_values adam_options_of(const O& o) {
  return {{"lr", {o.lr()}},
          {"betas", {o.betas().first, o.betas().second}},
          {"eps", {o.eps()}},
          {"weight_decay", {o.weight_decay()}},
          {"amsgrad", {flag(o.amsgrad())}},
          {"maximize", {flag(o.maximize())}}};
}
option_values options_of(const optim::AdamOptions& o) { return adam_options_of(o); }
option_values options_of(const optim::AdamWOptions& o) { return adam_options_of(o); }
option_values options_of(const optim::RMSpropOptions& o) {
  return {{"lr", {o.lr()}},
          {"alpha", {o.alpha()}},
          {"eps", {o.eps()}},
          {"weight_decay", {o.weight_decay()}},
          {"momentum", {o.momentum()}},
          {"centered", {flag(o.centered())}},
          {"maximize", {flag(o.maximize())}}};
}

// The options named in m (every name options_of gives, already checked present and sized).
void set_options(optim::SGDOptions& o, const option_lookup& m) {
  o.lr(m["lr"]).momentum(m["momentum"]).dampening(m["dampening"]).weight_decay(m["weight_decay"]);
  o.nesterov(m["nesterov"] != 0).maximize(m["maximize"] != 0);
}
template <class O>
void set_adam_options(O& o, const option_lookup& m) {
  o.lr(m["lr"]).betas({m["betas"], m.second("betas")}).eps(m["eps"]).weight_decay(m["weight_decay"]);
  o.amsgrad(m["amsgrad"] != 0).maximize(m["maximize"] != 0);
}
void set_options(optim::AdamOptions& o, const option_lookup& m) { set_adam_options(o, m); }
void set_options(optim::AdamWOptions& o, const option_lookup& m) { set_adam_options(o, m); }
void set_options(optim::RMSpropOptions& o, const option_lookup& m) {
  o.lr(m["lr"]).alpha(m["alpha"]).eps(m["eps"]).weight_decay(m["weight_decay"]);
  o.momentum(m["momentum"]).centered(m["centered"] != 0).maximize(m["maximize"] != 0);
}

// PyTorch's names of a parameter's buffers a, b and c (empty: the optimizer has no such buffer).
using buffer_names = std::array<std::string_view, 3>;
buffer_names buffers_of(const optim::SGDOptions&) { return {"momentum_buffer", "", ""}; }
buffer_names buffers_of(const optim::AdamOptions&) { return {"exp_avg", "exp_avg_sq", "max_exp_avg_sq"}; }
buffer_names buffers_of(const optim::AdamWOptions&) { return {"exp_avg", "exp_avg_sq", "max_exp_avg_sq"}; }
buffer_names buffers_of(const optim::RMSpropOptions&) { return {"square_avg", "momentum_buffer", "grad_avg"}; }
// Whether PyTorch keeps a step count in the state (its SGD does not).
bool counts_steps(const optim::SGDOptions&) { return false; }
template <class O>
bool counts_steps(const O&) {
  return true;
}

template <element T>
std::optional<Tensor<T>>& buffer(param_state<T>& s, std::size_t k) {
  return k == 0 ? s.a : k == 1 ? s.b : s.c;
}

// "state.12.exp_avg" -> {"state", 12, "exp_avg"}; nullopt unless the name has that shape.
struct entry_name {
  std::string_view kind;
  std::size_t index;
  std::string_view field;
};
std::optional<entry_name> parse(std::string_view name) {
  const std::size_t a = name.find('.');
  if (a == std::string_view::npos) return std::nullopt;
  const std::size_t b = name.find('.', a + 1);
  if (b == std::string_view::npos || b == a + 1 || b + 1 == name.size()) return std::nullopt;
  std::size_t index = 0;
  const auto [end, ec] = std::from_chars(name.data() + a + 1, name.data() + b, index);
  if (ec != std::errc() || end != name.data() + b || index > (std::size_t{1} << 40)) return std::nullopt;
  return entry_name{name.substr(0, a), index, name.substr(b + 1)};
}

// PyTorch's implementation switches, which change no arithmetic here (a state dict exported
// from torch carries them).
bool torch_only(std::string_view option) {
  return option == "foreach" || option == "capturable" || option == "differentiable" || option == "fused";
}

[[noreturn]] void bad_state(const std::string& path, const std::string& why) {
  throw error("optimizer load: " + why + " in '" + path + "'");
}
}  // namespace

template <element T, class O, class S>
void optimizer_groups<T, O, S>::save(const std::string& path) const {
  NpzWriter w(path);
  std::int64_t id = 0;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const std::string group = "param_groups." + std::to_string(g) + ".";
    std::vector<std::int64_t> ids;
    for (std::size_t i = 0; i < groups_[g].params.size(); ++i, ++id) {
      ids.push_back(id);
      const S& s = state_[g][i];
      const bool steps = counts_steps(*groups_[g].options);
      const bool any = (steps && s.step != 0) || s.a || s.b || s.c;
      if (!any) continue;  // PyTorch keeps no state for a parameter never stepped
      const std::string prefix = "state." + std::to_string(id) + ".";
      if (steps) w.add(prefix + "step", full<std::int64_t>({}, s.step));
      const buffer_names names = buffers_of(*groups_[g].options);
      const std::array<const std::optional<Tensor<T>>*, 3> bufs{&s.a, &s.b, &s.c};
      for (std::size_t k = 0; k < 3; ++k)
        if (*bufs[k]) w.add(prefix + std::string(names[k]), **bufs[k]);
    }
    w.add(group + "params", from_vector(ids));
    for (const auto& [name, v] : options_of(*groups_[g].options))
      w.add(group + name, v.size() == 1 ? full<double>({}, v[0]) : from_vector(v));
  }
  w.finish();
}

template <element T, class O, class S>
void optimizer_groups<T, O, S>::load(const std::string& path) {
  NpzFile r(path);
  // Read and check everything first; the optimizer changes only when all of it fits.
  const auto group_index = [&](std::size_t g) {
    if (g >= groups_.size()) throw error("loaded state dict has a different number of parameter groups");
    return g;
  };
  std::vector<std::optional<std::vector<std::int64_t>>> params(groups_.size());
  std::vector<option_lookup> options(groups_.size());
  struct state_entry {
    std::size_t id;
    std::string field;
    std::size_t entry;
  };
  std::vector<state_entry> state_entries;
  for (std::size_t e = 0; e < r.size(); ++e) {
    const std::string& name = r.name(e);
    const auto n = parse(name);
    if (!n) bad_state(path, "unexpected entry '" + name + "'");
    if (n->kind == "param_groups") {
      const std::size_t g = group_index(n->index);
      if (n->field == "params") {
        const Tensor<std::int64_t> t = r.read<std::int64_t>(e);
        if (t.dim() != 1) bad_state(path, "'" + name + "' is not a list of ids");
        params[g] = t.to_vector();
      } else if (!torch_only(n->field)) {
        options[g].values.emplace_back(std::string(n->field), r.read<double>(e).to_vector());
      }
    } else if (n->kind == "state") {
      state_entries.push_back({n->index, std::string(n->field), e});
    } else {
      bad_state(path, "unexpected entry '" + name + "'");
    }
  }
  // Saved id -> (group, position), zipped in order as PyTorch's load_state_dict does.
  struct placed {
    std::int64_t id;
    std::size_t g, i;
  };
  std::vector<placed> where;
  std::vector<O> new_options;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    if (!params[g]) throw error("loaded state dict has a different number of parameter groups");
    const std::vector<std::int64_t>& ids = *params[g];
    if (ids.size() != groups_[g].params.size())
      throw error("loaded state dict contains a parameter group that doesn't match the size of optimizer's group");
    for (std::size_t i = 0; i < ids.size(); ++i) where.push_back({ids[i], g, i});
    const option_lookup& m = options[g];
    const option_values expected = options_of(*groups_[g].options);
    if (m.values.size() != expected.size()) bad_state(path, "group " + std::to_string(g) + " has other options");
    for (const auto& [name, v] : expected) {
      const std::vector<double>* got = m.find(name);
      if (!got || got->size() != v.size())
        bad_state(path, "option '" + name + "' of group " + std::to_string(g) + " is missing or misshapen");
    }
    O o = *groups_[g].options;
    set_options(o, m);
    check_options(o);
    new_options.push_back(o);
  }
  const auto by_id = [](const placed& a, const placed& b) { return a.id < b.id; };
  std::sort(where.begin(), where.end(), by_id);
  for (std::size_t k = 1; k < where.size(); ++k)
    if (where[k].id == where[k - 1].id) bad_state(path, "parameter id " + std::to_string(where[k].id) + " listed twice");
  std::vector<std::vector<S>> new_state;
  for (const auto& g : groups_) new_state.emplace_back(g.params.size());
  for (const auto& [id, field, e] : state_entries) {
    const placed key{static_cast<std::int64_t>(id), 0, 0};
    const auto at = std::lower_bound(where.begin(), where.end(), key, by_id);
    if (at == where.end() || at->id != key.id)
      bad_state(path, "state of parameter id " + std::to_string(id) + ", which no group lists");
    const Tensor<T>& param = groups_[at->g].params[at->i];
    S& s = new_state[at->g][at->i];
    const buffer_names names = buffers_of(*groups_[at->g].options);
    if (field == "step") {
      const Tensor<std::int64_t> t = r.read<std::int64_t>(e);
      if (t.numel() != 1 || t.item() < 0) bad_state(path, "'" + r.name(e) + "' is not a step count");
      s.step = t.item();
      continue;
    }
    const auto k = static_cast<std::size_t>(std::find(names.begin(), names.end(), field) - names.begin());
    if (k == names.size()) bad_state(path, "unexpected entry '" + r.name(e) + "'");
    Tensor<T> t = r.read<T>(e).contiguous();  // a Fortran-order array comes as a strided view
    if (t.sizes() != param.sizes())
      throw shape_error("optimizer load: '" + r.name(e) + "' has sizes " + to_string(t.sizes()) +
                        ", its parameter " + to_string(param.sizes()));
    buffer(s, k) = std::move(t);
  }
  for (std::size_t g = 0; g < groups_.size(); ++g) *groups_[g].options = new_options[g];
  state_ = std::move(new_state);
}

template class optimizer_groups<float, optim::SGDOptions, param_state<float>>;
template class optimizer_groups<double, optim::SGDOptions, param_state<double>>;
template class optimizer_groups<float, optim::AdamOptions, param_state<float>>;
template class optimizer_groups<double, optim::AdamOptions, param_state<double>>;
template class optimizer_groups<float, optim::AdamWOptions, param_state<float>>;
template class optimizer_groups<double, optim::AdamWOptions, param_state<double>>;
template class optimizer_groups<float, optim::RMSpropOptions, param_state<float>>;
template class optimizer_groups<double, optim::RMSpropOptions, param_state<double>>;
#define STRATA_OPTIM_LOWP(T)                                                 \
  template class optimizer_groups<T, optim::SGDOptions, param_state<T>>;     \
  template class optimizer_groups<T, optim::AdamOptions, param_state<T>>;    \
  template class optimizer_groups<T, optim::AdamWOptions, param_state<T>>;   \
  template class optimizer_groups<T, optim::RMSpropOptions, param_state<T>>;
STRATA_OPTIM_LOWP(half)
STRATA_OPTIM_LOWP(bfloat16)
#undef STRATA_OPTIM_LOWP
}  // namespace strata::detail
