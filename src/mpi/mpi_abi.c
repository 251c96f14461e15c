/*
 * mpi_abi.c - the objects a program built against MPICH's mpi.h takes from the library by
 * name rather than as constants: MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY (addresses),
 * MPI_DUP_FN's function (MPIR_Dup_fn), the Fortran status sentinels and MPI_F08 objects,
 * and MPI_T_PVAR_ALL_HANDLES. With them, and with mpi.h's handle values and MPI_Status
 * layout (the MPICH ABI), libtern serves as libmpi.so.12 / libmpich.so.12 with no
 * translation (docs/MPI.md, "Running MPICH-built programs and mpi4py").
 */
#include "mpi/mpi_impl.h"

#define ABI_PUBLIC __attribute__((visibility("default")))

/* Graph topology weights: only the addresses matter. */
static int mpi_unweighted_mark, mpi_weights_empty_mark;
ABI_PUBLIC int *const MPI_UNWEIGHTED = &mpi_unweighted_mark;
ABI_PUBLIC int *const MPI_WEIGHTS_EMPTY = &mpi_weights_empty_mark;

/*
 * MPICH's mpi.h names MPI_DUP_FN (and the COMM/TYPE/WIN forms) as this function, which
 * the library must therefore export. It does what the standard says the DUP functions do:
 * the copy gets the same attribute value.
 */
int MPIR_Dup_fn(MPI_Comm oldcomm, int keyval, void *extra_state, void *attribute_val_in,
                void *attribute_val_out, int *flag)
{
    (void)oldcomm, (void)keyval, (void)extra_state;
    *(void **)attribute_val_out = attribute_val_in;
    *flag = 1;
    return MPI_SUCCESS;
}

/* Fortran sentinels MPICH's header declares (mpi.h): tern has no Fortran bindings, so they
 * only need to exist (a C program that names them links and compares addresses). */
ABI_PUBLIC MPI_Fint *MPI_F_STATUS_IGNORE;
ABI_PUBLIC MPI_Fint *MPI_F_STATUSES_IGNORE;
ABI_PUBLIC int MPIR_F08_MPI_IN_PLACE;
ABI_PUBLIC int MPIR_F08_MPI_BOTTOM;
ABI_PUBLIC MPI_Fint MPIR_F08_MPI_STATUS_IGNORE_OBJ[5];
ABI_PUBLIC MPI_Fint MPIR_F08_MPI_STATUSES_IGNORE_OBJ[5];
ABI_PUBLIC MPI_Fint *MPI_F08_STATUS_IGNORE = MPIR_F08_MPI_STATUS_IGNORE_OBJ;
ABI_PUBLIC MPI_Fint *MPI_F08_STATUSES_IGNORE = MPIR_F08_MPI_STATUSES_IGNORE_OBJ;

/* MPICH declares it a pointer constant; tern's MPI_T handles are ints, and -1 read as the
 * low 32 bits of this pointer is tern's MPI_T_PVAR_ALL_HANDLES. */
#undef MPI_T_PVAR_ALL_HANDLES
ABI_PUBLIC void *const MPI_T_PVAR_ALL_HANDLES = (void *)(intptr_t)-1;
