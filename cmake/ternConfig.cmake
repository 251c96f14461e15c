# find_package(tern) - imported targets of an installed tern:
#   tern::tern, tern::tern_static   the native API (tern.h)
#   tern::mpi, tern::mpi_static     the MPI subset: the same library (one core holds every
#                                   model) with mpi.h's directory, include/tern-mpi
include(CMakeFindDependencyMacro)
find_dependency(Threads)
# A tern built with the ofi transport links libfabric: the static targets name it as
# PkgConfig::LIBFABRIC, which the consumer must define the way tern's build did.
if(NOT TARGET PkgConfig::LIBFABRIC)
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(LIBFABRIC QUIET IMPORTED_TARGET libfabric)
  endif()
endif()
include("${CMAKE_CURRENT_LIST_DIR}/ternTargets.cmake")
