/* SPDX-License-Identifier: BSD-3-Clause */
/* dp_swx: a switch's forwarding decision as a DPDK SWX .spec program (dp_swx.h). */
#include "dp_swx.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_log.h>

#include "rl_bytes.h"
#include "rl_nexthop.h"
#include "swx_load.h"
#include "swx_meta.h"
#include "swx_spec.h"

#define IPV4_TTL_OFF 8 /* in the IPv4 header */
#define ENTRY_MAX 256  /* one table entry's text */

/* What of the contract (dp_swx.h) a program has. */
struct shape {
	bool hash_cfg;
	bool ecmp;        /* route has route_ecmp and the table member exists */
	const char *fwd;  /* "fwd" or "route_fwd" */
	bool meta;        /* it declares header rl_meta: rocelab's metadata goes first (swx_meta.h) */
	bool dscp;        /* it writes the IPv4 DSCP: rocelab takes it from the emitted frame */
};

/*
 * One switch's program. Each belongs to one switch, and a switch runs on one
 * worker, so its pipeline, result and scratch frame need no lock.
 */
struct dp_swx {
	struct dp_prog prog; /* first: the switch's hook points here */
	struct swx_pipe *pipe;
	const struct dp_fabric *f;
	const struct dp_switch *s;
	struct shape sh;
	uint64_t route_changes; /* f's when the tables were filled */
	uint64_t rng;           /* rl_meta's rand: xorshift64, seeded as the C flowlet table is */
	struct swx_result res;
	uint8_t frame[SWX_FRAME_MAX];
};

static int fill(struct swx_pipe *p, const struct dp_fabric *f, const struct dp_switch *s,
		const struct shape *sh, char *err, size_t errlen);

/*
 * rl_meta's rand: one xorshift64 step folded to 32 bits. (The high half alone
 * is 0 for the first steps from a small seed: 1 gives 0x40822041.)
 */
static uint32_t rand32(uint64_t *rng)
{
	uint64_t v = rl_xorshift64(rng);

	return (uint32_t)(v ^ v >> 32);
}

/* rocelab's metadata (swx_meta.h) for a frame p of x's switch arriving on in_port at now_ns. */
static void meta_of(struct dp_swx *x, const struct rl_pkt *p, uint16_t in_port, uint64_t now_ns,
		    struct swx_meta *m)
{
	const struct topo_switch *cfg = x->s->cfg;
	int h = x->f->host_of_ipv4(x->f, rl_get_be32(p->dst));

	*m = (struct swx_meta){.now_ns = now_ns, .flowlet_timeout_ns = cfg->flowlet_timeout_ns,
			       .port_in = in_port, .seed = cfg->seed, .algo = (uint8_t)cfg->algo,
			       .eecmp = cfg->profile == RL_PROFILE_EECMP,
			       .rand = rand32(&x->rng)};
	if (h >= 0 && x->f->topo->hosts[h].leaf != x->s->idx && x->s->group) {
		const struct dp_group *g = &x->s->group[x->f->sw[x->f->topo->hosts[h].leaf].cfg->leaf_index];

		m->n_members = (uint32_t)__builtin_popcountll(g->up_mask);
	}
}

