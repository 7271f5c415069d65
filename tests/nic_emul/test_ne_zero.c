/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The zero_payload model (payload bytes not modelled, as ne_coll with data
 * off needs): the wire is byte for byte the one of a NIC that copies real
 * zero buffers, every ICRC is valid, also after a round trip through a pcap
 * file, and the NIC never reads or writes a payload byte of an MR (the MRs
 * live on inaccessible pages: one access would kill the test), nor does
 * the ICRC read the payload of a frame. The payload writer (ne_zero_nt,
 * stores that bypass the caches) zeroes exactly its range of a dirty buffer.
 * With payload_unwritten the NIC leaves a dirty buffer's payload bytes as
 * they were, the receiver takes such a frame, and once zeroed it is the
 * zero_payload model's frame byte for byte.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>
#include <pcap/pcap.h>

#include "ne_priv.h"
#include "ne_sim.h"
#include "rl_icrc.h"
#include "rl_parse.h"

#define G100 100000000000ull
#define MTU 4096u
#define MR_BYTES (256u * 1024u)
#define WRITE_BYTES (64u * 1024u + 100u)
#define SEND_BYTES 10000u
#define READ_BYTES (8u * 1024u + 4u)
#define MAX_FRAMES 4096u
#define MAX_STEPS 1000000u
#define WRS 3u /* WRITE, SEND, READ */
#define DIRT 0xa5u /* what a frame buffer holds before the NIC writes into it */

enum mode { COPY, ZERO, UNWRITTEN };

struct frame {
	uint32_t len;
	uint8_t d[NE_MAX_FRAME];
};

struct run {
	struct frame *f;
	size_t n;
	enum mode mode;
	size_t dirty_bytes; /* payload bytes left unwritten (UNWRITTEN) */
};

static void cfg_for(struct ne_nic_config *c, int i, enum mode mode)
{
	sim_config(c, i, G100);
	c->zero_payload = mode != COPY;
	c->payload_unwritten = mode == UNWRITTEN;
}

/*
 * A frame the NIC wrote into a buffer full of DIRT. UNWRITTEN: its payload
 * bytes must still be DIRT; they are zeroed in the copy kept in r (what
 * rocelab-dp does where someone reads them). Else no byte may be DIRT's
 * leftover: the ICRC covers them all.
 */
static void keep_frame(struct run *r, const uint8_t *buf, size_t len)
{
	struct frame *f = &r->f[r->n++];
	struct rl_pkt p;

	assert_true(r->n <= MAX_FRAMES);
	f->len = (uint32_t)len;
	memcpy(f->d, buf, len);
	assert_int_equal(rl_parse(f->d, len, &p), RL_PARSE_OK);
	if (r->mode == UNWRITTEN) {
		for (uint32_t i = p.payload_off; i < p.payload_off + p.payload_len; i++)
			assert_int_equal(f->d[i], DIRT);
		memset(f->d + p.payload_off, 0, p.payload_len);
		r->dirty_bytes += p.payload_len;
	}
	assert_true(rl_icrc_verify(f->d, &p));
}

