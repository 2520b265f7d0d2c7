/* The P2 controller's frame codec (docs/pantograph-protocol.md, protocol 2).
 *
 * Frame: sync 0xA5 0x5A, type, payload length, payload (little endian), CRC-32C of type +
 * length + payload, low byte first (protocol 1 had a CRC-16 there). State frames (device -> host)
 * carry the sequence number, the device's microsecond clock, both encoder counts, the status flags
 * and the sequence number of the last command the device applied; command frames (host -> device)
 * carry a sequence number, two 12-bit D/A values and the enable flag.
 *
 * The decoder keeps at most one frame of bytes. Whenever the bytes held cannot be the start of
 * a valid frame (wrong sync, unknown type, wrong length, bad CRC) it drops the first byte and
 * re-examines the rest, so a real frame that starts inside garbage or inside a corrupted frame
 * is still found: resynchronisation costs at most one frame. A frame that fails the CRC-32C
 * but is a well-formed protocol-1 frame (CRC-16 over the same bytes, two bytes shorter) is
 * counted as such and dropped whole: the host refuses that device by name.
 */
#include <string.h>

#include "issim/haptics_device.h"

#define STATE_PAYLOAD 18
#define COMMAND_PAYLOAD 7
#define HEADER 4
#define TRAILER 4
#define TRAILER_V1 2

