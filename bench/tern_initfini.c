/*
 * tern_initfini.c - tern_init + tern_finalize and nothing else: bench/compare.sh
 * times `ternrun -n 2 tern_initfini` with hyperfine to measure job startup and
 * teardown against mpiexec/mpirun running mpi_initfini.c.
 */
#include <stdio.h>

#include <tern.h>

int main(int argc, char **argv)
{
    int rc = tern_init(&argc, &argv);
    if (rc != TERN_OK) {
        fprintf(stderr, "tern_init: %s\n", tern_err_name(rc));
        return 1;
    }
    rc = tern_finalize();
    if (rc != TERN_OK) {
        fprintf(stderr, "tern_finalize: %s\n", tern_err_name(rc));
        return 1;
    }
    return 0;
}
