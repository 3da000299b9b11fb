// SPDX-License-Identifier: MIT
// Neural-network layers: PyTorch's torch.nn. The functions (torch.nn.functional, partition
// :functional, compiled once in src/nn_*.cpp) and the modules that hold their parameters
// (partition :modules), with libtorch's names and option classes.
export module strata.nn;
export import :functional;
export import :modules;
// What src/nn_*.cpp (module strata.nn) use through this interface.
import strata.std;
import strata.error;
import strata.dtype;
import strata.shape;
import strata.tensor;
import strata.random;
