/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pfc_mmu.h"
#include "rl_mem.h"

/* ---------------------------------------------------------------- profiles */

static const struct pfc_buffer_profile profiles[] = {
	{
		.name = "deep",
		.description = "spine (CTSW): 8 GiB deep buffer divided statically over the ports",
		.mode = PFC_MMU_STATIC,
		.buffer_bytes = 8ull << 30,
		.cell_bytes = 256,
		.alpha = 0,
		.reserve_bytes = 0,
		.resume_offset_bytes = 2 * 1536,
		.pause_quanta = 0xffff,
		.lossless_mask = (1u << 3) | (1u << 4),
		.ecn = { .enabled = false },
	},
	{
		.name = "shallow",
		.description = "leaf (RTSW): 32 MiB shared buffer, dynamic threshold alpha 1",
		.mode = PFC_MMU_SHARED,
		.buffer_bytes = 32ull << 20,
		.cell_bytes = 256,
		.alpha = 1.0,
		.reserve_bytes = 1536,
		.resume_offset_bytes = 2 * 1536,
		.pause_quanta = 0xffff,
		.lossless_mask = (1u << 3) | (1u << 4),
		.ecn = { .enabled = true, .kmin_bytes = 250000, .kmax_bytes = 2097152, .pmax = 0.05 },
	},
};

#define N_PROFILES (sizeof(profiles) / sizeof(profiles[0]))

const struct pfc_buffer_profile *pfc_buffer_profile_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < N_PROFILES; i++)
		if (strcmp(profiles[i].name, name) == 0)
			return &profiles[i];
	return NULL;
}

const struct pfc_buffer_profile *pfc_buffer_profile_at(size_t i)
{
	return i < N_PROFILES ? &profiles[i] : NULL;
}

/* ----------------------------------------------------------------- helpers */

#define ALPHA_SHIFT 16
#define ALPHA_MAX   64.0
#define BUFFER_MAX  (1ull << 40) /* 1 TiB: keeps free * alpha_q16 inside 64 bits */
#define MIN_FRAME_BYTES 60u      /* the shortest Ethernet frame, without FCS */
/* The port of a configuration given none: 100 Gbit/s, 100 ns of cable, 1514-byte frames. */
#define DEFAULT_PORT_RATE_BPS 100000000000ull
#define DEFAULT_PORT_CABLE_NS 100
#define DEFAULT_PORT_MTU 1514

