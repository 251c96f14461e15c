# TernTestList.cmake - the line format shared by tests/mp/tests.list and
# tests/mpi/tests.list: "name nprocs [VAR=value ...] [other words]", '#' comments.
#
# tern_parse_test_line(<list file> <line> <prefix>) sets in the caller's scope:
#   <prefix>_skip    TRUE for a blank or comment-only line (nothing else is set)
#   <prefix>_name    the program name
#   <prefix>_np      the number of ranks
#   <prefix>_env     the VAR=value words, for the ENVIRONMENT test property
#   <prefix>_suffix  ".var_value" per VAR=value (TERN_ dropped, lower case), for the
#                    test name: TERN_SHM_CMA=0 gives ".shm_cma_0"
#   <prefix>_extra   the remaining words, in order, for the caller to interpret
# A line without a name and a numeric nprocs is a configure error naming the file.
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
  set(suffix "")
  set(extra "")
  if(nwords GREATER 2)
    list(SUBLIST words 2 -1 rest)
    foreach(w IN LISTS rest)
      if(w MATCHES "^[A-Z_][A-Z0-9_]*=")
        list(APPEND env "${w}")
        string(REGEX REPLACE "^TERN_" "" s "${w}")
        string(TOLOWER "${s}" s)
        string(REGEX REPLACE "[^a-z0-9]+" "_" s "${s}")
        string(APPEND suffix ".${s}")
      else()
        list(APPEND extra "${w}")
      endif()
    endforeach()
  endif()
  set(${prefix}_skip FALSE PARENT_SCOPE)
  set(${prefix}_name "${name}" PARENT_SCOPE)
  set(${prefix}_np "${np}" PARENT_SCOPE)
  set(${prefix}_env "${env}" PARENT_SCOPE)
  set(${prefix}_suffix "${suffix}" PARENT_SCOPE)
  set(${prefix}_extra "${extra}" PARENT_SCOPE)
endfunction()
