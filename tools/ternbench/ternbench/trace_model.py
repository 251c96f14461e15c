"""trace_model - the in-memory form of a tern trace.

One contract shared by the reader of trace files (tracefile.py), the report
(`ternbench trace`) and the advisor (`ternbench advise`). Times are seconds on the
job's common clock: rank 0's clock, with 0.0 at the moment tracing started on rank 0;
every other rank's timestamps are mapped onto it with the offsets (and drift) measured
at init and finalize.
"""

from dataclasses import dataclass, field
from typing import Dict, List, Optional


@dataclass
class Call:
    """One call of a public API function on one rank, from enter to leave."""

    rank: int  # job rank (MPI_COMM_WORLD numbering) that made the call
    api: str  # "native" | "mpi" | "shmem" | "conv"
    name: str  # the function as the user wrote it: "MPI_Allreduce", "tern_send", ...
    t0: float  # enter (common clock, seconds)
    t1: float  # leave (common clock, seconds)
    peer: Optional[int] = None  # partner, as a job rank; None when the call has none
    tag: Optional[int] = None
    comm: Optional[int] = None  # communicator id, stable within one trace
    comm_size: Optional[int] = None
    root: Optional[int] = None  # root, as a job rank, for rooted collectives
    bytes: int = 0  # payload bytes this rank sends plus receives in this call
    op: Optional[str] = None  # reduction operation, e.g. "MPI_SUM"
    site: Optional[str] = None  # call site: "file:line", or "binary+0xoffset"


@dataclass
class Message:
    """One point-to-point message (including those collectives send underneath)."""

    src: int  # job rank
    dst: int  # job rank
    t_send: float  # sender handed it to tern (common clock)
    t_recv: Optional[float]  # receiver completed it; None if it never did (a peer died)
    bytes: int
    tag: int
    comm: Optional[int] = None


@dataclass
class Trace:
    """A whole job's trace."""

    nranks: int
    calls: List[Call] = field(default_factory=list)
    messages: List[Message] = field(default_factory=list)
    t_start: float = 0.0
    t_end: float = 0.0
    # program, hosts, tern version, per-rank clock offset/drift, ranks whose files end
    # early (the rank died), anything else the reader knows
    meta: Dict[str, object] = field(default_factory=dict)
