// SPDX-License-Identifier: MIT
// The umbrella: `import strata;` brings every public part (strata.loop, the engine, is
// internal and not re-exported).
export module strata;
export import strata.error;
export import strata.dtype;
export import strata.shape;
export import strata.storage;
export import strata.autograd;
export import strata.tensor;
export import strata.expr;
export import strata.linalg;
export import strata.random;
export import strata.manip;
export import strata.indexing;
export import strata.sorting;
export import strata.io;
export import strata.dlpack;
export import strata.optim;
export import strata.nn;
export import strata.any;
