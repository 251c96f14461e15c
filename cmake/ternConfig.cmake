# find_package(tern) - imported targets of an installed tern:
#   tern::tern, tern::tern_static   the native API (tern.h)
#   tern::mpi, tern::mpi_static     the MPI subset: the same library (one core holds every
#                                   model) with mpi.h's directory, include/tern-mpi
include(CMakeFindDependencyMacro)
find_dependency(Threads)
include("${CMAKE_CURRENT_LIST_DIR}/ternTargets.cmake")
