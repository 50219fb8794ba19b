# Every dependency comes from a Debian package (or the CUDA toolkit when installed);
# nothing is downloaded at build time.
find_package(CLI11 CONFIG REQUIRED)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
# The multi-host queue: hiredis speaks Redis's protocol (Debian ships a pkg-config file, not a
# CMake package), libcrypto signs and checks jobs with HMAC-SHA256.
find_package(PkgConfig REQUIRED)
pkg_check_modules(HIREDIS REQUIRED IMPORTED_TARGET hiredis)
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
# The queue on one machine lives in an SQLite database (WAL mode: readers never wait).
pkg_check_modules(SQLITE3 REQUIRED IMPORTED_TARGET sqlite3)
# `gpusched serve`'s HTTP server (Debian's libcpp-httplib-dev, a compiled library).
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)

# The CUDA runtime is only used by the short-lived probe child (src/gpu/cuda_probe.cpp).
# It is linked statically so the binary does not need a matching libcudart at run time;
# the driver (libcuda.so.1) is still loaded lazily, and only by the probe.
set(GPUSCHED_HAVE_CUDA OFF)
if(GPUSCHED_WITH_CUDA)
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND AND TARGET CUDA::cudart_static)
    set(GPUSCHED_HAVE_CUDA ON)
    message(STATUS "gpusched: CUDA runtime ${CUDAToolkit_VERSION} found, GPU discovery enabled")
  else()
    message(STATUS "gpusched: CUDA toolkit not found, building without GPU discovery (--gpus required)")
  endif()
endif()

if(BUILD_TESTING)
  find_package(GTest REQUIRED)
endif()
