/* The codecs: decoding, composing, layouts' facts and the text forms. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"

void test_decode_vectors(void) {
    flakery_parts p;
    /* Discord's documentation. */
    CHECK(flakery_decode("discord", 175928847299117063, &p) == FLAKERY_STATUS_OK);
    CHECK(p.timestamp_ms == 1462015105796);
    CHECK(p.datacenter_id == 1 && p.worker_id == 0 && p.sequence == 7);
    CHECK(p.field_names == NULL && p.field_values == NULL && p.field_count == 0);
    /* Wikipedia's Snowflake example (a tweet). */
    CHECK(flakery_decode("twitter", 1541815603606036480, &p) == FLAKERY_STATUS_OK);
    CHECK(p.timestamp_ms == 1656432460105);
    CHECK(p.datacenter_id == 11 && p.worker_id == 26 && p.sequence == 0);

    uint64_t v = 0;
    CHECK(flakery_decode_field("discord", 175928847299117063, "sequence", &v) ==
              FLAKERY_STATUS_OK &&
          v == 7);
    CHECK(flakery_decode_field("discord", 175928847299117063, "time", &v) == FLAKERY_STATUS_OK &&
          v == 1462015105796 - 1420070400000);
    CHECK_FAILS(flakery_decode_field("discord", 175928847299117063, "nope", &v),
                FLAKERY_STATUS_INVALID_ARGUMENT, "nope");
}

/* Discord IDs of 2^63 and above, as uint64_t (tests/vectors/unsigned.json, from
   @sapphire/snowflake); and the time a layout has left. */
void test_unsigned_ids_and_time_left(void) {
    flakery_parts p;
    CHECK(flakery_decode_u64("discord", UINT64_C(10401578640998539267), &p) == FLAKERY_STATUS_OK);
    CHECK(p.timestamp_ms == 3900000000000 && p.datacenter_id == 1 && p.worker_id == 2 &&
          p.sequence == 3);
    uint64_t id = 0;
    CHECK(flakery_compose_u64("discord", &p, &id) == FLAKERY_STATUS_OK);
    CHECK(id == UINT64_C(10401578640998539267));
    CHECK(flakery_decode_u64("discord", UINT64_MAX, &p) == FLAKERY_STATUS_OK);
    CHECK(p.timestamp_ms == 5818116911103 && p.sequence == 4095);
    int64_t signed_id = 0;
    CHECK_FAILS(flakery_compose("discord", &p, &signed_id), FLAKERY_STATUS_INVALID_ARGUMENT,
                "compose_u64");
    CHECK_FAILS(flakery_decode_u64("twitter", UINT64_C(9223372036854775808), &p),
                FLAKERY_STATUS_INVALID_ARGUMENT, "2^63-1");
    int64_t left = -1;
    CHECK(flakery_layout_time_left_ms("baidu", &left) == FLAKERY_STATUS_OK && left == 0);
    CHECK(flakery_layout_time_left_ms("twitter", &left) == FLAKERY_STATUS_OK && left > 0);
    CHECK(left <= INT64_C(3487858230209) - (int64_t)time(NULL) * 1000 + 1000);
}

