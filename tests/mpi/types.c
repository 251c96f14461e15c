/*
 * types.c - MPI datatypes: sizes, extents and names of predefined types; derived types
 * (contiguous, vector, hvector, indexed, indexed_block, struct, resized, dup, subarray)
 * round-tripped through messages against their contiguous equivalent in both
 * directions; pack/unpack; the value/index pair types.
 */
#include <stddef.h>
#include <stdint.h>

#include "mpi_check.h"

static int me, np;

static void predefined(void)
{
    struct {
        MPI_Datatype t;
        int size;
        const char *name;
    } tab[] = {
        {MPI_CHAR, 1, "MPI_CHAR"},
        {MPI_SIGNED_CHAR, 1, "MPI_SIGNED_CHAR"},
        {MPI_UNSIGNED_CHAR, 1, "MPI_UNSIGNED_CHAR"},
        {MPI_BYTE, 1, "MPI_BYTE"},
        {MPI_SHORT, (int)sizeof(short), "MPI_SHORT"},
        {MPI_INT, (int)sizeof(int), "MPI_INT"},
        {MPI_UNSIGNED, (int)sizeof(unsigned), "MPI_UNSIGNED"},
        {MPI_LONG, (int)sizeof(long), "MPI_LONG"},
        {MPI_UNSIGNED_LONG, (int)sizeof(unsigned long), "MPI_UNSIGNED_LONG"},
        {MPI_LONG_LONG, (int)sizeof(long long), NULL},
        {MPI_FLOAT, (int)sizeof(float), "MPI_FLOAT"},
        {MPI_DOUBLE, (int)sizeof(double), "MPI_DOUBLE"},
        {MPI_LONG_DOUBLE, (int)sizeof(long double), "MPI_LONG_DOUBLE"},
        {MPI_INT8_T, 1, "MPI_INT8_T"},
        {MPI_INT16_T, 2, "MPI_INT16_T"},
        {MPI_INT32_T, 4, "MPI_INT32_T"},
        {MPI_INT64_T, 8, "MPI_INT64_T"},
        {MPI_UINT8_T, 1, "MPI_UINT8_T"},
        {MPI_UINT16_T, 2, "MPI_UINT16_T"},
        {MPI_UINT32_T, 4, "MPI_UINT32_T"},
        {MPI_UINT64_T, 8, "MPI_UINT64_T"},
        {MPI_C_BOOL, (int)sizeof(_Bool), "MPI_C_BOOL"},
        {MPI_AINT, (int)sizeof(MPI_Aint), "MPI_AINT"},
        {MPI_PACKED, 1, "MPI_PACKED"},
        {MPI_2INT, 2 * (int)sizeof(int), "MPI_2INT"},
        {MPI_FLOAT_INT, (int)(sizeof(float) + sizeof(int)), "MPI_FLOAT_INT"},
        {MPI_DOUBLE_INT, (int)(sizeof(double) + sizeof(int)), "MPI_DOUBLE_INT"},
        {MPI_LONG_INT, (int)(sizeof(long) + sizeof(int)), "MPI_LONG_INT"},
        {MPI_SHORT_INT, (int)(sizeof(short) + sizeof(int)), "MPI_SHORT_INT"},
    };
    for (unsigned i = 0; i < sizeof tab / sizeof *tab; i++) {
        int size, len;
        char name[MPI_MAX_OBJECT_NAME];
        OK(MPI_Type_size(tab[i].t, &size));
        CHECKF(size == tab[i].size, "type %u size %d expected %d", i, size, tab[i].size);
        OK(MPI_Type_get_name(tab[i].t, name, &len));
        if (tab[i].name)
            CHECKF(strcmp(name, tab[i].name) == 0, "name '%s' expected '%s'", name, tab[i].name);
        CHECK(len == (int)strlen(name));
    }
    MPI_Aint lb, ext;
    OK(MPI_Type_get_extent(MPI_DOUBLE_INT, &lb, &ext));
    struct {
        double d;
        int i;
    } di;
    CHECK(lb == 0 && ext == (MPI_Aint)sizeof di);
    OK(MPI_Type_get_extent(MPI_INT, &lb, &ext));
    CHECK(lb == 0 && ext == (MPI_Aint)sizeof(int));
}