static int swx_decide(struct dp_prog *pg, const uint8_t *d, uint32_t len, const struct rl_pkt *p,
		      uint16_t in_port, uint64_t now_ns, uint8_t *dscp)
{
	struct dp_swx *x = (struct dp_swx *)pg;
	/* (global events change the groups between windows: a relaxed read suffices) */
	uint64_t changes = __atomic_load_n(&x->f->route_changes, __ATOMIC_RELAXED);
	uint32_t pre = x->sh.meta ? SWX_META_LEN : 0;

	if (changes != x->route_changes) { /* a link went down or up: the groups again */
		char err[SWX_ERR_MAX];

		x->route_changes = changes;
		if (fill(x->pipe, x->f, x->s, &x->sh, err, sizeof(err)) != 0)
			return -1; /* (entries that filled at the start fill again: not reached) */
	}
	if (len + pre > SWX_FRAME_MAX || (uint32_t)p->l3_off + IPV4_TTL_OFF >= len)
		return -1;
	if (pre) {
		struct swx_meta m;

		meta_of(x, p, in_port, now_ns, &m);
		swx_meta_put(x->frame, &m);
	}
	/*
	 * A copy: the program may write into the frame it is given, and the
	 * switch's own rewrite stage writes the real one. Earlier hops may owe
	 * the frame their TTL decrements (dp_frame.ttl_owed): the program reads
	 * the TTL the packet has (p->ttl), as the C stages do.
	 */
	memcpy(x->frame + pre, d, len);
	x->frame[pre + p->l3_off + IPV4_TTL_OFF] = p->ttl;
	if (swx_pipe_push_port(x->pipe, in_port, x->frame, len + pre, &x->res) != 0 || !x->res.sent)
		return -1;
	/*
	 * The DSCP is read where the input frame has it: the emitted frame has
	 * the input's layout when its length is the same (rl_meta is not
	 * emitted). One that changed its headers' length is counted as the
	 * program's drop, not sent with a DSCP read from the wrong byte.
	 */
	if (x->sh.dscp) {
		if (x->res.len != len)
			return -1;
		*dscp = x->res.frame[p->l3_off + 1] >> 2;
	}
	return (int)x->res.port;
}

/* The table named name of s, or NULL. */
static const struct swx_table *spec_table(const struct swx_spec *s, const char *name)
{
	for (uint32_t i = 0; i < s->n_tables; i++)
		if (strcmp(s->tables[i].name, name) == 0)
			return &s->tables[i];
	return NULL;
}

/* Whether table t lists action name. */
static bool table_has(const struct swx_table *t, const char *name)
{
	for (uint32_t i = 0; t && i < t->n_actions; i++)
		if (strcmp(t->actions[i].name, name) == 0)
			return true;
	return false;
}

/* The IPv4 DSCP by name and width: the whole ToS byte (diffserv) or its DSCP bits. */
static bool field_is_dscp(const char *field, uint32_t n_bits)
{
	return (n_bits == 8 && strcmp(field, "diffserv") == 0) || (n_bits == 6 && strcmp(field, "dscp") == 0);
}

/*
 * Header fields rocelab rewrites on every frame it forwards (dp_pipeline.c's
 * rewrite stage), so that a program's own writes to them agree with what
 * leaves: the TTL, the IPv4 checksum mended with it, the Ethernet addresses
 * (the egress link's MACs). By name and width, as the shipped programs and
 * p4c-dpdk (camelCase) name them. The DSCP, rocelab takes from the program.
 */
static bool rewrite_is_rocelabs(const char *field, uint32_t n_bits)
{
	static const char *const macs[] = {"dst_addr", "dstAddr", "src_addr", "srcAddr"};

	if (field_is_dscp(field, n_bits))
		return true;
	if (n_bits == 8)
		return strcmp(field, "ttl") == 0;
	if (n_bits == 16)
		return strcmp(field, "hdr_checksum") == 0 || strcmp(field, "hdrChecksum") == 0;
	for (size_t i = 0; n_bits == 48 && i < sizeof(macs) / sizeof(macs[0]); i++)
		if (strcmp(field, macs[i]) == 0)
			return true;
	return false;
}

