# Proves the layer views refuse an upward include and allow a downward one.
# For every pair of layers (L, M): a file compiled the way L's sources are
# (with L's view) that includes one of M's headers must fail with "No such
# file" when M is above L or beside it, and must preprocess when M is L or below.
# "Below" is the declared order (ORDER, lowest first), in which scenario and
# observe are siblings: it is stated here, not read from the views, so a view
# that shows too much fails this test
#
# Run by ctest: cmake -DCXX=... -DLAYERS_DIR=build/layers -DSOURCE_DIR=... -DWORK=...
#   -DORDER="os;core;..." -P check_layers.cmake
cmake_minimum_required(VERSION 3.25)
file(MAKE_DIRECTORY ${WORK})
set(failures "")
set(checked 0)
foreach(layer ${ORDER})
  set(view ${LAYERS_DIR}/${layer})
  list(FIND ORDER ${layer} li)
  foreach(other ${ORDER})
    list(FIND ORDER ${other} oi)
    set(allowed FALSE)
    if(oi LESS_EQUAL li AND NOT (layer STREQUAL "observe" AND other STREQUAL "scenario"))
      set(allowed TRUE)
    endif()
    # One header of `other`, found in the source tree.
    if(other STREQUAL "reports")
      set(odir reports)
    else()
      set(odir harness/${other})
    endif()
    file(GLOB headers RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/${odir}/*.h)
    list(SORT headers)
    list(GET headers 0 header)
    set(src ${WORK}/${layer}_includes_${other}.cc)
    file(WRITE ${src} "#include \"${header}\"\n")
    execute_process(COMMAND ${CXX} -std=c++20 -E -o ${src}.i -I${view} ${src}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    math(EXPR checked "${checked} + 1")
    if(allowed)
      if(NOT rc EQUAL 0)
        string(APPEND failures "  ${layer} may include ${header} but it does not preprocess:\n${err}\n")
      endif()
    else()
      if(rc EQUAL 0)
        string(APPEND failures "  ${layer} includes ${header} (a layer above or beside it) and it was found\n")
      elseif(NOT err MATCHES "No such file or directory")
        string(APPEND failures "  ${layer} including ${header} failed for another reason:\n${err}\n")
      endif()
    endif()
  endforeach()
endforeach()
if(failures)
  message(FATAL_ERROR "layering:\n${failures}")
endif()
message(STATUS "layering: ${checked} include pairs as declared")
