/* SPDX-License-Identifier: BSD-3-Clause */
/* Generated fabrics: 2-tier Clos and AI zones, as topology YAML (topo_gen.h). */
#include "topo_gen.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "rl_hash.h"

/* The loader's default link rate (topologies/README.md), the base of derived rates. */
#define GEN_DEFAULT_RATE_BPS 100000000000ull
/* The loader's rate range: 1 bit/s .. 10 Tbit/s. */
#define GEN_MAX_RATE_BPS 10000000000000ull
/* Host MTU range of the loader. */
#define GEN_MTU_MIN 68
#define GEN_MTU_MAX 9216
/* Largest oversubscription ratio accepted (a sanity bound, not a limit of the format). */
#define GEN_MAX_OVERSUB 1000.0
/* Most parallel links per leaf-spine pair. */
#define GEN_MAX_LEAF_LINKS 16
/* Longest key=value pair quoted in a message. */
#define GEN_PAIR_MAX 128

static const char *const tier_word[TOPO_GEN_TIERS] = {"host", "leaf", "spine"};

static int gen_err(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Fill err (when given) and return rc. */
static int gen_err(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

void topo_gen_init(struct topo_gen_params *p)
{
	memset(p, 0, sizeof(*p));
	p->attach = -1;
	p->profile = -1;
	p->lb = -1;
	p->layout = -1;
}

/* A count 1..max (0 allowed for zones/atsw when zero_ok). */
static int parse_count(const char *v, unsigned max, bool zero_ok, unsigned *out)
{
	char *end;
	errno = 0;
	unsigned long n = strtoul(v, &end, 10);
	if (!*v || *end || errno || *v == '-' || *v == '+' || n > max || (n == 0 && !zero_ok))
		return -1;
	*out = (unsigned)n;
	return 0;
}

/* "7", "2.5", "7:1" or "1:7": the larger side over the smaller, >= 1. */
static int parse_ratio(const char *v, double *out)
{
	char *end;
	double a = strtod(v, &end), b = 1.0;
	if (end == v)
		return -1;
	if (*end == ':') {
		const char *s = end + 1;
		b = strtod(s, &end);
		if (end == s)
			return -1;
	}
	if (*end || !isfinite(a) || !isfinite(b) || a <= 0 || b <= 0)
		return -1;
	double r = a >= b ? a / b : b / a;
	if (r > GEN_MAX_OVERSUB)
		return -1;
	*out = r;
	return 0;
}

/* Tier of a "host-rate" style key: its tier and the part after the dash, or -1. */
static int tier_key(const char *key, const char **what)
{
	for (int i = 0; i < TOPO_GEN_TIERS; i++) {
		size_t n = strlen(tier_word[i]);
		if (!strncmp(key, tier_word[i], n) && key[n] == '-') {
			*what = key + n + 1;
			return i;
		}
	}
	return -1;
}

/* A tier key (host-rate, leaf-delay, spine-oversub, ...); 1 when key is not one. */
static int set_tier(struct topo_gen_params *p, const char *key, const char *v, const char **why)
{
	const char *what;
	int ti = tier_key(key, &what);
	if (ti < 0)
		return 1;
	struct topo_gen_tier *t = &p->tier[ti];
	if (!strcmp(what, "rate")) {
		*why = "a rate 1 bit/s..10T, e.g. 100G, 400G, 25Gbps";
		return topo_parse_rate(v, &t->rate_bps) ? -1 : 0;
	}
	if (!strcmp(what, "delay")) {
		*why = "a duration with a unit, e.g. 1us, 500ns, 0";
		if (topo_parse_duration(v, &t->delay_ns))
			return -1;
		t->has_delay = true;
		return 0;
	}
	if (!strcmp(what, "oversub") && ti != TOPO_GEN_HOST) {
		*why = "a ratio >= 1 (at most 1000), e.g. 7, 2.5, 7:1 or 1:7";
		return parse_ratio(v, &t->oversub);
	}
	return 1;
}

/* attach, host-mtu, profile, lb, name; 1 when key is none of them. */
static int set_misc(struct topo_gen_params *p, const char *key, const char *v, const char **why)
{
	if (!strcmp(key, "attach")) {
		*why = "veth, vhost, emulated or net_null (pci and dpdk need an address or devargs "
		       "per host: write the file by hand)";
		int a = topo_attach_from_name(v);
		if (a < 0 || a == TOPO_ATTACH_PCI || a == TOPO_ATTACH_DPDK)
			return -1;
		p->attach = a;
		return 0;
	}
	if (!strcmp(key, "host-mtu")) {
		unsigned m;
		*why = "68..9216";
		if (parse_count(v, GEN_MTU_MAX, false, &m) || m < GEN_MTU_MIN)
			return -1;
		p->host_mtu = m;
		return 0;
	}
	if (!strcmp(key, "profile")) {
		*why = "5tuple, eecmp, dqpn or 3tuple";
		p->profile = rl_profile_from_name(v);
		return p->profile < 0 ? -1 : 0;
	}
	if (!strcmp(key, "lb")) {
		*why = "ecmp, resilient, flowlet or pinning";
		p->lb = topo_lb_from_name(v);
		return p->lb < 0 ? -1 : 0;
	}
	if (!strcmp(key, "layout")) {
		*why = "meta (2 servers per leaf) or rail (GPU i of every server on leaf i)";
		p->layout = !strcmp(v, "meta") ? TOPO_GEN_LAYOUT_META
			  : !strcmp(v, "rail") ? TOPO_GEN_LAYOUT_RAIL : -1;
		return p->layout < 0 ? -1 : 0;
	}
	if (!strcmp(key, "name")) {
		*why = "1..31 of letters, digits, _ - .";
		size_t n = strlen(v);
		if (n == 0 || n >= sizeof(p->name) || strspn(v, "abcdefghijklmnopqrstuvwxyz"
						       "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") != n)
			return -1;
		memcpy(p->name, v, n + 1);
		return 0;
	}
	return 1;
}

/* One key=value; 0, -1 with *why (bad value), or 1 (unknown key). */
static int set_pair(struct topo_gen_params *p, const char *key, const char *v, const char **why)
{
	static const struct {
		const char *key;
		size_t off;
		unsigned max;
		bool zero_ok;
		const char *why;
	} counts[] = {
		{"zones", offsetof(struct topo_gen_params, zones), TOPO_MAX_LEAVES, false,
		 "1..4096"},
		{"leaves", offsetof(struct topo_gen_params, leaves), TOPO_MAX_LEAVES, false,
		 "1..4096"},
		{"spines", offsetof(struct topo_gen_params, spines), TOPO_GEN_MAX_SPINES, false,
		 "1..1024"},
		{"atsw", offsetof(struct topo_gen_params, atsw), TOPO_GEN_MAX_ATSW, false, "1..1024"},
		{"hosts", offsetof(struct topo_gen_params, hosts), TOPO_MAX_HOSTS_PER_LEAF, false,
		 "1..253 (hosts per leaf)"},
		{"leaf-links", offsetof(struct topo_gen_params, leaf_links), GEN_MAX_LEAF_LINKS,
		 false, "1..16 (parallel links per leaf-spine pair)"},
		{"servers", offsetof(struct topo_gen_params, servers),
		 TOPO_MAX_LEAVES * TOPO_GEN_SERVERS_PER_LEAF, false, "1..8192 (servers of GPUs)"},
		{"gpus", offsetof(struct topo_gen_params, gpus), TOPO_MAX_GPUS_PER_SERVER, false,
		 "1..253 (GPUs per server)"},
	};
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		if (strcmp(key, counts[i].key))
			continue;
		*why = counts[i].why;
		return parse_count(v, counts[i].max, counts[i].zero_ok,
				   (unsigned *)((char *)p + counts[i].off));
	}
	int rc = set_tier(p, key, v, why);
	return rc == 1 ? set_misc(p, key, v, why) : rc;
}

int topo_gen_parse(struct topo_gen_params *p, const char *spec, char *err, size_t errlen)
{
	if (!p || !spec)
		return gen_err(err, errlen, -EINVAL, "no generator spec");
	const char *s = spec;
	while (*s) {
		size_t n = strcspn(s, ",");
		char pair[GEN_PAIR_MAX];
		if (n >= sizeof(pair))
			return gen_err(err, errlen, -EINVAL, "bad key=value '%.*s...': too long", 40,
				       s);
		memcpy(pair, s, n);
		pair[n] = '\0';
		s += n + (s[n] == ',');
		char *eq = strchr(pair, '=');
		if (!eq || eq == pair)
			return gen_err(err, errlen, -EINVAL,
				       "bad key=value '%s': expected key=value", pair);
		*eq = '\0';
		const char *why = NULL;
		int rc = set_pair(p, pair, eq + 1, &why);
		*eq = '=';
		if (rc == 1)
			return gen_err(err, errlen, -EINVAL,
				       "bad key=value '%s': unknown key (keys: zones, leaves, spines, "
				       "atsw, hosts, leaf-links, host-/leaf-/spine-rate, host-/leaf-/spine-delay, "
				       "leaf-/spine-oversub, attach, host-mtu, profile, lb, name, "
				       "servers, gpus, layout)",
				       pair);
		if (rc)
			return gen_err(err, errlen, -EINVAL, "bad key=value '%s': expected %s", pair,
				       why);
	}
	return 0;
}

/* Rate of tier ti, the file default when not given. */
static uint64_t tier_rate(const struct topo_gen_params *p, int ti)
{
	return p->tier[ti].rate_bps ? p->tier[ti].rate_bps : GEN_DEFAULT_RATE_BPS;
}

/*
 * Tier ti's rate from its oversubscription: `down` links of rate `down_rate`
 * below a switch over `up` links of this tier above it.
 */
static int derive_rate(struct topo_gen_params *p, int ti, uint64_t down, uint64_t down_rate,
		       uint64_t up, char *err, size_t errlen)
{
	struct topo_gen_tier *t = &p->tier[ti];
	if (t->oversub == 0)
		return 0;
	if (t->rate_bps)
		return gen_err(err, errlen, -EINVAL,
			       "give %s-rate or %s-oversub, not both: the ratio sets the rate",
			       tier_word[ti], tier_word[ti]);
	double r = (double)down * (double)down_rate / ((double)up * t->oversub);
	r = floor(r + 0.5);
	if (r < 1 || r > (double)GEN_MAX_RATE_BPS)
		return gen_err(err, errlen, -EINVAL,
			       "%s-oversub %g gives a %s link rate of %.0f bit/s, outside 1 "
			       "bit/s..10T",
			       tier_word[ti], t->oversub, tier_word[ti], r);
	t->rate_bps = (uint64_t)r;
	return 0;
}

/* Parallel links per leaf-spine pair (1 when not given). */
static unsigned leaf_links(const struct topo_gen_params *p)
{
	return p->leaf_links ? p->leaf_links : 1;
}

/* Counts within the address scheme and the loader's port and switch limits. */
static int check_counts(const struct topo_gen_params *p, char *err, size_t errlen)
{
	unsigned zones = p->zones ? p->zones : 1;
	if (!p->leaves || !p->spines || !p->hosts)
		return gen_err(err, errlen, -EINVAL,
			       "leaves, spines and hosts (per leaf) are required, each >= 1");
	if (!p->zones && p->atsw)
		return gen_err(err, errlen, -EINVAL,
			       "atsw=%u needs zones=N: aggregation switches join AI zones", p->atsw);
	if (p->zones && !p->atsw)
		return gen_err(err, errlen, -EINVAL,
			       "zones=%u needs atsw=N >= 1: the aggregation switches join the zones",
			       p->zones);
	if (!p->zones && p->tier[TOPO_GEN_SPINE].rate_bps + p->tier[TOPO_GEN_SPINE].oversub > 0)
		return gen_err(err, errlen, -EINVAL,
			       "spine-rate and spine-oversub are the spine-ATSW tier: they need zones=N");
	uint64_t leaves = (uint64_t)zones * p->leaves;
	if (leaves > TOPO_MAX_LEAVES)
		return gen_err(err, errlen, -EINVAL, "%" PRIu64 " leaves in all: at most %d", leaves,
			       TOPO_MAX_LEAVES);
	if ((uint64_t)p->hosts + (uint64_t)p->spines * leaf_links(p) > TOPO_MAX_PORTS ||
	    (uint64_t)p->leaves * leaf_links(p) + p->atsw > TOPO_MAX_PORTS ||
	    (uint64_t)zones * p->spines > TOPO_MAX_PORTS)
		return gen_err(err, errlen, -EINVAL, "a switch would have more than %d ports",
			       TOPO_MAX_PORTS);
	if (leaves + (uint64_t)zones * p->spines + p->atsw > TOPO_MAX_SWITCHES)
		return gen_err(err, errlen, -EINVAL, "more than %d switches", TOPO_MAX_SWITCHES);
	return 0;
}

static unsigned gpus(const struct topo_gen_params *p)
{
	return p->gpus ? p->gpus : TOPO_GEN_DEFAULT_GPUS;
}

static const char *layout_word(const struct topo_gen_params *p)
{
	return p->layout == TOPO_GEN_LAYOUT_RAIL ? "rail" : "meta";
}

/*
 * servers=N: the leaves and hosts per leaf the layout gives (topo_gen.h),
 * attach emulated. Given leaves= or hosts= must agree (so that a second call
 * passes).
 */
static int resolve_servers(struct topo_gen_params *p, char *err, size_t errlen)
{
	if (!p->servers) {
		if (p->gpus || p->layout >= 0)
			return gen_err(err, errlen, -EINVAL,
				       "gpus= and layout= describe servers: they need servers=N");
		return 0;
	}
	if (p->attach >= 0 && p->attach != TOPO_ATTACH_EMULATED)
		return gen_err(err, errlen, -EINVAL,
			       "attach=%s: a server's GPUs are emulated hosts (each its own NIC); "
			       "servers= sets attach=emulated",
			       topo_attach_name(p->attach));
	unsigned leaves, hosts, g = gpus(p);
	if (p->layout == TOPO_GEN_LAYOUT_RAIL) {
		leaves = g;
		hosts = p->servers;
	} else {
		leaves = (p->servers + TOPO_GEN_SERVERS_PER_LEAF - 1) / TOPO_GEN_SERVERS_PER_LEAF;
		hosts = (p->servers < TOPO_GEN_SERVERS_PER_LEAF ? p->servers
								: TOPO_GEN_SERVERS_PER_LEAF) * g;
	}
	if (hosts > TOPO_MAX_HOSTS_PER_LEAF)
		return gen_err(err, errlen, -EINVAL,
			       "layout=%s puts %u GPUs on a leaf (%s): more than a leaf's %d host "
			       "ports",
			       layout_word(p), hosts,
			       p->layout == TOPO_GEN_LAYOUT_RAIL ? "one per server"
								 : "2 servers per leaf",
			       TOPO_MAX_HOSTS_PER_LEAF);
	if ((p->leaves && p->leaves != leaves) || (p->hosts && p->hosts != hosts))
		return gen_err(err, errlen, -EINVAL,
			       "servers=%u,gpus=%u,layout=%s makes %u leaf/leaves of %u hosts: leave out "
			       "leaves= and hosts=",
			       p->servers, g, layout_word(p), leaves, hosts);
	p->leaves = leaves;
	p->hosts = hosts;
	p->attach = TOPO_ATTACH_EMULATED;
	return 0;
}

/* The default name: clos-SxLxH, ai-z..., or for servers LAYOUT-NxG-sS (ai-zZ-... in zones). */
static void default_name(struct topo_gen_params *p)
{
	char links[16] = "", name[128];
	if (p->name[0])
		return;
	if (leaf_links(p) > 1)
		snprintf(links, sizeof(links), "-k%u", leaf_links(p));
	if (p->servers && p->zones)
		snprintf(name, sizeof(name), "ai-z%u-%s-%ux%u-s%u-a%u%s", p->zones, layout_word(p),
			 p->servers, gpus(p), p->spines, p->atsw, links);
	else if (p->servers)
		snprintf(name, sizeof(name), "%s-%ux%u-s%u%s", layout_word(p), p->servers, gpus(p),
			 p->spines, links);
	else if (p->zones)
		snprintf(name, sizeof(name), "ai-z%u-l%u-s%u-a%u-h%u%s", p->zones, p->leaves,
			 p->spines, p->atsw, p->hosts, links);
	else
		snprintf(name, sizeof(name), "clos-%ux%ux%u%s", p->spines, p->leaves, p->hosts,
			 links);
	/* the counts' limits keep it within a name; cut rather than overflow */
	snprintf(p->name, sizeof(p->name), "%.*s", TOPO_NAME_MAX - 1, name);
}

int topo_gen_resolve(struct topo_gen_params *p, char *err, size_t errlen)
{
	if (!p)
		return gen_err(err, errlen, -EINVAL, "no parameters");
	int rc = resolve_servers(p, err, errlen);
	if (!rc)
		rc = check_counts(p, err, errlen);
	if (rc)
		return rc;
	rc = derive_rate(p, TOPO_GEN_LEAF, p->hosts, tier_rate(p, TOPO_GEN_HOST),
			 (uint64_t)p->spines * leaf_links(p), err, errlen);
	if (!rc && p->zones)
		rc = derive_rate(p, TOPO_GEN_SPINE, (uint64_t)p->leaves * leaf_links(p),
				 tier_rate(p, TOPO_GEN_LEAF), p->atsw, err, errlen);
	if (rc)
		return rc;
	default_name(p);
	return 0;
}

/* A rate the loader reads: 400G, 2.5G is written in bit/s. */
static void fmt_rate(uint64_t bps, char *buf, size_t len)
{
	static const struct {
		uint64_t mult;
		char unit;
	} units[] = {{1000000000000ull, 'T'}, {1000000000ull, 'G'}, {1000000ull, 'M'}, {1000ull, 'k'}};
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (bps % units[i].mult == 0) {
			snprintf(buf, len, "%" PRIu64 "%c", bps / units[i].mult, units[i].unit);
			return;
		}
	snprintf(buf, len, "%" PRIu64, bps);
}

/* "rate: R, delay: D" of a tier (what was given), or "" when nothing was. */
static void tier_settings(const struct topo_gen_tier *t, char *buf, size_t len)
{
	char r[32];
	int n = 0;
	buf[0] = '\0';
	if (t->rate_bps) {
		fmt_rate(t->rate_bps, r, sizeof(r));
		n = snprintf(buf, len, "rate: %s", r);
	}
	if (t->has_delay && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, "%sdelay: %" PRIu64 "ns", n ? ", " : "",
			 t->delay_ns);
}

/* The defaults: section (nothing when every setting is the file default). */
static void write_defaults(const struct topo_gen_params *p, FILE *out)
{
	char host[64] = "", sw[64] = "", link[96], host_link[96];
	int n = 0;
	if (p->attach >= 0)
		n = snprintf(host, sizeof(host), "attach: %s", topo_attach_name(p->attach));
	if (p->host_mtu)
		snprintf(host + n, sizeof(host) - (size_t)n, "%smtu: %" PRIu32, n ? ", " : "",
			 p->host_mtu);
	n = 0;
	if (p->profile >= 0)
		n = snprintf(sw, sizeof(sw), "profile: %s", rl_profile_name(p->profile));
	if (p->lb >= 0)
		snprintf(sw + n, sizeof(sw) - (size_t)n, "%slb: %s", n ? ", " : "",
			 topo_lb_name(p->lb));
	tier_settings(&p->tier[TOPO_GEN_LEAF], link, sizeof(link));
	tier_settings(&p->tier[TOPO_GEN_HOST], host_link, sizeof(host_link));
	if (!host[0] && !sw[0] && !link[0] && !host_link[0])
		return;
	fprintf(out, "defaults:\n");
	if (sw[0])
		fprintf(out, "  switch: {%s}\n", sw);
	if (host[0])
		fprintf(out, "  host: {%s}\n", host);
	if (link[0])
		fprintf(out, "  link: {%s}          # leaf-spine links\n", link);
	if (host_link[0])
		fprintf(out, "  host_link: {%s}     # host-leaf links\n", host_link);
}

typedef void (*zone_fn)(const struct topo_gen_params *p, const char *zp, FILE *out);

/* fn for each zone with its name prefix: "zZ-" in AI zones, "" for the one Clos. */
static void each_zone(const struct topo_gen_params *p, zone_fn fn, FILE *out)
{
	char zp[16] = "";
	for (unsigned z = 0; z < (p->zones ? p->zones : 1); z++) {
		if (p->zones)
			snprintf(zp, sizeof(zp), "z%u-", z);
		fn(p, zp, out);
	}
}

static void zone_switches(const struct topo_gen_params *p, const char *zp, FILE *out)
{
	for (unsigned l = 0; l < p->leaves; l++)
		fprintf(out, "  - {name: %sleaf%u, role: rtsw}\n", zp, l);
	for (unsigned s = 0; s < p->spines; s++)
		fprintf(out, "  - {name: %sspine%u, role: ctsw}\n", zp, s);
}

static void zone_hosts(const struct topo_gen_params *p, const char *zp, FILE *out)
{
	for (unsigned l = 0; l < p->leaves; l++)
		for (unsigned h = 0; h < p->hosts; h++)
			fprintf(out, "  - {name: %sh%u, leaf: %sleaf%u}\n", zp, l * p->hosts + h, zp,
				l);
}

/* GPU g of server k: its leaf in the layout (topo_gen.h). */
static unsigned gpu_leaf(const struct topo_gen_params *p, unsigned k, unsigned g)
{
	return p->layout == TOPO_GEN_LAYOUT_RAIL ? g : k / TOPO_GEN_SERVERS_PER_LEAF;
}

/* The zone's servers, GPU by GPU; a leaf's ports follow this order. */
static void zone_gpus(const struct topo_gen_params *p, const char *zp, FILE *out)
{
	for (unsigned k = 0; k < p->servers; k++)
		for (unsigned g = 0; g < gpus(p); g++)
			fprintf(out, "  - {name: %ss%u-g%u, leaf: %sleaf%u, server: %ss%u, gpu: %u}\n",
				zp, k, g, zp, gpu_leaf(p, k, g), zp, k, g);
}

/* Every leaf of the zone to every spine, leaf-links times (parallel links named -bK). */
static void zone_leaf_links(const struct topo_gen_params *p, const char *zp, FILE *out)
{
	for (unsigned l = 0; l < p->leaves; l++)
		for (unsigned s = 0; s < p->spines; s++) {
			fprintf(out, "  - [%sleaf%u, %sspine%u]\n", zp, l, zp, s);
			for (unsigned k = 1; k < leaf_links(p); k++)
				fprintf(out, "  - {name: %sleaf%u-%sspine%u-b%u, ends: [%sleaf%u, %sspine%u]}\n",
					zp, l, zp, s, k, zp, l, zp, s);
		}
}

/* Every spine of the zone to every ATSW, with the spine tier's settings. */
static void zone_spine_links(const struct topo_gen_params *p, const char *zp, FILE *out)
{
	char up[96];
	tier_settings(&p->tier[TOPO_GEN_SPINE], up, sizeof(up));
	for (unsigned s = 0; s < p->spines; s++)
		for (unsigned a = 0; a < p->atsw; a++) {
			if (up[0])
				fprintf(out, "  - {ends: [%sspine%u, agg%u], %s}\n", zp, s, a, up);
			else
				fprintf(out, "  - [%sspine%u, agg%u]\n", zp, s, a);
		}
}

static void write_nodes_links(const struct topo_gen_params *p, FILE *out)
{
	fprintf(out, "switches:\n");
	each_zone(p, zone_switches, out);
	for (unsigned a = 0; a < p->atsw; a++)
		fprintf(out, "  - {name: agg%u, role: atsw}\n", a);
	fprintf(out, "hosts:\n");
	each_zone(p, p->servers ? zone_gpus : zone_hosts, out);
	fprintf(out, "links:\n");
	each_zone(p, zone_leaf_links, out);
	each_zone(p, zone_spine_links, out);
}

/* Hosts of one zone (of the Clos): with servers, meta's last leaf may hold one server. */
static unsigned zone_host_count(const struct topo_gen_params *p)
{
	return p->servers ? p->servers * gpus(p) : p->leaves * p->hosts;
}

/* The shape and the ratios the rates give, as comment lines. */
static void write_summary(const struct topo_gen_params *p, FILE *out)
{
	double leaf = (double)p->hosts * (double)tier_rate(p, TOPO_GEN_HOST) /
		      ((double)p->spines * leaf_links(p) * (double)tier_rate(p, TOPO_GEN_LEAF));
	if (leaf_links(p) > 1)
		fprintf(out, "# %u parallel links per leaf-spine pair\n", leaf_links(p));
	if (p->servers && p->layout == TOPO_GEN_LAYOUT_RAIL)
		fprintf(out, "# servers: %u%s x %u GPUs, layout rail: GPU i of every server on leaf "
			     "i, server k on port k\n",
			p->servers, p->zones ? " per zone" : "", gpus(p));
	else if (p->servers)
		fprintf(out, "# servers: %u%s x %u GPUs, layout meta: 2 servers per leaf, GPU i of "
			     "the first on port i, of the second on port %u+i\n",
			p->servers, p->zones ? " per zone" : "", gpus(p), gpus(p));
	if (!p->zones) {
		fprintf(out, "# 2-tier Clos: %u spines, %u leaves, %u hosts per leaf (%u hosts); "
			     "leaf oversubscription %.3g:1\n",
			p->spines, p->leaves, p->hosts, zone_host_count(p), leaf);
		return;
	}
	double spine = (double)p->leaves * leaf_links(p) * (double)tier_rate(p, TOPO_GEN_LEAF) /
		       ((double)p->atsw * (double)tier_rate(p, TOPO_GEN_SPINE));
	fprintf(out,
		"# AI zones: %u zones x (%u leaves, %u spines), %u ATSW, %u hosts per leaf (%u "
		"hosts); oversubscription leaf %.3g:1, spine (between zones) %.3g:1\n",
		p->zones, p->leaves, p->spines, p->atsw, p->hosts, p->zones * zone_host_count(p),
		leaf, spine);
}

int topo_gen_write(const struct topo_gen_params *p, const char *comment, FILE *out)
{
	if (!p || !out || !p->name[0])
		return -EINVAL;
	if (comment)
		fprintf(out, "# %s\n", comment);
	write_summary(p, out);
	fprintf(out, "name: %s\n", p->name);
	if (p->servers) /* NVLink and PCIe: the H100 defaults (topologies/README.md) */
		fprintf(out, "servers: {gpus_per_server: %u}\n", gpus(p));
	write_defaults(p, out);
	write_nodes_links(p, out);
	return ferror(out) ? -EIO : 0;
}

struct topo *topo_gen(struct topo_gen_params *p, char *err, size_t errlen)
{
	if (topo_gen_resolve(p, err, errlen))
		return NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f) {
		gen_err(err, errlen, -ENOMEM, "<%s>: out of memory", p->name);
		return NULL;
	}
	int rc = topo_gen_write(p, NULL, f);
	if (fclose(f) || rc || !text) {
		free(text);
		gen_err(err, errlen, -ENOMEM, "<%s>: out of memory", p->name);
		return NULL;
	}
	char display[TOPO_NAME_MAX + 2];
	snprintf(display, sizeof(display), "<%s>", p->name);
	struct topo *t = NULL;
	topo_load_string(text, len, display, &t, err, errlen);
	free(text);
	return t;
}

struct topo *topo_clos(unsigned spines, unsigned leaves, unsigned hosts_per_leaf, char *err,
		       size_t errlen)
{
	struct topo_gen_params p;
	topo_gen_init(&p);
	p.spines = spines;
	p.leaves = leaves;
	p.hosts = hosts_per_leaf;
	if (err && errlen)
		err[0] = '\0';
	if (spines < 1 || spines > TOPO_GEN_MAX_SPINES || leaves < 1 ||
	    leaves > TOPO_MAX_LEAVES || hosts_per_leaf < 1 ||
	    hosts_per_leaf > TOPO_MAX_HOSTS_PER_LEAF ||
	    (uint64_t)leaves * hosts_per_leaf > TOPO_MAX_HOSTS) {
		gen_err(err, errlen, -EINVAL,
			"<clos-%ux%ux%u>: bad Clos size: spines 1..%d, leaves 1..%d, hosts per "
			"leaf 1..%d",
			spines, leaves, hosts_per_leaf, TOPO_GEN_MAX_SPINES, TOPO_MAX_LEAVES,
			TOPO_MAX_HOSTS_PER_LEAF);
		return NULL;
	}
	return topo_gen(&p, err, errlen);
}
