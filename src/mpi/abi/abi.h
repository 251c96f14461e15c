/*
 * abi.h - the translation layer of libmpi_abi.so.1, tern's MPI 5.0 standard ABI library
 * (docs/MPI.md, "The MPI 5.0 standard ABI").
 *
 * A program built against the standard ABI passes handles that are pointers to incomplete
 * structs, predefined handles and constants with the standard's small values and a 32-byte
 * MPI_Status; tern's mpi.h keeps MPICH's values (int handles, 20-byte status). Each
 * exported MPI_X of the library converts on the way in, calls tern's PMPI_X and converts
 * on the way out. This header holds the conversions; abi_tables.h (generated) the tables.
 *
 * Handles: a predefined ABI handle is a value below ABI_NPREDEF and maps by table; every
 * other tern handle h travels as the pointer value (1 << 32) | (uint32_t)h, which never
 * meets a predefined value and decodes by truncation (injective both ways).
 */
#ifndef TERN_MPI_ABI_H
#define TERN_MPI_ABI_H

#include <stddef.h>
#include <stdint.h>

#include "mpi.h"

/* The standard ABI's handle types: pointers to incomplete structs. */
typedef struct abi_Comm_s *abi_Comm_t;
typedef struct abi_Datatype_s *abi_Datatype_t;
typedef struct abi_Op_s *abi_Op_t;
typedef struct abi_Group_s *abi_Group_t;
typedef struct abi_Request_s *abi_Request_t;
typedef struct abi_Errhandler_s *abi_Errhandler_t;
typedef struct abi_Info_s *abi_Info_t;
typedef struct abi_Win_s *abi_Win_t;
typedef struct abi_File_s *abi_File_t;
typedef struct abi_Message_s *abi_Message_t;
typedef struct abi_Session_s *abi_Session_t;
/* tern has no sessions: an int stands for one so the generic code compiles. */
typedef int MPI_Session;
#define MPI_SESSION_NULL 0

/* The standard's MPI_Status: three public fields and five the implementation owns (tern
 * keeps its count words in the first two). */
typedef struct abi_status {
    int source, tag, error;
    int internal[5];
} abi_status_t;

#include "mpi/abi/abi_tables.h"

/* Defines the exported function MPI_<name> (C name abi_MPI_<name>, since tern's mpi.h
 * already declares MPI_<name> with tern's types). */
#define ABI_EXPORT(ret, name, params)                                                              \
    ret abi_MPI_##name params __asm__("MPI_" #name) __attribute__((visibility("default")));        \
    ret abi_MPI_##name params

