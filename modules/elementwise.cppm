// SPDX-License-Identifier: MIT
// Lazy element-wise expressions, by job: the node types (:nodes), the op functors (:ops), the
// assignment funnel (:funnel), the public operators and functions (:functions) and autograd's
// derivatives of a tree (:derivatives). This partition gathers them for strata.expr.
export module strata.expr:elementwise;
export import :nodes;
export import :ops;
export import :funnel;
export import :functions;
export import :derivatives;