/* MR memory: zeroed heap memory, or pages nobody may touch. */
static uint8_t *mr_mem(bool no_access)
{
	if (!no_access)
		return calloc(1, MR_BYTES);
	void *p = mmap(NULL, MR_BYTES, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void mr_free(uint8_t *p, bool no_access)
{
	if (no_access)
		munmap(p, MR_BYTES);
	else
		free(p);
}

/* Both NICs put frames on a zero-delay wire until nothing is left to do. */
static void pump(struct sim *s, struct run *r, struct ne_cq *cq0, uint32_t want)
{
	uint64_t now = 0;
	uint32_t got = 0;
	uint8_t buf[NE_MAX_FRAME];
	size_t len;
	struct ne_wc wc[8];

	for (uint32_t step = 0; step < MAX_STEPS && got < want; step++) {
		for (int i = 0; i < 2; i++)
			for (;;) {
				memset(buf, DIRT, sizeof(buf));
				if (ne_nic_poll_tx(s->nic[i], now, buf, sizeof(buf), &len) != 1)
					break;
				keep_frame(r, buf, len);
				/* (the frame as sent: UNWRITTEN's payload still dirty) */
				assert_int_equal(ne_nic_rx(s->nic[1 - i], buf, len, now), NE_RX_OK);
			}
		int n = ne_cq_poll(cq0, wc, 8);
		for (int k = 0; k < n; k++) {
			assert_int_equal(wc[k].status, NE_WC_SUCCESS);
			got++;
		}
		uint64_t t0 = ne_nic_next_event_ns(s->nic[0]), t1 = ne_nic_next_event_ns(s->nic[1]);
		uint64_t next = t0 < t1 ? t0 : t1;
		if (next == UINT64_MAX)
			break;
		if (next > now)
			now = next;
	}
	assert_int_equal(got, want);
}

/* WRITE, SEND and READ between two NICs; the frames in r. */
static void transfer(enum mode mode, bool no_access, struct run *r)
{
	struct ne_nic_config c0, c1;
	struct sim s;
	struct ne_cq *cq[2];
	uint8_t *mem[2];
	uint32_t key[2], q0, q1;

	cfg_for(&c0, 0, mode);
	cfg_for(&c1, 1, mode);
	sim_init_cfg(&s, &c0, &c1, 0);
	assert_non_null(s.nic[0]);
	for (int i = 0; i < 2; i++) {
		cq[i] = ne_cq_create(s.nic[i], 64);
		mem[i] = mr_mem(no_access);
		assert_non_null(mem[i]);
		struct ne_mr_attr mr = {.addr = mem[i], .len = MR_BYTES,
					.access = NE_ACCESS_LOCAL_WRITE | NE_ACCESS_REMOTE_WRITE |
						  NE_ACCESS_REMOTE_READ};
		assert_int_equal(ne_mr_reg(s.nic[i], &mr, &key[i]), 0);
	}
	sim_connect(&s, &q0, &q1, cq[0], cq[1], MTU, 100, 200, 14, 7, 7);
	struct ne_recv_wr rwr = {.wr_id = 9, .addr = 0, .length = SEND_BYTES, .lkey = key[1]};
	assert_int_equal(ne_post_recv(s.nic[1], q1, &rwr), 0);
	struct ne_send_wr wr[WRS] = {
		{.wr_id = 1, .opcode = NE_WR_RDMA_WRITE, .send_flags = NE_SEND_SIGNALED,
		 .local_addr = 0, .length = WRITE_BYTES, .lkey = key[0], .remote_addr = 4096,
		 .rkey = key[1]},
		{.wr_id = 2, .opcode = NE_WR_SEND, .send_flags = NE_SEND_SIGNALED,
		 .local_addr = 128, .length = SEND_BYTES, .lkey = key[0]},
		{.wr_id = 3, .opcode = NE_WR_RDMA_READ, .send_flags = NE_SEND_SIGNALED,
		 .local_addr = 131072, .length = READ_BYTES, .lkey = key[0], .remote_addr = 8,
		 .rkey = key[1]},
	};
	for (uint32_t i = 0; i < WRS; i++)
		assert_int_equal(ne_post_send(s.nic[0], q0, &wr[i], 0), 0);
	r->f = calloc(MAX_FRAMES, sizeof(*r->f));
	assert_non_null(r->f);
	r->n = 0;
	r->mode = mode;
	r->dirty_bytes = 0;
	pump(&s, r, cq[0], WRS);
	/* the receiver's SEND completion too */
	struct ne_wc wc;
	assert_int_equal(ne_cq_poll(cq[1], &wc, 1), 1);
	assert_int_equal(wc.status, NE_WC_SUCCESS);
	assert_int_equal(wc.byte_len, SEND_BYTES);
	sim_free(&s);
	mr_free(mem[0], no_access);
	mr_free(mem[1], no_access);
}

/* The same frames byte for byte in a and b (which are freed). */
static void assert_same_wire(struct run *a, struct run *b)
{
	assert_true(a->n > WRITE_BYTES / MTU);
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		assert_int_equal(a->f[i].len, b->f[i].len);
		assert_memory_equal(a->f[i].d, b->f[i].d, a->f[i].len);
	}
	free(a->f);
	free(b->f);
}

/* Same frames byte for byte as copying zero buffers. */
static void test_zero_payload_same_wire(void **state)
{
	struct run copy, zero;

	(void)state;
	transfer(COPY, false, &copy);
	transfer(ZERO, false, &zero);
	assert_same_wire(&copy, &zero);
}

/*
 * payload_unwritten: the payload bytes of WRITE, SEND and READ response
 * frames stay as the buffer held them (keep_frame), the receiver completes
 * all three, and with those bytes zeroed the wire is the zero_payload
 * model's byte for byte.
 */
static void test_payload_unwritten_same_wire_once_zeroed(void **state)
{
	struct run zero, unwritten;

	(void)state;
	transfer(ZERO, false, &zero);
	transfer(UNWRITTEN, false, &unwritten);
	assert_int_equal(unwritten.dirty_bytes, WRITE_BYTES + SEND_BYTES + READ_BYTES);
	assert_same_wire(&zero, &unwritten);
}

/* The frames of the zero_payload model, written to a pcap and read back:
 * every ICRC valid. */
static void test_zero_payload_pcap_valid(void **state)
{
	struct run zero;
	char path[] = "/tmp/rl-ne-zero-XXXXXX";
	int fd = mkstemp(path);
	char err[PCAP_ERRBUF_SIZE];

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	transfer(ZERO, false, &zero);
	pcap_t *dead = pcap_open_dead(DLT_EN10MB, 65535);
	pcap_dumper_t *d = pcap_dump_open(dead, path);
	assert_non_null(d);
	for (size_t i = 0; i < zero.n; i++) {
		struct pcap_pkthdr h = {.caplen = zero.f[i].len, .len = zero.f[i].len};
		pcap_dump((u_char *)d, &h, zero.f[i].d);
	}
	pcap_dump_close(d);
	pcap_close(dead);

	pcap_t *in = pcap_open_offline(path, err);
	assert_non_null(in);
	struct pcap_pkthdr *h;
	const u_char *data;
	size_t n = 0;
	while (pcap_next_ex(in, &h, &data) == 1) {
		struct rl_pkt p;

		assert_int_equal(rl_parse(data, h->caplen, &p), RL_PARSE_OK);
		assert_true(p.is_roce);
		assert_true(rl_icrc_verify(data, &p));
		n++;
	}
	pcap_close(in);
	unlink(path);
	assert_int_equal(n, zero.n);
	free(zero.f);
}

/* MRs on pages with no access: WRITE, SEND and READ complete all the same. */
static void test_zero_payload_touches_no_payload(void **state)
{
	struct run zero;

	(void)state;
	transfer(ZERO, true, &zero);
	assert_true(zero.n > WRITE_BYTES / MTU);
	free(zero.f);
}

/* rl_icrc_compute_zeros reads nothing past the headers: a frame whose payload
 * lies on an inaccessible page. */
static void test_icrc_zeros_reads_no_payload(void **state)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *m = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	struct run r;
	struct rl_pkt p;
	uint32_t crc;

	(void)state;
	assert_true(m != MAP_FAILED);
	transfer(ZERO, false, &r);
	/* the first frame is the WRITE's first packet: full MTU payload */
	const struct frame *f = &r.f[0];
	assert_int_equal(rl_parse(f->d, f->len, &p), RL_PARSE_OK);
	assert_int_equal(p.payload_len, MTU);
	/* headers at the end of the first page, payload from the second on */
	uint8_t *at = m + page - p.payload_off;
	memcpy(at, f->d, p.payload_off);
	assert_int_equal(mprotect(m + page, (size_t)page, PROT_NONE), 0);
	assert_int_equal(rl_icrc_compute_zeros(at, &p, p.payload_off, &crc), 0);
	assert_int_equal(crc, rl_pkt_icrc_wire(f->d, &p));
	munmap(m, 2 * (size_t)page);
	free(r.f);
}