void test_compose(void) {
    flakery_parts p = {0};
    int64_t id = 0;
    p.timestamp_ms = 1462015105796;
    p.datacenter_id = 1;
    p.sequence = 7;
    CHECK(flakery_compose("discord", &p, &id) == FLAKERY_STATUS_OK && id == 175928847299117063);
    p = (flakery_parts){.timestamp_ms = 1656432460105, .datacenter_id = 11, .worker_id = 26};
    CHECK(flakery_compose("twitter", &p, &id) == FLAKERY_STATUS_OK && id == 1541815603606036480);

    /* Constant fields: Vesta's version (bit 63, so only 0 fits a non-negative ID), type
     * (default 0 in this preset) and method. */
    const char *names[] = {"version", "method"};
    const uint64_t values[] = {0, 2};
    p = (flakery_parts){.timestamp_ms = 1700000000000, .worker_id = 5, .sequence = 9};
    p.field_names = names;
    p.field_values = values;
    p.field_count = 2;
    CHECK(flakery_compose("vesta-max-peak", &p, &id) == FLAKERY_STATUS_OK && id > 0);
    uint64_t v = 99;
    CHECK(flakery_decode_field("vesta-max-peak", id, "version", &v) == FLAKERY_STATUS_OK && v == 0);
    CHECK(flakery_decode_field("vesta-max-peak", id, "type", &v) == FLAKERY_STATUS_OK && v == 0);
    CHECK(flakery_decode_field("vesta-max-peak", id, "method", &v) == FLAKERY_STATUS_OK && v == 2);
    flakery_parts back;
    CHECK(flakery_decode("vesta-max-peak", id, &back) == FLAKERY_STATUS_OK);
    CHECK(back.timestamp_ms == 1700000000000 && back.worker_id == 5 && back.sequence == 9);

    /* Errors: values that do not fit, unknown constants, time outside the layout. */
    int64_t untouched = 12345;
    p = (flakery_parts){.timestamp_ms = 1700000000000, .worker_id = 32};
    CHECK_FAILS(flakery_compose("twitter", &p, &untouched), FLAKERY_STATUS_INVALID_ARGUMENT,
                "worker_id 32");
    CHECK(untouched == 12345);
    p = (flakery_parts){.timestamp_ms = 0};
    CHECK_FAILS(flakery_compose("twitter", &p, &id), FLAKERY_STATUS_INVALID_ARGUMENT, "epoch");
    const char *bad[] = {"colour"};
    p = (flakery_parts){.timestamp_ms = 1700000000000, .field_names = bad, .field_values = values,
                        .field_count = 1};
    CHECK_FAILS(flakery_compose("vesta-max-peak", &p, &id), FLAKERY_STATUS_INVALID_ARGUMENT,
                "colour");
    const uint64_t version_1[] = {1};
    p = (flakery_parts){.timestamp_ms = 1700000000000, .field_names = names,
                        .field_values = version_1, .field_count = 1};
    CHECK_FAILS(flakery_compose("vesta-max-peak", &p, &id), FLAKERY_STATUS_INVALID_ARGUMENT,
                "bit 63");
    p = (flakery_parts){.timestamp_ms = 1700000000000, .field_count = 1};
    CHECK_FAILS(flakery_compose("vesta-max-peak", &p, &id), FLAKERY_STATUS_INVALID_ARGUMENT,
                "NULL");
}

void test_layout_info(void) {
    flakery_capacity c;
    CHECK(flakery_layout_capacity("twitter", &c) == FLAKERY_STATUS_OK);
    CHECK(c.epoch_ms == 1288834974657 && c.unit_ms == 1 && c.total_bits == 63);
    CHECK(c.ids_per_tick == 4096 && c.ids_per_second == 4096000);
    CHECK(c.datacenter_ids == 32 && c.worker_ids == 32 && c.node_ids == 1024);
    CHECK(c.max_tick == (UINT64_C(1) << 41) - 1);
    CHECK(flakery_layout_capacity("baidu", &c) == FLAKERY_STATUS_OK);
    CHECK(c.unit_ms == 1000 && c.exhausted_at_ms < now_ms());

    char buf[128];
    size_t n = 0;
    CHECK(flakery_layout_normalize("discord;epoch=1420070400000", buf, sizeof buf, &n) ==
          FLAKERY_STATUS_OK);
    CHECK(strcmp(buf, "discord") == 0 && n == 7);
    CHECK(flakery_layout_normalize("time:41,worker:10,sequence:12;epoch=0", NULL, 0, &n) ==
          FLAKERY_STATUS_OK);
    CHECK(n == strlen("time:41,worker:10,sequence:12;epoch=0;unit=ms"));
    memset(buf, 'x', sizeof buf);
    CHECK_FAILS(flakery_layout_normalize("discord", buf, 7, &n), FLAKERY_STATUS_INVALID_ARGUMENT,
                "too small");
    CHECK(buf[0] == 'x');
    CHECK_FAILS(flakery_layout_normalize("discord", buf, sizeof buf, NULL),
                FLAKERY_STATUS_INVALID_ARGUMENT, "written");
    CHECK_FAILS(flakery_layout_capacity("twitter", NULL), FLAKERY_STATUS_INVALID_ARGUMENT, "NULL");
}

/* The text forms: known values, round trip and order (strcmp order is ID order), bad strings. */
static int64_t sample_id(uint64_t *state) {
    /* xorshift64*, then a random width: IDs of every size from 1 to 63 bits. */
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    uint64_t x = *state * 2685821657736338717ull;
    return (int64_t)(x >> (1 + x % 63));
}

static int compare_strings(const void *a, const void *b) {
    return strcmp((const char *)a, (const char *)b);
}

