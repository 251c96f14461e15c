#!/usr/bin/env python3
"""gen_badargs.py - generate the bad-argument matrix tests from the tables below.

Every public function is described once by the kinds of its arguments. For each
argument kind the table KINDS lists the valid value used when another argument is
under test and the bad values with the named error each must give. The generator
emits one case per (function, argument, bad value): the call with that one argument
bad and every other valid, and the error it must return. It also emits, for every
function, the call with valid arguments before init and after finalize (NOT_INIT /
FINALIZED for the native API).

  python3 tests/badargs/gen_badargs.py            write native_cases.h, mpi_cases.h
  python3 tests/badargs/gen_badargs.py --check    exit 1 if they are out of date

An argument kind suffixed "@root" is checked only at a collective's root, so with more
than one rank the others would enter the collective: such cases run only in 1-rank jobs.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# ---- native API (include/tern.h) -------------------------------------------------
# kind: (valid expression, [(bad expression, error name without TERN_ERR_), ...])
N_KINDS = {
    'comm':   ('W', [('TERN_COMM_NULL', 'COMM'), ('stale_comm', 'COMM'),
                     ('(tern_comm_t)&bogus_comm', 'COMM')]),
    'dest':   ('peer', [('-2', 'RANK'), ('np', 'RANK'), ('INT_MAX', 'RANK'), ('INT_MIN', 'RANK'),
                        ('TERN_ANY_SOURCE', 'RANK')]),
    'src':    ('peer', [('-2', 'RANK'), ('np', 'RANK'), ('INT_MIN', 'RANK')]),
    'stag':   ('7', [('-1', 'TAG'), ('INT_MIN', 'TAG')]),
    'rtag':   ('7', [('-2', 'TAG'), ('INT_MIN', 'TAG')]),
    'sbuf':   ('sb', [('NULL', 'BUFFER'), ('TERN_IN_PLACE', 'BUFFER')]),
    'rbuf':   ('rb', [('NULL', 'BUFFER'), ('TERN_IN_PLACE', 'BUFFER')]),
    # Lengths above PTRDIFF_MAX (a negative number passed on) are refused.
    'len':    ('4', [('(size_t)PTRDIFF_MAX + 1', 'INVAL'), ('SIZE_MAX', 'INVAL')]),
    'req':    ('&rq', [('NULL', 'INVAL')]),
    'status': ('&st', []),
    'flag':   ('&flag', [('NULL', 'INVAL')]),
    'outint': ('&x', [('NULL', 'INVAL')]),
    'outcomm': ('&nc', [('NULL', 'INVAL')]),
    'root':   ('0', [('-1', 'RANK'), ('np', 'RANK'), ('INT_MIN', 'RANK')]),
    'dt':     ('TERN_INT32', [('(tern_datatype_t)-1', 'INVAL'), ('TERN_DATATYPE_COUNT', 'INVAL'),
                              ('(tern_datatype_t)1000', 'INVAL')]),
    'op':     ('TERN_SUM', [('TERN_OP_NULL', 'INVAL'), ('TERN_OP_BUILTIN_COUNT', 'INVAL'),
                            ('(tern_op_t)123456', 'INVAL'), ('freed_op', 'INVAL'),
                            ('TERN_MINLOC', 'INVAL')]),
    'count':  ('4', [('SIZE_MAX / 2', 'INVAL')]),  # count * 4 bytes overflows size_t
    'bytes':  ('4', []),
    'gbytes': ('4', [('SIZE_MAX / 2 + 1', 'INVAL')]),  # bytes * np overflows (np > 1)
    'counts': ('counts', [('NULL', 'INVAL')]),
    'displs': ('displs', [('NULL', 'INVAL')]),
    'color':  ('0', [('-1', 'INVAL'), ('INT_MIN', 'INVAL')]),
    'key':    ('0', []),
    'commp':  ('&dupc', [('NULL', 'INVAL'), ('&w_copy', 'COMM'), ('&self_copy', 'COMM'),
                         ('&stale_copy', 'COMM'), ('&null_comm', 'COMM')]),
    'rank':   ('0', [('-1', 'RANK'), ('np', 'RANK')]),
    'wreq':   ('&nullreq', [('NULL', 'INVAL'), ('&stale_rq', 'REQUEST'), ('&bogus_rq', 'REQUEST')]),
    'nreq':   ('2', []),
    'reqs':   ('nullreqs', [('NULL', 'INVAL'), ('stale_reqs', 'REQUEST')]),
    'statuses': ('sts', []),
    'index':  ('&idx', [('NULL', 'INVAL')]),
    'fn':     ('user_sum', [('NULL', 'INVAL')]),
    'commute': ('1', []),
    'opout':  ('&newop', [('NULL', 'INVAL')]),
    'opp':    ('&op_copy', [('NULL', 'INVAL'), ('&builtin_op', 'INVAL'), ('&freed_op_copy', 'INVAL')]),
    'cname':  ('"badargs-conv"', [('NULL', 'INVAL'), ('""', 'INVAL'), ('long_name', 'INVAL')]),
    'mode':   ('TERN_FCFS', [('0', 'INVAL'), ('3', 'INVAL'), ('-1', 'INVAL'),
                             ('TERN_FCFS | TERN_BROADCAST', 'INVAL')]),
    'convout': ('&cv', [('NULL', 'INVAL')]),
    'sconv':  ('send_conv', [('TERN_CONV_NULL', 'INVAL'), ('closed_conv', 'INVAL'),
                             ('recv_conv', 'INVAL')]),
    'rconv':  ('recv_conv', [('TERN_CONV_NULL', 'INVAL'), ('closed_conv', 'INVAL'),
                             ('send_conv', 'INVAL')]),
    'anyconv': ('send_conv', [('TERN_CONV_NULL', 'INVAL'), ('closed_conv', 'INVAL')]),
    'convp':  ('&conv_copy', [('NULL', 'INVAL'), ('&closed_copy', 'INVAL'), ('&null_conv', 'INVAL')]),
    'on':     ('1', []),
    'lenp':   ('&len', []),
    'ival':   ('0', []),
    'argcp':  ('NULL', []),
    'argvp':  ('NULL', []),
}

# Collective buffers: "sbuf" may be TERN_IN_PLACE where the function allows it, so
# those use 'csbuf' (NULL only) instead.
N_KINDS['csbuf'] = ('sb', [('NULL', 'BUFFER')])
N_KINDS['crbuf'] = ('rb', [('NULL', 'BUFFER'), ('TERN_IN_PLACE', 'BUFFER')])
N_KINDS['nsbuf'] = ('sb', [('NULL', 'BUFFER')])  # rooted: IN_PLACE allowed at the root
N_KINDS['nrbuf'] = ('rb', [('NULL', 'BUFFER')])  # scatter: IN_PLACE allowed at the root

# function: [argument kinds]. 'flags': 'blocking' (never called wrongly accepted with a
# peer that would not answer is fine: the per-case alarm names it).
N_FUNCS = [
    ('tern_rank', []), ('tern_size', []), ('tern_finalize', []),
    ('tern_tolerate_failures', []),
    ('tern_send', ['sbuf', 'len', 'dest', 'stag', 'comm']),
    ('tern_isend', ['sbuf', 'len', 'dest', 'stag', 'comm', 'req']),
    ('tern_issend', ['sbuf', 'len', 'dest', 'stag', 'comm', 'req']),
    ('tern_recv', ['rbuf', 'len', 'src', 'rtag', 'comm', 'status']),
    ('tern_irecv', ['rbuf', 'len', 'src', 'rtag', 'comm', 'req']),
    ('tern_wait', ['wreq', 'status']),
    ('tern_test', ['wreq', 'flag', 'status']),
    ('tern_waitall', ['nreq', 'reqs', 'statuses']),
    ('tern_waitany', ['nreq', 'reqs', 'index', 'status']),
    ('tern_testall', ['nreq', 'reqs', 'flag', 'statuses']),
    ('tern_probe', ['src', 'rtag', 'comm', 'status']),
    ('tern_iprobe', ['src', 'rtag', 'comm', 'flag', 'status']),
    ('tern_sendrecv', ['sbuf', 'len', 'dest', 'stag', 'rbuf', 'len', 'src', 'rtag', 'comm', 'status']),
    ('tern_comm_rank', ['comm', 'outint']),
    ('tern_comm_size', ['comm', 'outint']),
    ('tern_comm_dup', ['comm', 'outcomm']),
    ('tern_comm_split', ['comm', 'color', 'key', 'outcomm']),
    ('tern_comm_free', ['commp']),
    ('tern_comm_world_rank', ['comm', 'rank', 'outint']),
    ('tern_barrier', ['comm']),
    ('tern_op_create', ['fn', 'commute', 'opout']),
    ('tern_op_free', ['opp']),
    ('tern_bcast', ['crbuf', 'bytes', 'root', 'comm']),
    ('tern_reduce', ['nsbuf', 'rbuf@root', 'count', 'dt', 'op', 'root', 'comm']),
    ('tern_allreduce', ['csbuf', 'crbuf', 'count', 'dt', 'op', 'comm']),
    ('tern_gather', ['nsbuf', 'gbytes', 'rbuf@root', 'root', 'comm']),
    ('tern_gatherv', ['nsbuf', 'bytes', 'rbuf@root', 'counts@root', 'displs@root', 'root', 'comm']),
    ('tern_scatter', ['sbuf@root', 'nrbuf', 'gbytes', 'root', 'comm']),
    ('tern_scatterv', ['sbuf@root', 'counts@root', 'displs@root', 'nrbuf@root', 'bytes', 'root', 'comm']),
    ('tern_allgather', ['csbuf', 'crbuf', 'gbytes', 'comm']),
    ('tern_allgatherv', ['csbuf', 'bytes', 'crbuf', 'counts', 'displs', 'comm']),
    ('tern_alltoall', ['csbuf', 'crbuf', 'gbytes', 'comm']),
    ('tern_alltoallv', ['csbuf', 'counts', 'displs', 'crbuf', 'counts', 'displs', 'comm']),
    ('tern_reduce_scatter', ['csbuf', 'crbuf', 'counts', 'dt', 'op', 'comm']),
    ('tern_reduce_scatter_block', ['csbuf', 'crbuf', 'count', 'dt', 'op', 'comm']),
    ('tern_scan', ['csbuf', 'crbuf', 'count', 'dt', 'op', 'comm']),
    ('tern_exscan', ['csbuf', 'crbuf', 'count', 'dt', 'op', 'comm']),
    ('tern_ibarrier', ['comm', 'req']),
    ('tern_ibcast', ['crbuf', 'bytes', 'root', 'comm', 'req']),
    ('tern_ireduce', ['nsbuf', 'rbuf@root', 'count', 'dt', 'op', 'root', 'comm', 'req']),
    ('tern_iallreduce', ['csbuf', 'crbuf', 'count', 'dt', 'op', 'comm', 'req']),
    ('tern_igather', ['nsbuf', 'gbytes', 'rbuf@root', 'root', 'comm', 'req']),
    ('tern_igatherv', ['nsbuf', 'bytes', 'rbuf@root', 'counts@root', 'displs@root', 'root', 'comm', 'req']),
    ('tern_iscatter', ['sbuf@root', 'nrbuf', 'gbytes', 'root', 'comm', 'req']),
    ('tern_iscatterv', ['sbuf@root', 'counts@root', 'displs@root', 'nrbuf@root', 'bytes', 'root', 'comm', 'req']),
    ('tern_iallgather', ['csbuf', 'crbuf', 'gbytes', 'comm', 'req']),
    ('tern_iallgatherv', ['csbuf', 'bytes', 'crbuf', 'counts', 'displs', 'comm', 'req']),
    ('tern_ialltoall', ['csbuf', 'crbuf', 'gbytes', 'comm', 'req']),
    ('tern_ialltoallv', ['csbuf', 'counts', 'displs', 'crbuf', 'counts', 'displs', 'comm', 'req']),
    ('tern_ireduce_scatter', ['csbuf', 'crbuf', 'counts', 'dt', 'op', 'comm', 'req']),
    ('tern_ireduce_scatter_block', ['csbuf', 'crbuf', 'count', 'dt', 'op', 'comm', 'req']),
    ('tern_iscan', ['csbuf', 'crbuf', 'count', 'dt', 'op', 'comm', 'req']),
    ('tern_iexscan', ['csbuf', 'crbuf', 'count', 'dt', 'op', 'comm', 'req']),
    ('tern_conv_open_send', ['cname', 'convout']),
    ('tern_conv_open_recv', ['cname', 'mode', 'convout']),
    ('tern_conv_close', ['convp']),
    ('tern_conv_linger', ['anyconv', 'on']),
    ('tern_conv_send', ['sconv', 'sbuf', 'len']),
    ('tern_conv_trysend', ['sconv', 'sbuf', 'len']),
    ('tern_conv_recv', ['rconv', 'rbuf', 'len', 'lenp']),
    ('tern_conv_irecv', ['rconv', 'rbuf', 'len', 'req']),
    ('tern_conv_check', ['rconv', 'flag']),
]

# Functions whose valid call would do real work (and must not run as a state case
# after init) are only state-checked: the state cases use the valid arguments.
N_NO_STATE = set()


def c_str(s):
    return '"' + s.replace('\\', '\\\\').replace('"', '\\"') + '"'


def gen_native():
    out = []
    out.append('/* native_cases.h - GENERATED by tests/badargs/gen_badargs.py: do not edit. */')
    out.append('// clang-format off')
    out.append('/* BAD(where, expected TERN_ERR_*, root_only, call) one bad argument per case. */')
    out.append('#define NATIVE_BAD_CASES(BAD) \\')
    n = 0
    for fn, kinds in N_FUNCS:
        for i, k in enumerate(kinds):
            base, _, root = k.partition('@')
            for bad, err in N_KINDS[base][1]:
                args = []
                for j, k2 in enumerate(kinds):
                    b2 = k2.partition('@')[0]
                    args.append(bad if j == i else N_KINDS[b2][0])
                # Overflow sizes only mean something with more than one rank.
                only_multi = base == 'gbytes'
                where = '%s arg %d (%s) = %s' % (fn, i + 1, base, bad)
                flag = 2 if only_multi else (1 if root else 0)
                out.append('    BAD(%s, TERN_ERR_%s, %d, %s(%s)) \\' % (
                    c_str(where), err, flag, fn, ', '.join(args)))
                n += 1
    # Operations that are not defined on a datatype.
    for fn in ('tern_allreduce', 'tern_iallreduce'):
        for dt, op in (('TERN_DOUBLE', 'TERN_BAND'), ('TERN_FLOAT', 'TERN_BXOR'),
                       ('TERN_INT32', 'TERN_MAXLOC'), ('TERN_DOUBLE_INT', 'TERN_SUM'),
                       ('TERN_FLOAT', 'TERN_LAND')):
            extra = ', &rq' if fn[5] == 'i' else ''
            out.append('    BAD(%s, TERN_ERR_INVAL, 0, %s(sb, rb, 4, %s, %s, W%s)) \\' % (
                c_str('%s %s on %s' % (fn, op, dt)), fn, dt, op, extra))
            n += 1
    out.append('    /* end */')
    out.append('#define NATIVE_BAD_COUNT %d' % n)
    out.append('')
    out.append('/* STATE(call): every function with valid arguments, before init / after finalize. */')
    out.append('#define NATIVE_STATE_CASES(STATE) \\')
    m = 0
    for fn, kinds in N_FUNCS:
        args = [N_KINDS[k.partition('@')[0]][0] for k in kinds]
        out.append('    STATE(%s(%s)) \\' % (fn, ', '.join(args)))
        m += 1
    out.append('    /* end */')
    out.append('#define NATIVE_STATE_COUNT %d' % m)
    return '\n'.join(out) + '\n'


# ---- MPI subset (include/mpi.h) ----------------------------------------------------
M_KINDS = {
    'comm':  ('MPI_COMM_WORLD', [('MPI_COMM_NULL', 'COMM'), ('stale_comm', 'COMM'), ('12345', 'COMM'),
                                 ('-7', 'COMM')]),
    'count': ('4', [('-1', 'COUNT'), ('INT_MIN', 'COUNT')]),
    'dt':    ('MPI_INT', [('MPI_DATATYPE_NULL', 'TYPE'), ('54321', 'TYPE'), ('-3', 'TYPE'),
                          ('freed_type', 'TYPE'), ('uncommitted_type', 'TYPE')]),
    'dest':  ('peer', [('-3', 'RANK'), ('np', 'RANK'), ('INT_MAX', 'RANK'), ('MPI_ANY_SOURCE', 'RANK')]),
    'src':   ('peer', [('-3', 'RANK'), ('np', 'RANK'), ('INT_MIN', 'RANK')]),
    'stag':  ('7', [('-1', 'TAG'), ('INT_MIN', 'TAG')]),
    'rtag':  ('7', [('-2', 'TAG'), ('INT_MIN', 'TAG')]),
    'sbuf':  ('sb', [('NULL', 'BUFFER')]),
    'rbuf':  ('rb', [('NULL', 'BUFFER')]),
    'req':   ('&rq', [('NULL', 'ARG')]),
    'status': ('&st', []),
    'flag':  ('&flag', [('NULL', 'ARG')]),
    'outint': ('&x', [('NULL', 'ARG')]),
    'outcomm': ('&nc', [('NULL', 'ARG')]),
    'root':  ('0', [('-1', 'ROOT'), ('np', 'ROOT'), ('INT_MIN', 'ROOT')]),
    'op':    ('MPI_SUM', [('MPI_OP_NULL', 'OP'), ('77777', 'OP'), ('freed_op', 'OP')]),
    'color': ('0', [('-5', 'ARG')]),
    'key':   ('0', []),
    'commp': ('&dupc', [('NULL', 'ARG'), ('&w_copy', 'COMM'), ('&null_comm', 'COMM'),
                        ('&stale_copy', 'COMM')]),
    'wreq':  ('&nullreq', [('NULL', 'ARG'), ('&bogus_rq', 'REQUEST'), ('&stale_rq', 'REQUEST')]),
    'nreq':  ('2', [('-1', 'ARG')]),
    'reqs':  ('nullreqs', [('NULL', 'ARG'), ('bogus_reqs', 'REQUEST')]),
    'statuses': ('sts', []),
    'index': ('&idx', [('NULL', 'ARG')]),
    'counts': ('icounts', [('NULL', 'ARG'), ('negcounts', 'COUNT')]),
    'displs': ('idispls', [('NULL', 'ARG')]),
}
M_KINDS['csbuf'] = ('sb', [('NULL', 'BUFFER')])
M_KINDS['crbuf'] = ('rb', [('NULL', 'BUFFER')])

M_FUNCS = [
    ('MPI_Send', ['sbuf', 'count', 'dt', 'dest', 'stag', 'comm']),
    ('MPI_Ssend', ['sbuf', 'count', 'dt', 'dest', 'stag', 'comm']),
    ('MPI_Rsend', ['sbuf', 'count', 'dt', 'dest', 'stag', 'comm']),
    ('MPI_Bsend', ['sbuf', 'count', 'dt', 'dest', 'stag', 'comm']),
    ('MPI_Recv', ['rbuf', 'count', 'dt', 'src', 'rtag', 'comm', 'status']),
    ('MPI_Isend', ['sbuf', 'count', 'dt', 'dest', 'stag', 'comm', 'req']),
    ('MPI_Issend', ['sbuf', 'count', 'dt', 'dest', 'stag', 'comm', 'req']),
    ('MPI_Irsend', ['sbuf', 'count', 'dt', 'dest', 'stag', 'comm', 'req']),
    ('MPI_Ibsend', ['sbuf', 'count', 'dt', 'dest', 'stag', 'comm', 'req']),
    ('MPI_Irecv', ['rbuf', 'count', 'dt', 'src', 'rtag', 'comm', 'req']),
    ('MPI_Send_init', ['sbuf', 'count', 'dt', 'dest', 'stag', 'comm', 'req']),
    ('MPI_Ssend_init', ['sbuf', 'count', 'dt', 'dest', 'stag', 'comm', 'req']),
    ('MPI_Rsend_init', ['sbuf', 'count', 'dt', 'dest', 'stag', 'comm', 'req']),
    ('MPI_Bsend_init', ['sbuf', 'count', 'dt', 'dest', 'stag', 'comm', 'req']),
    ('MPI_Recv_init', ['rbuf', 'count', 'dt', 'src', 'rtag', 'comm', 'req']),
    ('MPI_Sendrecv', ['sbuf', 'count', 'dt', 'dest', 'stag', 'rbuf', 'count', 'dt', 'src', 'rtag',
                      'comm', 'status']),
    ('MPI_Sendrecv_replace', ['rbuf', 'count', 'dt', 'dest', 'stag', 'src', 'rtag', 'comm', 'status']),
    ('MPI_Probe', ['src', 'rtag', 'comm', 'status']),
    ('MPI_Iprobe', ['src', 'rtag', 'comm', 'flag', 'status']),
    ('MPI_Wait', ['wreq', 'status']),
    ('MPI_Test', ['wreq', 'flag', 'status']),
    ('MPI_Waitall', ['nreq', 'reqs', 'statuses']),
    ('MPI_Waitany', ['nreq', 'reqs', 'index', 'status']),
    ('MPI_Testall', ['nreq', 'reqs', 'flag', 'statuses']),
    ('MPI_Testany', ['nreq', 'reqs', 'index', 'flag', 'status']),
    ('MPI_Request_free', ['wreq']),
    ('MPI_Start', ['wreq']),
    ('MPI_Comm_rank', ['comm', 'outint']),
    ('MPI_Comm_size', ['comm', 'outint']),
    ('MPI_Comm_dup', ['comm', 'outcomm']),
    ('MPI_Comm_split', ['comm', 'color', 'key', 'outcomm']),
    ('MPI_Comm_free', ['commp']),
    ('MPI_Barrier', ['comm']),
    ('MPI_Bcast', ['crbuf', 'count', 'dt', 'root', 'comm']),
    ('MPI_Reduce', ['csbuf', 'rbuf@root', 'count', 'dt', 'op', 'root', 'comm']),
    ('MPI_Allreduce', ['csbuf', 'crbuf', 'count', 'dt', 'op', 'comm']),
    ('MPI_Gather', ['csbuf', 'count', 'dt', 'rbuf@root', 'count@root', 'dt@root', 'root', 'comm']),
    ('MPI_Scatter', ['sbuf@root', 'count@root', 'dt@root', 'crbuf', 'count', 'dt', 'root', 'comm']),
    ('MPI_Allgather', ['csbuf', 'count', 'dt', 'crbuf', 'count', 'dt', 'comm']),
    ('MPI_Alltoall', ['csbuf', 'count', 'dt', 'crbuf', 'count', 'dt', 'comm']),
    ('MPI_Allgatherv', ['csbuf', 'count', 'dt', 'crbuf', 'counts', 'displs', 'dt', 'comm']),
    ('MPI_Scan', ['csbuf', 'crbuf', 'count', 'dt', 'op', 'comm']),
    ('MPI_Exscan', ['csbuf', 'crbuf', 'count', 'dt', 'op', 'comm']),
    ('MPI_Ibarrier', ['comm', 'req']),
    ('MPI_Ibcast', ['crbuf', 'count', 'dt', 'root', 'comm', 'req']),
    ('MPI_Iallreduce', ['csbuf', 'crbuf', 'count', 'dt', 'op', 'comm', 'req']),
]


def gen_mpi():
    out = []
    out.append('/* mpi_cases.h - GENERATED by tests/badargs/gen_badargs.py: do not edit. */')
    out.append('// clang-format off')
    out.append('/* BAD(where, expected MPI_ERR_* class, root_only, call) one bad argument per case. */')
    out.append('#define MPI_BAD_CASES(BAD) \\')
    n = 0
    for fn, kinds in M_FUNCS:
        for i, k in enumerate(kinds):
            base, _, root = k.partition('@')
            for bad, err in M_KINDS[base][1]:
                args = []
                for j, k2 in enumerate(kinds):
                    b2 = k2.partition('@')[0]
                    args.append(bad if j == i else M_KINDS[b2][0])
                where = '%s arg %d (%s) = %s' % (fn, i + 1, base, bad)
                out.append('    BAD(%s, MPI_ERR_%s, %d, %s(%s)) \\' % (
                    c_str(where), err, 1 if root else 0, fn, ', '.join(args)))
                n += 1
    out.append('    /* end */')
    out.append('#define MPI_BAD_COUNT %d' % n)
    return '\n'.join(out) + '\n'


def main():
    files = {'native_cases.h': gen_native(), 'mpi_cases.h': gen_mpi()}
    check = '--check' in sys.argv
    stale = []
    for name, text in files.items():
        path = os.path.join(HERE, name)
        old = open(path).read() if os.path.exists(path) else None
        if old != text:
            if check:
                stale.append(name)
            else:
                with open(path, 'w') as f:
                    f.write(text)
    if stale:
        print('gen_badargs.py: out of date (run it): ' + ' '.join(stale))
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
