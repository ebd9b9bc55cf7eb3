# The agent's folders (agent/<folder>/, one responsibility each) as one
# static library each, declared in dependency order:
#
#   gpuq_agent_layer(<folder> [SOURCES <files...>] [DEPS <folders...>])
#
# creates gpuq_<folder>, linked to the layers it DEPS on. Two rules, checked
# when CMake configures (so a clean configure, as CI's, fails the build):
#  - a layer may depend only on layers declared before it, so the graph has
#    no cycle: CMake itself accepts cycles among static libraries, and
#    they are how a folder quietly starts to need everything;
#  - a file of the folder (sources and headers) may include another agent
#    folder's header only if its layer depends on that folder, directly or
#    through another layer.
# The message names the file, the include and the fix.

# gpuq_unity_sources(<target> <base dir> <sources...>): records the sources
# of a unity-built target for the `unity_names` lint (tests/lint).
function(gpuq_unity_sources target base)
  foreach(src IN LISTS ARGN)
    get_filename_component(abs ${src} ABSOLUTE BASE_DIR ${base})
    set_property(GLOBAL APPEND PROPERTY GPUQ_UNITY_SOURCES "${target} ${abs}")
  endforeach()
endfunction()

function(gpuq_agent_layer folder)
  cmake_parse_arguments(L "" "" "SOURCES;DEPS" ${ARGN})
  set(closure ${folder})
  foreach(dep IN LISTS L_DEPS)
    if(NOT TARGET gpuq_${dep})
      message(FATAL_ERROR
        "agent layer '${folder}' depends on '${dep}', which is not declared "
        "before it in agent/CMakeLists.txt (layers are declared in dependency "
        "order, so no cycle can form)")
    endif()
    get_property(dep_closure GLOBAL PROPERTY GPUQ_LAYER_CLOSURE_${dep})
    list(APPEND closure ${dep_closure})
  endforeach()
  list(REMOVE_DUPLICATES closure)
  set_property(GLOBAL PROPERTY GPUQ_LAYER_CLOSURE_${folder} ${closure})

  set(dir ${CMAKE_CURRENT_SOURCE_DIR})
  file(GLOB_RECURSE files RELATIVE ${dir} ${dir}/${folder}/*.h
    ${dir}/${folder}/*.cc ${dir}/${folder}/*.c)
  foreach(f IN LISTS files)
    file(STRINGS ${dir}/${f} includes REGEX "^#include \"[a-z_]+/")
    foreach(inc IN LISTS includes)
      string(REGEX REPLACE "^#include \"([a-z_]+)/.*" "\\1" used "${inc}")
      if(IS_DIRECTORY ${dir}/${used} AND NOT used IN_LIST closure)
        message(FATAL_ERROR
          "agent/${f}: '${inc}': layer '${folder}' does not depend on "
          "'${used}' (add it to its DEPS in agent/CMakeLists.txt if that "
          "creates no cycle, or move the shared part down a layer)")
      endif()
    endforeach()
  endforeach()

  if(L_SOURCES)
    add_library(gpuq_${folder} STATIC ${L_SOURCES})
    target_compile_options(gpuq_${folder} PRIVATE ${GPUQ_WARNINGS}
      ${GPUQ_FUZZ_COVERAGE})
    set_target_properties(gpuq_${folder} PROPERTIES
      UNITY_BUILD ${GPUQ_UNITY_BUILD} UNITY_BUILD_BATCH_SIZE 8)
    gpuq_unity_sources(gpuq_${folder} ${dir} ${L_SOURCES})
    set(scope PUBLIC)
  else()
    add_library(gpuq_${folder} INTERFACE)
    set(scope INTERFACE)
  endif()
  target_include_directories(gpuq_${folder} ${scope} ${dir}
    ${CMAKE_SOURCE_DIR}/include)
  list(TRANSFORM L_DEPS PREPEND gpuq_ OUTPUT_VARIABLE dep_targets)
  target_link_libraries(gpuq_${folder} ${scope} ${dep_targets})
endfunction()
