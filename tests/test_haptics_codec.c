/* The pantograph frame codec (docs/pantograph-protocol.md, protocol 2): round trips, the
 * CRC-32C check value, framing across arbitrary chunk boundaries, resynchronisation after
 * garbage, checksum failures, random corruptions of valid frames (none accepted; the same
 * corruptions against protocol 1's CRC-16 for comparison), protocol-1 frames recognised and
 * dropped, the version field, and the sequence check (gaps counted, repeats dropped). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "issim/haptics.h"
#include "testutil.h"

static HapticState state_n(int n) {
    return (HapticState){.seq = (uint16_t)n,
                         .timestamp_us = 1000u * (uint32_t)n + 7,
                         .counts = {-1234567 + n, 89 * n},
                         .status = HAPTIC_STATUS_ENABLED | HAPTIC_STATUS_SATURATED,
                         .last_command_seq = (uint16_t)(n - 1),
                         .protocol = HAPTIC_PROTOCOL_VERSION};
}

/* Decodes every frame in bytes (fed in chunks of chunk bytes); returns the count. */
static int decode_all(HapticDecoder *d, const uint8_t *bytes, size_t n, size_t chunk,
                      HapticFrame *out, int max) {
    int count = 0;
    for (size_t pos = 0; pos < n;) {
        size_t len = n - pos < chunk ? n - pos : chunk;
        size_t off = 0;
        while (off < len) {
            HapticFrame f;
            off += haptic_decoder_feed(d, bytes + pos + off, len - off, &f);
            if (f.kind != HAPTIC_DECODED_NONE && count < max)
                out[count++] = f;
        }
        pos += len;
    }
    return count;
}

static void test_crc_reference_value(void **state) {
    /* CRC-32C (Castagnoli) check value: protocol 2's frame checksum */
    assert_int_equal(haptic_crc32c((const uint8_t *)"123456789", 9), 0xE3069283u);
    assert_int_equal(haptic_crc32c(NULL, 0), 0);
    /* CRC-16/CCITT-FALSE check value: protocol 1's, still used to recognise old devices */
    assert_int_equal(haptic_crc16((const uint8_t *)"123456789", 9), 0x29B1);
}

static void test_round_trip(void **state) {
    uint8_t buf[HAPTIC_FRAME_MAX];
    HapticState s = state_n(42);
    assert_int_equal(HAPTIC_STATE_FRAME_SIZE, 26);
    assert_int_equal(HAPTIC_COMMAND_FRAME_SIZE, 15);
    assert_int_equal(haptic_encode_state(&s, buf), HAPTIC_STATE_FRAME_SIZE);
    /* the version travels in status bits 12-15 */
    assert_int_equal(buf[4 + 15] >> 4, HAPTIC_PROTOCOL_VERSION);
    HapticDecoder d;
    haptic_decoder_init(&d);
    HapticFrame f;
    assert_int_equal(haptic_decoder_feed(&d, buf, HAPTIC_STATE_FRAME_SIZE, &f),
                     HAPTIC_STATE_FRAME_SIZE);
    assert_int_equal(f.kind, HAPTIC_DECODED_STATE);
    /* field by field: the struct's trailing padding is whatever the stack held (a memcmp of it
     * failed now and then) */
    assert_int_equal(f.state.seq, s.seq);
    assert_int_equal(f.state.timestamp_us, s.timestamp_us);
    assert_int_equal(f.state.counts[0], s.counts[0]);
    assert_int_equal(f.state.counts[1], s.counts[1]);
    assert_int_equal(f.state.status, s.status);
    assert_int_equal(f.state.last_command_seq, s.last_command_seq);
    assert_int_equal(f.state.protocol, s.protocol);
    HapticCommand c = {.seq = 65535, .dac = {4095, 1}, .enable = true};
    assert_int_equal(haptic_encode_command(&c, buf), HAPTIC_COMMAND_FRAME_SIZE);
    assert_int_equal(haptic_decoder_feed(&d, buf, HAPTIC_COMMAND_FRAME_SIZE, &f),
                     HAPTIC_COMMAND_FRAME_SIZE);
    assert_int_equal(f.kind, HAPTIC_DECODED_COMMAND);
    assert_int_equal(f.command.seq, 65535);
    assert_int_equal(f.command.dac[0], 4095);
    assert_int_equal(f.command.dac[1], 1);
    assert_true(f.command.enable);
    /* D/A values are 12-bit on the wire */
    c.dac[0] = 0xF123;
    haptic_encode_command(&c, buf);
    haptic_decoder_feed(&d, buf, HAPTIC_COMMAND_FRAME_SIZE, &f);
    assert_int_equal(f.command.dac[0], 0x123);
    assert_int_equal(d.frames, 3);
    assert_int_equal(d.crc_errors + d.bad_length + d.bytes_skipped, 0);
}

