/*
 * test_hmac.c - SHA-256 and HMAC-SHA-256 (src/util/hmac.c) against published vectors:
 * FIPS 180-4's examples ("abc", the 448-bit message, a million 'a's) and RFC 4231's
 * HMAC-SHA-256 test cases 1-4, 6 and 7 (case 5 is a truncated MAC), with the message
 * given whole and in pieces.
 */
#include <string.h>

#include "transport/tcp/tcp_frame.h"
#include "unit.h"
#include "util/hmac.h"

static void unhex(const char *hex, uint8_t *out, size_t *n)
{
    *n = 0;
    for (; hex[0] && hex[1]; hex += 2) {
        unsigned v;
        sscanf(hex, "%2x", &v);
        out[(*n)++] = (uint8_t)v;
    }
}

static int same_hex(const uint8_t *d, const char *hex)
{
    char buf[2 * UTIL_SHA256_BYTES + 1];
    for (int i = 0; i < UTIL_SHA256_BYTES; i++)
        snprintf(buf + 2 * i, 3, "%02x", d[i]);
    if (strcmp(buf, hex) == 0) return 1;
    fprintf(stderr, "got  %s\nwant %s\n", buf, hex);
    return 0;
}

static void sha(const void *m, size_t n, const char *want)
{
    struct util_sha256 s;
    uint8_t d[UTIL_SHA256_BYTES];
    util_sha256_init(&s);
    util_sha256_update(&s, m, n);
    util_sha256_final(&s, d);
    CHECK(same_hex(d, want));
}

int main(void)
{
    sha("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    sha("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sha(m448, strlen(m448), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    {
        struct util_sha256 s;
        uint8_t d[UTIL_SHA256_BYTES], a[1000];
        memset(a, 'a', sizeof a);
        util_sha256_init(&s);
        for (int i = 0; i < 1000; i++)
            util_sha256_update(&s, a, sizeof a);
        util_sha256_final(&s, d);
        CHECK(same_hex(d, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
    }

    /* RFC 4231: key, data (hex), HMAC-SHA-256. */
    static const char *const v[][3] = {
        {"0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "4869205468657265",
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
        {"4a656665", "7768617420646f2079612077616e7420666f72206e6f7468696e673f",
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
        {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
         "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
         "dddddddddddddddddd",
         "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
        {"0102030405060708090a0b0c0d0e0f10111213141516171819",
         "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd"
         "cdcdcdcdcdcdcdcdcd",
         "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
        {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
         "aaaaaaaaaaaaaaaa", /* 131 bytes */
         "54657374205573696e67204c6172676572205468616e20426c6f636b2d53697a65204b6579202d2048"
         "617368204b6579204669727374",
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
        {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
         "aaaaaaaaaaaaaaaa", /* 131 bytes */
         "5468697320697320612074657374207573696e672061206c6172676572207468616e20626c6f636b2d"
         "73697a65206b657920616e642061206c6172676572207468616e20626c6f636b2d73697a6520646174"
         "612e20546865206b6579206e6565647320746f20626520686173686564206265666f7265206265696e"
         "6720757365642062792074686520484d414320616c676f726974686d2e",
         "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        uint8_t key[256], data[256], mac[UTIL_SHA256_BYTES];
        size_t kn, dn;
        unhex(v[i][0], key, &kn);
        unhex(v[i][1], data, &dn);
        const void *m1[1] = {data};
        size_t l1[1] = {dn};
        util_hmac_sha256(key, kn, m1, l1, 1, mac);
        CHECK(same_hex(mac, v[i][2]));
        /* The same message in three pieces. */
        const void *m3[3] = {data, data + 1, data + 3};
        size_t l3[3] = {1, 2, dn - 3};
        util_hmac_sha256(key, kn, m3, l3, 3, mac);
        CHECK(same_hex(mac, v[i][2]));
    }
    /* The tcp handshake's proofs (tcp_frame.c): each input changes the MAC, so a proof
     * cannot be made without the secret, replayed with other nonces or ranks, or
     * reflected from one role to the other. */
    {
        uint8_t key[TCP_SECRET_BYTES] = {7}, key2[TCP_SECRET_BYTES] = {8};
        uint8_t nc[TCP_NONCE_BYTES] = {1}, na[TCP_NONCE_BYTES] = {2};
        uint8_t m[7][TCP_MAC_BYTES];
        tcp_auth_mac(key, TCP_ROLE_CONNECTOR, nc, na, 3, 1, m[0]);
        tcp_auth_mac(key2, TCP_ROLE_CONNECTOR, nc, na, 3, 1, m[1]);
        tcp_auth_mac(key, TCP_ROLE_ACCEPTOR, nc, na, 3, 1, m[2]);
        tcp_auth_mac(key, TCP_ROLE_CONNECTOR, na, nc, 3, 1, m[3]);
        tcp_auth_mac(key, TCP_ROLE_CONNECTOR, nc, na, 2, 1, m[4]);
        tcp_auth_mac(key, TCP_ROLE_CONNECTOR, nc, na, 3, 0, m[5]);
        tcp_auth_mac(key, TCP_ROLE_CONNECTOR, nc, na, 3, 1, m[6]);
        for (int i = 1; i < 6; i++)
            CHECK(util_memeq_ct(m[0], m[i], TCP_MAC_BYTES) != 0);
        CHECK(util_memeq_ct(m[0], m[6], TCP_MAC_BYTES) == 0);
        struct tcp_auth_frame f;
        tcp_auth_make(&f, m[0]);
        CHECK_EQ(tcp_auth_check(&f.auth, sizeof f.auth, m[0]), 0);
        CHECK_EQ(tcp_auth_check(&f.auth, sizeof f.auth, m[2]), TCP_FE_SECRET);
        CHECK_EQ(tcp_auth_check(&f.auth, sizeof f.auth - 1, m[0]), TCP_FE_LENGTH);
        /* The HELLO carries a nonce, never the secret. */
        struct tcp_hello_frame h;
        uint8_t got[TCP_NONCE_BYTES];
        int rank = -1;
        tcp_hello_make(&h, nc, 3, 4);
        CHECK_EQ(tcp_hello_check(&h.hello, sizeof h.hello, 4, &rank, got), 0);
        CHECK_EQ(rank, 3);
        CHECK(memcmp(got, nc, sizeof got) == 0);
        CHECK_EQ(tcp_hello_check(&h.hello, sizeof h.hello, 5, &rank, got), TCP_FE_RANK);
    }
    uint8_t a[4] = {1, 2, 3, 4}, b[4] = {1, 2, 3, 5};
    CHECK(util_memeq_ct(a, a, 4) == 0);
    CHECK(util_memeq_ct(a, b, 4) != 0);
    return unit_done("test_hmac");
}