/* The field an instruction writes ("h.HDR.FIELD", ...), or "" (text: "[LABEL :] OP ARGS"). */
static void written_field(const char *text, char dst[SWX_NAME_MAX])
{
	static const char *const writes_first[] = {"mov", "add", "sub", "and", "or", "xor", "shl",
						   "shr", "ckadd", "cksub", "regrd"};
	char buf[SWX_INSTR_MAX], *tok[3] = {NULL, NULL, NULL}, *save = NULL;
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", text);
	for (char *t = strtok_r(buf, " ", &save); t && n < 3; t = strtok_r(NULL, " ", &save)) {
		if (n == 1 && strcmp(t, ":") == 0) { /* "LABEL : OP ...": the instruction follows */
			n = 0;
			continue;
		}
		tok[n++] = t;
	}
	dst[0] = '\0';
	for (size_t i = 0; n >= 2 && i < sizeof(writes_first) / sizeof(writes_first[0]); i++)
		if (strcmp(tok[0], writes_first[i]) == 0)
			snprintf(dst, SWX_NAME_MAX, "%s", tok[1]);
	if (n >= 3 && strcmp(tok[0], "hash") == 0) /* hash NAME DST FIRST LAST */
		snprintf(dst, SWX_NAME_MAX, "%s", tok[2]);
}

/* Whether apply emits header name. */
static bool emitted(const struct swx_spec *s, const char *name)
{
	char want[SWX_NAME_MAX + 8];

	snprintf(want, sizeof(want), "emit h.%s", name);
	for (uint32_t i = 0; i < s->n_apply; i++) {
		const char *t = strstr(s->apply[i].text, want);

		if (t && (t == s->apply[i].text || t[-1] == ' ') && t[strlen(want)] == '\0')
			return true;
	}
	return false;
}

/*
 * -EINVAL with FILE:LINE when instruction in writes a field of an emitted
 * header that rocelab does not take from the program (dp_swx.h: only the
 * egress port is). The program would believe it rewrote what leaves unchanged.
 */
static int write_ignored(const struct swx_spec *s, const struct swx_instr *in, struct shape *sh,
			 char *err, size_t errlen)
{
	char dst[SWX_NAME_MAX], hdr[SWX_NAME_MAX], field[SWX_NAME_MAX];

	written_field(in->text, dst);
	if (sscanf(dst, "h.%63[^.].%63s", hdr, field) != 2 || !emitted(s, hdr))
		return 0;
	for (uint32_t i = 0; i < s->n_headers; i++) {
		const struct swx_struct *st = strcmp(s->headers[i].name, hdr) == 0 ?
					      swx_spec_struct(s, s->headers[i].struct_name) : NULL;

		for (uint32_t f = 0; st && f < st->n_fields; f++)
			if (strcmp(st->fields[f].name, field) == 0 &&
			    rewrite_is_rocelabs(field, st->fields[f].n_bits)) {
				sh->dscp |= field_is_dscp(field, st->fields[f].n_bits);
				return 0;
			}
	}
	snprintf(err, errlen, "%s:%" PRIu32 ": '%s' writes %s, which rocelab-dp does not take from the "
		 "program: only the egress port, the drop and the IPv4 DSCP are (TTL, IPv4 checksum "
		 "and MACs are rocelab's own rewrite); write it to a header that is not emitted",
		 s->file, in->line, in->text, dst);
	return -EINVAL;
}

/* write_ignored over every instruction of s's actions and apply block. */
static int writes_ignored(const struct swx_spec *s, struct shape *sh, char *err, size_t errlen)
{
	int rc = 0;

	sh->dscp = false;
	for (uint32_t a = 0; rc == 0 && a < s->n_actions; a++)
		for (uint32_t i = 0; rc == 0 && i < s->actions[a].n_instrs; i++)
			rc = write_ignored(s, &s->actions[a].instrs[i], sh, err, errlen);
	for (uint32_t i = 0; rc == 0 && i < s->n_apply; i++)
		rc = write_ignored(s, &s->apply[i], sh, err, errlen);
	return rc;
}