/* 50 frames with garbage (including false sync bytes) between them, fed in every chunk size
 * from 1 to 29 bytes: all 50 come out, in order. */
static void test_resync_after_garbage(void **state) {
    uint8_t stream[4096];
    size_t n = 0;
    TestRng rng = {0x1234567};
    for (int i = 0; i < 50; i++) {
        int junk = (int)(test_rng_uniform(&rng) * 12);
        for (int k = 0; k < junk; k++) {
            double u = test_rng_uniform(&rng);
            stream[n++] = u < 0.3   ? HAPTIC_FRAME_SYNC0
                          : u < 0.4 ? HAPTIC_FRAME_SYNC1
                                    : (uint8_t)(u * 256);
        }
        HapticState s = state_n(i);
        n += haptic_encode_state(&s, stream + n);
    }
    for (size_t chunk = 1; chunk < 30; chunk++) {
        HapticDecoder d;
        haptic_decoder_init(&d);
        HapticFrame frames[64];
        int got = decode_all(&d, stream, n, chunk, frames, 64);
        assert_int_equal(got, 50);
        for (int i = 0; i < 50; i++) {
            assert_int_equal(frames[i].kind, HAPTIC_DECODED_STATE);
            assert_int_equal(frames[i].state.seq, i);
            assert_int_equal(frames[i].state.counts[0], -1234567 + i);
        }
        assert_true(d.bytes_skipped > 0);
    }
}

/* A corrupted frame is dropped and counted; the frames around it survive, including one that
 * starts right after the corrupted one's first bytes (a truncated frame). */
static void test_checksum_failures(void **state) {
    uint8_t stream[256];
    size_t n = 0;
    HapticState a = state_n(1), b = state_n(2), c = state_n(3), e = state_n(4);
    n += haptic_encode_state(&a, stream + n);
    size_t corrupt_at = n + 9;
    n += haptic_encode_state(&b, stream + n);
    stream[corrupt_at] ^= 0x40; /* one bit of b's payload */
    n += haptic_encode_state(&c, stream + n);
    /* a truncated frame: 10 bytes of a state frame, then a complete one */
    uint8_t tmp[HAPTIC_FRAME_MAX];
    haptic_encode_state(&b, tmp);
    memcpy(stream + n, tmp, 10);
    n += 10;
    n += haptic_encode_state(&e, stream + n);
    HapticDecoder d;
    haptic_decoder_init(&d);
    HapticFrame frames[8];
    int got = decode_all(&d, stream, n, 7, frames, 8);
    assert_int_equal(got, 3);
    assert_int_equal(frames[0].state.seq, 1);
    assert_int_equal(frames[1].state.seq, 3);
    assert_int_equal(frames[2].state.seq, 4);
    assert_int_equal(d.crc_errors, 2); /* the flipped bit, and the truncated frame swallowing e */
}

/* ---- random corruptions of valid frames ---- */

