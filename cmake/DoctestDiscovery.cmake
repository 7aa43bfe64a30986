# dl4cpp_discover_tests(<target> [PROPERTIES name value ...]): registers every doctest TEST_CASE of
# <target> as a CTest test of the same name, labelled with its TEST_SUITE, after each build of the
# target (as doctest's own doctest_discover_tests does).
#
# doctest's module asks the executable once for the list of cases and then once more per case for
# its suite: some nine hundred launches after every link, each under the emulator in a cross build,
# and a case whose name holds a comma got no label at all (its filter was split at the comma). This
# one asks once, through doctest's XML listing, which names each case's suite
# (cmake/DoctestAddTests.cmake).
set(_DL4CPP_DOCTEST_ADD_TESTS ${CMAKE_CURRENT_LIST_DIR}/DoctestAddTests.cmake)

function(dl4cpp_discover_tests target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "PROPERTIES")
  set(tests_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_tests.cmake")
  set(include_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_include.cmake")
  get_property(emulator TARGET ${target} PROPERTY CROSSCOMPILING_EMULATOR)
  add_custom_command(
    TARGET ${target} POST_BUILD
    BYPRODUCTS "${tests_file}"
    COMMAND "${CMAKE_COMMAND}"
            -D "TEST_EXECUTABLE=$<TARGET_FILE:${target}>"
            -D "TEST_EXECUTOR=${emulator}"
            -D "TEST_WORKING_DIR=${CMAKE_CURRENT_BINARY_DIR}"
            -D "TEST_PROPERTIES=${arg_PROPERTIES}"
            -D "CTEST_FILE=${tests_file}"
            -P "${_DL4CPP_DOCTEST_ADD_TESTS}"
    VERBATIM)
  file(WRITE "${include_file}"
       "if(EXISTS \"${tests_file}\")\n"
       "  include(\"${tests_file}\")\n"
       "else()\n"
       "  add_test(${target}_NOT_BUILT ${target}_NOT_BUILT)\n"
       "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${include_file}")
endfunction()
