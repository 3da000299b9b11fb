// SPDX-License-Identifier: MIT
// strata.optim against PyTorch 1.13 (tests/golden/optim.txt, made by tools/make_optim_golden.py):
// five steps of SGD, Adam, AdamW and RMSprop with every option, parameter groups, and the
// learning-rate schedulers; PyTorch's errors; the same bits on 1 and 2 threads; parameters
// that are not contiguous.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include "check_close.hpp"
#include "golden.hpp"
#include "tensor_values.hpp"
import strata;

namespace st = strata;

namespace {
// "lr=0.1,momentum=0.9" -> {lr: 0.1, momentum: 0.9}
std::map<std::string, std::string> options(const std::string& s) {
  std::map<std::string, std::string> out;
  for (const std::string& kv : golden::split(s, ',')) {
    const auto eq = kv.find('=');
    out[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return out;
}

struct golden_param {
  std::int64_t group = 0;
  std::vector<std::int64_t> sizes;
  std::vector<double> init;
};
struct golden_case {
  std::string id, optimizer, dtype;
  int steps = 0;
  std::map<std::string, std::string> defaults;
  std::vector<std::map<std::string, std::string>> groups;
  std::vector<golden_param> params;
  std::map<std::pair<int, int>, std::vector<double>> grads, values;  // (step, param)
};

std::vector<golden_case> read_cases() {
  std::vector<golden_case> cases;
  for (const std::string& line : golden::lines("optim.txt")) {
    const auto f = golden::split(line, '|');
    if (f[0] == "case") {
      cases.push_back({f[1], f[2], f[3], std::stoi(f[4]), options(f[5]), {}, {}, {}, {}});
    } else if (f[0] == "group") {
      cases.back().groups.push_back(options(f[2]));
    } else if (f[0] == "param") {
      cases.back().params.push_back({std::stoll(f[2]), golden::parse_shape(f[3]), golden::parse_doubles(f[4])});
    } else if (f[0] == "grad" || f[0] == "value") {
      auto& to = f[0] == "grad" ? cases.back().grads : cases.back().values;
      to[{std::stoi(f[1]), std::stoi(f[2])}] = golden::parse_doubles(f[3]);
    }
  }
  return cases;
}

double num(const std::map<std::string, std::string>& o, const std::string& key) { return std::stod(o.at(key)); }
bool flag(const std::map<std::string, std::string>& o, const std::string& key) { return o.at(key) == "1"; }

st::optim::SGDOptions sgd_options(const std::map<std::string, std::string>& o) {
  return st::optim::SGDOptions(num(o, "lr"))
      .momentum(num(o, "momentum"))
      .dampening(num(o, "dampening"))
      .weight_decay(num(o, "weight_decay"))
      .nesterov(flag(o, "nesterov"))
      .maximize(flag(o, "maximize"));
}
template <class O>
O adam_options(const std::map<std::string, std::string>& o) {
  return O(num(o, "lr"))
      .betas({num(o, "beta1"), num(o, "beta2")})
      .eps(num(o, "eps"))
      .weight_decay(num(o, "weight_decay"))
      .amsgrad(flag(o, "amsgrad"))
      .maximize(flag(o, "maximize"));
}
st::optim::RMSpropOptions rmsprop_options(const std::map<std::string, std::string>& o) {
  return st::optim::RMSpropOptions(num(o, "lr"))
      .alpha(num(o, "alpha"))
      .eps(num(o, "eps"))
      .weight_decay(num(o, "weight_decay"))
      .momentum(num(o, "momentum"))
      .centered(flag(o, "centered"))
      .maximize(flag(o, "maximize"));
}

// The optimizer of a case over params, groups as the case has them (each group's options its own).
template <class Opt, class O, class T>
std::unique_ptr<st::optim::Optimizer> make(const golden_case& c, const std::vector<st::Tensor<T>>& params,
                                           O (*opts)(const std::map<std::string, std::string>&)) {
  if (c.groups.size() == 1) return std::make_unique<Opt>(params, opts(c.defaults));
  std::vector<st::optim::ParamGroup<T, O>> groups(c.groups.size());
  for (std::size_t i = 0; i < params.size(); ++i) groups[static_cast<std::size_t>(c.params[i].group)].params.push_back(params[i]);
  // group 0 takes the defaults, the others their own options
  for (std::size_t g = 1; g < groups.size(); ++g) groups[g].options = opts(c.groups[g]);
  return std::make_unique<Opt>(std::move(groups), opts(c.defaults));
}

template <class T>
void run_case(const golden_case& c) {
  INFO("case " << c.id);
  std::vector<st::Tensor<T>> params;
  for (const golden_param& p : c.params) {
    std::vector<T> v(p.init.begin(), p.init.end());
    params.push_back(st::from_vector<T>(v, p.sizes).requires_grad_());
  }
  std::unique_ptr<st::optim::Optimizer> opt;
  if (c.optimizer == "SGD") opt = make<st::optim::SGD<T>>(c, params, &sgd_options);
  else if (c.optimizer == "Adam") opt = make<st::optim::Adam<T>>(c, params, &adam_options<st::optim::AdamOptions>);
  else if (c.optimizer == "AdamW") opt = make<st::optim::AdamW<T>>(c, params, &adam_options<st::optim::AdamWOptions>);
  else opt = make<st::optim::RMSprop<T>>(c, params, &rmsprop_options);
  REQUIRE(opt->num_param_groups() == c.groups.size());
  for (std::size_t g = 0; g < c.groups.size(); ++g) CHECK(opt->get_lr(g) == num(c.groups[g], "lr"));
  // Within a few float roundings of PyTorch's: both compute in the parameter's type, in the same
  // order, but where each rounds a product before a sum (or fuses them) differs.
  const double tol = std::is_same_v<T, float> ? 2e-6 : 1e-14;
  for (int step = 1; step <= c.steps; ++step) {
    INFO("step " << step);
    opt->zero_grad();
    // The gradient of sum(p * g) with respect to p is g exactly.
    st::Tensor<T> loss = st::zeros<T>({});
    for (std::size_t i = 0; i < params.size(); ++i) {
      const auto& g = c.grads.at({step, static_cast<int>(i)});
      std::vector<T> gv(g.begin(), g.end());
      loss = loss + st::sum(params[i] * st::from_vector<T>(gv, c.params[i].sizes));
    }
    loss.backward();
    opt->step();
    for (std::size_t i = 0; i < params.size(); ++i) test::check_close(as_doubles(params[i].detach()), c.values.at({step, static_cast<int>(i)}), tol);
  }
}
}  // namespace

TEST_CASE("optimizers match PyTorch step by step, every option and parameter groups", "[optim]") {
  const auto cases = read_cases();
  REQUIRE(cases.size() >= 20);
  for (const golden_case& c : cases) {
    if (c.dtype == "float32") run_case<float>(c);
    else run_case<double>(c);
  }
}

TEST_CASE("schedulers match PyTorch's learning rates epoch by epoch", "[optim]") {
  int seen = 0;
  for (const std::string& line : golden::lines("optim.txt")) {
    const auto f = golden::split(line, '|');
    if (f[0] != "sched") continue;
    ++seen;
    INFO("scheduler " << f[1]);
    const auto o = options(f[3]);
    const std::vector<double> want = golden::parse_doubles(f[4]);
    auto p = st::zeros<double>({2}).requires_grad_();
    st::optim::SGD opt(std::vector{p}, st::optim::SGDOptions(0.1));
    std::vector<double> got{opt.get_lr(0)};
    const auto epochs = want.size();
    if (f[2] == "ReduceLROnPlateau") {
      const std::vector<double> metrics = golden::parse_doubles(f[5]);
      st::optim::ReduceLROnPlateau s(opt, o.at("mode"), num(o, "factor"), std::stoll(o.at("patience")),
                                     num(o, "threshold"), o.at("threshold_mode"), std::stoll(o.at("cooldown")),
                                     num(o, "min_lr"), num(o, "eps"));
      for (std::size_t e = 0; e + 1 < epochs; ++e) {
        s.step(metrics[e]);
        got.push_back(opt.get_lr(0));
      }
      CHECK(s.get_last_lr() == std::vector<double>{got.back()});
    } else {
      std::unique_ptr<st::optim::LRScheduler> s;
      if (f[2] == "StepLR") s = std::make_unique<st::optim::StepLR>(opt, std::stoll(o.at("step_size")), num(o, "gamma"));
      else if (f[2] == "ExponentialLR") s = std::make_unique<st::optim::ExponentialLR>(opt, num(o, "gamma"));
      else if (f[2] == "CosineAnnealingLR")
        s = std::make_unique<st::optim::CosineAnnealingLR>(opt, std::stoll(o.at("T_max")), num(o, "eta_min"));
      else if (f[2] == "LambdaLR")
        s = std::make_unique<st::optim::LambdaLR>(opt, [](std::int64_t e) { return std::pow(0.95, static_cast<double>(e)); });
      else {
        std::vector<std::int64_t> milestones;
        for (const auto& m : golden::split(o.at("milestones"), ';')) milestones.push_back(std::stoll(m));
        s = std::make_unique<st::optim::MultiStepLR>(opt, milestones, num(o, "gamma"));
      }
      CHECK(s->last_epoch() == 0);
      for (std::size_t e = 0; e + 1 < epochs; ++e) {
        opt.step();
        s->step();
        got.push_back(opt.get_lr(0));
      }
      CHECK(s->get_last_lr() == std::vector<double>{got.back()});
      CHECK(s->last_epoch() == static_cast<std::int64_t>(epochs) - 1);
    }
    test::check_close(got, want, 1e-15);
  }
  CHECK(seen == 7);
}

TEST_CASE("optimizers: PyTorch's errors for bad options and parameters", "[optim]") {
  auto p = st::zeros<float>({3}).requires_grad_();
  const std::vector<st::Tensor<float>> ps{p};
  const auto fails = [](auto make, const std::string& message) {
    try {
      make();
      FAIL("no error; expected: " << message);
    } catch (const st::error& e) {
      CHECK(std::string(e.what()) == message);
    }
  };
  fails([&] { st::optim::SGD(ps, st::optim::SGDOptions(-0.1)); }, "Invalid learning rate: -0.1");
  fails([&] { st::optim::SGD(ps, st::optim::SGDOptions(0.1).momentum(-1)); }, "Invalid momentum value: -1.0");
  fails([&] { st::optim::SGD(ps, st::optim::SGDOptions(0.1).nesterov(true)); },
        "Nesterov momentum requires a momentum and zero dampening");
  fails([&] { st::optim::Adam(ps, st::optim::AdamOptions().betas({1.0, 0.999})); },
        "Invalid beta parameter at index 0: 1.0");
  fails([&] { st::optim::AdamW(ps, st::optim::AdamWOptions().eps(-1e-8)); }, "Invalid epsilon value: -1e-08");
  fails([&] { st::optim::RMSprop(ps, st::optim::RMSpropOptions().alpha(-0.5)); }, "Invalid alpha value: -0.5");
  fails([&] { st::optim::SGD(std::vector{(p * 2).eval()}, st::optim::SGDOptions(0.1)); }, "can't optimize a non-leaf Tensor");
  fails([&] { st::optim::SGD(std::vector<st::Tensor<float>>{}, st::optim::SGDOptions(0.1)); },
        "optimizer got an empty parameter list");
  fails([&] { st::optim::SGD(std::vector{p, p}, st::optim::SGDOptions(0.1)); },
        "optimizer contains a parameter group with duplicate parameters");
  fails([&] {
    st::optim::Adam(std::vector<st::optim::ParamGroup<float, st::optim::AdamOptions>>{{{p}, std::nullopt}, {{p}, std::nullopt}},
                    st::optim::AdamOptions());
  }, "some parameters appear in more than one parameter group");
  // Python's way of printing the number: -10.0, not -1e+01; 1e-05; 0.0001
  fails([&] { st::optim::SGD(ps, st::optim::SGDOptions(0.1).momentum(-10)); }, "Invalid momentum value: -10.0");
  fails([&] { st::optim::Adam(ps, st::optim::AdamOptions(-1e-5)); }, "Invalid learning rate: -1e-05");
  fails([&] { st::optim::RMSprop(ps, st::optim::RMSpropOptions(-1e-4)); }, "Invalid learning rate: -0.0001");
  fails([&] { st::optim::RMSprop(ps, st::optim::RMSpropOptions().momentum(-123.25)); }, "Invalid momentum value: -123.25");
  st::optim::SGD opt(ps, st::optim::SGDOptions(0.1));
  fails([&] { opt.set_lr(1, 0.5); }, "optimizer: no parameter group 1");
  fails([&] { st::optim::LambdaLR(opt, std::vector<std::function<double(std::int64_t)>>(2)); },
        "Expected 1 lr_lambdas, but got 2");
  // LambdaLR sets epoch 0's rate at construction: base * lr_lambda(0); a milestone at 0 too
  st::optim::LambdaLR half(opt, [](std::int64_t e) { return 0.5 / static_cast<double>(e + 1); });
  CHECK(opt.get_lr(0) == 0.05);
  st::optim::MultiStepLR at_zero(opt, {0, 2}, 0.5);
  CHECK(opt.get_lr(0) == 0.025);
  // options(g) changes a group's options (PyTorch's param_groups[g]["lr"] = ...)
  opt.options(0).lr(0.5).momentum(0.9);
  CHECK(opt.get_lr(0) == 0.5);
  CHECK(opt.param_groups()[0].options->momentum() == 0.9);
  // SGD, as torch's, lets a NaN learning rate through
  CHECK_NOTHROW(st::optim::SGD(ps, st::optim::SGDOptions(std::nan(""))));
  fails([&] { st::optim::ReduceLROnPlateau(opt, "mean"); }, "mode mean is unknown!");
  fails([&] { st::optim::ReduceLROnPlateau(opt, "min", 0.1, 10, 1e-4, "relative"); },
        "threshold mode relative is unknown!");
}

TEST_CASE("optimizers: parameters without a gradient are skipped; zero_grad; strided parameters", "[optim]") {
  auto a = st::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3}).requires_grad_();
  auto b = st::from_vector<double>({1, 2}).requires_grad_();
  st::optim::SGD opt(std::vector{a, b}, st::optim::SGDOptions(0.5));
  st::sum(a * a).backward();  // b has no gradient
  opt.step();
  CHECK(a.detach().to_vector() == std::vector<double>{0, 0, 0, 0, 0, 0});  // a - 0.5 * 2a
  CHECK(b.detach().to_vector() == std::vector<double>{1, 2});
  opt.zero_grad();
  CHECK(a.grad().to_vector() == std::vector<double>(6, 0.0));
  CHECK_FALSE(b.has_grad());

