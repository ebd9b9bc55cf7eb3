# The Debian package: CPack's DEB generator over the install rules of
# cmake/Install.cmake (the same tree the tarball and the image are made
# from), from the build that was already compiled: no second build, as a
# debhelper package would need. Its dependencies are computed from the
# binaries with dpkg-shlibdeps. Built for Debian 12 only (the libraries'
# sonames and versions are bookworm's); other distributions take the
# portable tarball (scripts/package.sh). Made by `cpack` in the build
# directory (scripts/package.sh).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gpuq-agent)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "gpuq-agent")
set(CPACK_PACKAGE_CONTACT "gpuq-agent maintainers <maintainers@gpuq-agent.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "per-container AMD GPU hardware queue metrics for Prometheus")
# CPack writes the summary as the synopsis line itself.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
  "gpuq-agent follows amdkfd's hardware queues with CO-RE eBPF programs (queue
lifecycle, runlist preemption, evictions) and exports per-container queue
counts, submission rates and preemptions as Prometheus metrics. It also
records captures, reports on them and shows a live view (gpuq-agent top).")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The TLS shims are the agent's private libraries (lib/gpuq-agent), not a
# shared library other packages link: no shlibs file for them.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS OFF)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
  ${PROJECT_SOURCE_DIR}/deploy/debian/postinst
  ${PROJECT_SOURCE_DIR}/deploy/debian/prerm
  ${PROJECT_SOURCE_DIR}/deploy/debian/postrm)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Installed into a staging DESTDIR with the prefix /usr itself, so what the
# install rules compute from the prefix (the unit's ExecStart) is /usr's.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/package)
set(CPACK_SOURCE_GENERATOR "")

# What Debian policy asks of every package's documentation directory.
configure_file(${PROJECT_SOURCE_DIR}/deploy/debian/changelog.in
  ${PROJECT_BINARY_DIR}/debian/changelog @ONLY)
add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/debian/changelog.gz
  COMMAND gzip -9n -c ${PROJECT_BINARY_DIR}/debian/changelog > ${PROJECT_BINARY_DIR}/debian/changelog.gz
  DEPENDS ${PROJECT_BINARY_DIR}/debian/changelog)
add_custom_target(gpuq-debian-changelog ALL DEPENDS ${PROJECT_BINARY_DIR}/debian/changelog.gz)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/debian/copyright
  ${PROJECT_BINARY_DIR}/debian/changelog.gz DESTINATION ${CMAKE_INSTALL_DOCDIR})
include(CPack)