static const uint32_t crc32c_table[256] = {
    0x00000000, 0xF26B8303, 0xE13B70F7, 0x1350F3F4, 0xC79A971F, 0x35F1141C, 0x26A1E7E8, 0xD4CA64EB,
    0x8AD958CF, 0x78B2DBCC, 0x6BE22838, 0x9989AB3B, 0x4D43CFD0, 0xBF284CD3, 0xAC78BF27, 0x5E133C24,
    0x105EC76F, 0xE235446C, 0xF165B798, 0x030E349B, 0xD7C45070, 0x25AFD373, 0x36FF2087, 0xC494A384,
    0x9A879FA0, 0x68EC1CA3, 0x7BBCEF57, 0x89D76C54, 0x5D1D08BF, 0xAF768BBC, 0xBC267848, 0x4E4DFB4B,
    0x20BD8EDE, 0xD2D60DDD, 0xC186FE29, 0x33ED7D2A, 0xE72719C1, 0x154C9AC2, 0x061C6936, 0xF477EA35,
    0xAA64D611, 0x580F5512, 0x4B5FA6E6, 0xB93425E5, 0x6DFE410E, 0x9F95C20D, 0x8CC531F9, 0x7EAEB2FA,
    0x30E349B1, 0xC288CAB2, 0xD1D83946, 0x23B3BA45, 0xF779DEAE, 0x05125DAD, 0x1642AE59, 0xE4292D5A,
    0xBA3A117E, 0x4851927D, 0x5B016189, 0xA96AE28A, 0x7DA08661, 0x8FCB0562, 0x9C9BF696, 0x6EF07595,
    0x417B1DBC, 0xB3109EBF, 0xA0406D4B, 0x522BEE48, 0x86E18AA3, 0x748A09A0, 0x67DAFA54, 0x95B17957,
    0xCBA24573, 0x39C9C670, 0x2A993584, 0xD8F2B687, 0x0C38D26C, 0xFE53516F, 0xED03A29B, 0x1F682198,
    0x5125DAD3, 0xA34E59D0, 0xB01EAA24, 0x42752927, 0x96BF4DCC, 0x64D4CECF, 0x77843D3B, 0x85EFBE38,
    0xDBFC821C, 0x2997011F, 0x3AC7F2EB, 0xC8AC71E8, 0x1C661503, 0xEE0D9600, 0xFD5D65F4, 0x0F36E6F7,
    0x61C69362, 0x93AD1061, 0x80FDE395, 0x72966096, 0xA65C047D, 0x5437877E, 0x4767748A, 0xB50CF789,
    0xEB1FCBAD, 0x197448AE, 0x0A24BB5A, 0xF84F3859, 0x2C855CB2, 0xDEEEDFB1, 0xCDBE2C45, 0x3FD5AF46,
    0x7198540D, 0x83F3D70E, 0x90A324FA, 0x62C8A7F9, 0xB602C312, 0x44694011, 0x5739B3E5, 0xA55230E6,
    0xFB410CC2, 0x092A8FC1, 0x1A7A7C35, 0xE811FF36, 0x3CDB9BDD, 0xCEB018DE, 0xDDE0EB2A, 0x2F8B6829,
    0x82F63B78, 0x709DB87B, 0x63CD4B8F, 0x91A6C88C, 0x456CAC67, 0xB7072F64, 0xA457DC90, 0x563C5F93,
    0x082F63B7, 0xFA44E0B4, 0xE9141340, 0x1B7F9043, 0xCFB5F4A8, 0x3DDE77AB, 0x2E8E845F, 0xDCE5075C,
    0x92A8FC17, 0x60C37F14, 0x73938CE0, 0x81F80FE3, 0x55326B08, 0xA759E80B, 0xB4091BFF, 0x466298FC,
    0x1871A4D8, 0xEA1A27DB, 0xF94AD42F, 0x0B21572C, 0xDFEB33C7, 0x2D80B0C4, 0x3ED04330, 0xCCBBC033,
    0xA24BB5A6, 0x502036A5, 0x4370C551, 0xB11B4652, 0x65D122B9, 0x97BAA1BA, 0x84EA524E, 0x7681D14D,
    0x2892ED69, 0xDAF96E6A, 0xC9A99D9E, 0x3BC21E9D, 0xEF087A76, 0x1D63F975, 0x0E330A81, 0xFC588982,
    0xB21572C9, 0x407EF1CA, 0x532E023E, 0xA145813D, 0x758FE5D6, 0x87E466D5, 0x94B49521, 0x66DF1622,
    0x38CC2A06, 0xCAA7A905, 0xD9F75AF1, 0x2B9CD9F2, 0xFF56BD19, 0x0D3D3E1A, 0x1E6DCDEE, 0xEC064EED,
    0xC38D26C4, 0x31E6A5C7, 0x22B65633, 0xD0DDD530, 0x0417B1DB, 0xF67C32D8, 0xE52CC12C, 0x1747422F,
    0x49547E0B, 0xBB3FFD08, 0xA86F0EFC, 0x5A048DFF, 0x8ECEE914, 0x7CA56A17, 0x6FF599E3, 0x9D9E1AE0,
    0xD3D3E1AB, 0x21B862A8, 0x32E8915C, 0xC083125F, 0x144976B4, 0xE622F5B7, 0xF5720643, 0x07198540,
    0x590AB964, 0xAB613A67, 0xB831C993, 0x4A5A4A90, 0x9E902E7B, 0x6CFBAD78, 0x7FAB5E8C, 0x8DC0DD8F,
    0xE330A81A, 0x115B2B19, 0x020BD8ED, 0xF0605BEE, 0x24AA3F05, 0xD6C1BC06, 0xC5914FF2, 0x37FACCF1,
    0x69E9F0D5, 0x9B8273D6, 0x88D28022, 0x7AB90321, 0xAE7367CA, 0x5C18E4C9, 0x4F48173D, 0xBD23943E,
    0xF36E6F75, 0x0105EC76, 0x12551F82, 0xE03E9C81, 0x34F4F86A, 0xC69F7B69, 0xD5CF889D, 0x27A40B9E,
    0x79B737BA, 0x8BDCB4B9, 0x988C474D, 0x6AE7C44E, 0xBE2DA0A5, 0x4C4623A6, 0x5F16D052, 0xAD7D5351,
};

uint32_t haptic_crc32c(const uint8_t *bytes, size_t n) {
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++)
        crc = crc32c_table[(crc ^ bytes[i]) & 0xFF] ^ (crc >> 8);
    return crc ^ 0xFFFFFFFFu;
}

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
    put32(out + HEADER + payload, haptic_crc32c(out + 2, 2 + payload));
    return HEADER + payload + TRAILER;
}

