# What `cmake --install` puts in place: the one list the Debian package, the
# portable tarball and the image are made from (cmake/Package.cmake,
# scripts/package.sh, deploy/Containerfile). Paths are relative to the
# prefix: /usr for the package, the tarball's own directory for the
# portable build.
include(GNUInstallDirs)

# systemd's unit directory under the prefix: /usr/lib/systemd/system for the
# package (Debian's canonical place, lintian's systemd-service-in-odd-location),
# /usr/local/lib/systemd/system for a source install (also on systemd's
# search path), the tarball's lib/systemd/system to link from /etc.
set(GPUQ_SYSTEMD_UNIT_DIR lib/systemd/system)

install(TARGETS gpuq-agent RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# TLS for /metrics: the agent finds the shims in <bindir>/../lib/gpuq-agent
# (agent/export/tls/civetweb_tls.h), whatever the platform's libdir is.
install(TARGETS gpuq-civetweb-ssl gpuq-civetweb-crypto
  LIBRARY DESTINATION lib/gpuq-agent)

# The unit names the agent by the prefix it is installed under, known only
# at install time (--prefix, the package's /usr, the tarball's /opt).
install(CODE "
  set(GPUQ_UNIT_BINDIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}\")
  configure_file(\"${PROJECT_SOURCE_DIR}/deploy/systemd/gpuq-agent.service.in\"
    \"${PROJECT_BINARY_DIR}/install/gpuq-agent.service\" @ONLY)")
install(FILES ${PROJECT_BINARY_DIR}/install/gpuq-agent.service
  DESTINATION ${GPUQ_SYSTEMD_UNIT_DIR})

set(GPUQ_DATADIR ${CMAKE_INSTALL_DATADIR}/gpuq-agent)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/web-config.example.yml
  DESTINATION ${GPUQ_DATADIR})
install(FILES ${PROJECT_SOURCE_DIR}/examples/default.gpuqcap
  ${GPUQ_REPORT_SCENARIO_CAPTURES} DESTINATION ${GPUQ_DATADIR}/examples)
install(FILES ${PROJECT_SOURCE_DIR}/dashboards/gpuq.json
  DESTINATION ${GPUQ_DATADIR}/dashboards)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/dashboards/provisioning
  DESTINATION ${GPUQ_DATADIR}/dashboards)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/prometheus/gpuq-alerts.yml
  DESTINATION ${GPUQ_DATADIR}/prometheus OPTIONAL)

install(FILES ${GPUQ_MAN_PAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${PROJECT_SOURCE_DIR}/deploy/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR}
  RENAME deploy.md)
