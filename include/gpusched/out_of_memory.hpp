#pragma once

#include <string_view>

namespace gpusched {

// Whether what a job printed says it ran out of GPU memory, as CUDA and the frameworks on it
// say so: the CUDA runtime ("out of memory", cudaErrorMemoryAllocation) and driver
// (CUDA_ERROR_OUT_OF_MEMORY), PyTorch ("torch.OutOfMemoryError: CUDA out of memory", and
// "CUDA error: out of memory"), TensorFlow ("ResourceExhaustedError", "OOM when allocating
// tensor") and JAX/XLA ("RESOURCE_EXHAUSTED: Out of memory"). A host's out-of-memory (the
// kernel's OOM killer, "std::bad_alloc", Python's "MemoryError") is not one.
bool says_gpu_out_of_memory(std::string_view printed);

} // namespace gpusched