static uint64_t rng_next(uint64_t *x) { /* splitmix64 */
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Corrupts frame[2..n) (type, length, payload, checksum: what the checksum protects); every
 * corrupted byte really changes. Kinds: one bit, one byte, 2-8 scattered bytes, a burst of
 * 2-8 consecutive bytes. */
static void corrupt(uint8_t *frame, size_t n, int kind, uint64_t *rng) {
    size_t span = n - 2;
    if (kind == 0) {
        frame[2 + rng_next(rng) % span] ^= (uint8_t)(1u << (rng_next(rng) % 8));
        return;
    }
    int bytes = kind == 1 ? 1 : 2 + (int)(rng_next(rng) % 7);
    size_t start = 2 + rng_next(rng) % (span - (size_t)bytes + 1);
    size_t order[HAPTIC_FRAME_MAX]; /* scattered: distinct positions (partial shuffle) */
    for (size_t k = 0; k < span; k++)
        order[k] = 2 + k;
    for (int k = 0; k < bytes; k++) {
        size_t pick = (size_t)k + rng_next(rng) % (span - (size_t)k);
        size_t tmp = order[k];
        order[k] = order[pick];
        order[pick] = tmp;
        size_t at = kind == 3 ? start + (size_t)k : order[k];
        frame[at] ^= (uint8_t)(1 + rng_next(rng) % 255);
    }
}

static bool v1_accepts(const uint8_t *f) { /* protocol 1's receiver */
    return f[0] == HAPTIC_FRAME_SYNC0 && f[1] == HAPTIC_FRAME_SYNC1 &&
           ((f[2] == HAPTIC_FRAME_STATE && f[3] == 18) ||
            (f[2] == HAPTIC_FRAME_COMMAND && f[3] == 7)) &&
           haptic_crc16(f + 2, 2u + f[3]) == (uint16_t)(f[4 + f[3]] | (f[5 + f[3]] << 8));
}

/* Trials: ISSIM_CRC_TRIALS (default 1,000,000, about 1 s under ASan; tools/crc_trials.sh runs 10
 * million). */
static void test_random_corruptions_rejected(void **state) {
    long trials = 1000000;
    const char *env = getenv("ISSIM_CRC_TRIALS");
    if (env && atol(env) > 0)
        trials = atol(env);
    uint64_t rng = 0x5EEDC0DEull;
    uint64_t accepted = 0, accepted_v1 = 0, by_kind[4] = {0}, v1_by_kind[4] = {0};
    double t0 = issim_wall_time();
    for (long i = 0; i < trials; i++) {
        uint8_t f[HAPTIC_FRAME_MAX], g[HAPTIC_FRAME_MAX];
        size_t n, n1;
        uint64_t r = rng_next(&rng);
        if (i % 2 == 0) {
            HapticState s = {.seq = (uint16_t)r,
                             .timestamp_us = (uint32_t)(r >> 16),
                             .counts = {(int32_t)rng_next(&rng), (int32_t)(r >> 32)},
                             .status = (uint16_t)(r & 0x1F),
                             .last_command_seq = (uint16_t)(r >> 48)};
            n = haptic_encode_state(&s, f);
            n1 = haptic_encode_state_v1(&s, g);
        } else {
            HapticCommand c = {.seq = (uint16_t)r,
                               .dac = {(uint16_t)(r >> 16), (uint16_t)(r >> 32)},
                               .enable = (r >> 63) != 0};
            n = haptic_encode_command(&c, f);
            /* a protocol-1 command: the same bytes with the CRC-16 */
            memcpy(g, f, n - 4);
            uint16_t crc = haptic_crc16(g + 2, n - 6);
            g[n - 4] = (uint8_t)crc;
            g[n - 3] = (uint8_t)(crc >> 8);
            n1 = n - 2;
        }
        int kind = (int)(i % 4);
        uint64_t seed = rng;
        corrupt(f, n, kind, &rng);
        uint64_t rng1 = seed; /* the same kind of corruption for the protocol-1 frame */
        corrupt(g, n1, kind, &rng1);
        HapticDecoder d;
        haptic_decoder_init(&d);
        HapticFrame fr;
        size_t off = 0;
        while (off < n) {
            off += haptic_decoder_feed(&d, f + off, n - off, &fr);
            if (fr.kind != HAPTIC_DECODED_NONE) {
                accepted++;
                by_kind[kind]++;
            }
        }
        if (v1_accepts(g)) {
            accepted_v1++;
            v1_by_kind[kind]++;
        }
    }
    double took = issim_wall_time() - t0;
    print_message("%ld corrupted frames (1/4 each: one bit, one byte, 2-8 scattered bytes, "
                  "2-8-byte burst) in %.2f s: CRC-32C accepted %llu; protocol 1's CRC-16 "
                  "accepted %llu (bit %llu, byte %llu, scattered %llu, burst %llu)\n",
                  trials, took, (unsigned long long)accepted, (unsigned long long)accepted_v1,
                  (unsigned long long)v1_by_kind[0], (unsigned long long)v1_by_kind[1],
                  (unsigned long long)v1_by_kind[2], (unsigned long long)v1_by_kind[3]);
    assert_int_equal(accepted, 0);
    assert_int_equal(by_kind[0] + by_kind[1] + by_kind[2] + by_kind[3], 0);
    /* single-bit and single-byte errors are always caught by both */
    assert_int_equal(v1_by_kind[0] + v1_by_kind[1], 0);
}

/* A protocol-1 device's frames are recognised, counted and dropped whole; protocol-2 frames
 * among them still decode. */
static void test_protocol1_frames_recognised(void **state) {
    uint8_t stream[512];
    size_t n = 0;
    for (int i = 0; i < 5; i++) {
        HapticState s = state_n(i);
        n += haptic_encode_state_v1(&s, stream + n);
    }
    HapticState s = state_n(7);
    n += haptic_encode_state(&s, stream + n);
    HapticState old = state_n(8);
    n += haptic_encode_state_v1(&old, stream + n);
    n += haptic_encode_state(&s, stream + n); /* the v1 frame before is complete now */
    HapticDecoder d;
    haptic_decoder_init(&d);
    HapticFrame frames[8];
    int got = decode_all(&d, stream, n, 5, frames, 8);
    assert_int_equal(got, 2);
    assert_int_equal(frames[0].state.seq, 7);
    assert_int_equal(frames[0].state.protocol, HAPTIC_PROTOCOL_VERSION);
    assert_int_equal(d.v1_frames, 6);
    assert_int_equal(d.crc_errors, 0);
    /* a frame claiming another version decodes with that version (the device layer refuses) */
    HapticState future = state_n(9);
    future.protocol = 3;
    uint8_t buf[HAPTIC_FRAME_MAX];
    haptic_encode_state(&future, buf);
    HapticFrame f;
    haptic_decoder_feed(&d, buf, HAPTIC_STATE_FRAME_SIZE, &f);
    assert_int_equal(f.kind, HAPTIC_DECODED_STATE);
    assert_int_equal(f.state.protocol, 3);
    assert_int_equal(f.state.status, future.status); /* version bits cleared from status */
}

static void test_sequence_check(void **state) {
    HapticSeqCheck c = {0};
    assert_true(haptic_seq_check(&c, 40000)); /* the first frame: any number */
    assert_true(haptic_seq_check(&c, 40001));
    assert_true(haptic_seq_check(&c, 40004)); /* 2 lost */
    assert_int_equal(c.gaps, 1);
    assert_int_equal(c.lost, 2);
    assert_false(haptic_seq_check(&c, 40004));         /* repeat */
    assert_false(haptic_seq_check(&c, 40002));         /* late (reordered) */
    assert_false(haptic_seq_check(&c, 40004 - 32767)); /* far backwards */
    assert_int_equal(c.dropped, 3);
    assert_int_equal(c.last, 40004);
    /* wrap-around */
    c = (HapticSeqCheck){0};
    assert_true(haptic_seq_check(&c, 65534));
    assert_true(haptic_seq_check(&c, 65535));
    assert_true(haptic_seq_check(&c, 0));
    assert_true(haptic_seq_check(&c, 2)); /* 1 lost across nothing */
    assert_false(haptic_seq_check(&c, 65535));
    assert_int_equal(c.gaps, 1);
    assert_int_equal(c.lost, 1);
    assert_int_equal(c.dropped, 1);
    assert_int_equal(c.in_order, 4);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc_reference_value),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_resync_after_garbage),
        cmocka_unit_test(test_checksum_failures),
        cmocka_unit_test(test_random_corruptions_rejected),
        cmocka_unit_test(test_protocol1_frames_recognised),
        cmocka_unit_test(test_sequence_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
