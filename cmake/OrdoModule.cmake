# ordo_module(NAME <name> DIR <dir> DEPS <targets...> [EXCLUDE_REGEX <regex>])
# One static library per folder under src/ordo: every .cc below DIR except tests, named ordo_<name>
# with the alias ordo::<name>. Sources are globbed (CONFIGURE_DEPENDS) so adding a file to a
# module's folder needs no edit here.
function(ordo_module)
  cmake_parse_arguments(M "" "NAME;DIR;EXCLUDE_REGEX" "DEPS" ${ARGN})
  file(GLOB_RECURSE _srcs CONFIGURE_DEPENDS ${M_DIR}/*.cc)
  list(FILTER _srcs EXCLUDE REGEX "_test\\.cc$")
  if(M_EXCLUDE_REGEX)
    list(FILTER _srcs EXCLUDE REGEX "${M_EXCLUDE_REGEX}")
  endif()
  if(_srcs)
    add_library(ordo_${M_NAME} STATIC ${_srcs})
    target_link_libraries(ordo_${M_NAME} PUBLIC ordo_build_flags ${M_DEPS})
  else()
    # A module with no sources yet is a header-only interface target.
    add_library(ordo_${M_NAME} INTERFACE)
    target_link_libraries(ordo_${M_NAME} INTERFACE ordo_build_flags ${M_DEPS})
  endif()
  add_library(ordo::${M_NAME} ALIAS ordo_${M_NAME})
endfunction()

# ordo_test(NAME <name> LABEL <label> DIRS <dirs...> DEPS <targets...> [EXCLUDE_REGEX <regex>])
# One GoogleTest executable for every *_test.cc in DIRS; each TEST becomes a ctest with LABEL.
# DIRS without any *_test.cc (after EXCLUDE_REGEX) stop the configure with an error naming them.
function(ordo_test)
  cmake_parse_arguments(T "" "NAME;LABEL;EXCLUDE_REGEX" "DIRS;DEPS" ${ARGN})
  set(_srcs "")
  foreach(_d ${T_DIRS})
    file(GLOB_RECURSE _found CONFIGURE_DEPENDS ${_d}/*_test.cc)
    list(APPEND _srcs ${_found})
  endforeach()
  if(T_EXCLUDE_REGEX)
    list(FILTER _srcs EXCLUDE REGEX "${T_EXCLUDE_REGEX}")
  endif()
  if(NOT _srcs)
    # A test target named in tests/CMakeLists.txt whose folders hold no tests is a mistake (a typo,
    # a moved folder): fail here rather than build nothing and report every test as passed.
    message(FATAL_ERROR "ordo_test(${T_NAME}): no *_test.cc files in ${T_DIRS}")
  endif()
  add_executable(${T_NAME} ${_srcs})
  target_link_libraries(${T_NAME} PRIVATE ${T_DEPS} ordo_test_support GTest::gtest GTest::gtest_main)
  gtest_discover_tests(${T_NAME} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60
                       PROPERTIES LABELS ${T_LABEL}
                       ENVIRONMENT "ORDO_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
  # The binary's path as a compile definition: a second ENVIRONMENT entry would be split off by
  # gtest_discover_tests (tests/e2e/cli_runner.h reads it).
  target_compile_definitions(${T_NAME} PRIVATE ORDO_TEST_BINARY="$<TARGET_FILE:ordo>")
endfunction()
