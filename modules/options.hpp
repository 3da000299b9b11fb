// SPDX-License-Identifier: MIT
// The options classes' one shape (strata.optim, strata.nn): PyTorch's name as a setter that
// returns the options, for libtorch's chains (SGDOptions(0.1).momentum(0.9)), and as a getter.
// Included by module interfaces and undefined at their end; installed beside them.
#pragma once

#define STRATA_OPTION(Type, name, init)          \
 public:                                         \
  auto& name(Type v) {                           \
    name##_ = v;                                 \
    return *this;                                \
  }                                              \
  Type name() const noexcept { return name##_; } \
                                                 \
 private:                                        \
  Type name##_ = init;
