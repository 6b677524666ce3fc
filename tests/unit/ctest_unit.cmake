# ctest_unit.cmake - read by ctest at start (the TEST_INCLUDE_FILES of the
# build directory): one ctest unit.SUITE.NAME per unit test, as listed by
# `unit_tests --list`. The list comes from the binary under test, so a new
# TEST() needs no edit here and none can be left out. STC_UNIT_EXE is set
# by the file CMakeLists.txt generates to include this one.
#
# unit.list runs `unit_tests --list` itself: it fails when the binary is
# missing or the list cannot be made (two tests with one name), and then
# it is the only unit ctest.
add_test(unit.list "${STC_UNIT_EXE}" --list)
execute_process(COMMAND "${STC_UNIT_EXE}" --list RESULT_VARIABLE stc_unit_rc
                OUTPUT_VARIABLE stc_unit_out ERROR_QUIET)
if(stc_unit_rc EQUAL 0)
  string(REPLACE "\n" ";" stc_unit_names "${stc_unit_out}")
  foreach(stc_unit_name IN LISTS stc_unit_names)
    if(stc_unit_name)
      add_test(unit.${stc_unit_name} "${STC_UNIT_EXE}" ${stc_unit_name})
    endif()
  endforeach()
endif()
