#include <gpusched/out_of_memory.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpusched {
namespace {

TEST(OutOfMemory, TheMessagesOfCudaAndItsFrameworksAreKnown)
{
    for (const std::string printed :
         {// PyTorch 2
          "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has "
          "a total capacity of 79.11 GiB of which 1.06 GiB is free.",
          // PyTorch 1
          "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB",
          "RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously "
          "reported",
          // TensorFlow
          "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when "
          "allocating tensor with shape[8192,8192]",
          "failed to allocate 4.00G (4294967296 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: "
          "out of memory",
          // JAX
          "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while "
          "trying to allocate 17179869184 bytes.",
          // the CUDA runtime, and cuBLAS
          "cudaMalloc failed: cudaErrorMemoryAllocation",
          "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling cublasCreate"}) {
        EXPECT_TRUE(says_gpu_out_of_memory(printed)) << printed;
    }
}

TEST(OutOfMemory, TheHostsOutOfMemoryAndOtherFailuresAreNot)
{
    for (const std::string& printed : std::vector<std::string>{
             "MemoryError", "terminate called after throwing an instance of 'std::bad_alloc'",
             "Killed", "RuntimeError: CUDA error: device-side assert triggered", "out of memory",
             "", std::string("CUDA out\0of memory", 18)}) {
        EXPECT_FALSE(says_gpu_out_of_memory(printed)) << printed;
    }
}

} // namespace
} // namespace gpusched
