/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_job: rocelab-dp --workload: a job graph loaded, placed on the emulated
 * hosts and run on them (dp_job.h). The core (dp_job_core.c) walks the
 * graph; this file is its driver on the fabric: compute on the NICs'
 * engine's timers, each communication instance a collective of one size
 * through the collective driver (dp_coll.c), which calls back at its end.
 */
#include "dp_coll_priv.h"
#include "dp_job.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "wl_astra.h"
#include "wl_llm.h"
#ifdef DP_JOB_CHAKRA
#include "wl_chakra.h"
#endif

/* What an instance did in one iteration, for the report. */
struct inst_rec {
	uint64_t start_ns, end_ns;
	double busbw;
	uint32_t qps_max;
};

struct dp_job {
	char source[256];           /* the workload as named, for messages */
	struct wl_graph g;
	struct dp_job_core core;
	uint32_t *host;             /* [nranks] each rank's topology host */
	struct ne_coll_spec coll;   /* its collectives' settings (--job-coll, else --coll's defaults) */
	uint64_t compute_ns;        /* the compute-only critical path of an iteration */
	uint32_t iters, iter;       /* iterations to run, the one running (== iters: done) */
	struct dp_job_iter *it;     /* [iters] */
	struct inst_rec *rec;       /* [iters * ninst] */
	struct dp_nics *ns;
	FILE *quiet_out;            /* where its collectives' own lines go: nowhere */
	struct dp_coll **spare;     /* its collectives that ended, for the next instances */
	uint32_t nspare;
	bool started, failed;
};

/* group=NAME:R+R+...: a process group of Chakra's pg_name. 0, or -1 with err. */
static int spec_group(struct dp_job_spec *s, const char *v, char *err, size_t errlen)
{
	const char *colon = strchr(v, ':');
	struct dp_job_group *g = &s->group[s->ngroups];

	if (s->ngroups == DP_JOB_GROUPS || !colon || colon == v || colon[1] == '\0') {
		snprintf(err, errlen, "--workload: group=%s: NAME:R+R+... is needed (at most %u groups)", v,
			 DP_JOB_GROUPS);
		return -1;
	}
	g->name = strndup(v, (size_t)(colon - v));
	g->ranks = calloc(strlen(colon) / 2 + 1, sizeof(*g->ranks));
	s->ngroups++; /* (freed with the spec, whatever follows) */
	if (!g->name || !g->ranks)
		return snprintf(err, errlen, "--workload: out of memory"), -1;
	for (const char *p = colon + 1; *p;) {
		char *end = NULL;
		errno = 0;
		unsigned long r = strtoul(p, &end, 10);
		if (errno || end == p || r > UINT32_MAX || (*end != '+' && *end != '\0') || *p == '-') {
			snprintf(err, errlen, "--workload: group=%s: ranks are whole numbers joined by '+'", v);
			return -1;
		}
		g->ranks[g->nranks++] = (uint32_t)r;
		p = *end ? end + 1 : end;
	}
	return 0;
}

static int spec_key(struct dp_job_spec *s, const char *kv, char *err, size_t errlen)
{
	const char *v = strchr(kv, '=') + 1;
	char *end = NULL;
	unsigned long long n;

	errno = 0;
	if (strncmp(kv, "group=", 6) == 0)
		return spec_group(s, v, err, errlen);
	if (strncmp(kv, "hosts=", 6) == 0) {
		free(s->hosts);
		s->hosts = strdup(v);
		return s->hosts ? 0 : (snprintf(err, errlen, "--workload: out of memory"), -1);
	}
	n = strtoull(v, &end, 10);
	if (errno || end == v || *end || v[0] == '-' || n == 0 || n > UINT32_MAX) {
		snprintf(err, errlen, "--workload: %s: a whole number from 1 is needed", kv);
		return -1;
	}
	if (strncmp(kv, "iters=", 6) == 0)
		s->iters = (uint32_t)n;
	else
		s->cycle_ps = n;
	return 0;
}

