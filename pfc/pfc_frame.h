/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pfc_frame: IEEE 802.1Qbb Priority-based Flow Control frames.
 *
 * Wire format (a MAC Control frame, never VLAN-tagged), offsets in bytes:
 *
 *    0  destination  01:80:C2:00:00:01 (the MAC Control multicast address)
 *    6  source       MAC address of the port sending the frame
 *   12  EtherType    0x8808 (MAC Control)
 *   14  opcode       0x0101 (PFC; 0x0001 is 802.3x PAUSE, rejected here)
 *   16  class-enable vector, 16 bits: the high octet is reserved (sent as 0,
 *                    ignored on receipt), bit n of the low octet = priority n
 *   18  time[0..7]   eight 16-bit pause times, priority 0 first, in quanta
 *   34  zero padding up to 60 bytes (64 on the wire with the FCS)
 *
 * All multi-byte fields are big-endian. A quantum is the time to send 512
 * bits at the rate of the link that carries the frame; time 0 with the enable
 * bit set is XON (resume now). An enable bit of 0 means "this frame says
 * nothing about that priority", whatever its time field holds.
 *
 * Nothing here reads a clock or allocates; buffers belong to the caller.
 */
#ifndef PFC_FRAME_H
#define PFC_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define PFC_NUM_PRIO       8
#define PFC_ETHERTYPE      0x8808u /* MAC Control */
#define PFC_OPCODE         0x0101u /* Priority-based Flow Control */
#define PFC_OPCODE_PAUSE   0x0001u /* 802.3x PAUSE (whole link), not PFC */
#define PFC_FRAME_LEN      60u     /* bytes written by encode: minimum frame without FCS */
#define PFC_FRAME_WIRE_LEN 84u     /* bytes of link time: 60 + 4 FCS + 8 preamble/SFD + 12 IFG */
#define PFC_QUANTUM_BITS   512u    /* one pause quantum = 512 bit times */
#define PFC_QUANTA_MAX     0xFFFFu

/* The destination address every PFC frame carries. */
extern const uint8_t pfc_dst_mac[6];

/* A decoded (or to be encoded) PFC frame. */
struct pfc_frame {
	uint8_t dst[6];                 /* filled by decode; encode always writes pfc_dst_mac */
	uint8_t src[6];
	uint8_t enable;                 /* bit n set: time[n] applies to priority n */
	uint16_t time[PFC_NUM_PRIO];    /* pause time in quanta; 0 = XON */
};

/* Why a frame was rejected. PFC_FRAME_OK is 0; every other value is a reason. */
enum pfc_frame_err {
	PFC_FRAME_OK = 0,
	PFC_FRAME_ERR_SHORT,     /* fewer than PFC_FRAME_LEN bytes (or NULL buffer) */
	PFC_FRAME_ERR_ETHERTYPE, /* EtherType is not 0x8808 */
	PFC_FRAME_ERR_OPCODE,    /* MAC Control, but the opcode is not 0x0101 */
	PFC_FRAME_ERR_DST,       /* destination is not 01:80:C2:00:00:01 */
	PFC_FRAME_ERR_COUNT,
};

/* Receive counters: frames accepted, and frames rejected by reason. */
struct pfc_frame_stats {
	uint64_t ok;
	uint64_t err[PFC_FRAME_ERR_COUNT]; /* err[PFC_FRAME_OK] stays 0 */
};

/* Short human text for a reason ("ok", "short frame", ...); "unknown" when out of range. */
const char *pfc_frame_err_str(enum pfc_frame_err err);

/* Zero f and set its source address (src may be NULL: all zeros) and dst to pfc_dst_mac. */
void pfc_frame_init(struct pfc_frame *f, const uint8_t src[6]);

/* Set priority prio (0..7) to quanta (0 = XON) and its enable bit; ignored when prio > 7. */
void pfc_frame_set(struct pfc_frame *f, unsigned prio, uint16_t quanta);

/*
 * Write f as a PFC frame of PFC_FRAME_LEN bytes (no FCS) into buf.
 * Returns PFC_FRAME_LEN, or 0 (nothing written) when buf is NULL or len is
 * smaller than PFC_FRAME_LEN.
 */
size_t pfc_frame_encode(const struct pfc_frame *f, uint8_t *buf, size_t len);

/*
 * Parse len bytes at buf (starting at the destination address; a trailing FCS
 * or extra padding is ignored). Checks, in this order: length, EtherType,
 * opcode, destination. On PFC_FRAME_OK fills *out (out may be NULL to only
 * validate); on any error leaves *out untouched and returns the reason.
 */
enum pfc_frame_err pfc_frame_decode(const uint8_t *buf, size_t len, struct pfc_frame *out);

/* Count one decode result into st (st may be NULL). */
void pfc_frame_stats_count(struct pfc_frame_stats *st, enum pfc_frame_err err);

/*
 * Duration of quanta pause quanta on a link of rate_bps:
 * quanta * 512 / rate_bps seconds, rounded UP to whole nanoseconds (so a
 * pause is never shorter than the sender asked). Returns 0 when rate_bps is 0.
 * Examples: 1 quantum = 51.2 ns at 10G (-> 52), 5.12 ns at 100G (-> 6),
 * 1.28 ns at 400G (-> 2); 0xFFFF quanta = 3355392 ns at 10G, 335540 ns at 100G.
 */
uint64_t pfc_quanta_to_ns(uint32_t quanta, uint64_t rate_bps);

/*
 * Smallest number of quanta that covers ns at rate_bps (rounded up),
 * saturated at PFC_QUANTA_MAX. Returns 0 when ns or rate_bps is 0.
 */
uint16_t pfc_ns_to_quanta(uint64_t ns, uint64_t rate_bps);

#endif /* PFC_FRAME_H */
