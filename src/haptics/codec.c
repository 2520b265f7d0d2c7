/* The P2 controller's frame codec (docs/pantograph-protocol.md).
 *
 * Frame: sync 0xA5 0x5A, type, payload length, payload (little endian), CRC-16/CCITT-FALSE of
 * type + length + payload, low byte first. State frames (device -> host) carry the sequence
 * number, the device's microsecond clock, both encoder counts, the status flags and the
 * sequence number of the last command the device applied; command frames (host -> device)
 * carry a sequence number, two 12-bit D/A values and the enable flag.
 *
 * The decoder keeps at most one frame of bytes. Whenever the bytes held cannot be the start of
 * a valid frame (wrong sync, unknown type, wrong length, bad CRC) it drops the first byte and
 * re-examines the rest, so a real frame that starts inside garbage or inside a corrupted frame
 * is still found: resynchronisation costs at most one frame.
 */
#include <string.h>

#include "issim/haptics_device.h"

#define STATE_PAYLOAD 18
#define COMMAND_PAYLOAD 7
#define HEADER 4
#define TRAILER 2

uint16_t haptic_crc16(const uint8_t *bytes, size_t n) {
    uint16_t crc = 0xFFFF;
    for (size_t i = 0; i < n; i++) {
        crc ^= (uint16_t)(bytes[i] << 8);
        for (int b = 0; b < 8; b++)
            crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021) : (uint16_t)(crc << 1);
    }
    return crc;
}

static void put16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)(v & 0xFF);
    p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t get16(const uint8_t *p) {
    return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t get32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static size_t finish_frame(uint8_t *out, uint8_t type, size_t payload) {
    out[0] = HAPTIC_FRAME_SYNC0;
    out[1] = HAPTIC_FRAME_SYNC1;
    out[2] = type;
    out[3] = (uint8_t)payload;
    put16(out + HEADER + payload, haptic_crc16(out + 2, 2 + payload));
    return HEADER + payload + TRAILER;
}

size_t haptic_encode_state(const HapticState *s, uint8_t *out) {
    uint8_t *p = out + HEADER;
    put16(p, s->seq);
    put32(p + 2, s->timestamp_us);
    put32(p + 6, (uint32_t)s->counts[0]);
    put32(p + 10, (uint32_t)s->counts[1]);
    put16(p + 14, s->status);
    put16(p + 16, s->last_command_seq);
    return finish_frame(out, HAPTIC_FRAME_STATE, STATE_PAYLOAD);
}

size_t haptic_encode_command(const HapticCommand *c, uint8_t *out) {
    uint8_t *p = out + HEADER;
    put16(p, c->seq);
    put16(p + 2, (uint16_t)(c->dac[0] & 0x0FFF));
    put16(p + 4, (uint16_t)(c->dac[1] & 0x0FFF));
    p[6] = c->enable ? 1 : 0;
    return finish_frame(out, HAPTIC_FRAME_COMMAND, COMMAND_PAYLOAD);
}

void haptic_decoder_init(HapticDecoder *d) {
    memset(d, 0, sizeof *d);
}

typedef enum Prefix { PREFIX_MORE, PREFIX_BAD, PREFIX_BAD_CRC, PREFIX_COMPLETE } Prefix;

static size_t payload_for(uint8_t type) {
    return type == HAPTIC_FRAME_STATE     ? STATE_PAYLOAD
           : type == HAPTIC_FRAME_COMMAND ? COMMAND_PAYLOAD
                                          : 0;
}

static Prefix examine(const uint8_t *b, int len) {
    if (len >= 1 && b[0] != HAPTIC_FRAME_SYNC0)
        return PREFIX_BAD;
    if (len >= 2 && b[1] != HAPTIC_FRAME_SYNC1)
        return PREFIX_BAD;
    if (len >= 3 && payload_for(b[2]) == 0)
        return PREFIX_BAD;
    if (len >= 4 && b[3] != payload_for(b[2]))
        return PREFIX_BAD;
    if (len < HEADER || len < (int)(HEADER + b[3] + TRAILER))
        return PREFIX_MORE;
    size_t payload = b[3];
    if (haptic_crc16(b + 2, 2 + payload) != get16(b + HEADER + payload))
        return PREFIX_BAD_CRC;
    return PREFIX_COMPLETE;
}

static void parse(const uint8_t *b, HapticFrame *f) {
    const uint8_t *p = b + HEADER;
    if (b[2] == HAPTIC_FRAME_STATE) {
        f->kind = HAPTIC_DECODED_STATE;
        f->state = (HapticState){.seq = get16(p),
                                 .timestamp_us = get32(p + 2),
                                 .counts = {(int32_t)get32(p + 6), (int32_t)get32(p + 10)},
                                 .status = get16(p + 14),
                                 .last_command_seq = get16(p + 16)};
    } else {
        f->kind = HAPTIC_DECODED_COMMAND;
        f->command = (HapticCommand){.seq = get16(p),
                                     .dac = {get16(p + 2) & 0x0FFF, get16(p + 4) & 0x0FFF},
                                     .enable = (p[6] & 1) != 0};
    }
}

/* Drops leading bytes until what is held could still begin a frame. */
static void resync(HapticDecoder *d) {
    for (;;) {
        Prefix p = examine(d->buf, d->len);
        if (p == PREFIX_MORE || p == PREFIX_COMPLETE)
            return;
        if (p == PREFIX_BAD_CRC)
            d->crc_errors++;
        else if (d->len >= 3 && d->buf[0] == HAPTIC_FRAME_SYNC0 && d->buf[1] == HAPTIC_FRAME_SYNC1)
            d->bad_length++;
        memmove(d->buf, d->buf + 1, (size_t)(d->len - 1));
        d->len--;
        d->bytes_skipped++;
    }
}

/* Emits the complete frame at the start of the buffer, keeping any bytes after it. */
static bool take_frame(HapticDecoder *d, HapticFrame *frame) {
    if (examine(d->buf, d->len) != PREFIX_COMPLETE)
        return false;
    parse(d->buf, frame);
    d->frames++;
    int used = HEADER + d->buf[3] + TRAILER;
    memmove(d->buf, d->buf + used, (size_t)(d->len - used));
    d->len -= used;
    resync(d);
    return true;
}

size_t haptic_decoder_feed(HapticDecoder *d, const uint8_t *bytes, size_t n, HapticFrame *frame) {
    frame->kind = HAPTIC_DECODED_NONE;
    if (take_frame(d, frame))
        return 0;
    for (size_t i = 0; i < n; i++) {
        d->buf[d->len++] = bytes[i];
        resync(d);
        if (take_frame(d, frame))
            return i + 1;
    }
    return n;
}
