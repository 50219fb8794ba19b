# The hardening Debian builds its packages with (dpkg-buildflags, hardening=+all): libc calls
# checked for overflows where the optimiser can see the sizes (_FORTIFY_SOURCE needs -O),
# stack protection, and relocations read-only and bound at start (relro, bindnow), so that
# lintian finds the package built as Debian's own. The sanitized build leaves them out: it
# checks more, and fortified calls hide accesses from AddressSanitizer.
if(NOT GPUSCHED_SANITIZE)
  add_compile_options(
    "$<$<AND:$<COMPILE_LANGUAGE:CXX>,$<NOT:$<CONFIG:Debug>>>:-D_FORTIFY_SOURCE=2>"
    "$<$<COMPILE_LANGUAGE:CXX>:-fstack-protector-strong;-fstack-clash-protection>")
  add_link_options(LINKER:-z,relro LINKER:-z,now)
endif()
