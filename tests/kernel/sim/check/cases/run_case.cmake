# One sim_check case: runs CHECK with the arguments of CASE.args (one line,
# split like a shell's words; paths relative to this folder) and GPUQ_KERNEL
# set to "case", and holds its exit status and stdout to CASE.want, whose
# first line is "exit N" and the rest the exact stdout.
file(STRINGS ${CASE}.args args_line LIMIT_COUNT 1)
separate_arguments(args UNIX_COMMAND "${args_line}")
set(ENV{GPUQ_KERNEL} case)
execute_process(COMMAND ${CHECK} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err TIMEOUT 20)
file(READ ${CASE}.want want)
set(got "exit ${rc}\n${out}")
if(NOT got STREQUAL want)
  message(FATAL_ERROR "sim_check ${args_line}\n--- want\n${want}--- got\n${got}--- stderr\n${err}")
endif()
