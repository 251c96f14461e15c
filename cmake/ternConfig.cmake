# find_package(tern) - imported targets of an installed tern:
#   tern::tern, tern::tern_static   the native API (tern.h)
#   tern::mpi, tern::mpi_static     the MPI subset (mpi.h, in include/tern-mpi)
include(CMakeFindDependencyMacro)
find_dependency(Threads)
include("${CMAKE_CURRENT_LIST_DIR}/ternTargets.cmake")
