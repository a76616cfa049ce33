# ctest guard: every Catch2 test case in TEST_BINARY must be one ctest test that runs it.
# catch_discover_tests splits a name at ';' into tests that match nothing, and Catch reads '\' in a
# filter as an escape; either way the test case is never run and ctest still reports a pass.
# Usage: cmake -DTEST_BINARY=... -DTEST_LABEL=... -DCTEST=... -DBUILD_DIR=... -P check_test_names.cmake
cmake_minimum_required(VERSION 3.25)
execute_process(COMMAND "${TEST_BINARY}" --list-test-names-only
                OUTPUT_VARIABLE names RESULT_VARIABLE listed)
if(listed LESS 0 OR NOT listed MATCHES "^[0-9]+$")
  message(FATAL_ERROR "${TEST_BINARY} --list-test-names-only failed: ${listed}")
endif()

# CMake lists are ';'-separated, so mark semicolons before splitting the output into lines.
string(REPLACE ";" "<semicolon>" names "${names}")
string(REPLACE "\n" ";" names "${names}")
list(FILTER names EXCLUDE REGEX "^$")
list(LENGTH names case_count)
set(bad "")
foreach(name IN LISTS names)
  if(name MATCHES "<semicolon>|\\\\")
    string(REPLACE "<semicolon>" ";" name "${name}")
    string(APPEND bad "\n  ${name}")
  endif()
endforeach()
if(bad)
  message(FATAL_ERROR "Rename these TEST_CASEs without ';' or '\\' (use ',' or ':'): "
                      "ctest cannot run them and would count them as passed:${bad}")
endif()

execute_process(COMMAND "${CTEST}" --test-dir "${BUILD_DIR}" -N -L "^${TEST_LABEL}$"
                OUTPUT_VARIABLE listing RESULT_VARIABLE ctest_result)
if(NOT listing MATCHES "Total Tests: ([0-9]+)")
  message(FATAL_ERROR "ctest -N printed no total (${ctest_result}):\n${listing}")
endif()
if(NOT CMAKE_MATCH_1 EQUAL case_count)
  message(FATAL_ERROR "${TEST_BINARY} has ${case_count} test cases but ctest lists ${CMAKE_MATCH_1} "
                      "tests labelled ${TEST_LABEL}; compare --list-test-names-only with ctest -N.")
endif()
message(STATUS "${case_count} test cases, each one ctest test")
