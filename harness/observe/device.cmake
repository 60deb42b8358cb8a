# The GPU side's own build logic, included from the top-level CMakeLists.txt
# (after find_package(CUDAToolkit QUIET)): the allocation probe program.
#
# aftermath-probe loads libcudart with dlopen, so it builds everywhere and
# needs nothing from the harness library. Where the CUDA toolkit is found it
# also gets (1) a compile-time check of its hand-written runtime declarations
# against cuda_runtime_api.h and (2) the toolkit's libcudart as a first place
# to look at run time.
if(NOT DEFINED CUDAToolkit_FOUND)
  find_package(CUDAToolkit QUIET)
endif()

set(AFTERMATH_PROBE_DIR ${CMAKE_CURRENT_LIST_DIR}/probe)
add_executable(aftermath-probe ${AFTERMATH_PROBE_DIR}/probe_main.cc)
target_include_directories(aftermath-probe PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../..)
target_link_libraries(aftermath-probe PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(aftermath-probe PROPERTIES
  RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)

if(CUDAToolkit_FOUND)
  target_sources(aftermath-probe PRIVATE ${AFTERMATH_PROBE_DIR}/cudart_abi_check.cc)
  target_include_directories(aftermath-probe PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  # The real file behind the libcudart.so link, when the toolkit has one.
  find_library(AFTERMATH_CUDART_LIBRARY NAMES cudart PATHS ${CUDAToolkit_LIBRARY_DIR} NO_DEFAULT_PATH)
  if(AFTERMATH_CUDART_LIBRARY)
    get_filename_component(AFTERMATH_CUDART_REAL ${AFTERMATH_CUDART_LIBRARY} REALPATH)
    target_compile_definitions(aftermath-probe PRIVATE
      AFTERMATH_CUDART_HINT="${AFTERMATH_CUDART_REAL}")
  endif()
  message(STATUS "aftermath: probe checked against CUDA ${CUDAToolkit_VERSION} headers; "
                 "runtime hint ${AFTERMATH_CUDART_REAL}")
else()
  message(STATUS "aftermath: no CUDA toolkit: the probe finds libcudart at run time only")
endif()
