# GPUSCHED_SANITIZE=address,undefined builds everything (library, binary, tests) instrumented,
# so the integration tests exercise the sanitized binary.
set(GPUSCHED_SANITIZE "" CACHE STRING "Comma-separated sanitizers, e.g. address,undefined")
if(GPUSCHED_SANITIZE)
  add_compile_options(-fsanitize=${GPUSCHED_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${GPUSCHED_SANITIZE})
endif()
