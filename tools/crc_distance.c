/* Minimum Hamming distance of the pantograph frame checksums (docs/pantograph-protocol.md,
 * "Integrity"): for the state frame (160 protected bits) and the command frame (72), the
 * smallest number of flipped bits (data and checksum together) that a CRC fails to detect,
 * searched up to 7 bits by meet in the middle, for protocol 2's CRC-32C, CRC-32 (IEEE) and
 * protocol 1's CRC-16/CCITT-FALSE. A CRC is affine, so an error pattern goes undetected exactly
 * when the XOR of its bits' syndromes is zero.
 *
 * Standalone: cc -O2 -Iinclude tools/crc_distance.c src/haptics/codec.c -o /tmp/crc_distance
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "issim/haptics_device.h"

static uint32_t crc32_ieee(const uint8_t *b, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= b[i];
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    }
    return ~c;
}
static uint32_t crc32c(const uint8_t *b, size_t n) {
    return haptic_crc32c(b, n);
}
static uint32_t crc16(const uint8_t *b, size_t n) {
    return haptic_crc16(b, n);
}

typedef uint32_t (*CrcFn)(const uint8_t *, size_t);

#define MAXBITS 256
static uint32_t syn[MAXBITS];

/* hash of the syndromes of all subsets of weight a: open addressing */
typedef struct Entry {
    uint32_t s;
    uint8_t idx[3];
    uint8_t used;
} Entry;

static Entry *table;
static size_t table_size;

static void insert(uint32_t s, const int *idx, int a) {
    size_t h = (s * 2654435761u) & (table_size - 1);
    while (table[h].used)
        h = (h + 1) & (table_size - 1);
    table[h].s = s;
    table[h].used = 1;
    for (int k = 0; k < a; k++)
        table[h].idx[k] = (uint8_t)idx[k];
}

static uint64_t matches;
static int cur_a;

static void lookup(uint32_t s, const int *idx, int b) {
    size_t h = (s * 2654435761u) & (table_size - 1);
    for (; table[h].used; h = (h + 1) & (table_size - 1)) {
        if (table[h].s != s)
            continue;
        bool disjoint = true;
        for (int i = 0; i < cur_a && disjoint; i++)
            for (int j = 0; j < b; j++)
                if (table[h].idx[i] == idx[j])
                    disjoint = false;
        if (disjoint)
            matches++;
    }
}

static void each_subset(int n, int w, int start, int depth, int *idx, uint32_t s, bool store) {
    if (depth == w) {
        if (store)
            insert(s, idx, w);
        else
            lookup(s, idx, w);
        return;
    }
    for (int i = start; i < n; i++) {
        idx[depth] = i;
        each_subset(n, w, i + 1, depth + 1, idx, s ^ syn[i], store);
    }
}

static uint64_t choose(int n, int k) {
    uint64_t r = 1;
    for (int i = 1; i <= k; i++)
        r = r * (uint64_t)(n - k + i) / (uint64_t)i;
    return r;
}

static void distance(const char *name, CrcFn f, int crc_bits, int data_bytes) {
    uint8_t msg[64] = {0};
    uint32_t base = f(msg, (size_t)data_bytes);
    int n = 8 * data_bytes + crc_bits;
    for (int i = 0; i < 8 * data_bytes; i++) {
        msg[i / 8] ^= (uint8_t)(1u << (i % 8));
        syn[i] = f(msg, (size_t)data_bytes) ^ base;
        msg[i / 8] ^= (uint8_t)(1u << (i % 8));
    }
    for (int j = 0; j < crc_bits; j++)
        syn[8 * data_bytes + j] = 1u << j;
    int idx[8];
    for (int w = 1; w <= 7; w++) {
        int a = w / 2, b = w - a;
        table_size = 1;
        while (table_size < 2 * choose(n, a) + 2)
            table_size <<= 1;
        table = calloc(table_size, sizeof *table);
        cur_a = a;
        each_subset(n, a, 0, 0, idx, 0, true);
        matches = 0;
        each_subset(n, b, 0, 0, idx, 0, false);
        free(table);
        if (matches) {
            uint64_t per = choose(w, a) * (a == b ? 2 : 1);
            printf("%-14s %3d data bits: HD = %d (%llu undetected %d-bit patterns)\n", name,
                   8 * data_bytes, w, (unsigned long long)(matches / per), w);
            return;
        }
    }
    printf("%-14s %3d data bits: HD >= 8 (every error of up to 7 bits detected)\n", name,
           8 * data_bytes);
}

int main(void) {
    const int sizes[2] = {2 + 18, 2 + 7}; /* type + length + payload */
    for (int k = 0; k < 2; k++) {
        distance("CRC-32C", crc32c, 32, sizes[k]);
        distance("CRC-32 (IEEE)", crc32_ieee, 32, sizes[k]);
        distance("CRC-16/CCITT", crc16, 16, sizes[k]);
    }
    return 0;
}