/* Send `n` of `t` from a buffer laid out per map[], receive as contiguous ints and back. */
static void roundtrip(MPI_Datatype t, int count, const int *map, int nmap, int span,
                      const char *what)
{
    int other = (me ^ 1) < np ? (me ^ 1) : me;
    if (other >= np) other = me;
    MPI_Aint lb, ext;
    OK(MPI_Type_get_extent(t, &lb, &ext));
    int tsize;
    OK(MPI_Type_size(t, &tsize));
    CHECKF(tsize == nmap * (int)sizeof(int), "%s: size %d expected %d", what, tsize,
           nmap * (int)sizeof(int));
    int total = span + (count - 1) * (int)(ext / (MPI_Aint)sizeof(int));
    int *lay = malloc((size_t)total * sizeof(int)),
        *flat = malloc((size_t)(count * nmap) * sizeof(int));
    int *back = malloc((size_t)total * sizeof(int));
    for (int i = 0; i < total; i++)
        lay[i] = me * 100000 + i, back[i] = -1;
    MPI_Status st;
    /* Layout -> contiguous. */
    OK(MPI_Sendrecv(lay, count, t, other, 1, flat, count * nmap, MPI_INT, other, 1, MPI_COMM_WORLD,
                    &st));
    int cnt;
    OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECKF(cnt == count * nmap, "%s: count %d", what, cnt);
    for (int c = 0; c < count; c++)
        for (int k = 0; k < nmap; k++) {
            int want = other * 100000 + c * (int)(ext / (MPI_Aint)sizeof(int)) + map[k];
            CHECKF(flat[c * nmap + k] == want, "%s: flat[%d] = %d, want %d", what, c * nmap + k,
                   flat[c * nmap + k], want);
        }
    /* Contiguous -> layout: only the mapped elements change. */
    OK(MPI_Sendrecv(flat, count * nmap, MPI_INT, other, 2, back, count, t, other, 2, MPI_COMM_WORLD,
                    &st));
    OK(MPI_Get_count(&st, t, &cnt));
    CHECKF(cnt == count, "%s: get_count %d", what, cnt);
    char *hit = calloc((size_t)total, 1);
    for (int c = 0; c < count; c++)
        for (int k = 0; k < nmap; k++)
            hit[c * (int)(ext / (MPI_Aint)sizeof(int)) + map[k]] = 1;
    for (int i = 0; i < total; i++) {
        /* What we sent was the flat copy of our partner's layout, i.e. me's own values. */
        int want = hit[i] ? me * 100000 + i : -1;
        CHECKF(back[i] == want, "%s: back[%d] = %d want %d", what, i, back[i], want);
    }
    /* Pack / unpack give the same bytes as the message. */
    int psize, pos = 0;
    OK(MPI_Pack_size(count, t, MPI_COMM_WORLD, &psize));
    CHECK(psize >= count * nmap * (int)sizeof(int));
    char *packed = malloc((size_t)psize);
    OK(MPI_Pack(lay, count, t, packed, psize, &pos, MPI_COMM_WORLD));
    CHECK(pos == count * nmap * (int)sizeof(int));
    for (int c = 0; c < count; c++)
        for (int k = 0; k < nmap; k++) {
            int v;
            memcpy(&v, packed + (size_t)(c * nmap + k) * sizeof(int), sizeof v);
            CHECK(v == me * 100000 + c * (int)(ext / (MPI_Aint)sizeof(int)) + map[k]);
        }
    for (int i = 0; i < total; i++)
        back[i] = -1;
    int upos = 0;
    OK(MPI_Unpack(packed, psize, &upos, back, count, t, MPI_COMM_WORLD));
    CHECK(upos == pos);
    for (int i = 0; i < total; i++)
        CHECK(back[i] == (hit[i] ? me * 100000 + i : -1));
    /* Non-blocking receive into the derived layout. */
    MPI_Request q;
    for (int i = 0; i < total; i++)
        back[i] = -1;
    OK(MPI_Irecv(back, count, t, other, 3, MPI_COMM_WORLD, &q));
    OK(MPI_Send(lay, count, t, other, 3, MPI_COMM_WORLD));
    OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    for (int i = 0; i < total; i++)
        CHECK(back[i] == (hit[i] ? other * 100000 + i : -1));
    /* Synchronous mode: the acknowledgement of a gathered eager send. */
    for (int i = 0; i < total; i++)
        back[i] = -1;
    OK(MPI_Irecv(back, count, t, other, 4, MPI_COMM_WORLD, &q));
    OK(MPI_Ssend(lay, count, t, other, 4, MPI_COMM_WORLD));
    OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    for (int i = 0; i < total; i++)
        CHECK(back[i] == (hit[i] ? other * 100000 + i : -1));
    free(packed);
    free(hit);
    free(lay);
    free(flat);
    free(back);
}

