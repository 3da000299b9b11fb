// SPDX-License-Identifier: MIT
// The umbrella: `import strata;` brings every part.
export module strata;
export import strata.error;
export import strata.dtype;
export import strata.shape;
export import strata.storage;
export import strata.tensor;
export import strata.io;
export import strata.loop;
export import strata.expr;
export import strata.reduce;