  // A transposed leaf moves as its contiguous twin does.
  const auto base = st::randn<float>({5, 7});
  auto t = base.t().detach().requires_grad_();
  auto c = base.t().contiguous().requires_grad_();
  REQUIRE_FALSE(t.is_contiguous());
  st::optim::Adam ot(std::vector{t}, st::optim::AdamOptions(0.1).amsgrad(true));
  st::optim::Adam oc(std::vector{c}, st::optim::AdamOptions(0.1).amsgrad(true));
  for (int step = 0; step < 3; ++step) {
    ot.zero_grad();
    oc.zero_grad();
    st::sum(st::sin(t) * t).backward();
    st::sum(st::sin(c) * c).backward();
    ot.step();
    oc.step();
  }
  CHECK(t.contiguous().to_vector() == c.detach().to_vector());
  CHECK(t.stride(0) == 1);  // still the same view
}

TEST_CASE("optimizers: the same bits on 1 and 2 threads, and a step moves the version", "[optim]") {
  const auto run = [](int threads) {
    st::set_num_threads(threads);
    st::manual_seed(3);
    auto w = st::randn<float>({300001}).requires_grad_();
    st::optim::AdamW opt(std::vector{w}, st::optim::AdamWOptions(0.01).amsgrad(true));
    st::optim::RMSprop rms(std::vector{w}, st::optim::RMSpropOptions(0.01).centered(true).momentum(0.9));
    for (int step = 0; step < 3; ++step) {
      opt.zero_grad();
      st::sum(st::cos(w) * w).backward();
      const auto before = w.storage().version();
      opt.step();
      CHECK(w.storage().version() > before);
      rms.step();
    }
    st::set_num_threads(1);
    return w.detach().to_vector();
  };
  CHECK(run(1) == run(2));
}

