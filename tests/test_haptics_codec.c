/* The pantograph frame codec (docs/pantograph-protocol.md): round trips, the CRC, framing
 * across arbitrary chunk boundaries, resynchronisation after garbage, checksum failures. */
#include <string.h>

#include "issim/haptics.h"
#include "testutil.h"

static HapticState state_n(int n) {
    return (HapticState){.seq = (uint16_t)n,
                         .timestamp_us = 1000u * (uint32_t)n + 7,
                         .counts = {-1234567 + n, 89 * n},
                         .status = HAPTIC_STATUS_ENABLED | HAPTIC_STATUS_SATURATED,
                         .last_command_seq = (uint16_t)(n - 1)};
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
    /* CRC-16/CCITT-FALSE check value */
    assert_int_equal(haptic_crc16((const uint8_t *)"123456789", 9), 0x29B1);
}

static void test_round_trip(void **state) {
    uint8_t buf[HAPTIC_FRAME_MAX];
    HapticState s = state_n(42);
    assert_int_equal(haptic_encode_state(&s, buf), HAPTIC_STATE_FRAME_SIZE);
    HapticDecoder d;
    haptic_decoder_init(&d);
    HapticFrame f;
    assert_int_equal(haptic_decoder_feed(&d, buf, HAPTIC_STATE_FRAME_SIZE, &f),
                     HAPTIC_STATE_FRAME_SIZE);
    assert_int_equal(f.kind, HAPTIC_DECODED_STATE);
    assert_memory_equal(&f.state, &s, sizeof s);
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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc_reference_value),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_resync_after_garbage),
        cmocka_unit_test(test_checksum_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
