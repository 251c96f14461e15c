/*
 * mpi_misc.c - small MPI 3.1 functions around the main objects: C/Fortran handle
 * conversions, status setters, legacy (MPI-1) names kept for old programs.
 */
#include "mpi/mpi_impl.h"

/* C <-> Fortran handle conversions: handles are integers, the same in both languages. */
#define MPI_CONV(Kind, Type)                                                                       \
    MPI_Fint PMPI_##Kind##_c2f(Type h)                                                             \
    {                                                                                              \
        return (MPI_Fint)h;                                                                        \
    }                                                                                              \
    MPI_ALIAS(Kind##_c2f)                                                                          \
    Type PMPI_##Kind##_f2c(MPI_Fint h)                                                             \
    {                                                                                              \
        return (Type)h;                                                                            \
    }                                                                                              \
    MPI_ALIAS(Kind##_f2c)

MPI_CONV(Type, MPI_Datatype)
MPI_CONV(Group, MPI_Group)
MPI_CONV(Info, MPI_Info)
MPI_CONV(Request, MPI_Request)
MPI_CONV(Op, MPI_Op)
MPI_CONV(Errhandler, MPI_Errhandler)
MPI_CONV(Win, MPI_Win)
MPI_CONV(Message, MPI_Message)
MPI_CONV(File, MPI_File)