TEST_CASE("optim: a PyTorch training loop ported line by line", "[optim]") {
  // torch: opt = torch.optim.Adam([w, b], lr=0.2); sched = StepLR(opt, step_size=40, gamma=0.5)
  //        for epoch in range(100): opt.zero_grad(); loss = ((x @ w + b - y) ** 2).mean();
  //                                loss.backward(); opt.step(); sched.step()
  st::manual_seed(0);
  auto x = st::randn<float>({64, 3});
  auto y = st::matmul(x, st::from_vector<float>({1.5f, -2.0f, 0.5f}, {3, 1})) + 0.25f;
  auto w = st::zeros<float>({3, 1}).requires_grad_();
  auto b = st::zeros<float>({1}).requires_grad_();
  st::optim::Adam opt({w, b}, st::optim::AdamOptions(0.2));
  st::optim::StepLR sched(opt, 40, 0.5);
  float first = 0, last = 0;
  for (int epoch = 0; epoch < 100; ++epoch) {
    opt.zero_grad();
    auto loss = st::mean(st::pow(st::matmul(x, w) + b - y, 2)).eval();
    loss.backward();
    opt.step();
    sched.step();
    (epoch == 0 ? first : last) = loss.item();
  }
  CHECK(last < first / 100);
  CHECK(sched.get_last_lr() == std::vector<double>{0.2 * 0.25});
  // A lazy loss read after the step that wrote its inputs: an error, never the new value.
  opt.zero_grad();
  auto lazy = st::mean(st::pow(st::matmul(x, w) + b - y, 2));
  lazy.backward();
  opt.step();
  CHECK_THROWS_AS(lazy.item(), st::error);
  // groups of their own, as in the README
  auto w1 = st::zeros<float>({2}).requires_grad_(), b1 = st::zeros<float>({2}).requires_grad_();
  st::optim::AdamW by_group(std::vector<st::optim::ParamGroup<float, st::optim::AdamWOptions>>{
      {{w1}, std::nullopt}, {{b1}, st::optim::AdamWOptions(1e-3).weight_decay(0)}}, st::optim::AdamWOptions(1e-2));
  CHECK(by_group.param_groups()[0].options->lr() == 1e-2);
  CHECK(by_group.param_groups()[1].options->weight_decay() == 0);
  CHECK(by_group.param_groups()[0].options->weight_decay() == 1e-2);
}