struct pfc_mmu {
	struct pfc_mmu_config cfg; /* cfg.ports is NULL: per-port links live in ports[] */
	uint32_t n_ports;
	uint32_t cell;
	int cell_shift;            /* log2(cell) when a power of two, else -1 */
	uint8_t lossless;
	bool is_static;
	uint64_t alpha_q16;
	uint64_t reserve;
	uint64_t xoff_fixed;
	uint64_t resume;
	uint64_t egress_limit;     /* 0 = dynamic */
	struct pfc_rng rng;
	struct pfc_mmu_stats st;
	struct pfc_mmu_port *ports;
	struct pfc_mmu_pg *pgs;    /* [port * 8 + prio] */
	struct pfc_mmu_queue *qs;  /* [port * 8 + prio] */
};

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	if (!err || errlen == 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static inline uint64_t round_cells(uint64_t bytes, uint32_t cell)
{
	return (bytes + cell - 1) / cell * cell;
}

static inline uint64_t cost(const struct pfc_mmu *m, uint32_t len)
{
	if (m->cell_shift >= 0)
		return (((uint64_t)len + m->cell - 1) >> m->cell_shift) << m->cell_shift;
	return round_cells(len, m->cell);
}

static inline unsigned popcount8(uint8_t v)
{
	unsigned n = 0;
	for (; v; v &= (uint8_t)(v - 1))
		n++;
	return n;
}

static inline uint64_t dyn(const struct pfc_mmu *m, uint64_t free_bytes)
{
	return (free_bytes * m->alpha_q16) >> ALPHA_SHIFT;
}

static inline uint64_t sat_sub(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* ---------------------------------------------------------------- headroom */

uint32_t pfc_response_bits_default(uint64_t rate_bps)
{
	/* D-Resp (MAC reaction bound) + 2 x D-Intf (PHY delay bound), bit times. */
	if (rate_bps == 0)
		return 0;
	if (rate_bps <= 10000000000ull)
		return 30720 + 2 * 8192;
	if (rate_bps <= 25000000000ull)
		return 40960 + 2 * 6144;
	if (rate_bps <= 40000000000ull)
		return 60416 + 2 * 24576;
	if (rate_bps <= 100000000000ull)
		return 201728 + 2 * 122880;
	return 463360 + 2 * 122880;
}

void pfc_mmu_port_config_init(struct pfc_mmu_port_config *pc, uint64_t rate_bps,
			      uint64_t cable_delay_ns, uint32_t mtu_bytes)
{
	memset(pc, 0, sizeof(*pc));
	pc->rate_bps = rate_bps;
	pc->cable_delay_ns = cable_delay_ns;
	pc->mtu_bytes = mtu_bytes;
	pc->response_bits = pfc_response_bits_default(rate_bps);
}

uint64_t pfc_mmu_headroom_bytes(const struct pfc_mmu_port_config *pc, uint32_t cell_bytes)
{
	if (!pc || cell_bytes == 0)
		return 0;
	if (pc->headroom_bytes)
		return round_cells(pc->headroom_bytes, cell_bytes);
	if (pc->rate_bps == 0 || pc->mtu_bytes == 0)
		return 0;
	uint64_t m = pc->mtu_bytes;
	uint64_t l = pc->headroom_pkt_bytes ? pc->headroom_pkt_bytes : m;
	/* bits on the wire between the threshold crossing and the partner's last bit */
	uint64_t cable_bits = (2 * pc->cable_delay_ns * pc->rate_bps + 999999999ull) / 1000000000ull;
	uint64_t w = 8 * (m + PFC_WIRE_OVERHEAD)   /* XOFF waits behind our frame */
		     + 8 * PFC_FRAME_WIRE_LEN      /* the PFC frame */
		     + cable_bits                  /* round trip on the cable */
		     + pc->response_bits           /* partner's reaction */
		     + 8 * (m + PFC_WIRE_OVERHEAD); /* partner's frame in progress */
	uint64_t slot = 8 * (l + PFC_WIRE_OVERHEAD);
	uint64_t pkts = (w + slot - 1) / slot;
	return round_cells(m, cell_bytes) + pkts * round_cells(l, cell_bytes);
}

/* ------------------------------------------------------------------ config */

void pfc_mmu_config_init(struct pfc_mmu_config *cfg, const struct pfc_buffer_profile *prof,
			 uint32_t n_ports, const struct pfc_mmu_port_config *port)
{
	if (!prof)
		prof = pfc_buffer_profile_find("shallow");
	memset(cfg, 0, sizeof(*cfg));
	cfg->n_ports = n_ports;
	cfg->mode = prof->mode;
	cfg->buffer_bytes = prof->buffer_bytes;
	cfg->cell_bytes = prof->cell_bytes;
	cfg->alpha = prof->alpha;
	cfg->reserve_bytes = prof->reserve_bytes;
	cfg->lossless_mask = prof->lossless_mask;
	cfg->resume_offset_bytes = prof->resume_offset_bytes;
	cfg->pause_quanta = prof->pause_quanta;
	for (unsigned p = 0; p < PFC_NUM_PRIO; p++)
		cfg->ecn[p] = prof->ecn;
	if (port)
		cfg->port = *port;
	else
		pfc_mmu_port_config_init(&cfg->port, DEFAULT_PORT_RATE_BPS, DEFAULT_PORT_CABLE_NS,
					 DEFAULT_PORT_MTU);
	cfg->seed = 1;
}

static int check_ecn(const struct pfc_ecn_config *e, const char *what, char *err, size_t errlen)
{
	if (!e->enabled)
		return 0;
	if (e->kmin_bytes > e->kmax_bytes) {
		set_err(err, errlen, "%s: ECN kmin %llu bytes is above kmax %llu bytes", what,
			(unsigned long long)e->kmin_bytes, (unsigned long long)e->kmax_bytes);
		return -EINVAL;
	}
	if (!(e->pmax > 0.0 && e->pmax <= 1.0)) {
		set_err(err, errlen, "%s: ECN pmax %g is outside (0, 1]", what, e->pmax);
		return -EINVAL;
	}
	return 0;
}

static const struct pfc_mmu_port_config *port_cfg(const struct pfc_mmu_config *cfg, uint32_t i)
{
	return cfg->ports ? &cfg->ports[i] : &cfg->port;
}

/* Derived sizes shared by check_config and create. */
struct layout {
	uint64_t share;     /* static: per port share */
	uint64_t min_pool;  /* static: smallest port pool */
	uint64_t headroom_total;
	uint64_t reserved_total;
	uint64_t shared_pool;
};

/* compute_layout's steps: the scalar settings, each port (its headroom), the
 * limits against the buffer, then the partitioning mode's pools. Each returns
 * 0, or -EINVAL with the first problem written to err. */

static int layout_check_globals(const struct pfc_mmu_config *cfg, char *err, size_t errlen)
{
	if (cfg->n_ports == 0 || cfg->n_ports > PFC_MMU_MAX_PORTS) {
		set_err(err, errlen, "pfc_mmu: %u ports: need 1 to %u", cfg->n_ports,
			PFC_MMU_MAX_PORTS);
		return -EINVAL;
	}
	if (cfg->buffer_bytes == 0 || cfg->buffer_bytes > BUFFER_MAX) {
		set_err(err, errlen, "pfc_mmu: buffer size %llu bytes: need 1 to %llu",
			(unsigned long long)cfg->buffer_bytes, (unsigned long long)BUFFER_MAX);
		return -EINVAL;
	}
	if (cfg->cell_bytes == 0 || cfg->cell_bytes > cfg->buffer_bytes) {
		set_err(err, errlen, "pfc_mmu: cell size %u bytes: need 1 to the buffer size",
			cfg->cell_bytes);
		return -EINVAL;
	}
	if (cfg->mode != PFC_MMU_STATIC && cfg->mode != PFC_MMU_SHARED) {
		set_err(err, errlen, "pfc_mmu: unknown partitioning mode %d", (int)cfg->mode);
		return -EINVAL;
	}
	if (cfg->mode == PFC_MMU_SHARED && !(cfg->alpha > 0.0 && cfg->alpha <= ALPHA_MAX)) {
		set_err(err, errlen, "pfc_mmu: shared mode needs alpha in (0, %g], got %g",
			ALPHA_MAX, cfg->alpha);
		return -EINVAL;
	}
	if (cfg->lossless_mask && cfg->pause_quanta == 0) {
		set_err(err, errlen, "pfc_mmu: pause_quanta is 0 but priorities 0x%02x are lossless",
			cfg->lossless_mask);
		return -EINVAL;
	}
	for (unsigned p = 0; p < PFC_NUM_PRIO; p++) {
		char what[32];
		snprintf(what, sizeof(what), "pfc_mmu: priority %u", p);
		int rc = check_ecn(&cfg->ecn[p], what, err, errlen);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Every port's link and frame sizes; sums the headroom of its lossless
 * priorities into lo->headroom_total and keeps the largest in *max_hdrm. */
static int layout_ports(const struct pfc_mmu_config *cfg, struct layout *lo, uint64_t *max_hdrm,
			char *err, size_t errlen)
{
	unsigned n_lossless = popcount8(cfg->lossless_mask);

	for (uint32_t i = 0; i < cfg->n_ports; i++) {
		const struct pfc_mmu_port_config *pc = port_cfg(cfg, i);
		if (pc->rate_bps == 0) {
			set_err(err, errlen, "pfc_mmu: port %u: link rate is 0 bit/s", i);
			return -EINVAL;
		}
		if (pc->mtu_bytes < MIN_FRAME_BYTES) {
			set_err(err, errlen, "pfc_mmu: port %u: frame size %u is below %u bytes", i,
				pc->mtu_bytes, MIN_FRAME_BYTES);
			return -EINVAL;
		}
		if (pc->headroom_pkt_bytes && pc->headroom_pkt_bytes < MIN_FRAME_BYTES) {
			set_err(err, errlen, "pfc_mmu: port %u: headroom packet size %u is below %u",
				i, pc->headroom_pkt_bytes, MIN_FRAME_BYTES);
			return -EINVAL;
		}
		uint64_t h = n_lossless * pfc_mmu_headroom_bytes(pc, cfg->cell_bytes);
		if (h > *max_hdrm)
			*max_hdrm = h;
		lo->headroom_total += h;
	}
	return 0;
}

static int layout_check_limits(const struct pfc_mmu_config *cfg, char *err, size_t errlen)
{
	if (cfg->egress_limit_bytes > cfg->buffer_bytes) {
		set_err(err, errlen,
			"pfc_mmu: egress limit %llu bytes is above the buffer size %llu bytes",
			(unsigned long long)cfg->egress_limit_bytes,
			(unsigned long long)cfg->buffer_bytes);
		return -EINVAL;
	}
	if (cfg->xoff_bytes > cfg->buffer_bytes) {
		set_err(err, errlen,
			"pfc_mmu: XOFF threshold %llu bytes is above the buffer size %llu bytes",
			(unsigned long long)cfg->xoff_bytes, (unsigned long long)cfg->buffer_bytes);
		return -EINVAL;
	}
	return 0;
}

/* Static partitioning: each port gets an equal share (whole cells), of which
 * its headroom is set aside; the rest is the port's pool. */
static int layout_static(const struct pfc_mmu_config *cfg, struct layout *lo, uint64_t max_hdrm,
			 char *err, size_t errlen)
{
	unsigned n_lossless = popcount8(cfg->lossless_mask);

	lo->share = cfg->buffer_bytes / cfg->n_ports / cfg->cell_bytes * cfg->cell_bytes;
	if (lo->share <= max_hdrm) {
		set_err(err, errlen,
			"pfc_mmu: static port share %llu bytes (buffer %llu / %u ports) "
			"does not exceed the headroom of %u lossless priorities (%llu bytes)",
			(unsigned long long)lo->share,
			(unsigned long long)cfg->buffer_bytes, cfg->n_ports, n_lossless,
			(unsigned long long)max_hdrm);
		return -EINVAL;
	}
	lo->min_pool = lo->share - max_hdrm;
	if (cfg->xoff_bytes > lo->min_pool) {
		set_err(err, errlen,
			"pfc_mmu: XOFF threshold %llu bytes is above the %llu bytes a port "
			"can use (its share of the buffer minus headroom)",
			(unsigned long long)cfg->xoff_bytes,
			(unsigned long long)lo->min_pool);
		return -EINVAL;
	}
	uint64_t t = cfg->xoff_bytes ? cfg->xoff_bytes : lo->min_pool;
	if (cfg->lossless_mask && cfg->resume_offset_bytes >= t) {
		set_err(err, errlen,
			"pfc_mmu: resume offset %llu bytes is not below the XOFF threshold "
			"%llu bytes", (unsigned long long)cfg->resume_offset_bytes,
			(unsigned long long)t);
		return -EINVAL;
	}
	return 0;
}

/* Shared (dynamic threshold) partitioning: per-PG reserves and headroom come
 * off the top, the rest is the shared pool. */
static int layout_shared(const struct pfc_mmu_config *cfg, struct layout *lo, char *err,
			 size_t errlen)
{
	lo->reserved_total = (uint64_t)cfg->n_ports * PFC_NUM_PRIO * cfg->reserve_bytes;
	uint64_t fixed = lo->reserved_total + lo->headroom_total;
	if (fixed >= cfg->buffer_bytes) {
		set_err(err, errlen,
			"pfc_mmu: reserves (%llu bytes) plus headroom (%llu bytes) leave no "
			"shared pool in a %llu-byte buffer",
			(unsigned long long)lo->reserved_total,
			(unsigned long long)lo->headroom_total,
			(unsigned long long)cfg->buffer_bytes);
		return -EINVAL;
	}
	lo->shared_pool = cfg->buffer_bytes - fixed;
	if (cfg->xoff_bytes > lo->shared_pool + cfg->reserve_bytes) {
		set_err(err, errlen,
			"pfc_mmu: XOFF threshold %llu bytes is above what a PG can hold "
			"(shared pool %llu + reserve %llu bytes)",
			(unsigned long long)cfg->xoff_bytes,
			(unsigned long long)lo->shared_pool,
			(unsigned long long)cfg->reserve_bytes);
		return -EINVAL;
	}
	if (cfg->lossless_mask && cfg->resume_offset_bytes >= lo->shared_pool) {
		set_err(err, errlen,
			"pfc_mmu: resume offset %llu bytes is not below the shared pool "
			"(%llu bytes)", (unsigned long long)cfg->resume_offset_bytes,
			(unsigned long long)lo->shared_pool);
		return -EINVAL;
	}
	return 0;
}

static int compute_layout(const struct pfc_mmu_config *cfg, struct layout *lo, char *err,
			  size_t errlen)
{
	uint64_t max_hdrm = 0;
	int rc;

	memset(lo, 0, sizeof(*lo));
	rc = layout_check_globals(cfg, err, errlen);
	if (!rc)
		rc = layout_ports(cfg, lo, &max_hdrm, err, errlen);
	if (!rc)
		rc = layout_check_limits(cfg, err, errlen);
	if (rc)
		return rc;
	if (cfg->mode == PFC_MMU_STATIC)
		return layout_static(cfg, lo, max_hdrm, err, errlen);
	return layout_shared(cfg, lo, err, errlen);
}

int pfc_mmu_check_config(const struct pfc_mmu_config *cfg, char *err, size_t errlen)
{
	struct layout lo;
	if (!cfg) {
		set_err(err, errlen, "pfc_mmu: no configuration");
		return -EINVAL;
	}
	return compute_layout(cfg, &lo, err, errlen);
}

/* ------------------------------------------------------------------ create */

struct pfc_mmu *pfc_mmu_create(const struct pfc_mmu_config *cfg, char *err, size_t errlen)
{
	struct layout lo;
	if (pfc_mmu_check_config(cfg, err, errlen))
		return NULL;
	compute_layout(cfg, &lo, NULL, 0);

	/* (the state and counters of each switch's MMU on lines of its own: the
	 * switches of two partitions' threads never write to one line) */
	struct pfc_mmu *m = rl_zalloc_lines(1, sizeof(*m));
	size_t n = (size_t)cfg->n_ports;
	if (m) {
		m->ports = rl_zalloc_lines(n, sizeof(*m->ports));
		m->pgs = rl_zalloc_lines(n * PFC_NUM_PRIO, sizeof(*m->pgs));
		m->qs = rl_zalloc_lines(n * PFC_NUM_PRIO, sizeof(*m->qs));
	}
	if (!m || !m->ports || !m->pgs || !m->qs) {
		pfc_mmu_destroy(m);
		set_err(err, errlen, "pfc_mmu: out of memory for %u ports", cfg->n_ports);
		return NULL;
	}
	m->cfg = *cfg;
	m->cfg.ports = NULL;
	m->n_ports = cfg->n_ports;
	m->cell = cfg->cell_bytes;
	m->cell_shift = -1;
	if ((m->cell & (m->cell - 1)) == 0)
		for (int s = 0; s < 32; s++)
			if ((1u << s) == m->cell)
				m->cell_shift = s;
	m->lossless = cfg->lossless_mask;
	m->is_static = cfg->mode == PFC_MMU_STATIC;
	m->alpha_q16 = m->is_static ? 0 : (uint64_t)(cfg->alpha * (1u << ALPHA_SHIFT) + 0.5);
	if (!m->is_static && m->alpha_q16 == 0)
		m->alpha_q16 = 1;
	m->reserve = m->is_static ? 0 : cfg->reserve_bytes;
	m->xoff_fixed = cfg->xoff_bytes;
	m->resume = cfg->resume_offset_bytes;
	m->egress_limit = cfg->egress_limit_bytes;
	if (m->is_static && m->egress_limit == 0)
		m->egress_limit = lo.share;
	pfc_rng_seed(&m->rng, cfg->seed);

	unsigned n_lossless = popcount8(cfg->lossless_mask);
	for (uint32_t i = 0; i < m->n_ports; i++) {
		struct pfc_mmu_port *p = &m->ports[i];
		p->link = *port_cfg(cfg, i);
		p->headroom_bytes = pfc_mmu_headroom_bytes(&p->link, m->cell);
		if (m->is_static) {
			p->share_bytes = lo.share;
			p->pool_bytes = lo.share - n_lossless * p->headroom_bytes;
		}
		p->refresh_ns = pfc_quanta_to_ns(cfg->pause_quanta, p->link.rate_bps) / 2;
		for (unsigned q = 0; q < PFC_NUM_PRIO; q++)
			m->qs[i * PFC_NUM_PRIO + q].ecn = cfg->ecn[q];
	}
	m->st.shared_pool = lo.shared_pool;
	m->st.reserved_total = lo.reserved_total;
	m->st.headroom_total = lo.headroom_total;
	return m;
}

void pfc_mmu_destroy(struct pfc_mmu *mmu)
{
	if (!mmu)
		return;
	free(mmu->ports);
	free(mmu->pgs);
	free(mmu->qs);
	free(mmu);
}

/* --------------------------------------------------------------- fast path */

const char *pfc_mmu_verdict_str(enum pfc_mmu_verdict v)
{
	static const char *const s[PFC_MMU_VERDICT_COUNT] = {
		[PFC_MMU_ADMIT] = "admit",       [PFC_MMU_DROP_HEADROOM] = "headroom",
		[PFC_MMU_DROP_INGRESS] = "ingress", [PFC_MMU_DROP_EGRESS] = "egress",
		[PFC_MMU_DROP_POOL] = "pool",    [PFC_MMU_DROP_INVALID] = "invalid",
	};
	return (unsigned)v < PFC_MMU_VERDICT_COUNT ? s[v] : "unknown";
}

double pfc_ecn_probability(const struct pfc_ecn_config *ecn, uint64_t q_bytes)
{
	if (!ecn || !ecn->enabled || q_bytes <= ecn->kmin_bytes)
		return 0.0;
	if (q_bytes >= ecn->kmax_bytes)
		return 1.0;
	return ecn->pmax * (double)(q_bytes - ecn->kmin_bytes) /
	       (double)(ecn->kmax_bytes - ecn->kmin_bytes);
}

void pfc_rng_seed(struct pfc_rng *rng, uint64_t seed)
{
	rng->state = seed;
}

uint32_t pfc_rng_next(void *ctx)
{
	struct pfc_rng *rng = ctx;
	uint64_t z = (rng->state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return (uint32_t)((z ^ (z >> 31)) >> 32);
}

static inline uint64_t shared_part(const struct pfc_mmu *m, uint64_t nonhdrm)
{
	return sat_sub(nonhdrm, m->reserve);
}

/*
 * Non-headroom bytes the PG may hold now (reserve included). Static: fixed.
 * Shared: reserve + alpha x free shared pool, capped by xoff_bytes.
 */
static inline uint64_t pg_limit(const struct pfc_mmu *m, const struct pfc_mmu_port *port)
{
	uint64_t t;
	if (m->is_static)
		t = port->pool_bytes;
	else
		t = m->reserve + dyn(m, m->st.shared_pool - m->st.shared_used);
	if (m->xoff_fixed && m->xoff_fixed < t)
		t = m->xoff_fixed;
	return t;
}

static inline bool should_mark(struct pfc_mmu *m, const struct pfc_ecn_config *e, uint64_t q)
{
	if (q <= e->kmin_bytes)
		return false;
	if (q >= e->kmax_bytes)
		return true;
	double p = pfc_ecn_probability(e, q);
	uint32_t r = m->cfg.rand32 ? m->cfg.rand32(m->cfg.rand_ctx) : pfc_rng_next(&m->rng);
	return (double)r < p * 4294967296.0;
}

static void count_drop(struct pfc_mmu *m, struct pfc_mmu_pg *pg, struct pfc_mmu_queue *q,
		       enum pfc_mmu_verdict v, uint32_t len)
{
	m->st.drops[v]++;
	m->st.bytes_dropped += len;
	if (pg) {
		pg->drops[v]++;
		pg->bytes_dropped += len;
	}
	if (q)
		q->drops[v]++;
}

static void enter_xoff(struct pfc_mmu *m, struct pfc_mmu_pg *pg, uint64_t now_ns)
{
	pg->in_xoff = true;
	pg->pfc_pending = true;
	pg->xoff_since_ns = now_ns;
	pg->xoff++;
	m->st.xoff++;
}

/* pfc_mmu_admit's steps: does the packet fit below its PG's threshold, then
 * charging its bytes to the buffer and the counters. */

/* Whether c more bytes fit in the PG outside its headroom: static, below the
 * PG limit and in the ingress port's pool; shared, with the growth of the
 * PG's shared part (*d_shared) in the free shared pool (else *why becomes
 * PFC_MMU_DROP_POOL) and below the PG limit unless it takes no shared byte. */
static bool admit_fits(const struct pfc_mmu *m, const struct pfc_mmu_pg *pg,
		       const struct pfc_mmu_port *ip, uint64_t c, enum pfc_mmu_verdict *why,
		       uint64_t *d_shared)
{
	const uint64_t nonhdrm = pg->bytes - pg->headroom;
	const uint64_t free_sh = m->st.shared_pool - m->st.shared_used;
	const uint64_t after = nonhdrm + c;

	if (m->is_static)
		return after <= pg_limit(m, ip) && ip->in_pool + c <= ip->pool_bytes;
	*d_shared = shared_part(m, after) - shared_part(m, nonhdrm);
	if (*d_shared > free_sh) {
		*why = PFC_MMU_DROP_POOL;
		return false;
	}
	return *d_shared == 0 || after <= pg_limit(m, ip);
}

/* Charge c bytes where admit_fits put them: the PG's headroom, the static
 * port pool, or d_shared of them to the shared pool. */
static void charge_buffer(struct pfc_mmu *m, struct pfc_mmu_pg *pg, struct pfc_mmu_port *ip,
			  uint64_t c, bool to_headroom, uint64_t d_shared)
{
	if (to_headroom) {
		pg->headroom += c;
		if (pg->headroom > pg->peak_headroom)
			pg->peak_headroom = pg->headroom;
	} else if (m->is_static) {
		ip->in_pool += c;
	} else {
		m->st.shared_used += d_shared;
		if (m->st.shared_used > m->st.shared_peak)
			m->st.shared_peak = m->st.shared_used;
	}
}

/* An admitted packet of c buffer bytes: occupancy, peaks and admitted counts
 * of its PG, its queue, both ports and the switch. */
static void count_admit(struct pfc_mmu *m, const struct pfc_mmu_pkt *pkt, struct pfc_mmu_pg *pg,
			struct pfc_mmu_queue *q, uint64_t c)
{
	struct pfc_mmu_port *ip = &m->ports[pkt->in_port];
	struct pfc_mmu_port *op = &m->ports[pkt->out_port];

	pg->bytes += c;
	if (pg->bytes > pg->peak_bytes)
		pg->peak_bytes = pg->bytes;
	pg->pkts_admitted++;
	pg->bytes_admitted += pkt->len;
	q->bytes += c;
	q->pkts++;
	if (q->bytes > q->peak_bytes)
		q->peak_bytes = q->bytes;
	q->pkts_admitted++;
	q->bytes_admitted += pkt->len;
	ip->in_bytes += c;
	if (ip->in_bytes > ip->in_peak)
		ip->in_peak = ip->in_bytes;
	op->out_bytes += c;
	if (op->out_bytes > op->out_peak)
		op->out_peak = op->out_bytes;
	m->st.bytes += c;
	if (m->st.bytes > m->st.peak_bytes)
		m->st.peak_bytes = m->st.bytes;
	m->st.pkts_admitted++;
	m->st.bytes_admitted += pkt->len;
}

enum pfc_mmu_verdict pfc_mmu_admit(struct pfc_mmu *m, const struct pfc_mmu_pkt *pkt,
				   uint64_t now_ns, unsigned *flags)
{
	unsigned fl = 0;
	if (flags)
		*flags = 0;
	if (pkt->in_port >= m->n_ports || pkt->out_port >= m->n_ports ||
	    pkt->prio >= PFC_NUM_PRIO || pkt->len == 0) {
		count_drop(m, NULL, NULL, PFC_MMU_DROP_INVALID, pkt->len);
		return PFC_MMU_DROP_INVALID;
	}
	const unsigned pi = pkt->in_port * PFC_NUM_PRIO + pkt->prio;
	const unsigned qi = pkt->out_port * PFC_NUM_PRIO + pkt->prio;
	struct pfc_mmu_pg *pg = &m->pgs[pi];
	struct pfc_mmu_queue *q = &m->qs[qi];
	struct pfc_mmu_port *ip = &m->ports[pkt->in_port];
	const bool lossless = (m->lossless >> pkt->prio) & 1;
	const uint64_t c = cost(m, pkt->len);
	const uint64_t free_sh = m->st.shared_pool - m->st.shared_used;

	if (!lossless) {
		uint64_t lim = m->egress_limit ? m->egress_limit : dyn(m, free_sh);
		if (q->bytes + c > lim) {
			count_drop(m, pg, q, PFC_MMU_DROP_EGRESS, pkt->len);
			return PFC_MMU_DROP_EGRESS;
		}
	}

	/* Does it fit below the PG threshold (outside the headroom)? */
	enum pfc_mmu_verdict why = PFC_MMU_DROP_INGRESS;
	uint64_t d_shared = 0;
	bool fits = !pg->in_xoff && admit_fits(m, pg, ip, c, &why, &d_shared);

	bool to_headroom = false;
	if (!fits) {
		if (!lossless) {
			count_drop(m, pg, q, why, pkt->len);
			return why;
		}
		if (!pg->in_xoff) {
			enter_xoff(m, pg, now_ns);
			fl |= PFC_MMU_F_XOFF;
		}
		if (pg->headroom + c > ip->headroom_bytes) {
			count_drop(m, pg, q, PFC_MMU_DROP_HEADROOM, pkt->len);
			if (flags)
				*flags = fl;
			return PFC_MMU_DROP_HEADROOM;
		}
		to_headroom = true;
	}

	/* ECN on the queue length the packet sees (before it). */
	if (pkt->ect && q->ecn.enabled && should_mark(m, &q->ecn, q->bytes)) {
		fl |= PFC_MMU_F_ECN_CE;
		q->ecn_marked++;
		m->st.ecn_marked++;
	}

	charge_buffer(m, pg, ip, c, to_headroom, d_shared);
	count_admit(m, pkt, pg, q, c);
	if (flags)
		*flags = fl;
	return PFC_MMU_ADMIT;
}

static inline uint64_t take(uint64_t *v, uint64_t c, bool *under)
{
	if (*v < c) {
		*under = true;
		uint64_t had = *v;
		*v = 0;
		return had;
	}
	*v -= c;
	return c;
}

static unsigned release(struct pfc_mmu *m, const struct pfc_mmu_pkt *pkt, uint64_t now_ns,
			bool discard)
{
	if (pkt->in_port >= m->n_ports || pkt->out_port >= m->n_ports ||
	    pkt->prio >= PFC_NUM_PRIO) {
		m->st.underflows++;
		return 0;
	}
	struct pfc_mmu_pg *pg = &m->pgs[pkt->in_port * PFC_NUM_PRIO + pkt->prio];
	struct pfc_mmu_queue *q = &m->qs[pkt->out_port * PFC_NUM_PRIO + pkt->prio];
	struct pfc_mmu_port *ip = &m->ports[pkt->in_port];
	struct pfc_mmu_port *op = &m->ports[pkt->out_port];
	const uint64_t c = cost(m, pkt->len);
	bool under = false;

	/* headroom first, then shared, then reserve */
	uint64_t h = pg->headroom < c ? pg->headroom : c;
	pg->headroom -= h;
	uint64_t rest = c - h;
	uint64_t nonhdrm = pg->bytes - pg->headroom - h;
	if (rest > nonhdrm) {
		under = true;
		rest = nonhdrm;
	}
	if (m->is_static) {
		take(&ip->in_pool, rest, &under);
	} else {
		uint64_t d = shared_part(m, nonhdrm) - shared_part(m, nonhdrm - rest);
		take(&m->st.shared_used, d, &under);
	}
	take(&pg->bytes, h + rest, &under);
	take(&q->bytes, c, &under);
	take(&q->pkts, 1, &under);
	take(&ip->in_bytes, c, &under);
	take(&op->out_bytes, c, &under);
	take(&m->st.bytes, c, &under);
	if (under)
		m->st.underflows++;

	if (discard) {
		pg->pkts_discarded++;
		q->pkts_discarded++;
		m->st.pkts_discarded++;
	} else {
		pg->pkts_dequeued++;
		pg->bytes_dequeued += pkt->len;
		q->pkts_dequeued++;
		q->bytes_dequeued += pkt->len;
		m->st.pkts_dequeued++;
		m->st.bytes_dequeued += pkt->len;
	}

	if (!pg->in_xoff || pg->headroom)
		return 0;
	/* XON once the PG is resume_offset below its threshold (and, static, its port pool). */
	uint64_t left = pg->bytes;
	if (left + m->resume > pg_limit(m, ip))
		return 0;
	if (m->is_static && ip->in_pool + m->resume > ip->pool_bytes)
		return 0;
	if (!m->is_static && m->resume > m->st.shared_pool - m->st.shared_used)
		return 0;
	pg->in_xoff = false;
	pg->pfc_pending = true;
	pg->pause_ns += now_ns > pg->xoff_since_ns ? now_ns - pg->xoff_since_ns : 0;
	pg->xon++;
	m->st.xon++;
	return PFC_MMU_F_XON;
}

unsigned pfc_mmu_dequeue(struct pfc_mmu *mmu, const struct pfc_mmu_pkt *pkt, uint64_t now_ns)
{
	return release(mmu, pkt, now_ns, false);
}

unsigned pfc_mmu_discard(struct pfc_mmu *mmu, const struct pfc_mmu_pkt *pkt, uint64_t now_ns)
{
	return release(mmu, pkt, now_ns, true);
}

/* --------------------------------------------------------------- PFC frames */

unsigned pfc_mmu_pfc_frame(struct pfc_mmu *m, unsigned port, uint64_t now_ns,
			   struct pfc_frame *f)
{
	pfc_frame_init(f, NULL);
	if (port >= m->n_ports || !m->lossless)
		return 0;
	struct pfc_mmu_port *pt = &m->ports[port];
	unsigned n = 0;
	for (unsigned p = 0; p < PFC_NUM_PRIO; p++) {
		if (!((m->lossless >> p) & 1))
			continue;
		struct pfc_mmu_pg *pg = &m->pgs[port * PFC_NUM_PRIO + p];
		if (pg->in_xoff) {
			if (!pg->pfc_pending && now_ns < pg->last_tx_ns + pt->refresh_ns)
				continue;
			pfc_frame_set(f, p, m->cfg.pause_quanta);
			pg->last_tx_ns = now_ns;
			pg->xoff_tx++;
		} else if (pg->pfc_pending) {
			pfc_frame_set(f, p, 0);
			pg->xon_tx++;
		} else {
			continue;
		}
		pg->pfc_pending = false;
		n++;
	}
	if (n) {
		pt->pfc_frames_tx++;
		m->st.pfc_frames_tx++;
	}
	return n;
}

uint64_t pfc_mmu_pfc_next_ns(const struct pfc_mmu *m, unsigned port)
{
	if (port >= m->n_ports)
		return UINT64_MAX;
	const struct pfc_mmu_port *pt = &m->ports[port];
	uint64_t t = UINT64_MAX;
	for (unsigned p = 0; p < PFC_NUM_PRIO; p++) {
		const struct pfc_mmu_pg *pg = &m->pgs[port * PFC_NUM_PRIO + p];
		if (pg->pfc_pending)
			return 0;
		if (pg->in_xoff && pg->last_tx_ns + pt->refresh_ns < t)
			t = pg->last_tx_ns + pt->refresh_ns;
	}
	return t;
}

/* --------------------------------------------------------------- accessors */

const struct pfc_mmu_pg *pfc_mmu_pg(const struct pfc_mmu *m, unsigned port, unsigned prio)
{
	if (port >= m->n_ports || prio >= PFC_NUM_PRIO)
		return NULL;
	return &m->pgs[port * PFC_NUM_PRIO + prio];
}

const struct pfc_mmu_queue *pfc_mmu_queue(const struct pfc_mmu *m, unsigned port, unsigned prio)
{
	if (port >= m->n_ports || prio >= PFC_NUM_PRIO)
		return NULL;
	return &m->qs[port * PFC_NUM_PRIO + prio];
}

const struct pfc_mmu_port *pfc_mmu_port(const struct pfc_mmu *m, unsigned port)
{
	return port < m->n_ports ? &m->ports[port] : NULL;
}

const struct pfc_mmu_stats *pfc_mmu_stats(const struct pfc_mmu *m)
{
	return &m->st;
}

const struct pfc_mmu_config *pfc_mmu_config(const struct pfc_mmu *m)
{
	return &m->cfg;
}

uint64_t pfc_mmu_xoff_threshold(const struct pfc_mmu *m, unsigned port, unsigned prio)
{
	if (port >= m->n_ports || prio >= PFC_NUM_PRIO)
		return 0;
	return pg_limit(m, &m->ports[port]);
}

uint64_t pfc_mmu_headroom(const struct pfc_mmu *m, unsigned port)
{
	return port < m->n_ports ? m->ports[port].headroom_bytes : 0;
}

uint64_t pfc_mmu_pause_ns(const struct pfc_mmu *m, unsigned port, unsigned prio, uint64_t now_ns)
{
	const struct pfc_mmu_pg *pg = pfc_mmu_pg(m, port, prio);
	if (!pg)
		return 0;
	uint64_t t = pg->pause_ns;
	if (pg->in_xoff && now_ns > pg->xoff_since_ns)
		t += now_ns - pg->xoff_since_ns;
	return t;
}

int pfc_mmu_set_ecn(struct pfc_mmu *m, unsigned port, unsigned prio,
		    const struct pfc_ecn_config *ecn, char *err, size_t errlen)
{
	if (port >= m->n_ports || prio >= PFC_NUM_PRIO) {
		set_err(err, errlen, "pfc_mmu: queue (port %u, priority %u) does not exist", port,
			prio);
		return -EINVAL;
	}
	int rc = check_ecn(ecn, "pfc_mmu", err, errlen);
	if (rc < 0)
		return rc;
	m->qs[port * PFC_NUM_PRIO + prio].ecn = *ecn;
	return 0;
}
