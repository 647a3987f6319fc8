# ctest cli_version_loads_no_gpu_or_mpi_library (cli/CMakeLists.txt), run as
#   cmake -DCLUSTERSIM=path/to/clustersim -DBACKENDS=backend1,backend2 -P no_gpu_or_mpi_library.cmake
# The simulator loads no GPU or MPI library (DESIGN.md "Folders and layers"): `clustersim --version`
# must succeed, and no DT_NEEDED entry of the binary may name the CUDA driver or runtime, cuBLAS,
# NCCL, NVML or MPI. Each back-end executable in BACKENDS must name at least one of them, which
# shows that the check reads DT_NEEDED and would catch them. No ldd: DT_NEEDED is what the binary
# itself asks for, read with readelf -d (or objdump -p) without loading anything.
set(forbidden "^lib(cuda|cudart|cublas|cublasLt|nccl|nvidia-ml|mpi|mpi_cxx|open-pal|open-rte)[.]so")

execute_process(COMMAND ${CLUSTERSIM} --version RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "^clustersim [0-9]+[.][0-9]+")
  message(FATAL_ERROR "${CLUSTERSIM} --version: exit ${rc}, output '${out}' '${err}'")
endif()

find_program(READELF readelf)
find_program(OBJDUMP objdump)
# The DT_NEEDED entries of `file`, as a list of library names.
function(needed_libraries file result)
  if(READELF)
    execute_process(COMMAND ${READELF} -d ${file} RESULT_VARIABLE rc OUTPUT_VARIABLE dump)
    set(pattern "[(]NEEDED[)][^\n]*\\[([^\n]*)\\]")
  elseif(OBJDUMP)
    execute_process(COMMAND ${OBJDUMP} -p ${file} RESULT_VARIABLE rc OUTPUT_VARIABLE dump)
    set(pattern "NEEDED[ \t]+([^ \t\n]+)")
  else()
    message(FATAL_ERROR "neither readelf nor objdump found (binutils)")
  endif()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cannot read the dynamic section of ${file}")
  endif()
  string(REGEX MATCHALL "${pattern}" entries "${dump}")
  set(names "")
  foreach(e IN LISTS entries)
    string(REGEX REPLACE "${pattern}" "\\1" name "${e}")
    list(APPEND names "${name}")
  endforeach()
  set(${result} "${names}" PARENT_SCOPE)
endfunction()

needed_libraries(${CLUSTERSIM} libs)
if(NOT libs)
  message(FATAL_ERROR "${CLUSTERSIM}: found no DT_NEEDED entry at all (not even libc)")
endif()
foreach(lib IN LISTS libs)
  if(lib MATCHES "${forbidden}")
    message(FATAL_ERROR "${CLUSTERSIM} needs ${lib}: the simulator must load no GPU or MPI "
                        "library (link it into a clustersim-calibrate-* back end instead)")
  endif()
endforeach()
message(STATUS "${CLUSTERSIM} needs: ${libs}")

string(REPLACE "," ";" backends "${BACKENDS}")
foreach(backend IN LISTS backends)
  needed_libraries(${backend} libs)
  set(found "")
  foreach(lib IN LISTS libs)
    if(lib MATCHES "${forbidden}")
      list(APPEND found ${lib})
    endif()
  endforeach()
  if(NOT found)
    message(FATAL_ERROR "${backend} needs none of the GPU/MPI libraries (${libs}): the check "
                        "would not see them")
  endif()
  message(STATUS "${backend} needs ${found} (as a back end should)")
endforeach()
