/*
 * recording.h - mtrace's recording format (docs/recording.md): a 16-byte file header,
 * then the delimited ServerMsg frames exactly as mtraced sent them.  `mtrace-cat -f
 * proto` and `-w FILE` write one; `mtrace-cat -i FILE` reads it back, so one capture
 * converts to any output format later, on any machine.
 */
#ifndef MTRACE_RECORDING_H
#define MTRACE_RECORDING_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mtrace.pb-c.h"

#define RECORDING_MAGIC     "\x89MTRC\r\n\x1a" /* 8 bytes; PNG-style text-mode traps */
#define RECORDING_MAGIC_LEN 8
#define RECORDING_VERSION   1
#define RECORDING_HDR_LEN   16

/* Write the file header, then (if hello is not NULL) the daemon's Hello as frame 0. */
int recording_write_header(FILE *f, const Mtrace__Hello *hello);
/* Write one frame as received (varint prefix included). */
int recording_write_frame(FILE *f, const uint8_t *raw, size_t len);

struct recording;

/*
 * Reading.  recording_open checks the header; NULL with a sentence in err naming the
 * offset ("truncated header at offset 5") if it is not a recording we read.
 */
struct recording *recording_open(FILE *f, const char *name, char *err, size_t errlen);
/*
 * Next message: 1 with *out (free with recording_msg_free) and the frame's bytes in
 * raw/raw_len (valid until the next call), 0 at a clean end of file, -1 with err set
 * ("bad frame length at offset 1234", "truncated frame at offset ...", "frame at
 * offset ... does not decode").
 */
int recording_next(struct recording *r, Mtrace__ServerMsg **out, const uint8_t **raw,
    size_t *raw_len, char *err, size_t errlen);
/* Byte offset of the next frame (for messages and tests). */
uint64_t recording_offset(const struct recording *r);
void recording_msg_free(Mtrace__ServerMsg *m);
void recording_close(struct recording *r);

#endif
