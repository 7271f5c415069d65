/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_pcapng: a small writer of pcapng files (draft-ietf-opsawg-pcapng):
 * one Section Header Block, then Interface Description Blocks (Ethernet,
 * if_name, if_description, if_tsresol of nanoseconds), then Enhanced Packet
 * Blocks carrying an interface id and a direction in epb_flags.
 *
 * Why no library: libpcap reads pcapng but writes only classic pcap. DPDK
 * 22.11's rte_pcapng writes one interface per ethdev port, and stamps
 * packets with TSC cycles; the fabric's links are no ethdev ports, and the
 * virtual clock is no TSC. Wireshark's libwiretap writes pcapng, but its API
 * is Wireshark's own (it changes with each release) and it is GPL-2.0+,
 * where this project is BSD-3-Clause. The blocks needed here are three
 * fixed layouts, written in the host's byte order, as the format allows
 * (a reader finds the order in the section header's magic).
 */
#ifndef DP_PCAPNG_H
#define DP_PCAPNG_H

#include <stddef.h>
#include <stdint.h>

struct dp_pcapng;

/* epb_flags bits 0-1: the direction of a packet */
enum dp_pcapng_dir {
	DP_PCAPNG_DIR_UNKNOWN = 0,
	DP_PCAPNG_DIR_IN = 1,
	DP_PCAPNG_DIR_OUT = 2,
};

/*
 * Create path and write the section header (shb_userappl = appname).
 * Returns the writer, or NULL with "PATH: reason" in err.
 */
struct dp_pcapng *dp_pcapng_open(const char *path, const char *appname, char *err, size_t errlen);

/*
 * Add an Ethernet interface named name (if_name), described by descr
 * (if_description, NULL for none), its timestamps in nanoseconds. Add every
 * interface before the first packet. Returns its id (0, 1, ...), or -EIO
 * when the write failed, -EINVAL when packets were written already.
 */
int dp_pcapng_add_interface(struct dp_pcapng *w, const char *name, const char *descr,
			    uint32_t snaplen);

/*
 * Write one packet seen on interface ifid at ts_ns (nanoseconds): caplen
 * bytes at data of a frame of len bytes, direction dir. Returns 0, or -EIO
 * when the write failed (the error stays: dp_pcapng_close reports it too).
 */
int dp_pcapng_write(struct dp_pcapng *w, uint32_t ifid, uint64_t ts_ns, const void *data,
		    uint32_t caplen, uint32_t len, enum dp_pcapng_dir dir);

/* Flush and close (NULL is fine). Returns 0, or -EIO when any write failed. */
int dp_pcapng_close(struct dp_pcapng *w);

#endif /* DP_PCAPNG_H */
