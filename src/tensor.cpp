// SPDX-License-Identifier: MIT
// The tensor module's thread knobs (views' geometry is in views.cpp).
module strata.tensor;

namespace strata {
void set_num_threads(int n) { detail::set_thread_count(n); }
int get_num_threads() { return detail::thread_count(); }
}  // namespace strata
