#!/usr/bin/env python3
"""symbols.py - every MPI 3.1 C function has a symbol in libtern_mpi and a declaration in
tern's mpi.h, as MPI_X and as PMPI_X (issue 3: "anything a program uses is implemented or
present as a symbol that fails with MPI_ERR_UNSUPPORTED_OPERATION, so programs link").

The list of names is not kept here: it is read from the MPICH header installed on the
machine (Debian's libmpich-dev, found through `mpicc.mpich`), which declares the whole C
API of the MPI version MPICH implements. What MPICH declares beyond MPI 3.1 is dropped by
the rules in EXCLUDE below, each with its reason; everything else must be in tern.

usage: symbols.py <libtern_mpi.so> <tern include dir> [cc]
Exit 0: complete; 1: something missing (listed); 77: no MPICH header here (skipped).
"""
import os
import re
import shutil
import subprocess
import sys

# Names MPICH declares that are not MPI 3.1 C functions. (rule, reason)
EXCLUDE = [
    (r"^MPIX_", "MPICH's own extensions, not MPI"),
    (r"_c$", "MPI 4.0 large-count bindings (tern has the p2p ones, see docs/MPI.md)"),
    (r"^MPI_Session_", "MPI 4.0 sessions"),
    (r"^MPI_(Group_from_session_pset|Comm_create_from_group|Intercomm_create_from_groups)$",
     "MPI 4.0 sessions"),
    (r"^MPI_(Allgather|Allgatherv|Allreduce|Alltoall|Alltoallv|Alltoallw|Barrier|Bcast|Exscan"
     r"|Gather|Gatherv|Reduce|Reduce_scatter|Reduce_scatter_block|Scan|Scatter|Scatterv"
     r"|Neighbor_allgather|Neighbor_allgatherv|Neighbor_alltoall|Neighbor_alltoallv"
     r"|Neighbor_alltoallw)_init$", "MPI 4.0 persistent collectives"),
    (r"^MPI_(Psend_init|Precv_init|Pready|Pready_range|Pready_list|Parrived)$",
     "MPI 4.0 partitioned communication"),
    (r"^MPI_(Isendrecv|Isendrecv_replace|Comm_idup_with_info|Info_get_string|Info_create_env)$",
     "new in MPI 4.0"),
    (r"^MPI_Status_(f082c|c2f08|f082f|f2f08)$", "MPI 4.0 mpi_f08 status conversions"),
    (r"^MPI_T_(event_|source_|category_get_num_events$|category_get_events$)",
     "MPI 4.0 tool-interface events and sources"),
    # A newer MPICH declares these too (not in libmpich-dev 4.0.2 of Debian 12).
    (r"^MPI_(Status_(set|get)_(source|tag|error)|Get_hw_resource_info|Type_get_value_index"
     r"|Remove_error_(class|code|string)|(Comm|Session)_(attach|detach|flush|iflush)_buffer"
     r"|Buffer_i?flush|Request_get_status_(any|all|some))$", "new in MPI 4.1"),
    (r"^MPI_(Abi_|Comm_toint$|Comm_fromint$|Type_toint$|Type_fromint$|Group_toint$"
     r"|Group_fromint$|Op_toint$|Op_fromint$|Win_toint$|Win_fromint$|Info_toint$"
     r"|Info_fromint$|Errhandler_toint$|Errhandler_fromint$|Request_toint$"
     r"|Request_fromint$|File_toint$|File_fromint$|Session_toint$|Session_fromint$"
     r"|Message_toint$|Message_fromint$)", "new in MPI 5.0"),
]

# Functions tern has that MPICH's header makes macros (handle conversions between C and
# Fortran are casts in MPICH), so they are not in the list read from it.
TERN_EXTRA = ["MPI_%s_%s" % (h, d)
              for h in ("Comm", "Type", "Group", "Info", "Request", "Op", "Errhandler", "Win",
                        "Message", "File")
              for d in ("c2f", "f2c")]

DECL = re.compile(r"^(?:extern\s+)?[A-Za-z_][\w\s\*]*?\b(P?MPIX?_\w+)\s*\(")


def declared(text):
    """Names of the functions declared at file scope in preprocessed C text."""
    text = re.sub(r"__attribute__\s*\(\(.*?\)\)", " ", " ".join(text.split("\n")))
    out = set()
    for stmt in re.split(r"[;{}]", text):
        stmt = stmt.strip()
        if stmt.startswith("typedef"):
            continue
        m = DECL.match(stmt)
        if m:
            out.add(m.group(1))
    return out


def mpich_names():
    for cc in ("mpicc.mpich", "mpicc"):
        if not shutil.which(cc):
            continue
        show = subprocess.run([cc, "-show"], capture_output=True, text=True).stdout
        if "mpich" not in show:  # an mpicc of another MPI
            continue
        r = subprocess.run([cc, "-E", "-P", "-x", "c", "-"], input="#include <mpi.h>\n",
                           capture_output=True, text=True)
        if r.returncode == 0:
            return declared(r.stdout), cc + " -E"
    # No wrapper: the header where Debian puts it.
    for d in ("/usr/include/x86_64-linux-gnu/mpich", "/usr/include/mpich"):
        if os.path.exists(os.path.join(d, "mpi.h")):
            r = subprocess.run(["cc", "-E", "-P", "-I", d, "-x", "c", "-"],
                               input="#include <mpi.h>\n", capture_output=True, text=True)
            if r.returncode == 0:
                return declared(r.stdout), d
    return None, None


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    lib, incdir = sys.argv[1], sys.argv[2]
    cc = sys.argv[3] if len(sys.argv) > 3 else "cc"
    names, where = mpich_names()
    if not names:
        print("symbols.py: no MPICH header (install libmpich-dev): skipped")
        return 77
    want = set()
    excluded = {}
    for n in names:
        if n.startswith("PMPI"):
            continue
        why = next((r for rx, r in EXCLUDE if re.search(rx, n)), None)
        if why:
            excluded.setdefault(why, []).append(n)
        else:
            want.add(n)
    if len(want) < 300:  # the header was not parsed (MPI 3.1 has about 400 C functions)
        print("symbols.py: only %d names read from MPICH's header: parser broken" % len(want))
        return 1
    want |= set(TERN_EXTRA)

    nm = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True,
                        check=True).stdout
    exported = {l.split()[-1] for l in nm.splitlines() if l.strip()}
    r = subprocess.run([cc, "-E", "-P", "-I", incdir, "-x", "c", "-"],
                       input="#include <mpi.h>\n", capture_output=True, text=True, check=True)
    decl = declared(r.stdout)

    bad = []
    for n in sorted(want):
        for s in (n, "P" + n):
            if s not in exported:
                bad.append("%s: not exported by %s" % (s, os.path.basename(lib)))
            if s not in decl:
                bad.append("%s: not declared in mpi.h" % s)
    for why, ns in sorted(excluded.items()):
        print("excluded %3d (%s)" % (len(ns), why))
    print("checked %d MPI functions (MPI_ and PMPI_) from MPICH's mpi.h (%s)" %
          (len(want), where))
    for b in bad:
        print("MISSING " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