namespace {
// Two parameter groups of an optimizer kind, stepped `steps` times on a fixed loss.
template <class Opt, class Options>
struct trained {
  st::Tensor<double> w = st::from_vector<double>({0.5, -1.0, 2.0, 0.25, 1.5, -0.75}, {2, 3}).requires_grad_();
  st::Tensor<double> b = st::from_vector<double>({0.1, -0.2}).requires_grad_();
  st::Tensor<double> unused = st::zeros<double>({4}).requires_grad_();  // never gets a gradient
  Opt opt;
  trained(const Options& first, const Options& second)
      : opt(std::vector<st::optim::ParamGroup<double, Options>>{{{w, unused}, first}, {{b}, second}}, first) {}
  void steps(int n) {
    for (int i = 0; i < n; ++i) {
      opt.zero_grad();
      (st::sum(st::sin(w) * st::sum(w * w)) + st::sum(st::exp(b) * b)).backward();
      opt.step();
    }
  }
  std::vector<double> values() const {
    auto v = w.detach().to_vector();
    for (double x : b.detach().to_vector()) v.push_back(x);
    return v;
  }
};

// Saving after 3 steps and loading into a fresh optimizer over the same values resumes
// exactly: 2 more steps give the same bits as 5 steps without the round trip.
template <class Opt, class Options>
void check_resume(const Options& first, const Options& second, const std::string& path) {
  trained<Opt, Options> straight(first, second), saved(first, second);
  straight.steps(5);
  saved.steps(3);
  st::optim::save(saved.opt, path);
  // Other options and no state in the fresh one: load brings both.
  trained<Opt, Options> fresh(Options(123.0), Options(7.0));
  fresh.w.detach().assign(saved.w.detach());
  fresh.b.detach().assign(saved.b.detach());
  st::optim::load(fresh.opt, path);
  CHECK(fresh.opt.get_lr(0) == first.lr());
  CHECK(fresh.opt.get_lr(1) == second.lr());
  fresh.steps(2);
  CHECK(fresh.values() == straight.values());
}
}  // namespace

