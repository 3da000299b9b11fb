// SPDX-License-Identifier: MIT
// DLPack: tensors shared with other frameworks (PyTorch, NumPy, JAX, CuPy, ...) without a copy,
// through the versioned 1.x ABI (DLManagedTensorVersioned). The ABI's structs are declared here
// from the published specification (https://dmlc.github.io/dlpack/latest/c_api.html): their
// field order, types and constants are the ABI, so a pointer to strata::dlpack's
// DLManagedTensorVersioned and one to dlpack.h's are interchangeable (reinterpret_cast).
export module strata.dlpack;
import strata.std;
import strata.error;
import strata.dtype;
import strata.storage;
import strata.tensor;

export namespace strata::dlpack {
/// The specification's version a tensor follows (major.minor).
struct DLPackVersion {
  std::uint32_t major;  ///< incompatible ABI changes
  std::uint32_t minor;  ///< compatible additions
};
/// Where a tensor's memory lives (DLPack's device kinds; strata holds kDLCPU only).
enum DLDeviceType : std::int32_t {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLMetal = 8,
  kDLVPI = 9,
  kDLROCM = 10,
  kDLROCMHost = 11,
  kDLExtDev = 12,
  kDLCUDAManaged = 13,
  kDLOneAPI = 14,
  kDLWebGPU = 15,
  kDLHexagon = 16,
};
/// A device: its kind and index.
struct DLDevice {
  DLDeviceType device_type;  ///< the kind of device
  std::int32_t device_id;    ///< which one of that kind (0 for the CPU)
};
/// The kinds of element types.
enum DLDataTypeCode : std::uint8_t {
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLOpaqueHandle = 3,
  kDLBfloat = 4,
  kDLComplex = 5,
  kDLBool = 6,
};
/// An element type: kind, width in bits, vector lanes (1 for a scalar).
struct DLDataType {
  std::uint8_t code;    ///< a DLDataTypeCode
  std::uint8_t bits;    ///< width of one lane in bits
  std::uint16_t lanes;  ///< lanes per element (1: not a vector type)
};
/// A strided tensor's description (it owns nothing).
struct DLTensor {
  void* data;                ///< the base pointer
  DLDevice device;           ///< where data lives
  std::int32_t ndim;         ///< number of dims
  DLDataType dtype;          ///< element type
  std::int64_t* shape;       ///< ndim sizes
  std::int64_t* strides;     ///< ndim strides in elements, or null for compact row-major
  std::uint64_t byte_offset; ///< bytes from data to the first element
};
/// A tensor handed from a producer to a consumer, which calls deleter(self) once when done.
struct DLManagedTensorVersioned {
  DLPackVersion version;                             ///< the specification it follows
  void* manager_ctx;                                 ///< the producer's own state
  void (*deleter)(DLManagedTensorVersioned* self);   ///< releases the tensor (may be null)
  std::uint64_t flags;                               ///< flag_read_only, flag_is_copied
  DLTensor dl_tensor;                                ///< the tensor
};
/// The specification version strata produces and reads (any 1.x).
inline constexpr DLPackVersion version{1, 0};
/// flags bit: the consumer must not write the memory.
inline constexpr std::uint64_t flag_read_only = 1;
/// flags bit: the producer made a copy the consumer owns alone.
inline constexpr std::uint64_t flag_is_copied = 2;
}  // namespace strata::dlpack

export namespace strata::detail {
/// T as a DLPack element type (float128 has none: Boost's layout is not IEEE binary128).
template <element T>
constexpr dlpack::DLDataType dl_type() {
  using namespace dlpack;
  if constexpr (std::is_same_v<T, bool>) return {kDLBool, 8, 1};
  else if constexpr (std::is_same_v<T, half>) return {kDLFloat, 16, 1};
  else if constexpr (std::is_same_v<T, bfloat16>) return {kDLBfloat, 16, 1};
  else if constexpr (std::is_same_v<T, std::complex<float>>) return {kDLComplex, 64, 1};
  else if constexpr (std::is_same_v<T, std::complex<double>>) return {kDLComplex, 128, 1};
  else if constexpr (std::is_floating_point_v<T>) return {kDLFloat, static_cast<std::uint8_t>(8 * sizeof(T)), 1};
  else if constexpr (std::is_integral_v<T>)
    return {T(-1) < T(0) ? kDLInt : kDLUInt, static_cast<std::uint8_t>(8 * sizeof(T)), 1};
  else static_assert(sizeof(T) == 0, "DLPack has no float128 (Boost's float128 is not laid out as IEEE binary128)");
}
template <element T>
struct dlpack_context {
  Tensor<T> keep;
  std::vector<std::int64_t> shape, strides;
};
}  // namespace strata::detail