void test_text_forms(void) {
    char buf[32];
    size_t n = 0;
    int64_t id = 0;
    CHECK(FLAKERY_BASE32_LEN == 13 && FLAKERY_BASE62_LEN == 11);
    CHECK(flakery_to_base32(175928847299117063, buf, sizeof buf, &n) == FLAKERY_STATUS_OK);
    CHECK(strcmp(buf, "04W86BB0G4007") == 0 && n == 13);
    CHECK(flakery_to_base62(175928847299117063, buf, sizeof buf, &n) == FLAKERY_STATUS_OK);
    CHECK(strcmp(buf, "0Czks0tP37X") == 0 && n == 11);
    CHECK(flakery_to_base32(INT64_MAX, buf, FLAKERY_BASE32_LEN + 1, &n) == FLAKERY_STATUS_OK);
    CHECK(strcmp(buf, "7ZZZZZZZZZZZZ") == 0);
    CHECK(flakery_to_base62(INT64_MAX, buf, FLAKERY_BASE62_LEN + 1, &n) == FLAKERY_STATUS_OK);
    CHECK(strcmp(buf, "AzL8n0Y58m7") == 0);
    CHECK(flakery_to_base32(0, NULL, 0, &n) == FLAKERY_STATUS_OK && n == 13);
    CHECK(flakery_from_base32("7zzzzzzzzzzzz", &id) == FLAKERY_STATUS_OK && id == INT64_MAX);
    CHECK(flakery_from_base32("O4W86BBOG4OO7", &id) == FLAKERY_STATUS_OK && id == 175928847299117063);
    CHECK(flakery_from_base62("0000000000z", &id) == FLAKERY_STATUS_OK && id == 61);

    /* Round trip and order over 2000 IDs of every width. */
    enum { COUNT = 2000 };
    static int64_t ids[COUNT];
    static char b32[COUNT][FLAKERY_BASE32_LEN + 1], b62[COUNT][FLAKERY_BASE62_LEN + 1];
    uint64_t state = 15;
    for (int i = 0; i < COUNT; i++) {
        ids[i] = i < 2 ? (i == 0 ? 0 : INT64_MAX) : sample_id(&state);
        CHECK(flakery_to_base32(ids[i], b32[i], sizeof b32[i], &n) == FLAKERY_STATUS_OK && n == 13);
        CHECK(flakery_to_base62(ids[i], b62[i], sizeof b62[i], &n) == FLAKERY_STATUS_OK && n == 11);
        CHECK(flakery_from_base32(b32[i], &id) == FLAKERY_STATUS_OK && id == ids[i]);
        CHECK(flakery_from_base62(b62[i], &id) == FLAKERY_STATUS_OK && id == ids[i]);
    }
    qsort(ids, COUNT, sizeof ids[0], compare_ids);
    qsort(b32, COUNT, sizeof b32[0], compare_strings);
    qsort(b62, COUNT, sizeof b62[0], compare_strings);
    for (int i = 0; i < COUNT; i++) {
        CHECK(flakery_from_base32(b32[i], &id) == FLAKERY_STATUS_OK && id == ids[i]);
        CHECK(flakery_from_base62(b62[i], &id) == FLAKERY_STATUS_OK && id == ids[i]);
    }

    id = 42;
    CHECK_FAILS(flakery_from_base32("000000000000U", &id), FLAKERY_STATUS_INVALID_ARGUMENT,
                "character 13 ('U')");
    CHECK_FAILS(flakery_from_base62("00000000_00", &id), FLAKERY_STATUS_INVALID_ARGUMENT,
                "character 9 ('_')");
    CHECK_FAILS(flakery_from_base32("0000\xff" "00000000", &id), FLAKERY_STATUS_INVALID_ARGUMENT,
                "character 5");
    CHECK_FAILS(flakery_from_base32("000", &id), FLAKERY_STATUS_INVALID_ARGUMENT, "exactly 13");
    CHECK_FAILS(flakery_from_base62("zzzzzzzzzzz", &id), FLAKERY_STATUS_INVALID_ARGUMENT, "2^63-1");
    CHECK_FAILS(flakery_from_base32(NULL, &id), FLAKERY_STATUS_INVALID_ARGUMENT, "text is NULL");
    CHECK_FAILS(flakery_from_base32("0000000000000", NULL), FLAKERY_STATUS_INVALID_ARGUMENT, "NULL");
    CHECK(id == 42);
    memset(buf, 'x', sizeof buf);
    CHECK_FAILS(flakery_to_base32(1, buf, FLAKERY_BASE32_LEN, &n), FLAKERY_STATUS_INVALID_ARGUMENT,
                "too small");
    CHECK_FAILS(flakery_to_base62(-1, buf, sizeof buf, &n), FLAKERY_STATUS_INVALID_ARGUMENT,
                "negative");
    CHECK(buf[0] == 'x');
}