static void derived(void)
{
    MPI_Datatype t, t2;
    /* contiguous */
    OK(MPI_Type_contiguous(5, MPI_INT, &t));
    OK(MPI_Type_commit(&t));
    int mc[] = {0, 1, 2, 3, 4};
    roundtrip(t, 3, mc, 5, 5, "contiguous");
    OK(MPI_Type_free(&t));
    CHECK(t == MPI_DATATYPE_NULL);
    /* vector: 3 blocks of 2, stride 5 */
    OK(MPI_Type_vector(3, 2, 5, MPI_INT, &t));
    OK(MPI_Type_commit(&t));
    MPI_Aint lb, ext;
    OK(MPI_Type_get_extent(t, &lb, &ext));
    CHECK(lb == 0 && ext == 12 * (MPI_Aint)sizeof(int));
    int mv[] = {0, 1, 5, 6, 10, 11};
    roundtrip(t, 1, mv, 6, 12, "vector");
    /* the vector resized to 3 ints: instances interleave */
    OK(MPI_Type_create_resized(t, 0, 3 * (MPI_Aint)sizeof(int), &t2));
    OK(MPI_Type_commit(&t2));
    OK(MPI_Type_get_extent(t2, &lb, &ext));
    CHECK(lb == 0 && ext == 3 * (MPI_Aint)sizeof(int));
    int mr[] = {0, 1, 5, 6, 10, 11};
    roundtrip(t2, 1, mr, 6, 12, "resized");
    OK(MPI_Type_free(&t2));
    OK(MPI_Type_free(&t));
    /* hvector of 2 with a byte stride */
    OK(MPI_Type_create_hvector(4, 1, 3 * (MPI_Aint)sizeof(int), MPI_INT, &t));
    OK(MPI_Type_commit(&t));
    int mh[] = {0, 3, 6, 9};
    roundtrip(t, 2, mh, 4, 10, "hvector");
    OK(MPI_Type_free(&t));
    /* indexed */
    int bl[] = {2, 1, 3}, dp[] = {4, 0, 8};
    OK(MPI_Type_indexed(3, bl, dp, MPI_INT, &t));
    OK(MPI_Type_commit(&t));
    int mi[] = {4, 5, 0, 8, 9, 10};
    roundtrip(t, 2, mi, 6, 11, "indexed");
    OK(MPI_Type_free(&t));
    /* indexed_block */
    int db[] = {1, 6, 3};
    OK(MPI_Type_create_indexed_block(3, 2, db, MPI_INT, &t));
    OK(MPI_Type_commit(&t));
    int mb[] = {1, 2, 6, 7, 3, 4};
    roundtrip(t, 1, mb, 6, 8, "indexed_block");
    /* dup of it */
    OK(MPI_Type_dup(t, &t2));
    OK(MPI_Type_commit(&t2));
    roundtrip(t2, 2, mb, 6, 8, "dup");
    OK(MPI_Type_free(&t2));
    OK(MPI_Type_free(&t));
    /* subarray: 2x3 block at (1,2) of a 4x6 C array */
    int sizes[] = {4, 6}, sub[] = {2, 3}, starts[] = {1, 2};
    OK(MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &t));
    OK(MPI_Type_commit(&t));
    int ms[] = {8, 9, 10, 14, 15, 16};
    roundtrip(t, 1, ms, 6, 24, "subarray");
    OK(MPI_Type_free(&t));
}

struct particle {
    char tag;
    double x[3];
    int id;
    short flags;
};

