/*
 * api_misc.c - the rest of MPI 3.1 that tern implements beyond the list:
 * MPI_Comm_create_group (only the group calls it; data moves on the new communicator),
 * group set operations, MPI_Comm_idup / dup_with_info / set_info / get_info, info
 * deletion and enumeration, error classes/codes/strings of the program, window and
 * datatype attributes with their copy and delete callbacks, the MPI-1 attribute and
 * datatype names, window error handlers, MPI_Type_match_size and the f90 types,
 * statuses as Fortran integers, the _x queries.
 */
#include "mpi_check.h"

/* The MPI-1 names are deprecated (MPI_Keyval_create, MPI_Attr_*) or were removed in MPI 3.0
 * (MPI_Type_struct, _extent, _lb, _ub, _hvector, _hindexed): Open MPI's header rejects the
 * removed ones, tern keeps them for old programs. Elsewhere their MPI-2 forms run. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#ifdef TERN_MPI
#define TYPE_STRUCT   MPI_Type_struct
#define TYPE_HVECTOR  MPI_Type_hvector
#define TYPE_HINDEXED MPI_Type_hindexed
#define TYPE_EXTENT   MPI_Type_extent
#define TYPE_LB       MPI_Type_lb
#define TYPE_UB       MPI_Type_ub
#else
#define TYPE_STRUCT   MPI_Type_create_struct
#define TYPE_HVECTOR  MPI_Type_create_hvector
#define TYPE_HINDEXED MPI_Type_create_hindexed
static int TYPE_EXTENT(MPI_Datatype t, MPI_Aint *e)
{
    MPI_Aint lb;
    return MPI_Type_get_extent(t, &lb, e);
}
static int TYPE_LB(MPI_Datatype t, MPI_Aint *lb)
{
    MPI_Aint e;
    return MPI_Type_get_extent(t, lb, &e);
}
static int TYPE_UB(MPI_Datatype t, MPI_Aint *ub)
{
    MPI_Aint lb, e;
    int rc = MPI_Type_get_extent(t, &lb, &e);
    *ub = lb + e;
    return rc;
}
#endif

static int deleted, copied, eh_called, eh_code;

static int del_fn(void *val)
{
    deleted += *(int *)val;
    return MPI_SUCCESS;
}
static int win_del(MPI_Win w, int k, void *val, void *extra)
{
    (void)w, (void)k, (void)extra;
    return del_fn(val);
}
static int type_del(MPI_Datatype t, int k, void *val, void *extra)
{
    (void)t, (void)k, (void)extra;
    return del_fn(val);
}
static int type_copy(MPI_Datatype t, int k, void *extra, void *in, void *out, int *flag)
{
    (void)t, (void)k;
    copied++;
    *(void **)out = (char *)in + *(int *)extra; /* the copy points elsewhere */
    *flag = 1;
    return MPI_SUCCESS;
}
static MPI_Win eh_win;
static void win_eh(MPI_Win *w, int *code, ...)
{
    eh_win = *w;
    eh_called++;
    eh_code = *code;
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int me = mt_rank, np;
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_File fh;
    if (argc > 1 && strcmp(argv[1], "fatal") == 0) { /* tern only: the line naming it */
        MPI_File_open(MPI_COMM_WORLD, "x", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
        CHECK(0);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
#ifdef TERN_MPI /* what tern leaves out fails with a named error, whatever the arguments */
    FAILS(MPI_File_open(MPI_COMM_WORLD, "x", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
          MPI_ERR_UNSUPPORTED_OPERATION);
    MPI_Comm inter; /* raised on local_comm: a local leader outside it */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    FAILS(MPI_Intercomm_create(MPI_COMM_SELF, 1, MPI_COMM_WORLD, 0, 0, &inter), MPI_ERR_RANK);
#endif
    MPI_Aint psz; /* external32: an int is 4 bytes */
    OK(MPI_Pack_external_size("external32", 3, MPI_INT, &psz));
    CHECK(psz == 12);

    /* Groups: evens and the first half; union, intersection, difference, range_excl. */
    MPI_Group world, evens, half, u, in, diff, rex;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int ranges[1][3] = {{1, np - 1, 2}}; /* the odd ranks */
    OK(MPI_Group_range_excl(world, np > 1 ? 1 : 0, ranges, &evens));
    int hr[1][3] = {{0, (np - 1) / 2, 1}};
    OK(MPI_Group_range_incl(world, 1, hr, &half));
    OK(MPI_Group_union(evens, half, &u));
    OK(MPI_Group_intersection(evens, half, &in));
    OK(MPI_Group_difference(evens, half, &diff));
    int ne, nu, ni, nd, n;
    MPI_Group_size(evens, &ne);
    MPI_Group_size(u, &nu);
    MPI_Group_size(in, &ni);
    MPI_Group_size(diff, &nd);
    CHECK(ne == (np + 1) / 2);
    int cu = 0, ci = 0, cd = 0;
    for (int r = 0; r < np; r++) {
        int ev = r % 2 == 0, h = r <= (np - 1) / 2;
        cu += ev || h, ci += ev && h, cd += ev && !h;
    }
    CHECK(nu == cu && ni == ci && nd == cd);
    /* The union lists evens first, in order, then the half's others. */
    int *ur = malloc((size_t)np * sizeof(int)), *wr = malloc((size_t)np * sizeof(int));
    for (int i = 0; i < nu; i++)
        ur[i] = i;
    OK(MPI_Group_translate_ranks(u, nu, ur, world, wr));
    for (int i = 0; i < ne; i++)
        CHECK(wr[i] == 2 * i);
    for (int i = ne; i < nu; i++)
        CHECK(wr[i] % 2 == 1 && wr[i] <= (np - 1) / 2 && (i == ne || wr[i] > wr[i - 1]));

    /* Comm_create_group: only the evens call it. */
    if (me % 2 == 0) {
        MPI_Comm ec;
        OK(MPI_Comm_create_group(MPI_COMM_WORLD, evens, 7, &ec));
        CHECK(ec != MPI_COMM_NULL);
        int er, es;
        MPI_Comm_rank(ec, &er);
        MPI_Comm_size(ec, &es);
        CHECK(er == me / 2 && es == ne);
        int sum = 0;
        OK(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, ec));
        CHECK(sum == 2 * (ne - 1) * ne / 2);
        MPI_Comm_free(&ec);
    }
    MPI_Group_free(&evens), MPI_Group_free(&half), MPI_Group_free(&u), MPI_Group_free(&in);
    MPI_Group_free(&diff);
    (void)rex;

    /* idup, dup_with_info, info. */
    MPI_Comm d1, d2;
    MPI_Request rq;
    OK(MPI_Comm_idup(MPI_COMM_WORLD, &d1, &rq));
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    int sum = 0;
    OK(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, d1));
    CHECK(sum == np * (np - 1) / 2);
    MPI_Info info, used;
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "first", "1"));
    OK(MPI_Info_set(info, "second", "two"));
    OK(MPI_Info_set(info, "third", "333"));
    OK(MPI_Comm_dup_with_info(d1, info, &d2));
    OK(MPI_Comm_set_info(d2, info));
    OK(MPI_Comm_get_info(d2, &used));
    OK(MPI_Info_free(&used));
    char key[MPI_MAX_INFO_KEY + 1];
    OK(MPI_Info_get_nthkey(info, 0, key));
    CHECK(strcmp(key, "first") == 0);
    OK(MPI_Info_get_nthkey(info, 2, key));
    CHECK(strcmp(key, "third") == 0);
    int len, flag;
    OK(MPI_Info_get_valuelen(info, "second", &len, &flag));
    CHECK(flag && len == 3);
    OK(MPI_Info_delete(info, "second"));
    OK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 2);
    OK(MPI_Info_get_valuelen(info, "second", &len, &flag));
    CHECK(!flag);
    FAILS(MPI_Info_delete(info, "second"), MPI_ERR_INFO_NOKEY);
    OK(MPI_Info_free(&info));
    MPI_Comm_free(&d1);

    /* MPI-1 attributes: MPI_DUP_FN copies through MPI_Comm_dup; delete runs on free. */
    int kv, val = 42, *got;
    OK(MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &kv, NULL));
    OK(MPI_Attr_put(d2, kv, &val));
    MPI_Comm d3;
    OK(MPI_Comm_dup(d2, &d3));
    OK(MPI_Attr_get(d3, kv, &got, &flag));
    CHECK(flag && got == &val);
    OK(MPI_Attr_delete(d3, kv));
    OK(MPI_Attr_get(d3, kv, &got, &flag));
    CHECK(!flag);
    OK(MPI_Keyval_free(&kv));
    MPI_Comm_free(&d3);
    MPI_Comm_free(&d2);
