# TernTestList.cmake - the line format shared by tests/mp, tests/mpi and tests/shmem
# tests.list: "name nprocs [on=TRANSPORTS] [label=L] [VAR=value ...] [other words]",
# '#' comments. One line is one test per transport it runs on. @SOURCE_DIR@ in a
# VAR=value word stands for the source tree.
#
# Transports. TERN_TEST_TRANSPORTS lists every transport the multi-process tests can be
# run over; a test line says which with on=: on=tcp, on=shm,tcp, or on=all (every entry
# of the list, so a new transport is one more entry here and all such tests gain it).
# Without on= a line runs on shm, except that a line which sets TERN_TRANSPORTS itself
# runs on the one transport it names besides self (TERN_TRANSPORTS=self,tcp is on=tcp).
# The transport t's environment is TERN_TRANSPORTS=self,t; shm's is none at all, since
# the default selection (self,shm,tcp) takes shm between the ranks of one node. A line
# that sets TERN_TRANSPORTS explicitly keeps its own value. ofi (libfabric) is in the list
# when the build has it, run over libfabric's tcp provider (FI_PROVIDER=tcp: tcp;ofi_rxm).
set(TERN_TEST_TRANSPORTS shm tcp)
if(LIBFABRIC_FOUND)
  list(APPEND TERN_TEST_TRANSPORTS ofi)
endif()

# tern_parse_test_line(<list file> <line> <prefix>) sets in the caller's scope:
#   <prefix>_skip    TRUE for a blank or comment-only line (nothing else is set)
#   <prefix>_name    the program name
#   <prefix>_np      the number of ranks
#   <prefix>_env     the VAR=value words, for the ENVIRONMENT test property (without the
#                    transport's own variable: see tern_test_transport)
#   <prefix>_suffix  ".var_value" per VAR=value (TERN_ dropped, lower case), for the
#                    test name: TERN_SHM_CMA=0 gives ".shm_cma_0"
#   <prefix>_on      the transports to run on (a list, never empty)
#   <prefix>_labels  the label=L words' labels (extra ctest labels, e.g. soak)
#   <prefix>_extra   the remaining words, in order, for the caller to interpret
# A line without a name and a numeric nprocs is a configure error naming the file, and
# so is a transport that is not in TERN_TEST_TRANSPORTS.
function(tern_parse_test_line file line prefix)
  string(REGEX REPLACE "#.*$" "" line "${line}")
  string(STRIP "${line}" line)
  if(line STREQUAL "")
    set(${prefix}_skip TRUE PARENT_SCOPE)
    return()
  endif()
  separate_arguments(words UNIX_COMMAND "${line}")
  list(LENGTH words nwords)
  if(nwords LESS 2)
    message(FATAL_ERROR "${file}: '${line}' needs at least a name and nprocs")
  endif()
  list(GET words 0 name)
  list(GET words 1 np)
  if(NOT np MATCHES "^[0-9]+$")
    message(FATAL_ERROR "${file}: '${line}': nprocs '${np}' is not a number")
  endif()
  set(env "")
  set(extra "")
  set(on "")
  set(labels "")
  set(explicit "")
  if(nwords GREATER 2)
    list(SUBLIST words 2 -1 rest)
    foreach(w IN LISTS rest)
      if(w MATCHES "^on=(.+)$")
        string(REPLACE "," ";" on "${CMAKE_MATCH_1}")
      elseif(w MATCHES "^label=(.+)$")
        list(APPEND labels "${CMAKE_MATCH_1}")
      elseif(w MATCHES "^TERN_TRANSPORTS=(.*)$")
        set(explicit "${CMAKE_MATCH_1}")
        list(APPEND env "${w}")
      elseif(w MATCHES "^[A-Z_][A-Z0-9_]*=")
        list(APPEND env "${w}")
      else()
        list(APPEND extra "${w}")
      endif()
    endforeach()
  endif()
  # A line written the old way (TERN_TRANSPORTS=self,tcp, no on=) is the tcp test.
  if(on STREQUAL "" AND NOT explicit STREQUAL "")
    string(REPLACE "," ";" named "${explicit}")
    list(REMOVE_ITEM named self)
    list(LENGTH named nnamed)
    if(nnamed EQUAL 1 AND named IN_LIST TERN_TEST_TRANSPORTS)
      set(on "${named}")
      tern_test_transport(${named} tenv)
      if("${tenv}" STREQUAL "TERN_TRANSPORTS=${explicit}")
        list(REMOVE_ITEM env "TERN_TRANSPORTS=${explicit}")
      endif()
    endif()
  endif()
  if(on STREQUAL "")
    set(on shm)
  elseif(on STREQUAL "all")
    set(on ${TERN_TEST_TRANSPORTS})
  endif()
  foreach(t IN LISTS on)
    if(NOT t IN_LIST TERN_TEST_TRANSPORTS)
      message(FATAL_ERROR "${file}: '${line}': on= names '${t}', not one of "
                          "TERN_TEST_TRANSPORTS (${TERN_TEST_TRANSPORTS}) or all")
    endif()
  endforeach()
  set(suffix "")
  foreach(w IN LISTS env)
    string(REGEX REPLACE "^TERN_" "" s "${w}")
    string(TOLOWER "${s}" s)
    string(REGEX REPLACE "[^a-z0-9]+" "_" s "${s}")
    string(APPEND suffix ".${s}")
  endforeach()
  # @SOURCE_DIR@ in a value is the source tree (files the tests read, e.g. a tuning file);
  # the test name keeps the unexpanded word.
  string(REPLACE "@SOURCE_DIR@" "${PROJECT_SOURCE_DIR}" env "${env}")
  set(${prefix}_skip FALSE PARENT_SCOPE)
  set(${prefix}_name "${name}" PARENT_SCOPE)
  set(${prefix}_np "${np}" PARENT_SCOPE)
  set(${prefix}_env "${env}" PARENT_SCOPE)
  set(${prefix}_suffix "${suffix}" PARENT_SCOPE)
  set(${prefix}_on "${on}" PARENT_SCOPE)
  set(${prefix}_labels "${labels}" PARENT_SCOPE)
  set(${prefix}_extra "${extra}" PARENT_SCOPE)
