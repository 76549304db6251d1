/* Prints librdkafka's own partition for every reference key: the outside truth that keyshard's
 * murmur2, crc32 (librdkafka "consistent") and fnv1a partitioners are tested against. It calls
 * only librdkafka's public rd_kafka_msg_partitioner_* functions, never a copy of their code.
 *
 * Usage: librdkafka_reference KEYS.hex > OUT.tsv
 * Input: one hex-encoded key per line (an empty line is the empty key).
 * Output: hex_key<TAB>N<TAB>murmur2<TAB>consistent<TAB>fnv1a, one line per key and N.
 *
 * These three partitioners are pure functions of (key, keylen, partition_cnt): librdkafka's
 * rdkafka_msg.c computes (rd_murmur2() & 0x7fffffff) % cnt, rd_crc32() % cnt and
 * rd_fnv1a() % cnt without reading rkt or the opaques, so NULL is passed for those. (The
 * *_random variants and the default consistent_random do read rkt: they are not used here.)
 *
 * The empty key is passed as a non-NULL pointer with length 0, which is what a producer sends
 * for an empty, non-null Kafka key; these functions then hash zero bytes (crc32 0 -> partition 0,
 * murmur2 of "" and fnv1a of "" as for any key). A NULL key never reaches them in a producer:
 * librdkafka routes keyless messages to the sticky partitioner instead. */
#define _POSIX_C_SOURCE 200809L /* getline() */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <librdkafka/rdkafka.h>

static const int32_t kPartitionCounts[] = {1, 2, 3, 7, 8, 12, 16, 100, 1024, 4096};

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Decodes `hex` (length hex_len) into `out`; returns the byte count, or -1 if it is not hex. */
static long decode_hex(const char *hex, size_t hex_len, unsigned char *out) {
  if (hex_len % 2 != 0) return -1;
  for (size_t i = 0; i < hex_len; i += 2) {
    int high = hex_digit(hex[i]);
    int low = hex_digit(hex[i + 1]);
    if (high < 0 || low < 0) return -1;
    out[i / 2] = (unsigned char)(high * 16 + low);
  }
  return (long)(hex_len / 2);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s KEYS.hex > OUT.tsv\n", argv[0]);
    return 2;
  }
  FILE *in = fopen(argv[1], "r");
  if (in == NULL) {
    fprintf(stderr, "librdkafka_reference: %s: %s\n", argv[1], strerror(errno));
    return 1;
  }

  char *line = NULL;
  size_t line_capacity = 0;
  unsigned char *key = NULL;
  size_t key_capacity = 0;
  long line_number = 0;
  ssize_t line_len;
  int status = 0;
  while ((line_len = getline(&line, &line_capacity, in)) != -1) {
    ++line_number;
    size_t hex_len = (size_t)line_len;
    while (hex_len > 0 && (line[hex_len - 1] == '\n' || line[hex_len - 1] == '\r')) --hex_len;
    line[hex_len] = '\0';

    /* Always at least one byte, so the empty key is a valid non-NULL pointer. */
    if (key_capacity < hex_len / 2 + 1) {
      key_capacity = hex_len / 2 + 1;
      unsigned char *grown = realloc(key, key_capacity);
      if (grown == NULL) {
        fprintf(stderr, "librdkafka_reference: out of memory\n");
        status = 1;
        break;
      }
      key = grown;
    }
    long key_len = decode_hex(line, hex_len, key);
    if (key_len < 0) {
      fprintf(stderr, "librdkafka_reference: %s:%ld: not a hex key\n", argv[1], line_number);
      status = 1;
      break;
    }

    for (size_t i = 0; i < sizeof kPartitionCounts / sizeof kPartitionCounts[0]; ++i) {
      const int32_t n = kPartitionCounts[i];
      const int32_t murmur2 =
          rd_kafka_msg_partitioner_murmur2(NULL, key, (size_t)key_len, n, NULL, NULL);
      const int32_t consistent =
          rd_kafka_msg_partitioner_consistent(NULL, key, (size_t)key_len, n, NULL, NULL);
      const int32_t fnv1a =
          rd_kafka_msg_partitioner_fnv1a(NULL, key, (size_t)key_len, n, NULL, NULL);
      printf("%s\t%" PRId32 "\t%" PRId32 "\t%" PRId32 "\t%" PRId32 "\n", line, n, murmur2,
             consistent, fnv1a);
    }
  }
  if (status == 0 && ferror(in)) {
    fprintf(stderr, "librdkafka_reference: %s: read error\n", argv[1]);
    status = 1;
  }
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "librdkafka_reference: write error: %s\n", strerror(errno));
    status = 1;
  }
  free(line);
  free(key);
  fclose(in);
  return status;
}
