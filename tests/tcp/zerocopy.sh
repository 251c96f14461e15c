#!/bin/sh
# zerocopy.sh TERNRUN PINGPONG - the copy-free paths of the tcp transport are taken.
#
# mp_pingpong (every size to 64 MiB, checked byte for byte) runs over tcp with
# TERN_DEBUG=1, once with the default socket buffers and once with 64 KiB send buffers
# (so large frames meet full sockets). Each rank's closing tcp line must show that
# payloads were read in place (placed frames carrying at least the bytes of every
# rendezvous and large eager message the other rank sent), that almost nothing came
# through the transport's own buffer, and, with small send buffers, that partial
# writes left their payload in the user's buffer (frames by reference) with no payload
# bytes copied. Its buffers come from malloc (16 bytes past a page for large ones), so
# large payloads sit 8 bytes short of where tern's headers would put them in the kernel's
# pages: PAD frames must have gone out (TERN_TCP_PAD), and the byte-for-byte check shows
# the receiver skipped them.
ternrun=$1 prog=$2
err=$(mktemp)
trap 'rm -f "$err"' EXIT
asan=$(nm -D "$prog" 2>/dev/null | grep -m1 __asan_init)
fail() {
    echo "zerocopy.sh: $*" >&2
    grep 'tcp: received in place' "$err" >&2
    exit 1
}
for bufs in default small; do
    extra=""
    [ $bufs = small ] && extra="-x TERN_TCP_SNDBUF=64k"
    TERN_TRANSPORTS=self,tcp TERN_DEBUG=1 "$ternrun" -n 2 --timeout 120 $extra "$prog" \
        >/dev/null 2>"$err" || fail "pingpong failed ($bufs buffers)"
    for r in 0 1; do
        line=$(grep "^tern\[$r\]: tcp: received in place" "$err")
        [ -n "$line" ] || fail "rank $r printed no tcp summary ($bufs buffers)"
        num() { echo "$line" | sed -n "s/.*$1.*/\\1/p"; }
        placed_b=$(num 'in place [0-9]* frames (\([0-9]*\) B')
        pre_b=$(num ', \([0-9][0-9]*\) B of them copied')
        buf_b=$(num 'KiB+ (\([0-9]*\) B)')
        parts=$(num 'partial writes \([0-9]*\)')
        tail_b=$(num '(\([0-9]*\) B copied')
        refs=$(num ', \([0-9][0-9]*\) frames by reference')
        pads=$(num 'PAD frames \([0-9]*\)')
        [ -n "$placed_b" ] && [ -n "$refs" ] && [ -n "$pads" ] || fail "cannot parse: $line"
        echo "rank $r ($bufs): in place $placed_b B ($pre_b B from the read-ahead), buffered" \
            "$buf_b B, partial writes $parts ($tail_b B copied, $refs by reference), PAD frames $pads"
        # The pingpong sends each rank over 400 MB in messages of 32 KiB and more.
        [ "$placed_b" -gt 400000000 ] || fail "rank $r read only $placed_b B in place"
        # (ASan's allocator places buffers elsewhere: no payload lands at such a distance)
        [ "$pads" -gt 0 ] || [ -n "$asan" ] || fail "rank $r sent no PAD frame"
        [ $((buf_b + pre_b)) -lt $((placed_b / 50)) ] ||
            fail "rank $r copied $((buf_b + pre_b)) B of large frames (over 2 %)"
        if [ $bufs = small ]; then
            [ "$refs" -gt 0 ] || fail "rank $r: no frame was sent by reference"
            # Only headers are copied: at most a PAD (8-31 B), 8 B transport and 24 B core
            # per partial write.
            [ "$tail_b" -le $((parts * 63)) ] || fail "rank $r copied $tail_b B of send tails"
        fi
    done
done
exit 0