/* The contract's tables in s. Returns 0, or -EINVAL with FILE:LINE and what is missing. */
static int spec_shape(const struct swx_spec *s, struct shape *sh, char *err, size_t errlen)
{
	const struct swx_table *route = spec_table(s, "route");

	sh->hash_cfg = spec_table(s, "hash_cfg") != NULL;
	sh->ecmp = table_has(route, "route_ecmp") && spec_table(s, "member") != NULL;
	sh->fwd = table_has(route, "fwd") ? "fwd" : "route_fwd";
	if (swx_meta_check(s, &sh->meta, err, errlen) != 0 || writes_ignored(s, sh, err, errlen) != 0)
		return -EINVAL;
	if (route == NULL || !table_has(route, sh->fwd)) {
		snprintf(err, errlen, "%s:%" PRIu32 ": rocelab-dp fills a table 'route' with an action "
			 "'fwd' (or 'route_fwd'; args port_out, nexthop_mac): the program has %s",
			 s->file, route ? route->line : s->apply_line,
			 route ? "no such action in it" : "no table 'route'");
		return -EINVAL;
	}
	return 0;
}

/* The program switch sw runs: all (--pipeline) for every switch, else its pipeline key, or NULL. */
static const char *sw_path(const struct topo_switch *sw, const char *all)
{
	return all ? all : sw->pipeline[0] ? sw->pipeline : NULL;
}

/*
 * lb: other than ecmp is a C next-hop stage (resilient hashing, flowlets,
 * pinning), and a program replaces that stage: refused rather than
 * silently not applied. A program writes its own (p4/flowlet.spec,
 * p4/letflow.spec, p4/pinning.spec). Returns 0 or -EINVAL with err.
 */
static int lb_under_program(const struct topo_switch *sw, const char *prog, char *err, size_t errlen)
{
	if (sw->lb == TOPO_LB_ECMP)
		return 0;
	snprintf(err, errlen,
		 "switch %s: lb: %s is a stage of the C pipeline, which its program %s replaces; "
		 "drop lb: and write the load balancer in the program (p4/flowlet.spec, p4/letflow.spec, "
		 "p4/pinning.spec)",
		 sw->name, topo_lb_name(sw->lb), prog);
	return -EINVAL;
}

int dp_swx_check(const struct topo *t, const char *path, char *err, size_t errlen)
{
	const char *last = NULL; /* (switches of one role usually share one: read once) */
	struct swx_spec s;
	struct shape sh;
	int rc = 0;

	for (uint32_t i = 0; rc == 0 && i < t->n_switches; i++) {
		const char *p = sw_path(&t->switches[i], path);

		if (p && (rc = lb_under_program(&t->switches[i], p, err, errlen)) != 0)
			break;
		if (p == NULL || (last && strcmp(p, last) == 0))
			continue;
		last = p;
		if ((rc = swx_spec_parse_file(p, &s, err, errlen)) == 0) {
			rc = spec_shape(&s, &sh, err, errlen);
			swx_spec_free(&s);
		}
	}
	return rc;
}

/* Parses, checks and builds the program at path with n_ports ports, then frees it. */
static int build_one(const char *path, uint32_t n_ports, FILE *out, char *err, size_t errlen)
{
	struct swx_spec s;
	struct swx_pipe *p = NULL;
	struct shape sh;
	int rc = swx_spec_parse_file(path, &s, err, errlen);

	if (rc != 0)
		return rc;
	if ((rc = spec_shape(&s, &sh, err, errlen)) == 0 &&
	    (rc = swx_eal_init(0, err, errlen)) == 0 &&
	    (rc = swx_load_ports(&s, n_ports, n_ports, &p, err, errlen)) == 0)
		fprintf(out, "%s: OK (%" PRIu32 " ports)\n", path, n_ports);
	swx_pipe_free(p);
	swx_spec_free(&s);
	return rc;
}

