# cmake -DAGENT=... -DHELP2MAN=... -DOUT=...gz -P man_page.cmake
# help2man turns `gpuq-agent --help` into the page; each command's own
# --help goes in a COMMANDS section, as preformatted roff text.
set(commands check record report top)
get_filename_component(dir ${OUT} DIRECTORY)
file(MAKE_DIRECTORY ${dir})
set(include "[COMMANDS]\n")
foreach(cmd ${commands})
  execute_process(COMMAND ${AGENT} ${cmd} --help OUTPUT_VARIABLE help
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${AGENT} ${cmd} --help exited ${rc}")
  endif()
  # roff: a backslash is an escape, a line starting with . or ' a request.
  string(REPLACE "\\" "\\e" help "${help}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" help "${help}")
  string(APPEND include ".SS ${cmd}\n.nf\n${help}.fi\n")
endforeach()
string(APPEND include "[SEE ALSO]\n/usr/share/doc/gpuq-agent/README.md (the package), README.md (the tarball)\n")
file(WRITE ${dir}/commands.h2m "${include}")
execute_process(COMMAND ${HELP2MAN} --no-info --section=1
    "--name=per-container AMD GPU hardware queue metrics (amdkfd, eBPF) for Prometheus"
    --include=${dir}/commands.h2m --output=${dir}/gpuq-agent.1 ${AGENT}
  RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "help2man failed (${rc}): ${err}")
endif()
# -n: no name or time stamp, so the page is reproducible.
execute_process(COMMAND gzip -9n -c ${dir}/gpuq-agent.1 OUTPUT_FILE ${OUT}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gzip failed (${rc})")
endif()