endfunction()

# tern_test_transport(<transport> <out>) sets <out> to the VAR=value words (maybe none)
# that make a tern job use <transport>: nothing for shm, TERN_TRANSPORTS=self,<t> else
# (ofi: with FI_PROVIDER=tcp too).
function(tern_test_transport t out)
  if(t STREQUAL "shm")
    set(${out} "" PARENT_SCOPE)
  elseif(t STREQUAL "ofi")
    set(${out} "TERN_TRANSPORTS=self,ofi;FI_PROVIDER=tcp" PARENT_SCOPE)
  else()
    set(${out} "TERN_TRANSPORTS=self,${t}" PARENT_SCOPE)
  endif()
endfunction()

# tern_test_variant(<prefix> <transport>) sets, for the line parsed into <prefix> and
# one of its transports, <prefix>_venv (the line's environment plus the transport's,
# unless the line names TERN_TRANSPORTS itself) and <prefix>_vsuffix (the line's
# suffix, then ".<transport>": every test generated from a list ends in its transport).
# Label the test with the transport too (tern_test_labels does).
function(tern_test_variant prefix t)
  set(env "${${prefix}_env}")
  tern_test_transport(${t} tenv)
  set(explicit FALSE)
  foreach(w IN LISTS env)
    if(w MATCHES "^TERN_TRANSPORTS=")
      set(explicit TRUE)
    endif()
  endforeach()
  # A line that names its own libfabric provider keeps it (ofi over udp, sockets).
  if(env MATCHES "(^|;)FI_PROVIDER=")
    list(REMOVE_ITEM tenv "FI_PROVIDER=tcp")
  endif()
  if(NOT explicit AND NOT "${tenv}" STREQUAL "")
    list(APPEND env "${tenv}")
  endif()
  set(${prefix}_venv "${env}" PARENT_SCOPE)
  set(${prefix}_vsuffix "${${prefix}_suffix}.${t}" PARENT_SCOPE)
endfunction()

# tern_test_labels(<test> <transport> [label ...]) appends the transport's label and the
# given ones (a list's label= words, the directory's own) to the test's LABELS.
function(tern_test_labels test t)
  set_property(TEST ${test} APPEND PROPERTY LABELS ${t} ${ARGN})
endfunction()

# tern_add_transport_test(<base> ON <t|all ...> [LABELS <l ...>] [PROPERTIES <p v ...>]
#                         COMMAND <cmd ...>) adds one test <base>.<t> per transport, with
# the transport's environment and labels <t> and LABELS, for tests written in a
# CMakeLists.txt rather than a tests.list (examples/).
function(tern_add_transport_test base)
  cmake_parse_arguments(PARSE_ARGV 1 a "" "" "ON;LABELS;PROPERTIES;COMMAND")
  if(a_ON STREQUAL "all")
    set(a_ON ${TERN_TEST_TRANSPORTS})
  endif()
  foreach(t IN LISTS a_ON)
    if(NOT t IN_LIST TERN_TEST_TRANSPORTS)
      message(FATAL_ERROR "tern_add_transport_test(${base}): no transport '${t}'")
    endif()
    add_test(NAME ${base}.${t} COMMAND ${a_COMMAND})
    if(a_PROPERTIES)
      set_tests_properties(${base}.${t} PROPERTIES ${a_PROPERTIES})
    endif()
    tern_test_transport(${t} tenv)
    if(tenv)
      set_property(TEST ${base}.${t} APPEND PROPERTY ENVIRONMENT ${tenv})
    endif()
    tern_test_labels(${base}.${t} ${t} ${a_LABELS})
  endforeach()
endfunction()
