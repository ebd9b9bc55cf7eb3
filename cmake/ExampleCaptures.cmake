# The report scenarios of examples/README.md ("Report scenarios"), generated
# at build time and installed beside the bundled capture, so an installed
# agent can show `report` comparing runs without a GPU:
#   gpuq-agent report cnn.gpuqcap transformer.gpuqcap deepseek8.gpuqcap
set(GPUQ_REPORT_SCENARIO_CAPTURES)
foreach(scenario cnn transformer deepseek8)
  set(capture ${PROJECT_BINARY_DIR}/examples/${scenario}.gpuqcap)
  add_custom_command(OUTPUT ${capture}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/examples
    COMMAND gpuq-gen-capture --scenario ${scenario} -o ${capture}
    DEPENDS gpuq-gen-capture
    COMMENT "Generating the ${scenario} example capture" VERBATIM)
  list(APPEND GPUQ_REPORT_SCENARIO_CAPTURES ${capture})
endforeach()
add_custom_target(gpuq-example-captures ALL DEPENDS ${GPUQ_REPORT_SCENARIO_CAPTURES})
