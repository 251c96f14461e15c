#!/usr/bin/env python3
"""The Python reader of trace records (ternbench/tracefile.py _decode) gives exactly the
same events for a point-to-point call written as one record of format 4 (kinds 6 and 7)
as for the same call in format 3's records (an ENTER with its send and LEAVE merged; an
ENTER, then a DONE with the LEAVE merged), and rejects malformed records.

    test_decode.py SRC
"""
import os
import struct
import sys

sys.path.insert(0, os.path.join(sys.argv[1], "tools", "ternbench"))
from ternbench import tracefile as tf  # noqa: E402

NONE = tf.NONE
FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL: " + what)


def head(dt, kind, units, fn, a, b):
    return tf.UNIT.pack(dt, kind, units, fn, a, b)


def main():
    fs, fr, ctx, csize, site, nbytes, req = 1, 2, 4, 3, 0x401234, 8, 77
    args = struct.pack("<iiii", ctx, csize, NONE, NONE)
    tail = head(5, tf.LEAVE, 1, fr, 0, 0)  # a record after, for the delta chain
    send3 = (head(10, tf.ENTER | tf.UF_ARGS | tf.UF_MSG | tf.UF_LEAVE, 5, fs, 2, 9) +
             tf.UNIT_QQ.pack(nbytes, site) + args +
             struct.pack("<QIHBB", nbytes, req, ctx, tf.MSG_SEND, 0) +
             head(40, tf.LEAVE, 0, fs, 0, 0) + tail)
    send4 = (head(10, tf.P2P_SEND, 3, fs, 2, 9) + tf.UNIT_QQ.pack(nbytes, site) +
             tf.UNIT_P2P.pack(0, 40, req, ctx, csize) + tail)
    recv3 = (head(10, tf.ENTER | tf.UF_ARGS, 3, fr, 1, 9) + tf.UNIT_QQ.pack(nbytes, site) +
             args + head(300, tf.MSG_DONE | tf.UF_LEAVE, 3, ctx, 1, 9) +
             tf.UNIT_QIi.pack(nbytes, req, 0) + head(0, tf.LEAVE, 0, fr, 0, 0) + tail)
    recv4 = (head(10, tf.P2P_RECV, 3, fr, 1, 9) + tf.UNIT_QQ.pack(nbytes, site) +
             tf.UNIT_P2P.pack(300, 0, req, ctx, csize) + tail)
    for name, a, b in (("send", send3, send4), ("recv", recv3, recv4)):
        ea = tf._decode(a, 0, len(a) // 16, 1000)
        eb = tf._decode(b, 0, len(b) // 16, 1000)
        check(len(ea) == 4, "%s: format 3 gave %d events" % (name, len(ea)))
        check(ea == eb, "%s: format 3 %s, format 4 %s" % (name, ea, eb))
    # the events themselves: the receive's DONE 300 ticks after its entry, its LEAVE there
    ev = tf._decode(recv4, 0, len(recv4) // 16, 1000)
    check([e[0] for e in ev] == [1010, 1310, 1310, 1315], "times %s" % [e[0] for e in ev])
    check([e[1] for e in ev] == [tf.ENTER, tf.MSG_DONE, tf.LEAVE, tf.LEAVE], "kinds")
    check(ev[0][6:8] == (ctx, csize) and ev[1][12] == req, "fields %s" % ev[:2])
    # malformed: two units, a flag, cut short
    for what, body in (("2 units", head(10, tf.P2P_RECV, 2, fr, 1, 9) +
                        tf.UNIT_QQ.pack(nbytes, site)),
                       ("a flag", head(10, tf.P2P_RECV | tf.UF_LEAVE, 3, fr, 1, 9) +
                        recv4[16:48]),
                       ("cut short", recv4[:32])):
        try:
            tf._decode(body, 0, 3 if what == "cut short" else len(body) // 16, 1000)
            check(False, "%s accepted" % what)
        except tf.TraceError:
            pass
    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        return 1
    print("test_decode: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
