#include <gpusched/out_of_memory.hpp>

#include <array>

namespace gpusched {

bool says_gpu_out_of_memory(std::string_view printed)
{
    // Each is specific to GPU memory: a bare "out of memory" could be the host's.
    static constexpr std::array<std::string_view, 9> k_messages = {
        "CUDA out of memory",                // PyTorch's OutOfMemoryError
        "CUDA error: out of memory",         // PyTorch's other path, and CUDA's error string
        "CUDA_ERROR_OUT_OF_MEMORY",          // the driver API (TensorFlow, CuPy, JAX)
        "cudaErrorMemoryAllocation",         // the runtime's error name
        "OOM when allocating tensor",        // TensorFlow
        "ResourceExhaustedError",            // TensorFlow
        "RESOURCE_EXHAUSTED: Out of memory", // JAX/XLA
        "CUBLAS_STATUS_ALLOC_FAILED",        // cuBLAS, through PyTorch
        "CUDNN_STATUS_ALLOC_FAILED",         // cuDNN
    };
    for (const auto message : k_messages) {
        if (printed.find(message) != std::string_view::npos) {
            return true;
        }
    }
    return false;
}

} // namespace gpusched
