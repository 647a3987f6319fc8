# `cmake --install` puts a working clustersim package under the prefix: it imports from there (not
# from the build tree) and runs. Arguments: BUILD, PREFIX, PACKAGE_DIR (relative), PYTHON.
file(REMOVE_RECURSE ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${PREFIX} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${PREFIX}/${PACKAGE_DIR} ${PYTHON} -c
          "import clustersim, sys; assert clustersim.__file__.startswith('${PREFIX}/'), clustersim.__file__; assert 'A100-SXM4-80GB' in clustersim.presets()['gpus']"
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the installed clustersim package does not import from ${PREFIX}")
endif()
file(REMOVE_RECURSE ${PREFIX})
