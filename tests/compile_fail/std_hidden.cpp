// SPDX-License-Identifier: MIT
// strata's interfaces share one internal copy of the standard library (strata.std), which is
// not re-exported: `import strata;` must not make standard names visible to a user's file.
import strata;

int main() {
  std::vector<int> v(3);
  return static_cast<int>(v.size());
}
