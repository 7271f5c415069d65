/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_capture: write the frames links carry to a capture file (nanosecond
 * timestamps, Ethernet) that tshark and Wireshark open. A frame is written
 * when its transmission starts, stamped with that time (virtual or live).
 *
 * Two formats:
 *   pcap    classic pcap (libpcap): one link, both directions, nothing
 *           telling them apart
 *   pcapng  dp_pcapng.h: up to DP_CAPTURE_LINKS_MAX links, one interface
 *           each, and each frame's interface and direction
 */
#ifndef DP_CAPTURE_H
#define DP_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "dp_fabric.h"
#include "dp_gather.h"

struct dp_capture;

enum dp_capture_fmt { DP_CAPTURE_PCAP, DP_CAPTURE_PCAPNG };

#define DP_CAPTURE_LINKS_MAX 16 /* links one file holds at most */

/* The format a file name asks for: pcapng when it ends in ".pcapng", else pcap. */
enum dp_capture_fmt dp_capture_fmt_of(const char *file);
/* Create path in format fmt. Returns NULL with "--capture PATH: reason" in err. */
struct dp_capture *dp_capture_open(const char *path, enum dp_capture_fmt fmt, char *err,
				   size_t errlen);
/*
 * Record every frame a link carries from now on: out, the channel from the
 * end the interface stands at, and in, the channel towards it. In pcapng
 * the link gets an interface named ifname (described by descr, NULL for
 * none), and out's frames are outbound on it, in's inbound. Add every link
 * before the run starts. Returns 0, -ENOSPC when the file holds no more
 * links (pcap: one; pcapng: DP_CAPTURE_LINKS_MAX), -EIO when the write failed.
 */
int dp_capture_add_link(struct dp_capture *cap, const char *ifname, const char *descr,
			struct dp_chan *out, struct dp_chan *in);
/* Frames written so far. */
uint64_t dp_capture_count(const struct dp_capture *cap);
/* Flush held records and close the file (NULL is fine). Returns 0, or -EIO when a write failed. */
int dp_capture_close(struct dp_capture *cap);

/*
 * Partitioned runs (dp_part.h): the directions of the captured links may
 * be sent by several threads, so records are held, each with its event's place
 * in the order of events, and written by dp_capture_flush() between windows
 * (every partition stopped, every held record before any later one): the
 * file is the one a single engine writes, frame for frame.
 */
void dp_capture_hold(struct dp_capture *cap);
void dp_capture_flush(struct dp_capture *cap);

/*
 * MPI ranks (dp_part.h): each rank holds the records of the directions it
 * sends (cap NULL: nothing, for a file another --capture writes). dp_capture_export() moves them into x (appended, as bytes);
 * rank 0 adds each other rank's with dp_capture_import(), then flushes.
 * Return 0, or -ENOMEM (export: the records stay), -EINVAL (a malformed
 * record: what came before it is kept).
 */
int dp_capture_export(struct dp_capture *cap, struct dp_bytes *x);
int dp_capture_import(struct dp_capture *cap, const uint8_t *b, size_t len);

#endif /* DP_CAPTURE_H */