TEST_CASE("optimizers: state saved and loaded resumes the same steps bit for bit", "[optim]") {
  const std::string path = "optim_state_test.npz";
  check_resume<st::optim::SGD<double>>(st::optim::SGDOptions(0.05).momentum(0.9).nesterov(true),
                                       st::optim::SGDOptions(0.02).momentum(0.5).dampening(0.1), path);
  check_resume<st::optim::Adam<double>>(st::optim::AdamOptions(0.05).amsgrad(true),
                                        st::optim::AdamOptions(0.01).betas({0.8, 0.9}).weight_decay(0.1), path);
  check_resume<st::optim::AdamW<double>>(st::optim::AdamWOptions(0.05),
                                         st::optim::AdamWOptions(0.02).amsgrad(true).maximize(true), path);
  check_resume<st::optim::RMSprop<double>>(st::optim::RMSpropOptions(0.01).centered(true).momentum(0.9),
                                           st::optim::RMSpropOptions(0.02).alpha(0.9), path);

  // The archive has PyTorch's state_dict names: state.<id>.<buffer> for parameters with state
  // (id 1, the parameter without a gradient, has none), param_groups.<g>.<option>.
  trained<st::optim::Adam<double>, st::optim::AdamOptions> t(st::optim::AdamOptions(0.1).amsgrad(true),
                                                            st::optim::AdamOptions(0.2));
  t.steps(2);
  st::optim::save(t.opt, path);
  st::NpzFile f(path);
  std::vector<std::string> names;
  for (std::size_t i = 0; i < f.size(); ++i) names.push_back(f.name(i));
  CHECK(names == std::vector<std::string>{
                     "state.0.step", "state.0.exp_avg", "state.0.exp_avg_sq", "state.0.max_exp_avg_sq",
                     "param_groups.0.params", "param_groups.0.lr", "param_groups.0.betas", "param_groups.0.eps",
                     "param_groups.0.weight_decay", "param_groups.0.amsgrad", "param_groups.0.maximize",
                     "state.2.step", "state.2.exp_avg", "state.2.exp_avg_sq", "param_groups.1.params",
                     "param_groups.1.lr", "param_groups.1.betas", "param_groups.1.eps", "param_groups.1.weight_decay",
                     "param_groups.1.amsgrad", "param_groups.1.maximize"});
  CHECK(f.dtype(0) == st::dtype::int64);
  CHECK(f.read<std::int64_t>(0).item() == 2);
  CHECK(f.read<std::int64_t>(4).to_vector() == std::vector<std::int64_t>{0, 1});
  CHECK(f.read<double>(6).to_vector() == std::vector<double>{0.9, 0.999});
  CHECK(f.read<double>(9).item() == 1.0);
  CHECK_THROWS_AS(f.read<float>(1), st::dtype_error);

  // SGD keeps only its momentum buffers, as PyTorch's does (no step).
  trained<st::optim::SGD<double>, st::optim::SGDOptions> sgd(st::optim::SGDOptions(0.1).momentum(0.9),
                                                            st::optim::SGDOptions(0.1));
  sgd.steps(2);
  st::optim::save(sgd.opt, path);
  st::NpzFile g(path);
  std::vector<std::string> sgd_names;
  for (std::size_t i = 0; i < g.size(); ++i) sgd_names.push_back(g.name(i));
  CHECK(sgd_names == std::vector<std::string>{"state.0.momentum_buffer", "param_groups.0.params", "param_groups.0.lr",
                                              "param_groups.0.momentum", "param_groups.0.dampening",
                                              "param_groups.0.weight_decay", "param_groups.0.nesterov",
                                              "param_groups.0.maximize", "param_groups.1.params", "param_groups.1.lr",
                                              "param_groups.1.momentum", "param_groups.1.dampening",
                                              "param_groups.1.weight_decay", "param_groups.1.nesterov",
                                              "param_groups.1.maximize"});
}

