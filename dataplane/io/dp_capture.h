/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_capture: write the frames a link carries to a pcap file (nanosecond
 * timestamps, Ethernet) that tshark and Wireshark open. A frame is written
 * when its transmission starts, stamped with that time (virtual or live).
 */
#ifndef DP_CAPTURE_H
#define DP_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "dp_fabric.h"
#include "dp_gather.h"

struct dp_capture;

/* Open path for writing. Returns NULL with a message in err. */
struct dp_capture *dp_capture_open(const char *path, char *err, size_t errlen);
/* Record every frame channel c sends from now on. */
void dp_capture_attach(struct dp_capture *cap, struct dp_chan *c);
/* Frames written so far. */
uint64_t dp_capture_count(const struct dp_capture *cap);
/* Flush and close (NULL is fine). */
/* Flush held records and close the file. */
void dp_capture_close(struct dp_capture *cap);

/*
 * Partitioned runs (dp_part.h): the two directions of a captured link may
 * be sent by two threads, so records are held, each with its event's place
 * in the order of events, and written by dp_capture_flush() between windows
 * (every partition stopped, every held record before any later one): the
 * file is the one a single engine writes, frame for frame.
 */
void dp_capture_hold(struct dp_capture *cap);
void dp_capture_flush(struct dp_capture *cap);

/*
 * MPI ranks (dp_part.h): each rank holds the records of the directions it
 * sends. dp_capture_export() moves them into x (appended, as bytes);
 * rank 0 adds each other rank's with dp_capture_import(), then flushes.
 * Return 0, or -ENOMEM (export: the records stay), -EINVAL (a malformed
 * record: what came before it is kept).
 */
int dp_capture_export(struct dp_capture *cap, struct dp_bytes *x);
int dp_capture_import(struct dp_capture *cap, const uint8_t *b, size_t len);

#endif /* DP_CAPTURE_H */