int dp_swx_check_build(const struct topo *t, const char *path, FILE *out, char *err, size_t errlen)
{
	const char *last = NULL;
	uint32_t last_ports = 0;
	int rc = t ? dp_swx_check(t, path, err, errlen) : 0;

	if (t == NULL)
		rc = build_one(path, SWX_PORTS_OUT_MAX, out, err, errlen);
	for (uint32_t i = 0; rc == 0 && t && i < t->n_switches; i++) {
		const char *p = sw_path(&t->switches[i], path);
		uint32_t n = t->switches[i].n_ports ? t->switches[i].n_ports : 1;

		/* (switches of one role share a program and a port count: built once) */
		if (p == NULL || (last && strcmp(p, last) == 0 && n == last_ports))
			continue;
		if (n > SWX_PORTS_OUT_MAX) {
			snprintf(err, errlen, "%s: switch %s has %u ports, a program at most %d", p,
				 t->switches[i].name, n, SWX_PORTS_OUT_MAX);
			rc = -EINVAL;
		} else {
			rc = build_one(p, n, out, err, errlen);
		}
		last = p;
		last_ports = n;
	}
	swx_eal_fini();
	return rc;
}

__attribute__((format(printf, 5, 6)))
static int add(struct swx_pipe *p, const char *table, char *err, size_t errlen, const char *fmt, ...)
{
	char text[ENTRY_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	return swx_pipe_entry_add(p, table, text, err, errlen);
}

static uint64_t mac_u64(const uint8_t mac[6])
{
	uint64_t v = 0;

	for (int i = 0; i < 6; i++)
		v = v << 8 | mac[i];
	return v;
}

/* The member table's entries for s's group towards leaf index l: its uplinks that are up. */
static int fill_group(struct swx_pipe *p, const struct dp_switch *s, uint32_t l, char *err,
		      size_t errlen)
{
	const struct dp_group *g = &s->group[l];
	uint32_t k = 0;
	int rc = 0;

	for (uint32_t i = 0; rc == 0 && i < g->n; i++)
		if (g->up_mask >> i & 1)
			rc = add(p, "member", err, errlen,
				 "match %" PRIu32 " %" PRIu32 " action fwd port_out %u nexthop_mac 0x%" PRIx64,
				 l, k++, g->port[i], mac_u64(s->out[g->port[i]]->dst_mac));
	return rc;
}

/* The route entry of host h at switch s. */
static int fill_route(struct swx_pipe *p, const struct dp_fabric *f, const struct dp_switch *s,
		      const struct shape *sh, const struct topo_host *h, char *err, size_t errlen)
{
	uint16_t port = h->leaf_port;

	if (h->leaf != s->idx) {
		const struct dp_group *g = &s->group[f->sw[h->leaf].cfg->leaf_index];
		unsigned n_up = (unsigned)__builtin_popcountll(g->up_mask);

		if (n_up == 0)
			return 0; /* no way there: the program's miss */
		if (sh->ecmp)
			return add(p, "route", err, errlen,
				   "match 0x%08" PRIx32 "/0xffffffff action route_ecmp group %d n_members %u",
				   h->ipv4, f->sw[h->leaf].cfg->leaf_index, n_up);
		port = g->port[__builtin_ctzll(g->up_mask)];
	}
	return add(p, "route", err, errlen,
		   "match 0x%08" PRIx32 "/0xffffffff action %s port_out %u nexthop_mac 0x%" PRIx64,
		   h->ipv4, sh->fwd, port, mac_u64(s->out[port]->dst_mac));
}

/* Every table of s's program p, in one transaction. */
static int fill(struct swx_pipe *p, const struct dp_fabric *f, const struct dp_switch *s,
		const struct shape *sh, char *err, size_t errlen)
{
	const struct topo *t = f->topo;
	const struct topo_switch *cfg = s->cfg;
	int rc = 0;

	if (sh->hash_cfg)
		rc = add(p, "hash_cfg", err, errlen, "default action set_hash algo %u seed %" PRIu32 " eecmp %u",
			 (unsigned)cfg->algo, cfg->seed, cfg->profile == RL_PROFILE_EECMP);
	for (uint32_t h = 0; rc == 0 && h < t->n_hosts; h++)
		rc = fill_route(p, f, s, sh, &t->hosts[h], err, errlen);
	for (uint32_t l = 0; rc == 0 && sh->ecmp && s->group && l < t->n_switches; l++) {
		const struct dp_switch *leaf = &f->sw[l];

		if (leaf->cfg->role == TOPO_ROLE_RTSW && leaf != s)
			rc = fill_group(p, s, (uint32_t)leaf->cfg->leaf_index, err, errlen);
	}
	return rc ? rc : swx_pipe_commit(p, err, errlen);
}

/* s's program from the parsed spec. */
static int attach_one(struct dp_fabric *f, struct dp_switch *s, const struct swx_spec *spec,
		      const struct shape *sh, char *err, size_t errlen)
{
	char why[SWX_ERR_MAX];
	struct dp_swx *x = calloc(1, sizeof(*x));

	if (x == NULL)
		return -ENOMEM;
	uint32_t n = s->cfg->n_ports ? s->cfg->n_ports : 1;
	int rc = swx_load_ports(spec, n, n, &x->pipe, why, sizeof(why));

	if (rc == 0 && (rc = fill(x->pipe, f, s, sh, why, sizeof(why))) != 0)
		snprintf(err, errlen, "%s: switch %s: %s", spec->file, s->cfg->name, why);
	else if (rc)
		snprintf(err, errlen, "%s", why);
	if (rc) {
		swx_pipe_free(x->pipe);
		free(x);
		return rc;
	}
	x->prog.decide = swx_decide;
	x->f = f;
	x->s = s;
	x->sh = *sh;
	x->route_changes = f->route_changes;
	x->rng = (f->opt.seed ? f->opt.seed : 1) + s->idx; /* (never 0: xorshift64's one fixed point) */
	s->prog = &x->prog;
	return 0;
}

int dp_swx_attach(struct dp_fabric *f, const char *path, char *err, size_t errlen)
{
	const char *last = NULL; /* the program spec holds, read once for the switches in a row that share it */
	struct swx_spec spec = {0};
	struct shape sh;
	int rc = 0;

	for (uint32_t i = 0; rc == 0 && i < f->topo->n_switches; i++) {
		const struct topo_switch *sw = &f->topo->switches[i];
		const char *p = sw_path(sw, path);

		if (p == NULL)
			continue;
		if (last == NULL || strcmp(p, last) != 0) {
			swx_spec_free(&spec);
			last = NULL;
			if ((rc = swx_spec_parse_file(p, &spec, err, errlen)) != 0 ||
			    (rc = spec_shape(&spec, &sh, err, errlen)) != 0)
				break;
			last = p;
		}
		if (sw->n_ports > SWX_PORTS_OUT_MAX) {
			snprintf(err, errlen, "%s: switch %s has %u ports, a program at most %d", p,
				 sw->name, sw->n_ports, SWX_PORTS_OUT_MAX);
			rc = -EINVAL;
		} else {
			rc = attach_one(f, &f->sw[i], &spec, &sh, err, errlen);
		}
	}
	swx_spec_free(&spec);
	if (rc)
		dp_swx_detach(f);
	return rc == -ENOMEM ? rc : rc ? -EINVAL : 0;
}

void dp_swx_detach(struct dp_fabric *f)
{
	/*
	 * DPDK 22.11's rte_swx_pipeline_free logs "EAL: Error: Invalid memory"
	 * for a pipeline that built and freed correctly (swx_pipe.c says more):
	 * only critical messages while the programs go.
	 */
	uint32_t level = rte_log_get_global_level();

	rte_log_set_global_level(RTE_LOG_CRIT);
	for (uint32_t i = 0; f->sw && i < f->topo->n_switches; i++) {
		struct dp_swx *x = (struct dp_swx *)f->sw[i].prog;

		if (x == NULL)
			continue;
		swx_pipe_free(x->pipe);
		free(x);
		f->sw[i].prog = NULL;
	}
	rte_log_set_global_level(level);
}