TEST_CASE("optimizers: loading a state that does not fit throws and changes nothing", "[optim]") {
  const std::string path = "optim_state_bad.npz";
  trained<st::optim::Adam<double>, st::optim::AdamOptions> t(st::optim::AdamOptions(0.1), st::optim::AdamOptions(0.2));
  t.steps(2);
  st::optim::save(t.opt, path);

  // Another number of groups, another group size, other parameter sizes.
  auto w = st::zeros<double>({2, 3}).requires_grad_();
  auto v = st::zeros<double>({4}).requires_grad_();
  auto b = st::zeros<double>({2}).requires_grad_();
  auto b3 = st::zeros<double>({3}).requires_grad_();
  using group = st::optim::ParamGroup<double, st::optim::AdamOptions>;
  st::optim::Adam one(std::vector{w, v, b}, st::optim::AdamOptions(0.5));
  CHECK_THROWS_WITH(st::optim::load(one, path), "loaded state dict has a different number of parameter groups");
  st::optim::Adam sizes(std::vector<group>{{{w}, {}}, {{b}, {}}}, st::optim::AdamOptions(0.5));
  CHECK_THROWS_WITH(st::optim::load(sizes, path),
                    "loaded state dict contains a parameter group that doesn't match the size of optimizer's group");
  st::optim::Adam shapes(std::vector<group>{{{w, v}, {}}, {{b3}, {}}}, st::optim::AdamOptions(0.5));
  CHECK_THROWS_AS(st::optim::load(shapes, path), st::shape_error);
  CHECK(shapes.get_lr(0) == 0.5);  // nothing changed: the options are still the optimizer's own
  CHECK(shapes.get_lr(1) == 0.5);
  // Another kind of optimizer (other buffer and option names).
  st::optim::SGD sgd(std::vector<st::optim::ParamGroup<double, st::optim::SGDOptions>>{{{w, v}, {}}, {{b}, {}}},
                     st::optim::SGDOptions(0.5));
  CHECK_THROWS_AS(st::optim::load(sgd, path), st::error);
  CHECK(sgd.get_lr(0) == 0.5);
  // A missing file, and a corrupted one.
  CHECK_THROWS_AS(st::optim::load(sgd, "no_such_optim_state.npz"), st::io_error);
  st::optim::Adam single(std::vector{w, v}, st::optim::AdamOptions(0.5));
  const auto write_group = [&](double lr, bool complete) {
    st::NpzWriter bad(path);
    bad.add("param_groups.0.params", st::from_vector<std::int64_t>({0, 1}));
    bad.add("param_groups.0.lr", st::full<double>({}, lr));
    bad.add("param_groups.0.betas", st::from_vector<double>({0.9, 0.999}));
    bad.add("param_groups.0.eps", st::full<double>({}, 1e-8));
    bad.add("param_groups.0.weight_decay", st::full<double>({}, 0.0));
    bad.add("param_groups.0.amsgrad", st::full<double>({}, 0.0));
    if (complete) bad.add("param_groups.0.maximize", st::full<double>({}, 0.0));
    bad.add("param_groups.0.foreach", st::full<double>({}, 0.0));  // PyTorch's switch: ignored
    bad.finish();
  };
  write_group(-1.0, true);  // an invalid rate is refused as the options' own check refuses it
  CHECK_THROWS_WITH(st::optim::load(single, path), "Invalid learning rate: -1.0");
  CHECK(single.get_lr(0) == 0.5);
  write_group(0.25, false);  // an option missing
  CHECK_THROWS_AS(st::optim::load(single, path), st::error);
  CHECK(single.get_lr(0) == 0.5);
  write_group(0.25, true);  // a complete group of options without state loads
  st::optim::load(single, path);
  CHECK(single.get_lr(0) == 0.25);
}
