#!/bin/sh
# ports_jobs.sh - two separate ternrun jobs: the first opens an MPI port and passes its
# name through a file, the second (2 ranks) connects to it and must get MPI_ERR_PORT
# promptly (ports across jobs are unsupported, docs/MPI.md); both jobs must then end
# cleanly. usage: ports_jobs.sh BUILD_DIR
set -u
B=$1
T=$(mktemp -d /tmp/tern-ports-jobs.XXXXXX)
trap 'rm -rf "$T"' EXIT
"$B/bin/ternrun" -n 1 --timeout 90 "$B/bin/mpi_ports_jobs" open "$T/port" >"$T/open.out" 2>&1 &
opener=$!
"$B/bin/ternrun" -n 2 --timeout 90 "$B/bin/mpi_ports_jobs" connect "$T/port" >"$T/conn.out" 2>&1
crc=$?
wait $opener
orc=$?
cat "$T/open.out" "$T/conn.out"
[ $crc -eq 0 ] || { echo "FAIL: the connecting job exited $crc"; exit 1; }
[ $orc -eq 0 ] || { echo "FAIL: the opening job exited $orc"; exit 1; }
grep -q "MPI_ERR_PORT after" "$T/conn.out" || { echo "FAIL: no MPI_ERR_PORT line"; exit 1; }
grep -q "ports_jobs open: ok" "$T/open.out" || { echo "FAIL: the opening job did not finish"; exit 1; }
echo "ports_jobs: ok"