static void structs(void)
{
    int other = (me ^ 1) < np ? (me ^ 1) : me;
    struct particle p[4], q[4];
    memset(p, 0, sizeof p);
    MPI_Aint base, d[4];
    OK(MPI_Get_address(&p[0], &base));
    OK(MPI_Get_address(&p[0].tag, &d[0]));
    OK(MPI_Get_address(&p[0].x, &d[1]));
    OK(MPI_Get_address(&p[0].id, &d[2]));
    OK(MPI_Get_address(&p[0].flags, &d[3]));
    for (int i = 0; i < 4; i++)
        d[i] = MPI_Aint_diff(d[i], base);
    int bl[] = {1, 3, 1, 1};
    MPI_Datatype types[] = {MPI_CHAR, MPI_DOUBLE, MPI_INT, MPI_SHORT}, t, tr;
    OK(MPI_Type_create_struct(4, bl, d, types, &t));
    OK(MPI_Type_create_resized(t, 0, (MPI_Aint)sizeof(struct particle), &tr));
    OK(MPI_Type_commit(&tr));
    int size;
    OK(MPI_Type_size(tr, &size));
    CHECK(size == 1 + 24 + 4 + 2);
    for (int i = 0; i < 4; i++) {
        memset(&p[i], 0x5a, sizeof p[i]);
        p[i].tag = (char)('a' + me);
        for (int k = 0; k < 3; k++)
            p[i].x[k] = me + i * 0.5 + k;
        p[i].id = me * 10 + i;
        p[i].flags = (short)(i - me);
    }
    memset(q, 0, sizeof q);
    OK(MPI_Sendrecv(p, 4, tr, other, 5, q, 4, tr, other, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; i++) {
        CHECK(q[i].tag == (char)('a' + other) && q[i].id == other * 10 + i);
        CHECK(q[i].flags == (short)(i - other));
        for (int k = 0; k < 3; k++)
            CHECK(q[i].x[k] == other + i * 0.5 + k);
    }
    OK(MPI_Type_free(&t));
    OK(MPI_Type_free(&tr));

    /* Value/index pairs travel by their packed size; the receiver sees the C layout. */
    struct {
        double v;
        int i;
    } di[3], dr[3];
    for (int i = 0; i < 3; i++)
        di[i].v = me + 0.25 * i, di[i].i = me * 3 + i;
    MPI_Status st;
    OK(MPI_Sendrecv(di, 3, MPI_DOUBLE_INT, other, 6, dr, 3, MPI_DOUBLE_INT, other, 6,
                    MPI_COMM_WORLD, &st));
    int cnt;
    OK(MPI_Get_count(&st, MPI_DOUBLE_INT, &cnt));
    CHECK(cnt == 3);
    for (int i = 0; i < 3; i++)
        CHECK(dr[i].v == other + 0.25 * i && dr[i].i == other * 3 + i);
    OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
    CHECK(cnt == 3 * (int)(sizeof(double) + sizeof(int)));
}

/* Absolute addresses: a struct type over two separate variables, sent from MPI_BOTTOM;
 * and hindexed with byte displacements. */
static void bottom(void)
{
    int other = (me ^ 1) < np ? (me ^ 1) : me;
    int a = 100 + me, ra = -1;
    double b[2] = {me + 0.5, me + 1.5}, rb[2] = {0, 0};
    MPI_Aint addr[2], raddr[2];
    OK(MPI_Get_address(&a, &addr[0]));
    OK(MPI_Get_address(b, &addr[1]));
    OK(MPI_Get_address(&ra, &raddr[0]));
    OK(MPI_Get_address(rb, &raddr[1]));
    int bl[2] = {1, 2};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE}, st, rt;
    OK(MPI_Type_create_struct(2, bl, addr, ty, &st));
    OK(MPI_Type_create_struct(2, bl, raddr, ty, &rt));
    OK(MPI_Type_commit(&st));
    OK(MPI_Type_commit(&rt));
    OK(MPI_Sendrecv(MPI_BOTTOM, 1, st, other, 4, MPI_BOTTOM, 1, rt, other, 4, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    CHECK(ra == 100 + other && rb[0] == other + 0.5 && rb[1] == other + 1.5);
    OK(MPI_Type_free(&st));
    OK(MPI_Type_free(&rt));

    int v[10], w[10];
    for (int i = 0; i < 10; i++)
        v[i] = me * 10 + i, w[i] = -1;
    int hb[2] = {2, 1};
    MPI_Aint hd[2] = {6 * (MPI_Aint)sizeof(int), 1 * (MPI_Aint)sizeof(int)};
    MPI_Datatype h;
    OK(MPI_Type_create_hindexed(2, hb, hd, MPI_INT, &h));
    OK(MPI_Type_commit(&h));
    OK(MPI_Sendrecv(v, 1, h, other, 5, w, 1, h, other, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < 10; i++)
        CHECK(w[i] == (i == 6 || i == 7 || i == 1 ? other * 10 + i : -1));
    OK(MPI_Type_free(&h));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    predefined();
    derived();
    structs();
    bottom();
    return mt_done("types");
}
