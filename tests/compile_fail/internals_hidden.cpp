// SPDX-License-Identifier: MIT
// The engine's internals are not part of the API: `import strata;` must not make them visible.
import strata;

int main() { return strata::detail::thread_count(); }
