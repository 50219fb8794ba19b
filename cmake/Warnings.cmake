# Warnings for our own targets only; third-party headers come in as SYSTEM includes.
add_library(gpusched_warnings INTERFACE)
target_compile_options(gpusched_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion -Wnon-virtual-dtor
  -Wold-style-cast -Wcast-align -Woverloaded-virtual -Wimplicit-fallthrough)

option(GPUSCHED_WERROR "Treat warnings as errors" OFF)
if(GPUSCHED_WERROR)
  target_compile_options(gpusched_warnings INTERFACE -Werror)
endif()
