# What `cmake --install` puts where, and the Debian package `cpack -G DEB` makes of it.
# Included from src/, where the binary, the manual and the completions are made.
include(GNUInstallDirs)

install(TARGETS gpusched RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The drop-in names, as links beside the binary (the name picks the command).
foreach(name simple_gpu_scheduler simple_hypersearch)
  install(CODE "file(CREATE_LINK gpusched
    \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/${name}\" SYMBOLIC)")
endforeach()

# The manual pages, compressed as Debian keeps them.
set(GPUSCHED_MANUALS_GZ)
foreach(page ${GPUSCHED_MANUAL_PAGES})
  set(manual ${PROJECT_BINARY_DIR}/man/${page}.1)
  add_custom_command(OUTPUT ${manual}.gz
    COMMAND gzip -9nfk ${manual}
    DEPENDS ${manual}
    VERBATIM)
  list(APPEND GPUSCHED_MANUALS_GZ ${manual}.gz)
endforeach()
add_custom_target(gpusched_manual_gz ALL DEPENDS ${GPUSCHED_MANUALS_GZ})
install(FILES ${GPUSCHED_MANUALS_GZ} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

# Completions where each shell looks for those of installed packages, under each name:
# bash-completion loads the file named as the command (one script serves all three names),
# zsh reads the names from the script's #compdef line, fish has a script per name.
set(bash_completions ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
install(FILES ${PROJECT_BINARY_DIR}/completions/gpusched.bash
        DESTINATION ${bash_completions} RENAME gpusched)
foreach(name simple_gpu_scheduler simple_hypersearch)
  install(CODE "file(CREATE_LINK gpusched
    \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${bash_completions}/${name}\" SYMBOLIC)")
endforeach()
install(FILES ${PROJECT_BINARY_DIR}/completions/_gpusched
        DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)
install(FILES ${PROJECT_BINARY_DIR}/completions/gpusched.fish
              ${PROJECT_BINARY_DIR}/completions/simple_gpu_scheduler.fish
              ${PROJECT_BINARY_DIR}/completions/simple_hypersearch.fish
        DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d)

# Debian's documentation directory: the copyright file in its machine-readable form (the
# license itself is in /usr/share/common-licenses), the changelog compressed, and the
# examples with the modes a package gives, whatever the checkout's umask left on them.
file(STRINGS ${PROJECT_SOURCE_DIR}/packaging/changelog changelog_top LIMIT_COUNT 1)
if(NOT changelog_top MATCHES "^gpusched \\(${PROJECT_VERSION}\\) ")
  message(FATAL_ERROR "packaging/changelog starts with '${changelog_top}': its first entry "
                      "must be for version ${PROJECT_VERSION}, the project's")
endif()
set(changelog_gz ${PROJECT_BINARY_DIR}/packaging/changelog.gz)
add_custom_command(OUTPUT ${changelog_gz}
  COMMAND gzip -9n < ${PROJECT_SOURCE_DIR}/packaging/changelog > ${changelog_gz}
  DEPENDS ${PROJECT_SOURCE_DIR}/packaging/changelog)
add_custom_target(gpusched_changelog_gz ALL DEPENDS ${changelog_gz})
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/docs/guide.md
              ${PROJECT_SOURCE_DIR}/docs/json.md ${PROJECT_SOURCE_DIR}/docs/serve.md
              ${PROJECT_SOURCE_DIR}/docs/serve.png ${PROJECT_SOURCE_DIR}/packaging/copyright
              ${changelog_gz}
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples
        FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
        DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                              WORLD_READ WORLD_EXECUTE
        PATTERN "*.sh"
        PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ
                    WORLD_EXECUTE)
# A systemd user unit for a worker at login (`systemctl --user enable --now gpusched-worker`).
# It names the binary where it is installed, and the prefix is known only then (`cmake
# --install --prefix /usr/local`, or /usr in the Debian package): it is made at install time.
install(CODE "
  set(bindir \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}\")
  configure_file(\"${PROJECT_SOURCE_DIR}/packaging/gpusched-worker.service.in\"
                 \"${PROJECT_BINARY_DIR}/packaging/gpusched-worker.service\" @ONLY)
  file(INSTALL \"${PROJECT_BINARY_DIR}/packaging/gpusched-worker.service\"
       DESTINATION \"\${CMAKE_INSTALL_PREFIX}/lib/systemd/user\")
")
# systemd-tmpfiles makes the lease directory at boot, owned by root.
install(FILES ${PROJECT_SOURCE_DIR}/packaging/gpusched.tmpfiles DESTINATION lib/tmpfiles.d
        RENAME gpusched.conf)

set(CPACK_PACKAGE_NAME gpusched)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "run a queue of shell commands on a pool of GPUs")
# The extended description, in lines that fit a terminal of 80 columns.
set(CPACK_PACKAGE_DESCRIPTION "Runs each line of its input as a shell command on a free
GPU, starting the next one the moment a GPU frees up: a drop-in for
simple_gpu_scheduler, with named pipes as live queues, hyperparameter grids,
host-wide GPU leases and fair sharing between the users of a server, job
records in GNU parallel's job log, retries, and a queue of jobs (SQLite on
one machine, Redis across several).")
set(CPACK_PACKAGE_CONTACT "gpusched maintainers <gpusched@users.noreply.github.com>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
# Dependencies are computed by dpkg-shlibdeps from what the binary links, not listed by hand.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# A release binary without its debug information (most of its size).
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "redis-server")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/packaging/postinst)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# CPack counts each link to the binary as a copy of it in Installed-Size; the package is
# made again with the size dpkg-gencontrol would give.
set(CPACK_POST_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/packaging/installed_size.cmake)
include(CPack)
