/* libFuzzer harness: the pantograph protocol stream decoder (haptic_decoder_feed). The input is
 * a byte stream preceded by a chunking plan: byte 0 seeds the chunk sizes (1..64 bytes), the rest
 * is the stream. It is decoded twice, in those chunks and in one piece; both must give the same
 * frames and counters (framing must not depend on where reads split the stream), every call must
 * make progress, and every decoded frame must re-encode to bytes that decode to it again.
 * Seeds: tools/fuzz/corpus/codec, frames made with the codec's own encoders by this harness's
 * seed-writing mode: FUZZ_CODEC_WRITE_SEEDS=DIR build-fuzz/fuzz_codec writes them and exits. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/haptics_device.h"

#define MAX_FRAMES 4096

static size_t frame_size(const HapticFrame *f) {
    return f->kind == HAPTIC_DECODED_STATE ? HAPTIC_STATE_FRAME_SIZE : HAPTIC_COMMAND_FRAME_SIZE;
}

typedef struct Decoded {
    HapticFrame frames[MAX_FRAMES];
    int count;
    HapticDecoder d;
} Decoded;

static void fail(const char *what) {
    fprintf(stderr, "fuzz_codec: %s\n", what);
    abort();
}

static void take(Decoded *out, const HapticFrame *f) {
    if (f->kind == HAPTIC_DECODED_NONE)
        return;
    if (out->count < MAX_FRAMES)
        out->frames[out->count] = *f;
    out->count++;
}

/* Feeds bytes in chunks whose sizes follow a small generator seeded by seed (0: one chunk). */
static void decode(Decoded *out, const uint8_t *bytes, size_t n, unsigned seed) {
    haptic_decoder_init(&out->d);
    out->count = 0;
    uint32_t x = seed * 2654435761u + 1;
    for (size_t pos = 0; pos < n;) {
        size_t len = n - pos;
        if (seed) {
            x = x * 1103515245u + 12345u;
            size_t want = 1 + (x >> 16) % 64;
            if (want < len)
                len = want;
        }
        size_t off = 0;
        while (off < len) {
            HapticFrame f;
            size_t used = haptic_decoder_feed(&out->d, bytes + pos + off, len - off, &f);
            if (used > len - off)
                fail("feed consumed more bytes than it was given");
            if (used == 0 && f.kind == HAPTIC_DECODED_NONE)
                fail("feed made no progress");
            if (out->d.len < 0 || out->d.len > HAPTIC_FRAME_MAX)
                fail("decoder buffer length out of range");
            take(out, &f);
            off += used;
        }
        pos += len;
    }
    for (;;) { /* a frame may still be held */
        HapticFrame f;
        haptic_decoder_feed(&out->d, NULL, 0, &f);
        if (f.kind == HAPTIC_DECODED_NONE)
            break;
        take(out, &f);
    }
}

static bool same_frame(const HapticFrame *a, const HapticFrame *b) {
    if (a->kind != b->kind)
        return false;
    if (a->kind == HAPTIC_DECODED_STATE)
        return a->state.seq == b->state.seq && a->state.timestamp_us == b->state.timestamp_us &&
               a->state.counts[0] == b->state.counts[0] &&
               a->state.counts[1] == b->state.counts[1] && a->state.status == b->state.status &&
               a->state.last_command_seq == b->state.last_command_seq;
    return a->command.seq == b->command.seq && a->command.dac[0] == b->command.dac[0] &&
           a->command.dac[1] == b->command.dac[1] && a->command.enable == b->command.enable;
}

static void check_reencode(const HapticFrame *f) {
    uint8_t buf[HAPTIC_FRAME_MAX];
    size_t n = f->kind == HAPTIC_DECODED_STATE ? haptic_encode_state(&f->state, buf)
                                               : haptic_encode_command(&f->command, buf);
    if (n > HAPTIC_FRAME_MAX)
        fail("encoder wrote more than HAPTIC_FRAME_MAX bytes");
    HapticDecoder d;
    haptic_decoder_init(&d);
    HapticFrame g;
    size_t used = haptic_decoder_feed(&d, buf, n, &g);
    if (used != n || !same_frame(f, &g))
        fail("a decoded frame does not survive encode + decode");
}

/* Seed-writing mode: a few valid streams built with the encoders (one frame of each kind, both
 * kinds back to back, a frame split by garbage, a corrupted checksum, a false sync, an old
 * protocol-1 frame). */
