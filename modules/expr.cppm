// SPDX-License-Identifier: MIT
// Lazy expressions and reductions: element-wise nodes, operators and functions
// (:elementwise) and reductions that consume an expression directly (:reduce). One module
// in two partitions, so that reductions use the expression internals without exporting them.
export module strata.expr;
export import :elementwise;
export import :reduce;
