# ctest sweep_mpi_matches_local (cli/CMakeLists.txt), run as
#   cmake -DCLUSTERSIM=path -DMPIRUN="mpirun args" -DSCENARIO=file -DWORKDIR=dir -P sweep_mpi_matches_local.cmake
# `mpirun -np 3 clustersim sweep` (rank 0 hands points to two workers) must write the very bytes a
# local sweep writes (docs/sweeps.md "Under MPI"), invalid points included.
file(REMOVE_RECURSE ${WORKDIR})
file(MAKE_DIRECTORY ${WORKDIR})
# -DVARY="--vary ..." and -DSUMMARY="N points: ..." replace the default axes and their summary.
if(DEFINED VARY)
  separate_arguments(vary UNIX_COMMAND "${VARY}")
  set(summary "${SUMMARY}")
else()
  set(vary --vary parallel.bucket_mb=1..64x4 --vary parallel.overlap=true,false,maybe)
  # 4 bucket sizes x 3 overlap values, of which 4 are invalid ("maybe").
  set(summary "12 points: 8 ran, 4 invalid, 0 failed")
endif()
execute_process(COMMAND ${CLUSTERSIM} sweep ${SCENARIO} ${vary} --csv ${WORKDIR}/local.csv
                        --json ${WORKDIR}/local.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "local sweep: exit ${rc}\n${out}\n${err}")
endif()
separate_arguments(mpirun UNIX_COMMAND "${MPIRUN}")
# Under the sanitizer build, Open MPI's own allocations still held at MPI_Finalize read as leaks;
# the local sweep above keeps leak detection for clustersim's code.
if(DEFINED ENV{ASAN_OPTIONS})
  set(ENV{ASAN_OPTIONS} "$ENV{ASAN_OPTIONS}:detect_leaks=0")
endif()
execute_process(COMMAND ${mpirun} -np 3 ${CLUSTERSIM} sweep ${SCENARIO} ${vary}
                        --csv ${WORKDIR}/mpi.csv --json ${WORKDIR}/mpi.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "mpirun -np 3 sweep: exit ${rc}\n${out}\n${err}")
endif()
if(NOT out MATCHES "${summary}")
  message(FATAL_ERROR "unexpected summary:\n${out}")
endif()
foreach(ext csv json)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORKDIR}/local.${ext}
                          ${WORKDIR}/mpi.${ext} RESULT_VARIABLE differ)
  if(NOT differ EQUAL 0)
    message(FATAL_ERROR "the MPI sweep's ${ext} differs from the local one's")
  endif()
endforeach()
message(STATUS "sweep under mpirun -np 3 matches the local sweep")
