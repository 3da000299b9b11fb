// SPDX-License-Identifier: MIT
// Lazy expressions and reductions: element-wise nodes, operators and functions
// (:elementwise), reductions that consume an expression directly (:reduce), and statistics
// and arg-reductions built on them (:stats). One module in three partitions, so that
// reductions use the expression internals without exporting them.
export module strata.expr;
export import :elementwise;
export import :reduce;
export import :stats;
