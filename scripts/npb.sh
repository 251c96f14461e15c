#!/usr/bin/env bash
# npb.sh BUILD_DIR NPB_MPI_DIR - the NAS Parallel Benchmarks (NPB 3.4, MPI version) on tern,
# unmodified, as a user runs them: the C ones (IS, DT) built with BUILD_DIR/bin/terncc, the
# Fortran ones (BT, CG, EP, FT, LU, MG, SP) built with Debian's MPICH Fortran wrapper
# (mpif90.mpich) and run on tern through the MPICH binary interface (ternrun --mpi-abi
# mpich: MPICH's own libmpichfort.so.12 calls tern's libmpich.so.12; tern has no Fortran
# bindings of its own). Each benchmark runs at every process count of NPS it accepts and is
# judged by its own verification ("Verification = SUCCESSFUL"). With COMPARE=1 the same
# binaries also run under mpiexec.mpich (MPICH itself) and the times are printed side by
# side (one run each: a loaded machine gives loaded numbers).
#
# NPB_MPI_DIR is the NPB3.4-MPI directory of the NPB source (from NASA's NPB page, or a
# copy of it); nothing of it is part of tern. Packages: gfortran, mpich, libmpich-dev.
#
# Environment: CLASS (default S), NPS (default "1 2 4"), BENCHES (default
# "is ep cg mg ft lu bt sp dt"), TERN_TIMEOUT (seconds per run, default 600), COMPARE.
# Exit status: 0 when every run verified, 1 otherwise, 77 when a tool is missing.
set -uo pipefail
BUILD=$(cd "${1:?usage: npb.sh BUILD_DIR NPB_MPI_DIR}" && pwd)
SRC=$(cd "${2:?usage: npb.sh BUILD_DIR NPB_MPI_DIR}" && pwd)
CLASS=${CLASS:-S}
NPS=${NPS:-"1 2 4"}
BENCHES=${BENCHES:-"is ep cg mg ft lu bt sp dt"}
TMO=${TERN_TIMEOUT:-600}
for t in mpif90.mpich gfortran "$BUILD/bin/terncc" "$BUILD/bin/ternrun"; do
    command -v "$t" >/dev/null || {
        echo "npb.sh: $t not found (apt-get install -y gfortran mpich libmpich-dev; build tern)" >&2
        exit 77
    }
done
[ -f "$SRC/config/make.def.template" ] || {
    echo "npb.sh: $SRC is not an NPB3.4-MPI directory" >&2
    exit 77
}
[ "$(id -u)" = 0 ] && export HYDRA_LAUNCHER=fork

# Build in a copy, so the source directory stays as it was.
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tern-npb.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cp -r "$SRC/." "$WORK/"
mkdir -p "$WORK/bin"
sed -e "s|^MPIFC *=.*|MPIFC = mpif90.mpich|" -e "s|^MPICC *=.*|MPICC = $BUILD/bin/terncc|" \
    -e "s|^FFLAGS *=.*|FFLAGS = -O2 -fallow-argument-mismatch|" -e "s|^CFLAGS *=.*|CFLAGS = -O2|" \
    "$WORK/config/make.def.template" >"$WORK/config/make.def"

# The process counts a benchmark accepts: BT and SP squares, the others powers of two.
accepts() {
    case $1 in
    bt | sp) case $2 in 1 | 4 | 9 | 16 | 25 | 36 | 49 | 64) return 0 ;; esac; return 1 ;;
    dt) [ "$2" -ge 5 ] ;; # DT's smallest graph (BH, class S) takes 5 processes
    *) [ $(($2 & ($2 - 1))) -eq 0 ] ;;
    esac
}

fail=0
printf '%-5s %-5s %-4s %-10s %10s %10s\n' bench class np result tern_s mpich_s
for b in $BENCHES; do
    B=$(echo "$b" | tr a-z A-Z)
    if ! make -C "$WORK" "$B" CLASS="$CLASS" >"$WORK/$b.build.log" 2>&1; then
        printf '%-5s %-5s %-4s %-10s\n' "$b" "$CLASS" - BUILD-FAIL
        tail -5 "$WORK/$b.build.log" | sed 's/^/    /'
        fail=1
        continue
    fi
    exe=$WORK/bin/$b.$CLASS.x
    nps=$NPS
    [ "$b" = dt ] && nps=5
    for np in $nps; do
        accepts "$b" "$np" || continue
        args=()
        [ "$b" = dt ] && args=(BH)
        out=$(timeout $((TMO + 30)) "$BUILD/bin/ternrun" --mpi-abi mpich -n "$np" --timeout "$TMO" \
            "$exe" "${args[@]}" 2>&1)
        rc=$?
        t=$(echo "$out" | sed -n 's/^ *Time in seconds *= *\([0-9.]*\).*/\1/p' | head -1)
        if [ $rc -eq 0 ] && echo "$out" | grep -Eq 'Verification *= *SUCCESSFUL'; then
            res=verified
        else
            res="FAIL(rc=$rc)"
            fail=1
            echo "$out" | tail -8 | sed 's/^/    /'
        fi
        m=-
        if [ "${COMPARE:-0}" = 1 ] && command -v mpiexec.mpich >/dev/null; then
            m=$(timeout "$TMO" mpiexec.mpich -n "$np" "$exe" "${args[@]}" 2>&1 |
                sed -n 's/^ *Time in seconds *= *\([0-9.]*\).*/\1/p' | head -1)
        fi
        printf '%-5s %-5s %-4s %-10s %10s %10s\n' "$b" "$CLASS" "$np" "$res" "${t:--}" "${m:--}"
    done
done
exit $fail