/* Keys of --coll that the job decides, and why (dp_job_coll_parse). */
static const char *coll_key_refused(const char *key, size_t len)
{
	static const struct {
		const char *key, *why;
	} refused[] = {
		{"op", "the graph's node names the op"}, {"root", "the graph's node decides"},
		{"nranks", "the job's communicator decides"}, {"bytes", "the graph's node names the size"},
		{"hosts", "the job's ranks are its hosts (--workload hosts=)"},
		{"sizes", "the graph's node names the size"}, {"size", "the graph's node names the size"},
		{"iters", "the job's iterations are --workload iters="}, {"warmup", "a job has no warm-up"},
		{"warmup_iters", "a job has no warm-up"}, {"series", "a job's collectives keep no series"},
		{"data", "a job's collectives run data=off"},
		{"inplace", "a job's collectives are no nccl-tests sweep"},
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		if (strlen(refused[i].key) == len && strncmp(refused[i].key, key, len) == 0)
			return refused[i].why;
	return NULL;
}

int dp_job_coll_parse(const char *text, struct ne_coll_spec *s, char *err, size_t errlen)
{
	char why[448];

	ne_coll_spec_default(s);
	/* (only the key names are looked at here; the values are ne_coll_spec_parse's) */
	for (const char *kv = text; *kv; kv += strcspn(kv, ",") + (kv[strcspn(kv, ",")] == ',')) {
		size_t len = strcspn(kv, "=,");
		const char *refused = coll_key_refused(kv, len);
		if (refused) {
			snprintf(err, errlen, "--job-coll %s: key '%.*s' is not a job's to set: %s", text,
				 (int)len, kv, refused);
			return -1;
		}
	}
	int rc = ne_coll_spec_parse(s, text, why, sizeof(why));
	if (rc < 0) {
		snprintf(err, errlen, "--job-coll: %s", rc == -ENOMEM ? "out of memory" : why);
		ne_coll_spec_free(s);
		return -1;
	}
	return 0;
}

/* This option's own key (iters=, hosts=, cycle_ps=, group=), not the workload's. */
static bool own_key(const char *kv)
{
	return strncmp(kv, "iters=", 6) == 0 || strncmp(kv, "hosts=", 6) == 0 ||
	       strncmp(kv, "cycle_ps=", 9) == 0 || strncmp(kv, "group=", 6) == 0;
}

int dp_job_spec_parse(const char *arg, struct dp_job_spec *s, char *err, size_t errlen)
{
	const char *colon = strchr(arg, ':');
	size_t klen = colon ? (size_t)(colon - arg) : 0;

	memset(s, 0, sizeof(*s));
	s->iters = 1;
	s->cycle_ps = 1000; /* (ASTRA-sim's files do not say their clock: 1 GHz unless told) */
	if (!colon || klen >= sizeof(s->kind) || colon[1] == '\0') {
		snprintf(err, errlen, "--workload %s: KIND:SOURCE is needed (chakra:PREFIX, astra:FILE, "
			 "llm:SPEC)", arg);
		return -1;
	}
	memcpy(s->kind, arg, klen);
	if (strcmp(s->kind, "chakra") && strcmp(s->kind, "astra") && strcmp(s->kind, "llm")) {
		snprintf(err, errlen, "--workload %s: unknown kind '%s' (chakra, astra, llm)", arg, s->kind);
		return -1;
	}
	char *rest = strdup(colon + 1), *save = NULL;
	s->source = calloc(strlen(colon + 1) + 1, 1);
	int rc = rest && s->source ? 0 : (snprintf(err, errlen, "--workload: out of memory"), -1);
	for (char *kv = rest ? strtok_r(rest, ",", &save) : NULL; kv && rc == 0; kv = strtok_r(NULL, ",", &save)) {
		if (own_key(kv)) {
			rc = spec_key(s, kv, err, errlen);
			continue;
		}
		if (s->source[0] && strcmp(s->kind, "llm") != 0) {
			snprintf(err, errlen, "--workload %s: unknown key '%s' (iters=, hosts=, cycle_ps=, group=)", arg, kv);
			rc = -1;
		}
		if (s->source[0])
			strcat(s->source, ",");
		strcat(s->source, kv);
	}
	free(rest);
	if (rc == 0 && s->source[0] == '\0' && strcmp(s->kind, "llm") != 0) {
		snprintf(err, errlen, "--workload %s: no %s", arg, s->kind[0] == 'c' ? "PREFIX" : "FILE");
		rc = -1;
	}
	if (rc < 0)
		dp_job_spec_free(s);
	return rc;
}

void dp_job_spec_free(struct dp_job_spec *s)
{
	for (uint32_t i = 0; i < s->ngroups; i++) {
		free(s->group[i].name);
		free(s->group[i].ranks);
	}
	free(s->source);
	free(s->hosts);
	memset(s, 0, sizeof(*s));
}

/* The job's hosts: hosts= in order, else the emulated ones in topology order. Returns how many
 * (into host, room t->n_hosts), or -1 with err. */
static int job_hosts(const struct dp_job_spec *s, const struct topo *t, uint32_t *host, char *err,
		     size_t errlen)
{
	uint32_t n = 0;

	if (s->hosts == NULL) {
		for (uint32_t h = 0; h < t->n_hosts; h++)
			if (t->hosts[h].attach == TOPO_ATTACH_EMULATED)
				host[n++] = h;
		return (int)n;
	}
	char *buf = strdup(s->hosts), *save = NULL;
	if (buf == NULL)
		return snprintf(err, errlen, "--workload: out of memory"), -1;
	for (char *name = strtok_r(buf, "+", &save); name; name = strtok_r(NULL, "+", &save)) {
		int h = topo_host_by_name(t, name);
		bool twice = false;
		for (uint32_t k = 0; h >= 0 && k < n; k++)
			twice |= host[k] == (uint32_t)h;
		if (h < 0 || t->hosts[h].attach != TOPO_ATTACH_EMULATED || twice || n == t->n_hosts) {
			snprintf(err, errlen, "--workload: hosts=: host '%s' %s", name,
				 h < 0 ? "is not in the topology"
				 : twice ? "named twice" : "is not an emulated NIC (attach: emulated)");
			free(buf);
			return -1;
		}
		host[n++] = (uint32_t)h;
	}
	free(buf);
	return (int)n;
}

/* The graph of s with nranks ranks (astra: the hosts'; the others say theirs). 0, or -1 with err. */
static int job_graph(struct dp_job *j, const struct dp_job_spec *s, uint32_t nranks, char *err,
		     size_t errlen)
{
	struct wl_err we = {{0}};
	int rc = -1;

	if (strcmp(s->kind, "astra") == 0) {
		struct wl_astra w;
		if (wl_astra_load(&w, s->source, &we) == 0) {
			rc = wl_astra_to_graph(&w, s->source, nranks, 1, s->cycle_ps, &j->g, &we);
			wl_astra_free(&w);
		}
	} else if (strcmp(s->kind, "llm") == 0) {
		struct wl_llm p;
		if (wl_llm_parse(&p, s->source, &we) == 0)
			rc = wl_llm_graph(&p, &j->g, &we);
	} else {
#ifdef DP_JOB_CHAKRA
		struct wl_group groups[DP_JOB_GROUPS];
		for (uint32_t i = 0; i < s->ngroups; i++)
			groups[i] = (struct wl_group){s->group[i].name, s->group[i].ranks, s->group[i].nranks};
		rc = wl_chakra_load(&j->g, s->source, 0, groups, s->ngroups, &we);
#else
		snprintf(we.msg, sizeof(we.msg), "%s: this build reads no Chakra trace (no protobuf-c: "
			 "scripts/install-deps.sh)", s->source);
#endif
	}
	if (rc == 0 && strcmp(s->kind, "chakra") != 0) /* (the Chakra reader checks its graph) */
		rc = wl_graph_check(&j->g, &we);
	if (rc < 0)
		snprintf(err, errlen, "--workload: %s", we.msg);
	return rc;
}

/* order=nccl: every one of the n hosts a GPU of a server. 0, or -1 with err. */
static int job_hosts_on_servers(const struct topo *t, const uint32_t *host, uint32_t n, char *err,
				size_t errlen)
{
	for (uint32_t r = 0; r < n; r++)
		if (topo_host_server(t, host[r]) < 0) {
			snprintf(err, errlen, "--job-coll: order=nccl: host '%s' is not a GPU of a server "
				 "(no servers: leave order=hosts)", t->hosts[host[r]].name);
			return -1;
		}
	return 0;
}

struct dp_job *dp_job_load(const struct dp_job_spec *s, const struct topo *t, char *err, size_t errlen)
{
	struct dp_job *j = calloc(1, sizeof(*j));
	uint32_t *host = calloc(t->n_hosts + 1, sizeof(*host));
	int nh = j && host ? job_hosts(s, t, host, err, errlen) : -1;

	if (!j || !host)
		snprintf(err, errlen, "--workload: out of memory");
	if (nh >= 0)
		snprintf(j->source, sizeof(j->source), "%s", s->source);
	if (j)
		ne_coll_spec_default(&j->coll);
	if (nh >= 0 && s->coll && (ne_coll_spec_free(&j->coll), 0) == 0 &&
	    dp_job_coll_parse(s->coll, &j->coll, err, errlen) < 0) {
		ne_coll_spec_default(&j->coll);
		nh = -1;
	}
	if (nh >= 0 && j->coll.order_nccl && job_hosts_on_servers(t, host, (uint32_t)nh, err, errlen) < 0)
		nh = -1;
	if (nh >= 0 && job_graph(j, s, nh ? (uint32_t)nh : 1, err, errlen) < 0)
		nh = -1;
	if (nh >= 0 && j->g.nranks > (uint32_t)nh) {
		snprintf(err, errlen, "--workload %s: the job has %u ranks, but %s %d emulated host%s",
			 s->source, j->g.nranks, s->hosts ? "hosts= names" : "the topology has", nh,
			 nh == 1 ? "" : "s");
		nh = -1;
	}
	if (nh >= 0 && j->g.nranks < 2) {
		snprintf(err, errlen, "--workload %s: a job of %u rank: nothing crosses the fabric", s->source,
			 j->g.nranks);
		nh = -1;
	}
	if (nh >= 0 && dp_job_core_init(&j->core, &j->g, s->source, err, errlen) < 0)
		nh = -1;
	if (nh >= 0 && dp_job_core_compute_only(&j->core, s->source, &j->compute_ns, err, errlen) < 0)
		nh = -1;
	if (nh >= 0) {
		j->host = host;
		j->iters = s->iters;
		j->it = calloc(j->iters, sizeof(*j->it));
		j->rec = calloc((size_t)j->iters * j->core.ninst + 1, sizeof(*j->rec));
		if (j->it && j->rec)
			return j;
		snprintf(err, errlen, "--workload: out of memory");
		j->host = NULL;
	}
	free(host);
	dp_job_free(j);
	return NULL;
}

uint32_t dp_job_qps(const struct dp_job *j)
{
	uint32_t most = 0;

	if (j == NULL)
		return 0;
	struct ne_coll_config cfg = j->coll.cfg;
	for (uint32_t i = 0; i < j->core.ninst; i++) {
		const struct dp_job_inst *in = &j->core.inst[i];
		if (in->nmem < 2)
			continue;
		cfg.op = in->op;
		cfg.nranks = in->nmem;
		cfg.root = in->nmem - 1;
		for (uint32_t r = 0; r < in->nmem; r++) /* (an incast's root needs more) */
			if (ne_coll_qps_needed(&cfg, r) > most)
				most = ne_coll_qps_needed(&cfg, r);
	}
	return most;
}

static void job_fail(struct dp_job *j, const char *why)
{
	if (!j->failed)
		fprintf(stderr, "rocelab-dp: --workload %s: %s\n", j->source, why);
	j->failed = true;
}

static void job_next_iter(struct dp_job *j, uint64_t now);

/* After an event of the iteration: when it ended, note it and start the next one. */
static void job_check_iter(struct dp_job *j, int rc, uint64_t now)
{
	if (rc < 0) {
		job_fail(j, "out of memory, or no timer left");
		return;
	}
	if (!dp_job_core_done(&j->core) || j->failed)
		return;
	struct dp_job_iter *it = &j->it[j->iter];
	it->time_ns = j->core.iter_end_ns - j->core.iter_start_ns;
	it->compute_ns = j->compute_ns;
	it->exposed_ns = it->time_ns > j->compute_ns ? it->time_ns - j->compute_ns : 0;
	for (uint32_t i = 0; i < j->core.ninst; i++) {
		struct inst_rec *r = &j->rec[(size_t)j->iter * j->core.ninst + i];
		r->start_ns = j->core.inst[i].start_ns - j->core.iter_start_ns;
		r->end_ns = j->core.inst[i].end_ns - j->core.iter_start_ns;
		r->busbw = j->core.inst[i].nmem > 1 ? j->core.inst[i].busbw : 0;
		r->qps_max = j->core.inst[i].nmem > 1 ? j->core.inst[i].qps_max : 0;
	}
	j->iter++;
	if (j->iter < j->iters)
		job_next_iter(j, now);
}

static void job_compute_due(void *obj, uint64_t n, uint64_t now)
{
	struct dp_job *j = obj;

	job_check_iter(j, dp_job_core_compute_end(&j->core, (uint32_t)n, now), now);
}

static int job_compute(void *ctx, uint32_t n, uint64_t end_ns)
{
	struct dp_job *j = ctx;

	return dp_timer_add_lp(nics_eng(j->ns), DP_COLL_LP, end_ns, job_compute_due, j, n);
}

/* Collective c of instance arg ended (or failed): its NICs are free again, and c is kept for
 * the next instance to start. */
static void job_coll_end(void *ctx, struct dp_coll *c, uint64_t now)
{
	struct dp_job *j = ctx;
	struct dp_job_inst *in = &j->core.inst[c->on_end_arg];

	for (uint32_t r = 0; r < c->cfg.nranks; r++) {
		struct dp_nic_host *nh = &j->ns->h[c->rank_nic[r]];
		nh->coll = NULL;
		nh->coll_rank = -1;
	}
	in->coll = NULL;
	if (c->failed || c->n_done == 0) {
		job_fail(j, "a collective failed (its work completions: see the NIC table)");
		return;
	}
	in->busbw = c->done[0].res.busbw;
	in->qps_max = c->done[0].res.active_qps_max;
	int rc = dp_job_core_inst_end(&j->core, c->on_end_arg, now);
	/* (kept after the instance's end: what it started meanwhile takes another, so c is not
	 * set up again while its own driver's call that ended it is still on the stack) */
	j->spare[j->nspare++] = c;
	job_check_iter(j, rc, now);
}

/*
 * A collective for the job: a spare one, or a new one added to the NICs'
 * collectives (freed with them). Reusing them keeps their number at the
 * most that ran at once: every collective of ns is looked at when a NIC
 * outside any has an event, and each holds its latency histograms (16 KB).
 */
static struct dp_coll *job_coll_get(struct dp_job *j)
{
	struct dp_nics *ns = j->ns;

	if (j->nspare)
		return j->spare[--j->nspare];
	struct dp_coll *c = calloc(1, sizeof(*c));
	struct dp_coll **cs = realloc(ns->colls, (ns->n_colls + 1) * sizeof(*cs));
	struct dp_coll **sp = realloc(j->spare, (ns->n_colls + 1) * sizeof(*sp));
	uint32_t room = j->g.nranks; /* (an instance's members are ranks of the job) */

	if (cs)
		ns->colls = cs;
	if (sp)
		j->spare = sp;
	if (c) {
		c->pwake = calloc(ns->n_lanes, sizeof(*c->pwake));
		c->rank_nic = calloc(room, sizeof(*c->rank_nic));
		c->nics = calloc(room, sizeof(*c->nics));
	}
	if (!cs || !sp || !c || !c->pwake || !c->rank_nic || !c->nics) {
		coll_free(c);
		return NULL;
	}
	c->ns = ns;
	c->id = ns->n_colls + 1;
	for (uint32_t l = 0; l < ns->n_lanes; l++)
		c->pwake[l] = (struct coll_proxy_wake){.c = c, .lane = l};
	c->on_end = job_coll_end;
	c->on_end_ctx = j;
	ns->colls[ns->n_colls++] = c;
	return c;
}

/* The hosts of instance in's ranks, in its collective's rank order, into host. 0, or -1. */
static int job_inst_hosts(const struct dp_job *j, const struct dp_job_inst *in, uint32_t *host,
			  char *err, size_t errlen)
{
	for (uint32_t r = 0; r < in->nmem; r++) /* (a pair: its receiver first, the incast's root) */
		host[r] = j->host[in->rank[in->p2p ? in->nmem - 1 - r : r]];
	/* (order=nccl: a collective's ranks dealt in NCCL's ring order, as --coll's; a pair's
	 * order names its receiver, so it stays; every host is a server's GPU: dp_job_load) */
	if (j->coll.order_nccl && !in->p2p)
		return coll_order_nccl(j->ns->topo, host, in->nmem, err, errlen);
	return 0;
}

/* The collective of instance i (its members' NICs taken), for coll_start_size at now. */
static struct dp_coll *job_coll_new(struct dp_job *j, uint32_t i)
{
	struct dp_nics *ns = j->ns;
	const struct dp_job_inst *in = &j->core.inst[i];
	struct dp_coll *c = job_coll_get(j);
	uint32_t host[NE_COLL_MAX_RANKS];

	if (c == NULL || in->nmem > NE_COLL_MAX_RANKS)
		return NULL;
	/* (what its run before left: the driver's state of a collective not yet started) */
	free(c->server_of);
	c->server_of = NULL;
	c->run = NULL;
	c->run_ended = c->finished = c->failed = false;
	c->sizes_done = c->n_done = 0;
	c->cur = -1;
	c->proxy_busy_max_ns = 0;
	memset(&c->sum, 0, sizeof(c->sum));
	memset(&c->lat, 0, sizeof(c->lat));
	memset(&c->wait, 0, sizeof(c->wait));
	c->cfg = j->coll.cfg; /* (--job-coll's, or --coll's defaults) */
	snprintf(c->spec, sizeof(c->spec), "workload instance %u", i);
	c->cfg.op = in->op;
	c->cfg.nranks = in->nmem;
	c->cfg.root = 0; /* (an incast of 2, receiver first: the sender's bytes to it) */
	c->cfg.data = false;
	if (!c->cfg.timeout_given)
		c->cfg.timeout = dp_nics_rc_timeout(ns);
	c->size = c->size_min = c->size_max = c->cfg.bytes = in->bytes;
	char err[256];
	if (job_inst_hosts(j, in, host, err, sizeof(err)) < 0) {
		j->spare[j->nspare++] = c;
		return NULL;
	}
	for (uint32_t r = 0; r < in->nmem; r++)
		c->rank_nic[r] = (uint32_t)ns->by_host[host[r]];
	/* (order=nccl: channel rings, as for --coll; a Send/Recv pair keeps its order) */
	if (coll_servers(ns->topo, c, host, j->coll.order_nccl && !in->p2p) < 0 ||
	    coll_take_ranks(ns, c, err, sizeof(err)) < 0) {
		j->spare[j->nspare++] = c;
		return NULL;
	}
	/* A NIC learns of changes only after its next event was read once (ne_nic's
	 * wake notification): one that was in no collective so far never was, so
	 * it is listed here for the collective's first poll to read and arm. */
	for (uint32_t r = 0; r < in->nmem; r++)
		wake_list_add(&ns->h[c->rank_nic[r]]);
	c->on_end_arg = i;
	return c;
}

static int job_start_inst(void *ctx, uint32_t i, uint64_t now)
{
	struct dp_job *j = ctx;
	struct dp_coll *c = job_coll_new(j, i);

	if (c == NULL)
		return -1;
	j->core.inst[i].coll = c;
	/* (a timer at now, not a call: this may run inside another collective's end) */
	return dp_timer_add_lp(nics_eng(j->ns), DP_COLL_LP, now, coll_start_size, c, 0);
}

/* Room for n more pairs in p. 0, or -1 (out of memory). */
static int pairs_room(struct dp_job_pairs *p, uint32_t n)
{
	uint64_t need = (uint64_t)p->n + n, cap = need > 2 * (uint64_t)p->cap ? need : 2 * (uint64_t)p->cap;

	if (need <= p->cap)
		return 0;
	if (cap >= UINT32_MAX)
		return -1;
	uint32_t(*np)[2] = realloc(p->pair, sizeof(*np) * cap);
	if (np)
		p->pair = np;
	double *nd = np ? realloc(p->demand, sizeof(*nd) * cap) : NULL;
	if (nd == NULL)
		return -1;
	p->demand = nd;
	p->cap = (uint32_t)cap;
	return 0;
}

/*
 * Pairs base..p->n-1 (one instance's) less those of one server's GPUs
 * (NVLink, not the fabric's), each with its demand: its source NIC's line
 * rate shared by the source's connections in the instance (a ring's one
 * gets it all, an AllToAll's n-1 a share each). cnt: zeros [n_hosts],
 * zeros again after.
 */
static void pairs_demand(const struct topo *t, struct dp_job_pairs *p, uint32_t base, uint32_t *cnt)
{
	uint32_t kept = base;

	for (uint32_t k = base; k < p->n; k++) {
		int sa = topo_host_server(t, p->pair[k][0]);
		if (sa >= 0 && sa == topo_host_server(t, p->pair[k][1]))
			continue;
		p->pair[kept][0] = p->pair[k][0];
		p->pair[kept][1] = p->pair[k][1];
		cnt[p->pair[kept++][0]]++;
	}
	p->n = kept;
	for (uint32_t k = base; k < kept; k++) /* (the rate the NIC sends at: PCIe may bind) */
		p->demand[k] = (double)topo_host_nic_rate_bps(t, p->pair[k][0]) / cnt[p->pair[k][0]];
	for (uint32_t k = base; k < kept; k++)
		cnt[p->pair[k][0]] = 0;
}

/*
 * Instance i's network connections appended to p: c (a scratch collective of
 * view, the job's NICs) takes the instance's op, ranks and NICs as
 * job_coll_new gives them (a ring's: dp_job_te_check), and
 * dp_nics_coll_pairs (--coll's gathering) reads them; pairs_demand drops
 * NVLink pairs and sets the demands. 0, or -1 with err.
 */
static int inst_pairs(const struct dp_job *j, uint32_t i, struct dp_nics *view, struct dp_coll *c,
		      uint32_t *cnt, struct dp_job_pairs *p, char *err, size_t errlen)
{
	const struct dp_job_inst *in = &j->core.inst[i];
	uint32_t host[NE_COLL_MAX_RANKS];

	if (in->nmem < 2)
		return 0; /* (one rank: no connection) */
	if (in->nmem > NE_COLL_MAX_RANKS)
		return snprintf(err, errlen, "--te: a collective of %u ranks, more than a collective takes (%u)",
				in->nmem, NE_COLL_MAX_RANKS), -1;
	if (job_inst_hosts(j, in, host, err, errlen) < 0)
		return -1;
	c->cfg = j->coll.cfg;
	c->cfg.op = in->op;
	c->cfg.nranks = in->nmem;
	c->cfg.root = 0; /* (as job_coll_new: a pair's receiver first) */
	for (uint32_t r = 0; r < in->nmem; r++)
		c->rank_nic[r] = (uint32_t)view->by_host[host[r]];
	uint32_t n = dp_nics_coll_pairs(view, NULL, 0), base = p->n;
	if (pairs_room(p, n) < 0)
		return snprintf(err, errlen, "--te: out of memory"), -1;
	p->n += dp_nics_coll_pairs(view, p->pair + base, n);
	pairs_demand(view->topo, p, base, cnt);
	return 0;
}

int dp_job_te_check(const struct dp_job *j, char *err, size_t errlen)
{
	for (uint32_t i = 0; j && i < j->core.ninst; i++) {
		const struct dp_job_inst *in = &j->core.inst[i];
		/* (dp_nics_coll_tree's test, for --coll) */
		if (in->nmem > 1 && in->op == NE_COLL_ALLREDUCE && j->coll.cfg.algo != NE_COLL_ALGO_RING) {
			snprintf(err, errlen, "--te places a ring's connections; --job-coll algo=tree and "
					      "algo=auto (NCCL's tree) are not supported with it");
			return -1;
		}
	}
	return 0;
}

int dp_job_te_pairs(const struct dp_job *j, struct dp_job_pairs *p, char *err, size_t errlen)
{
	if (j == NULL || !j->started)
		return 0;
	struct dp_coll *c = calloc(1, sizeof(*c));
	uint32_t *rank_nic = calloc(NE_COLL_MAX_RANKS, sizeof(*rank_nic));
	uint32_t *cnt = calloc(j->ns->topo->n_hosts + 1, sizeof(*cnt));
	struct dp_nics view = *j->ns; /* (the job's NICs, with c its one collective) */
	int rc = c && rank_nic && cnt ? 0 : -1;

	if (rc < 0)
		snprintf(err, errlen, "--te: out of memory");
	if (c) {
		c->ns = &view;
		c->rank_nic = rank_nic;
		view.colls = &c;
		view.n_colls = 1;
	}
	for (uint32_t i = 0; rc == 0 && i < j->core.ninst; i++)
		rc = inst_pairs(j, i, &view, c, cnt, p, err, errlen);
	free(cnt);
	free(rank_nic);
	free(c);
	return rc;
}

/* Pairs by value, then by first position (dp_job_pairs_unique). */
struct pair_at {
	uint64_t key;
	uint32_t at;
};

static int pair_at_cmp(const void *a, const void *b)
{
	const struct pair_at *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

int dp_job_pairs_unique(struct dp_job_pairs *p)
{
	struct pair_at *s = malloc(sizeof(*s) * ((size_t)p->n + 1));
	bool *keep = calloc((size_t)p->n + 1, sizeof(*keep));
	uint32_t kept = 0;

	if (s == NULL || keep == NULL) {
		free(s);
		free(keep);
		return -1;
	}
	for (uint32_t i = 0; i < p->n; i++)
		s[i] = (struct pair_at){(uint64_t)p->pair[i][0] << 32 | p->pair[i][1], i};
	qsort(s, p->n, sizeof(*s), pair_at_cmp);
	for (uint32_t i = 0, first = 0; i < p->n; i++) {
		keep[s[i].at] = i == 0 || s[i].key != s[i - 1].key;
		if (keep[s[i].at])
			first = s[i].at; /* (the group's first keeps the largest demand) */
		else if (p->demand[s[i].at] > p->demand[first])
			p->demand[first] = p->demand[s[i].at];
	}
	for (uint32_t i = 0; i < p->n; i++)
		if (keep[i]) {
			p->pair[kept][0] = p->pair[i][0];
			p->pair[kept][1] = p->pair[i][1];
			p->demand[kept++] = p->demand[i];
		}
	p->n = kept;
	free(s);
	free(keep);
	return 0;
}

static void job_next_iter(struct dp_job *j, uint64_t now)
{
	job_check_iter(j, dp_job_core_begin(&j->core, now), now);
}

static void job_begin(void *obj, uint64_t arg, uint64_t now)
{
	(void)arg;
	job_next_iter(obj, now);
}

int dp_job_start(struct dp_job *j, struct dp_nics *ns, uint64_t start_ns, char *err, size_t errlen)
{
	for (uint32_t r = 0; r < j->g.nranks; r++)
		if (ns->by_host[j->host[r]] < 0) {
			snprintf(err, errlen, "--workload: rank %u's host %s has no emulated NIC", r,
				 ns->topo->hosts[j->host[r]].name);
			return -1;
		}
	j->quiet_out = fopen("/dev/null", "w");
	if (j->quiet_out == NULL) {
		snprintf(err, errlen, "--workload: /dev/null: %s", strerror(errno));
		return -1;
	}
	j->ns = ns;
	ns->coll_out = j->quiet_out;
	j->core.drv = (struct dp_job_driver){job_compute, job_start_inst, j};
	j->started = true;
	if (dp_timer_add_lp(nics_eng(ns), DP_COLL_LP, start_ns, job_begin, j, 0) < 0) {
		snprintf(err, errlen, "--workload: no timer left");
		return -1;
	}
	return 0;
}

bool dp_job_active(const struct dp_job *j)
{
	return j && j->started && !j->failed && j->iter < j->iters;
}

bool dp_job_failed(const struct dp_job *j)
{
	return j && (j->failed || j->iter < j->iters);
}

int dp_job_iter_get(const struct dp_job *j, uint32_t i, struct dp_job_iter *out)
{
	if (j == NULL || i >= j->iter)
		return -1;
	*out = j->it[i];
	return 0;
}

const char *dp_job_source(const struct dp_job *j)
{
	return j ? j->source : "";
}

uint32_t dp_job_ranks(const struct dp_job *j)
{
	return j ? j->g.nranks : 0;
}

uint32_t dp_job_instances(const struct dp_job *j)
{
	return j ? j->core.ninst : 0;
}

uint32_t dp_job_host(const struct dp_job *j, uint32_t r)
{
	return j->host[r];
}

int dp_job_row_get(const struct dp_job *j, uint32_t i, uint32_t k, struct dp_job_row *out)
{
	if (j == NULL || i >= j->iter || k >= j->core.ninst)
		return -1;
	const struct dp_job_inst *in = &j->core.inst[k];
	const struct inst_rec *r = &j->rec[(size_t)i * j->core.ninst + k];
	*out = (struct dp_job_row){.node = j->core.n[in->node[0]].w->id,
				   .op = in->p2p ? "SEND_RECV" : wl_coll_name(in->wl_op),
				   .ranks = in->nmem, .bytes = in->bytes, .start_ns = r->start_ns,
				   .time_ns = r->end_ns - r->start_ns, .busbw = r->busbw,
				   .qps_max = r->qps_max};
	return 0;
}

void dp_job_report(const struct dp_job *j, FILE *out)
{
	struct dp_job_iter it;
	struct dp_job_row row;

	if (j == NULL)
		return;
	fprintf(out, "# job %s: %u ranks, %u nodes, %u communication instances\n", j->source,
		j->g.nranks, j->core.nnodes, j->core.ninst);
	for (uint32_t k = 0; dp_job_iter_get(j, k, &it) == 0; k++) {
		fprintf(out, "# job: iteration %u: time %.3f us, compute critical path %.3f us, exposed "
			     "communication %.3f us (%.1f %%)\n", k + 1, (double)it.time_ns / 1e3,
			(double)it.compute_ns / 1e3, (double)it.exposed_ns / 1e3,
			it.time_ns ? 100.0 * (double)it.exposed_ns / (double)it.time_ns : 0.0);
		fprintf(out, "#  iter   node  op              ranks        bytes   start(us)    time(us)  busbw(GB/s)  qps\n");
		for (uint32_t i = 0; dp_job_row_get(j, k, i, &row) == 0; i++)
			fprintf(out, "%7u %6" PRIu64 "  %-14s %6u %12" PRIu64 " %11.3f %11.3f %12.2f %4u\n", k + 1,
				row.node, row.op, row.ranks, row.bytes, (double)row.start_ns / 1e3,
				(double)row.time_ns / 1e3, row.busbw, row.qps_max);
	}
	if (j->iter < j->iters)
		fprintf(out, "# job: NOT FINISHED: %u of %u iterations ended\n", j->iter, j->iters);
}

void dp_job_free(struct dp_job *j)
{
	if (j == NULL)
		return;
	dp_job_core_free(&j->core);
	ne_coll_spec_free(&j->coll);
	wl_graph_free(&j->g);
	free(j->host);
	free(j->it);
	free(j->rec);
	free(j->spare);
	if (j->quiet_out)
		fclose(j->quiet_out);
	free(j);
}
