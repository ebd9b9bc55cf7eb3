# gpuq-agent(1), generated at build time from the CLI's own --help (the
# agent's and each command's) with Debian's help2man, so the page cannot
# drift from the options. Installed by cmake/Install.cmake.
find_program(HELP2MAN help2man REQUIRED)
set(GPUQ_MAN_PAGE ${PROJECT_BINARY_DIR}/man/gpuq-agent.1.gz)
add_custom_command(OUTPUT ${GPUQ_MAN_PAGE}
  COMMAND ${CMAKE_COMMAND} -DAGENT=$<TARGET_FILE:gpuq-agent> -DHELP2MAN=${HELP2MAN}
    -DOUT=${GPUQ_MAN_PAGE} -P ${PROJECT_SOURCE_DIR}/cmake/man_page.cmake
  DEPENDS gpuq-agent ${PROJECT_SOURCE_DIR}/cmake/man_page.cmake
  COMMENT "Generating gpuq-agent(1) from --help" VERBATIM)
add_custom_target(gpuq-man ALL DEPENDS ${GPUQ_MAN_PAGE})
