# Run by cmake -P after each build of a doctest executable (cmake/DoctestDiscovery.cmake): lists
# its test cases with their suites in one run (doctest's XML listing) and writes CTEST_FILE, one
# add_test and one set_tests_properties per case, labelled with the case's suite.
#
# Inputs: TEST_EXECUTABLE, TEST_EXECUTOR (an emulator, or empty), TEST_WORKING_DIR,
# TEST_PROPERTIES (name;value;... for every test), CTEST_FILE.
execute_process(
  COMMAND ${TEST_EXECUTOR} "${TEST_EXECUTABLE}" --list-test-cases --reporters=xml
  OUTPUT_VARIABLE listing
  RESULT_VARIABLE result
  WORKING_DIRECTORY "${TEST_WORKING_DIR}")
if(NOT result EQUAL 0)
  message(FATAL_ERROR "listing the test cases of ${TEST_EXECUTABLE} failed (${result}):\n${listing}")
endif()

# A CMake argument in bracket form, which takes any text without escapes.
function(bracket text out)
  set(${out} "[==[${text}]==]" PARENT_SCOPE)
endfunction()

# The listing's character references, and the square brackets (which would join CMake list
# elements), travel as tokens without ';' (which would split them) until a name is taken apart;
# every '&' of the listing starts one, so decoding them is unambiguous.
set(tokens "&#91" "&#93" "&quot" "&apos" "&lt" "&gt" "&amp")

function(decode text out)
  string(REPLACE "&#91" "[" text "${text}")
  string(REPLACE "&#93" "]" text "${text}")
  string(REPLACE "&quot" "\"" text "${text}")
  string(REPLACE "&apos" "'" text "${text}")
  string(REPLACE "&lt" "<" text "${text}")
  string(REPLACE "&gt" ">" text "${text}")
  string(REPLACE "&amp" "&" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

set(properties "")
foreach(item IN LISTS TEST_PROPERTIES)
  bracket("${item}" quoted)
  string(APPEND properties " ${quoted}")
endforeach()

set(script "")
set(count 0)
# One element per case: <TestCase name="..." testsuite="..." filename=... A name holding ';' is
# refused below: CTest would split it into tests that run nothing.
string(REPLACE "[" "&#91;" listing "${listing}")
string(REPLACE "]" "&#93;" listing "${listing}")
foreach(token IN LISTS tokens)
  string(REPLACE "${token};" "${token}" listing "${listing}")
endforeach()
string(REGEX MATCHALL "<TestCase name=\"[^\"]*\"( testsuite=\"[^\"]*\")?" cases "${listing}")
foreach(case IN LISTS cases)
  if(NOT case MATCHES "^<TestCase name=")
    message(FATAL_ERROR "${TEST_EXECUTABLE}: a TEST_CASE name holds ';' (near \"${case}\"), which "
                        "CTest splits into tests that run nothing; use ',' instead")
  endif()
  string(REGEX REPLACE "^<TestCase name=\"([^\"]*)\".*$" "\\1" name "${case}")
  decode("${name}" name)
  set(suite "")
  if(case MATCHES " testsuite=\"([^\"]*)\"$")
    decode("${CMAKE_MATCH_1}" suite)
  endif()
  # doctest splits a filter at unescaped commas.
  string(REPLACE "," "\\," filter "${name}")
  bracket("${name}" quoted_name)
  bracket("--test-case=${filter}" quoted_filter)
  bracket("${TEST_WORKING_DIR}" quoted_dir)
  set(executor "")
  foreach(word IN LISTS TEST_EXECUTOR)
    bracket("${word}" quoted)
    string(APPEND executor " ${quoted}")
  endforeach()
  bracket("${TEST_EXECUTABLE}" quoted_executable)
  string(APPEND script "add_test(${quoted_name}${executor} ${quoted_executable} ${quoted_filter})\n")
  set(labels "")
  if(NOT suite STREQUAL "")
    bracket("${suite}" quoted_suite)
    set(labels " LABELS ${quoted_suite}")
  endif()
  string(APPEND script "set_tests_properties(${quoted_name} PROPERTIES WORKING_DIRECTORY "
                       "${quoted_dir}${properties}${labels})\n")
  math(EXPR count "${count} + 1")
endforeach()
if(count EQUAL 0)
  message(FATAL_ERROR "${TEST_EXECUTABLE} lists no test case:\n${listing}")
endif()
file(WRITE "${CTEST_FILE}" "${script}")