static void put_state(const HapticState *s, uint16_t status, uint8_t *out) {
    uint8_t *p = out + HEADER;
    put16(p, s->seq);
    put32(p + 2, s->timestamp_us);
    put32(p + 6, (uint32_t)s->counts[0]);
    put32(p + 10, (uint32_t)s->counts[1]);
    put16(p + 14, status);
    put16(p + 16, s->last_command_seq);
}

size_t haptic_encode_state(const HapticState *s, uint8_t *out) {
    unsigned version = s->protocol ? s->protocol : HAPTIC_PROTOCOL_VERSION;
    uint16_t status =
        (uint16_t)((s->status & ~HAPTIC_STATUS_VERSION_MASK) |
                   ((version << HAPTIC_STATUS_VERSION_SHIFT) & HAPTIC_STATUS_VERSION_MASK));
    put_state(s, status, out);
    return finish_frame(out, HAPTIC_FRAME_STATE, STATE_PAYLOAD);
}

size_t haptic_encode_state_v1(const HapticState *s, uint8_t *out) {
    put_state(s, s->status, out);
    out[0] = HAPTIC_FRAME_SYNC0;
    out[1] = HAPTIC_FRAME_SYNC1;
    out[2] = HAPTIC_FRAME_STATE;
    out[3] = STATE_PAYLOAD;
    put16(out + HEADER + STATE_PAYLOAD, haptic_crc16(out + 2, 2 + STATE_PAYLOAD));
    return HAPTIC_STATE_FRAME_SIZE_V1;
}

bool haptic_seq_check(HapticSeqCheck *c, uint16_t seq) {
    uint16_t step = (uint16_t)(seq - c->last);
    if (c->started && (step == 0 || step > 0x8000u)) {
        c->dropped++; /* a repeat, or older than the last frame taken */
        return false;
    }
    if (c->started && step > 1) {
        c->gaps++;
        c->lost += step - 1u;
    }
    c->started = true;
    c->last = seq;
    c->in_order++;
    return true;
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

typedef enum Prefix {
    PREFIX_MORE,
    PREFIX_BAD,
    PREFIX_BAD_CRC,
    PREFIX_V1, /* a well-formed protocol-1 frame (CRC-16) */
    PREFIX_COMPLETE
} Prefix;

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
    if (haptic_crc32c(b + 2, 2 + payload) == get32(b + HEADER + payload))
        return PREFIX_COMPLETE;
    if (haptic_crc16(b + 2, 2 + payload) == get16(b + HEADER + payload))
        return PREFIX_V1;
    return PREFIX_BAD_CRC;
}

static void parse(const uint8_t *b, HapticFrame *f) {
    const uint8_t *p = b + HEADER;
    if (b[2] == HAPTIC_FRAME_STATE) {
        f->kind = HAPTIC_DECODED_STATE;
        uint16_t status = get16(p + 14);
        f->state = (HapticState){.seq = get16(p),
                                 .timestamp_us = get32(p + 2),
                                 .counts = {(int32_t)get32(p + 6), (int32_t)get32(p + 10)},
                                 .status = (uint16_t)(status & ~HAPTIC_STATUS_VERSION_MASK),
                                 .last_command_seq = get16(p + 16),
                                 .protocol = (uint8_t)((status & HAPTIC_STATUS_VERSION_MASK) >>
                                                       HAPTIC_STATUS_VERSION_SHIFT)};
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
        if (p == PREFIX_V1) {
            /* drop the whole old-protocol frame: its bytes are not a frame start */
            int used = HEADER + d->buf[3] + TRAILER_V1;
            d->v1_frames++;
            memmove(d->buf, d->buf + used, (size_t)(d->len - used));
            d->len -= used;
            d->bytes_skipped += (uint64_t)used;
            continue;
        }
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