static void write_seed(const char *dir, const char *name, const uint8_t *bytes, size_t n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(bytes, 1, n, f) != n || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

static void write_seeds(const char *dir) {
    HapticState s = {.seq = 7,
                     .timestamp_us = 123456,
                     .counts = {-1234567, 890},
                     .status = HAPTIC_STATUS_ENABLED | HAPTIC_STATUS_SATURATED,
                     .last_command_seq = 6};
    HapticCommand c = {.seq = 6, .dac = {2048, 4095}, .enable = true};
    uint8_t st[HAPTIC_FRAME_MAX], cm[HAPTIC_FRAME_MAX], buf[256];
    size_t ns = haptic_encode_state(&s, st), nc = haptic_encode_command(&c, cm), n;

    buf[0] = 0; /* chunk seed 0: one chunk */
    memcpy(buf + 1, st, ns);
    write_seed(dir, "state", buf, 1 + ns);
    buf[0] = 3;
    memcpy(buf + 1, cm, nc);
    write_seed(dir, "command", buf, 1 + nc);
    buf[0] = 17;
    n = 1;
    for (int i = 0; i < 4; i++) {
        memcpy(buf + n, st, ns);
        n += ns;
        memcpy(buf + n, cm, nc);
        n += nc;
    }
    write_seed(dir, "mixed", buf, n);
    buf[0] = 5; /* garbage, a false sync, a frame, a frame with a bad checksum, a frame */
    n = 1;
    const uint8_t garbage[] = {
        0x00, 0xFF, HAPTIC_FRAME_SYNC0, 0x11, HAPTIC_FRAME_SYNC0, HAPTIC_FRAME_SYNC1, 0x7F};
    memcpy(buf + n, garbage, sizeof garbage);
    n += sizeof garbage;
    memcpy(buf + n, st, ns);
    n += ns;
    memcpy(buf + n, cm, nc);
    buf[n + nc - 1] ^= 0x55;
    n += nc;
    memcpy(buf + n, st, ns);
    n += ns;
    write_seed(dir, "resync", buf, n);
    buf[0] = 1; /* a truncated frame followed by a whole one */
    memcpy(buf + 1, st, ns / 2);
    memcpy(buf + 1 + ns / 2, st, ns);
    write_seed(dir, "truncated", buf, 1 + ns / 2 + ns);
    buf[0] = 9; /* a protocol-1 (CRC-16) state frame, then a protocol-2 one */
    n = 1 + haptic_encode_state_v1(&s, buf + 1);
    memcpy(buf + n, st, ns);
    write_seed(dir, "v1_then_v2", buf, n + ns);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    const char *dir = getenv("FUZZ_CODEC_WRITE_SEEDS");
    if (dir) {
        write_seeds(dir);
        exit(0);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1)
        return 0;
    unsigned seed = data[0];
    const uint8_t *stream = data + 1;
    size_t n = size - 1;

    static Decoded whole, chunked; /* large; fully reinitialised by decode() on every run */
    decode(&whole, stream, n, 0);
    decode(&chunked, stream, n, seed ? seed : 1);

    if (whole.count != chunked.count)
        fail("chunked and whole decoding give different frame counts");
    if (whole.d.frames != chunked.d.frames || whole.d.crc_errors != chunked.d.crc_errors ||
        whole.d.bad_length != chunked.d.bad_length ||
        whole.d.bytes_skipped != chunked.d.bytes_skipped ||
        whole.d.v1_frames != chunked.d.v1_frames || whole.d.len != chunked.d.len)
        fail("chunked and whole decoding give different counters");
    if (whole.d.frames != (uint64_t)whole.count)
        fail("frames counter differs from the frames returned");
    uint64_t accounted = whole.d.bytes_skipped + (uint64_t)whole.d.len;
    int kept = whole.count < MAX_FRAMES ? whole.count : MAX_FRAMES;
    for (int i = 0; i < kept; i++) {
        if (!same_frame(&whole.frames[i], &chunked.frames[i]))
            fail("chunked and whole decoding give different frames");
        check_reencode(&whole.frames[i]);
        accounted += frame_size(&whole.frames[i]);
    }
    if (whole.count <= MAX_FRAMES && accounted != n)
        fail("bytes in frames + skipped + held differ from the bytes fed");
    return 0;
}
