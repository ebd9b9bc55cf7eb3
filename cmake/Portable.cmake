# The portable build (scripts/package.sh's tarball): the agent's own objects
# linked again, not compiled again, for hosts that are not Debian 12:
#  - statically, every library Debian ships an archive of: libbpf, libelf,
#    zlib, zstd, LibYAML, libcap, libxcrypt, ncurses;
#  - carried next to it (lib/gpuq-agent, found through an $ORIGIN RPATH that
#    also serves their own dependencies), the ones Debian ships only shared:
#    prometheus-cpp, civetweb, fmt, libcurl and the libraries they need;
#  - from the host: glibc (2.34 at most: RHEL 9) and GCC's runtime,
#    libstdc++ and libgcc_s (GCC 11's at most: agent/portable/).
# tests/deploy/package_test.sh holds every ELF file to those versions.
get_property(layers GLOBAL PROPERTY GPUQ_LAYER_CLOSURE_cli)
set(archives)
set(layer_targets)
foreach(layer IN LISTS layers)
  list(APPEND archives $<TARGET_FILE:gpuq_${layer}>)
  list(APPEND layer_targets gpuq_${layer})
endforeach()

add_executable(gpuq-agent-portable $<TARGET_OBJECTS:gpuq_main>
  ${PROJECT_SOURCE_DIR}/agent/portable/condition_variable_gcc11.cc
  ${PROJECT_SOURCE_DIR}/agent/portable/libxcrypt_random_bytes.cc)
# The archives are linked by path, so each must be built first (a dependency
# on the interface target gpuq_core orders nothing).
add_dependencies(gpuq-agent-portable ${layer_targets})
set_target_properties(gpuq-agent-portable PROPERTIES
  OUTPUT_NAME gpuq-agent
  RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/portable/bin
  BUILD_RPATH "\$ORIGIN/../lib/gpuq-agent")
target_compile_options(gpuq-agent-portable PRIVATE ${GPUQ_WARNINGS})
target_link_options(gpuq-agent-portable PRIVATE
  # DT_RPATH, not DT_RUNPATH: it also finds the carried libraries' own
  # dependencies (RUNPATH applies to the binary's direct ones only).
  "LINKER:--disable-new-dtags"
  "LINKER:--wrap=_ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE")
target_link_libraries(gpuq-agent-portable PRIVATE
  -Wl,--start-group ${archives} -Wl,--end-group
  -Wl,-Bstatic bpf elf z zstd yaml cap crypt ncurses tinfo -Wl,-Bdynamic
  prometheus-cpp::pull prometheus-cpp::core ${CIVETWEB_CPP_LIB} ${CIVETWEB_LIB}
  fmt::fmt
  CURL::libcurl OpenSSL::SSL OpenSSL::Crypto Threads::Threads ${CMAKE_DL_LIBS})