#ifdef TERN_MPI /* erroneous on an intra-communicator; Open MPI 4.1 does not detect it */
    int rsize;
    FAILS(MPI_Comm_remote_size(MPI_COMM_WORLD, &rsize), MPI_ERR_COMM);
#endif

    /* Error classes and codes of the program. */
    int cls, code, code2, *last;
    OK(MPI_Add_error_class(&cls));
    OK(MPI_Add_error_code(cls, &code));
    OK(MPI_Add_error_code(MPI_ERR_ARG, &code2));
    OK(MPI_Add_error_string(code, "my own error"));
    int c2;
    OK(MPI_Error_class(code, &c2));
    CHECK(c2 == cls);
    OK(MPI_Error_class(code2, &c2));
    CHECK(c2 == MPI_ERR_ARG);
    char s[MPI_MAX_ERROR_STRING];
    OK(MPI_Error_string(code, s, &len));
    CHECK(strcmp(s, "my own error") == 0 && len == 12);
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(flag && *last >= cls);
#ifdef TERN_MPI /* MPICH encodes codes above MPI_LASTUSEDCODE */
    CHECK(*last >= code && *last >= code2);
#endif

    /* Window attributes and error handlers. */
    int wmem[4];
    MPI_Win win;
    OK(MPI_Win_create(wmem, sizeof wmem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int wk, a1 = 1, a2 = 10, *wv;
    OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, win_del, &wk, NULL));
    OK(MPI_Win_set_attr(win, wk, &a1));
    OK(MPI_Win_get_attr(win, wk, &wv, &flag));
    CHECK(flag && wv == &a1);
    deleted = 0;
    OK(MPI_Win_set_attr(win, wk, &a2)); /* replacing deletes the old value */
    CHECK(deleted == 1);
    MPI_Errhandler weh;
    OK(MPI_Win_create_errhandler(win_eh, &weh));
    OK(MPI_Win_set_errhandler(win, weh));
    OK(MPI_Win_call_errhandler(win, code));
    CHECK(eh_called == 1 && eh_code == code && eh_win == win);
    /* An error of a window call goes to it too, naming the window. */
    int bad;
    CHECK(MPI_Win_get_attr(win, MPI_KEYVAL_INVALID, &bad, &flag) != MPI_SUCCESS);
    CHECK(eh_called == 2 && eh_win == win);
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    OK(MPI_Errhandler_free(&weh));
    OK(MPI_Win_free(&win)); /* deletes a2 */
    CHECK(deleted == 11);
    OK(MPI_Win_free_keyval(&wk));
    CHECK(wk == MPI_KEYVAL_INVALID);

    /* Datatype attributes: copied by MPI_Type_dup, deleted by MPI_Type_free. */
    MPI_Datatype vt, vt2;
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &vt));
    int tk, step = 0, t1 = 100, *tv;
    OK(MPI_Type_create_keyval(type_copy, type_del, &tk, &step));
    OK(MPI_Type_set_attr(vt, tk, &t1));
    OK(MPI_Type_dup(vt, &vt2));
    CHECK(copied == 1);
    OK(MPI_Type_get_attr(vt2, tk, &tv, &flag));
    CHECK(flag && tv == &t1);
    deleted = 0;
    OK(MPI_Type_delete_attr(vt2, tk));
    CHECK(deleted == 100);
    OK(MPI_Type_get_attr(vt2, tk, &tv, &flag));
    CHECK(!flag);
    OK(MPI_Type_free(&vt2));
    CHECK(deleted == 100);
    OK(MPI_Type_free(&vt)); /* its attribute goes with it */
    CHECK(deleted == 200);
    OK(MPI_Type_free_keyval(&tk));

    /* MPI-1 datatype names (MPI_Type_struct of {int, double} with a hole). */
    MPI_Datatype st;
    int bl[2] = {1, 1};
    MPI_Aint dis[2] = {0, 8};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
    OK(TYPE_STRUCT(2, bl, dis, ty, &st));
    OK(MPI_Type_commit(&st));
    MPI_Aint ext, lb, ub;
    OK(TYPE_EXTENT(st, &ext));
    OK(TYPE_LB(st, &lb));
    OK(TYPE_UB(st, &ub));
    CHECK(ext == 16 && lb == 0 && ub == 16);
    MPI_Count clb, cext;
    OK(MPI_Type_get_extent_x(st, &clb, &cext));
    CHECK(clb == 0 && cext == 16);
    OK(MPI_Type_get_true_extent_x(st, &clb, &cext));
    CHECK(clb == 0 && cext == 16);
    MPI_Type_free(&st);
    MPI_Datatype hv, hi;
    OK(TYPE_HVECTOR(3, 1, 8, MPI_INT, &hv));
    OK(TYPE_HINDEXED(2, bl, dis, MPI_INT, &hi));
    OK(MPI_Type_commit(&hv));
    OK(MPI_Type_commit(&hi));
    int sz;
    MPI_Type_size(hv, &sz);
    CHECK(sz == 12);
    MPI_Type_size(hi, &sz);
    CHECK(sz == 8);
    /* hvector data through a self send. */
    int src[6] = {1, 2, 3, 4, 5, 6}, dst[3] = {0};
    OK(MPI_Sendrecv(src, 1, hv, me, 3, dst, 3, MPI_INT, me, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(dst[0] == 1 && dst[1] == 3 && dst[2] == 5);
    MPI_Type_free(&hv), MPI_Type_free(&hi);

    /* Types by class and size, and by precision. */
    MPI_Datatype m;
    OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &m));
    MPI_Type_size(m, &sz);
    CHECK(sz == 4);
    OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &m));
    MPI_Type_size(m, &sz);
    CHECK(sz == 8);
    OK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &m));
    MPI_Type_size(m, &sz);
    CHECK(sz == 16);
    FAILS(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 3, &m), MPI_ERR_ARG);
    OK(MPI_Type_create_f90_integer(9, &m));
    MPI_Type_size(m, &sz);
    CHECK(sz == 4);
    OK(MPI_Type_create_f90_real(15, MPI_UNDEFINED, &m));
    MPI_Type_size(m, &sz);
    CHECK(sz == 8);
    OK(MPI_Type_create_f90_complex(6, 30, &m));
    MPI_Type_size(m, &sz);
    CHECK(sz == 8);
    int ni2, na, nt, comb;
    OK(MPI_Type_get_envelope(MPI_INT, &ni2, &na, &nt, &comb));
    CHECK(comb == MPI_COMBINER_NAMED);

    /* Statuses: to Fortran integers and back; elements as MPI_Count. */
    int x[3] = {7, 8, 9}, y[3];
    MPI_Status stt, back;
    OK(MPI_Sendrecv(x, 3, MPI_INT, me, 4, y, 3, MPI_INT, me, 4, MPI_COMM_WORLD, &stt));
    MPI_Fint f[64]; /* MPI_STATUS_SIZE is Fortran's constant; 64 is more than any MPI needs */
    OK(MPI_Status_c2f(&stt, f));
    OK(MPI_Status_f2c(f, &back));
    OK(MPI_Get_count(&back, MPI_INT, &n));
    CHECK(n == 3 && back.MPI_SOURCE == me && back.MPI_TAG == 4);
    MPI_Count ce;
    OK(MPI_Get_elements_x(&back, MPI_INT, &ce));
    CHECK(ce == 3);
    /* The tool interface: nested init, sessions, names that do not exist. tern's has no
     * variables at all (other MPIs have some). */
    int num, prov;
    CHECK(MPI_T_cvar_get_num(&num) == MPI_T_ERR_NOT_INITIALIZED);
    CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &prov) == MPI_SUCCESS);
    CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &prov) == MPI_SUCCESS);
    CHECK(MPI_T_cvar_get_num(&num) == MPI_SUCCESS && num >= 0);
    CHECK(MPI_T_pvar_get_num(&num) == MPI_SUCCESS && num >= 0);
    CHECK(MPI_T_category_get_num(&num) == MPI_SUCCESS && num >= 0);
#ifdef TERN_MPI
    MPI_T_cvar_get_num(&num);
    CHECK(num == 0);
    CHECK(MPI_T_cvar_get_info(0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) ==
          MPI_T_ERR_INVALID_INDEX);
#endif
    int idx;
    CHECK(MPI_T_cvar_get_index("no_such_variable_anywhere", &idx) == MPI_T_ERR_INVALID_NAME);
    MPI_T_pvar_session ses;
    CHECK(MPI_T_pvar_session_create(&ses) == MPI_SUCCESS);
    CHECK(MPI_T_pvar_session_free(&ses) == MPI_SUCCESS && ses == MPI_T_PVAR_SESSION_NULL);
    CHECK(MPI_T_finalize() == MPI_SUCCESS);
    CHECK(MPI_T_cvar_get_num(&num) == MPI_SUCCESS); /* still once initialized */
    CHECK(MPI_T_finalize() == MPI_SUCCESS);
    CHECK(MPI_T_cvar_get_num(&num) == MPI_T_ERR_NOT_INITIALIZED);

    free(ur), free(wr);
    MPI_Group_free(&world);
    return mt_done("api_misc");
}