/* ne_zero_nt on a buffer full of 0xa5, at every alignment and at the sizes
 * around its plain-memset threshold: zeros in [off, off + n), nothing else
 * touched. */
static void test_zero_nt_exact_range(void **state)
{
	static const size_t sizes[] = {0, 1, 15, 16, 17, 255, 256, 257, 1000, 4096, 4099};
	enum { ROOM = 4224, GUARD = 32 };
	uint8_t *b = malloc(ROOM);

	(void)state;
	assert_non_null(b);
	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		for (size_t off = GUARD; off < GUARD + 64; off++) {
			size_t n = sizes[si];
			memset(b, 0xa5, ROOM);
			ne_zero_nt(b + off, n);
			for (size_t i = 0; i < ROOM; i++)
				assert_int_equal(b[i], i >= off && i < off + n ? 0 : 0xa5);
		}
	}
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zero_payload_same_wire),
		cmocka_unit_test(test_payload_unwritten_same_wire_once_zeroed),
		cmocka_unit_test(test_zero_payload_pcap_valid),
		cmocka_unit_test(test_zero_payload_touches_no_payload),
		cmocka_unit_test(test_icrc_zeros_reads_no_payload),
		cmocka_unit_test(test_zero_nt_exact_range),
	};
	return cmocka_run_group_tests_name("ne_zero", tests, NULL, NULL);
}