export namespace strata {
/// t shared through DLPack (torch.utils.dlpack.to_dlpack; the versioned 1.x ABI): the consumer
/// reads t's elements in place and calls the deleter once when done, which is when t's storage
/// may go. read_only: the consumer is told not to write. A tensor that requires grad is refused,
/// as PyTorch refuses it.
template <element T>
dlpack::DLManagedTensorVersioned* to_dlpack(const Tensor<T>& t, bool read_only = false) {
  if (t.requires_grad()) throw error("Can't export tensors that require gradient, use tensor.detach()");
  auto* ctx = new detail::dlpack_context<T>{t.detach(), std::vector<std::int64_t>(t.sizes().begin(), t.sizes().end()),
                                            std::vector<std::int64_t>(t.strides().begin(), t.strides().end())};
  dlpack::DLManagedTensorVersioned* m = nullptr;
  try {
    m = new dlpack::DLManagedTensorVersioned{};
  } catch (...) {
    delete ctx;
    throw;
  }
  m->version = dlpack::version;
  m->deleter = [](dlpack::DLManagedTensorVersioned* self) {
    delete static_cast<detail::dlpack_context<T>*>(self->manager_ctx);
    delete self;
  };
  m->flags = read_only ? dlpack::flag_read_only : 0;
  m->dl_tensor = {static_cast<void*>(ctx->keep.data_ptr()), {dlpack::kDLCPU, 0}, static_cast<std::int32_t>(t.dim()),
                  detail::dl_type<T>(), ctx->shape.data(), ctx->strides.data(), 0};
  m->manager_ctx = ctx;
  return m;
}

/// A tensor over a DLPack tensor's memory, without a copy (torch.utils.dlpack.from_dlpack): the
/// strides are kept, m's deleter runs once, when the last view of the elements goes, and a tensor
/// flagged read-only refuses every write strata makes (error). m is checked first (a 1.x version,
/// a CPU device, T's element type, sizes and strides that are not negative, data aligned for T);
/// on error m is not taken and its deleter is not called.
template <element T>
Tensor<T> from_dlpack(dlpack::DLManagedTensorVersioned* m) {
  if (!m) throw error("from_dlpack: a null DLManagedTensorVersioned");
  if (m->version.major != dlpack::version.major)
    throw error("from_dlpack: DLPack " + std::to_string(m->version.major) + "." + std::to_string(m->version.minor) +
                " is not supported (strata reads 1.x)");
  const dlpack::DLTensor& d = m->dl_tensor;
  if (d.device.device_type != dlpack::kDLCPU)
    throw error("from_dlpack: the tensor is on DLPack device type " + std::to_string(d.device.device_type) +
                "; strata holds CPU tensors only (kDLCPU = 1)");
  constexpr dlpack::DLDataType want = detail::dl_type<T>();
  if (d.dtype.code != want.code || d.dtype.bits != want.bits || d.dtype.lanes != want.lanes)
    throw dtype_error("from_dlpack: the tensor's DLPack dtype (code " + std::to_string(d.dtype.code) + ", bits " +
                      std::to_string(d.dtype.bits) + ", lanes " + std::to_string(d.dtype.lanes) + ") is not " +
                      std::string(dtype_name(dtype_v<T>)));
  if (d.ndim < 0 || d.ndim > 64 || (d.ndim > 0 && !d.shape))
    throw shape_error("from_dlpack: a tensor of " + std::to_string(d.ndim) + " dims without sizes");
  const auto n = static_cast<std::size_t>(d.ndim);
  std::vector<std::int64_t> sizes(d.shape, d.shape + n), strides(n, 1);
  for (std::size_t k = n; d.strides == nullptr && k-- > 1;) strides[k - 1] = strides[k] * std::max<std::int64_t>(sizes[k], 1);
  if (d.strides) strides.assign(d.strides, d.strides + n);
  std::int64_t extent = 1;
  for (std::size_t k = 0; k < n; ++k) {
    if (sizes[k] < 0 || strides[k] < 0)
      throw shape_error("from_dlpack: negative sizes and strides are not supported");
    extent = sizes[k] == 0 || extent == 0 ? 0 : extent + (sizes[k] - 1) * strides[k];
  }
  char* base = static_cast<char*>(d.data) + d.byte_offset;
  if (extent > 0 && reinterpret_cast<std::uintptr_t>(base) % alignof(T) != 0)
    throw error("from_dlpack: the tensor's data is not aligned for " + std::string(dtype_name(dtype_v<T>)));
  std::shared_ptr<void> owner(static_cast<void*>(m), [](void* p) {
    auto* self = static_cast<dlpack::DLManagedTensorVersioned*>(p);
    if (self->deleter) self->deleter(self);
  });
  return Tensor<T>(storage::borrow(reinterpret_cast<T*>(base), extent, std::move(owner),
                                   (m->flags & dlpack::flag_read_only) != 0),
                   sizes, strides, 0);
}
}  // namespace strata
