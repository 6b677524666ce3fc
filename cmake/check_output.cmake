# check_output.cmake - runs CMD and checks that it exits 0 and that its
# standard output equals the file EXPECTED.
#   cmake -DCMD=prog -DEXPECTED=file.expected -P check_output.cmake
execute_process(COMMAND ${CMD} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
file(READ ${EXPECTED} expected)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${CMD} exited with ${rc}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(NOT out STREQUAL expected)
  message(FATAL_ERROR "${CMD}: output differs\n--- expected:\n${expected}--- actual:\n${out}")
endif()
message(STATUS "output of ${CMD} matches ${EXPECTED}")