/* An ABI function tern does not serve: MPI_ERR_UNSUPPORTED_OPERATION, said once. */
int abi_unsupported(const char *name);
#define ABI_STUB(name)                                                                             \
    int abi_MPI_##name(void) __asm__("MPI_" #name) __attribute__((visibility("default")));         \
    int abi_MPI_##name(void)                                                                       \
    {                                                                                              \
        return abi_unsupported("MPI_" #name);                                                      \
    }

#define ABI_ENC ((uintptr_t)1 << 32)

static inline int abi_handle_in(const void *h)
{
    uintptr_t v = (uintptr_t)h;
    if (v < ABI_NPREDEF) return abi_predef_in[v];
    return (int)(uint32_t)v;
}

#define ABI_HANDLE(K)                                                                              \
    static inline int abi_in_##K(abi_##K##_t h)                                                    \
    {                                                                                              \
        return abi_handle_in(h);                                                                   \
    }                                                                                              \
    static inline abi_##K##_t abi_out_##K(int c)                                                   \
    {                                                                                              \
        uintptr_t p = abi_predef_out_##K(c);                                                       \
        return (abi_##K##_t)(p ? p : (ABI_ENC | (uint32_t)c));                                     \
    }
ABI_HANDLE(Comm)
ABI_HANDLE(Datatype)
ABI_HANDLE(Op)
ABI_HANDLE(Group)
ABI_HANDLE(Request)
ABI_HANDLE(Errhandler)
ABI_HANDLE(Info)
ABI_HANDLE(Win)
ABI_HANDLE(File)
ABI_HANDLE(Message)
ABI_HANDLE(Session)

/* A value no tern call accepts as a rank or tag (stands for an ABI value with no tern twin). */
#define ABI_BAD_INT (-32000)

/* Ranks: MPI_ANY_SOURCE, MPI_PROC_NULL and MPI_ROOT differ; real ranks pass. */
static inline int abi_rank_in(int r)
{
    if (__builtin_expect(r >= 0, 1)) return r;
    if (r == ABI_ANY_SOURCE) return MPI_ANY_SOURCE;
    if (r == ABI_PROC_NULL) return MPI_PROC_NULL;
    if (r == ABI_ROOT) return MPI_ROOT;
    if (r == ABI_UNDEFINED) return MPI_UNDEFINED;
    return ABI_BAD_INT;
}
static inline int abi_rank_out(int r)
{
    if (__builtin_expect(r >= 0, 1)) return r;
    if (r == MPI_ANY_SOURCE) return ABI_ANY_SOURCE;
    if (r == MPI_PROC_NULL) return ABI_PROC_NULL;
    if (r == MPI_ROOT) return ABI_ROOT;
    if (r == MPI_UNDEFINED) return ABI_UNDEFINED;
    return r;
}
static inline int abi_tag_in(int t)
{
    if (__builtin_expect(t >= 0, 1)) return t;
    return t == ABI_ANY_TAG ? MPI_ANY_TAG : ABI_BAD_INT;
}
static inline int abi_tag_out(int t)
{
    if (__builtin_expect(t >= 0, 1)) return t;
    return t == MPI_ANY_TAG ? ABI_ANY_TAG : t;
}

/* Error codes: the predefined classes by table; codes and classes a program adds
 * (tern: from MPI_ERR_LASTCODE + 1) keep their distance from the last predefined one. */
static inline int abi_err_out(int rc)
{
    if (__builtin_expect(rc == MPI_SUCCESS, 1)) return 0;
    if (rc > MPI_ERR_LASTCODE) return ABI_ERR_LASTCODE + (rc - MPI_ERR_LASTCODE);
    return abi_err_out_tab(rc);
}
static inline int abi_err_in(int rc)
{
    if (rc == 0) return MPI_SUCCESS;
    if (rc > ABI_ERR_LASTCODE) return MPI_ERR_LASTCODE + (rc - ABI_ERR_LASTCODE);
    return abi_err_in_tab(rc);
}

static inline void *abi_buf_in(const void *p)
{
    return p == (const void *)(uintptr_t)ABI_IN_PLACE ? MPI_IN_PLACE : (void *)(uintptr_t)p;
}

/* A status out to the program, all but its error field, which only a call returning
 * MPI_ERR_IN_STATUS writes (abi_status_out_err; MPI 3.2.5). */
static inline void abi_status_out(abi_status_t *a, const MPI_Status *t)
{
    a->source = abi_rank_out(t->MPI_SOURCE);
    a->tag = abi_tag_out(t->MPI_TAG);
    a->internal[0] = t->count_lo;
    a->internal[1] = t->count_hi_and_cancelled;
}
static inline void abi_status_out_err(abi_status_t *a, const MPI_Status *t)
{
    abi_status_out(a, t);
    a->error = abi_err_out(t->MPI_ERROR);
}
static inline void abi_status_in(MPI_Status *t, const abi_status_t *a)
{
    t->MPI_SOURCE = abi_rank_in(a->source);
    t->MPI_TAG = abi_tag_in(a->tag);
    t->MPI_ERROR = abi_err_in(a->error);
    t->count_lo = a->internal[0];
    t->count_hi_and_cancelled = a->internal[1];
}

#endif
