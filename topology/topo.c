/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Topology loader and validator over libfyaml's document API.
 *
 * Loading is two passes: parse every YAML object into a "vals" struct that
 * records which fields the object set (and on which line), then merge
 * built-in defaults < defaults: section < the object's own keys, resolve
 * names, number ports, check the graph and derive addresses. Only the first
 * error is reported, as "FILE:LINE: what is wrong".
 *
 * libfyaml 0.7.12 has no fy_node_get_start_mark(): a node's line comes from
 * its scalar token, or for a collection from its first scalar, or else from
 * the key that names it (topo_yaml_line()).
 */
#include "topo.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <libfyaml.h>

#include "pfc_mmu.h"
#include "topo_yaml.h"

#define RATE_HINT "a number with an optional unit k, M, G, T and optional 'bps', e.g. 100G, 25Gbps, 100M"
#define TIME_HINT "a number with a unit ns, us, ms or s, e.g. 1us, 2ms"
#define SIZE_HINT "bytes, or a number with B, KB, KiB, MB or MiB"
#define MAX_RATE 10000000000000ull          /* 10 Tbit/s */
#define MAX_DELAY 10000000000ull            /* 10 s */
#define MAX_AT 86400000000000ull            /* one day */
#define MTU_MIN 68
#define MTU_MAX 9216

/* ------------------------------------------------------------------ names */

static const char *const role_names[TOPO_ROLE_COUNT] = {"rtsw", "ctsw", "atsw"};
static const char *const lb_names[TOPO_LB_COUNT] = {"ecmp", "resilient", "flowlet", "pinning"};
static const char *const attach_names[TOPO_ATTACH_COUNT] = {"veth", "vhost", "pci", "emulated",
								    "net_null", "dpdk"};
#define ATTACH_HINT "veth, vhost, pci, emulated, net_null, dpdk"

static int name_index(const char *const *names, int n, const char *name)
{
	if (!name)
		return -1;
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	return -1;
}

const char *topo_role_name(enum topo_role role)
{
	return (unsigned)role < TOPO_ROLE_COUNT ? role_names[role] : NULL;
}

const char *topo_lb_name(enum topo_lb lb)
{
	return (unsigned)lb < TOPO_LB_COUNT ? lb_names[lb] : NULL;
}

const char *topo_attach_name(enum topo_attach attach)
{
	return (unsigned)attach < TOPO_ATTACH_COUNT ? attach_names[attach] : NULL;
}

int topo_role_from_name(const char *name)
{
	return name_index(role_names, TOPO_ROLE_COUNT, name);
}

int topo_lb_from_name(const char *name)
{
	return name_index(lb_names, TOPO_LB_COUNT, name);
}

int topo_attach_from_name(const char *name)
{
	return name_index(attach_names, TOPO_ATTACH_COUNT, name);
}

char *topo_devargs_name(const char *devargs, char *buf, size_t len)
{
	snprintf(buf, len, "%.*s", (int)strcspn(devargs, ","), devargs);
	return buf;
}

static bool valid_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n >= TOPO_NAME_MAX)
		return false;
	if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') ||
	      (s[0] >= '0' && s[0] <= '9')))
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.'))
			return false;
	}
	return true;
}

static int get_name(struct topo_yaml_ctx *c, struct fy_node *v, const char *key, int key_line,
		    char buf[TOPO_NAME_MAX])
{
	char tmp[256];
	if (topo_yaml_scalar(c, v, key, key_line, tmp, sizeof(tmp)))
		return -1;
	if (!valid_name(tmp))
		return topo_yaml_fail(
			c, topo_yaml_line(v, key_line),
			"%s: invalid name '%s' (1-%d characters: letters, digits, '_', '-', "
			"'.'; starting with a letter or digit)",
			key, tmp, TOPO_NAME_MAX - 1);
	memcpy(buf, tmp, strlen(tmp) + 1);
	return 0;
}

static int get_uint(struct topo_yaml_ctx *c, struct fy_node *v, const char *key, int key_line,
		    uint64_t min, uint64_t max, uint64_t *out)
{
	char tmp[64];
	if (topo_yaml_scalar(c, v, key, key_line, tmp, sizeof(tmp)))
		return -1;
	int line = topo_yaml_line(v, key_line);
	const char *p = tmp;
	int base = 10;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	bool ok = *p != '\0';
	for (const char *q = p; *q; q++)
		if (!(base == 16 ? ((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'f') ||
				    (*q >= 'A' && *q <= 'F'))
				 : (*q >= '0' && *q <= '9')))
			ok = false;
	if (!ok)
		return topo_yaml_fail(c, line, "%s: expected a non-negative integer, got '%s'", key,
				      tmp);
	errno = 0;
	unsigned long long x = strtoull(p, NULL, base);
	if (errno || x < min || x > max)
		return topo_yaml_fail(c, line, "%s: %s is out of range (%" PRIu64 "..%" PRIu64 ")",
				      key, tmp, min, max);
	*out = x;
	return 0;
}

static int get_enum(struct topo_yaml_ctx *c, struct fy_node *v, const char *key, int key_line,
		    int (*from_name)(const char *), const char *choices, int *out)
{
	char tmp[64];
	if (topo_yaml_scalar(c, v, key, key_line, tmp, sizeof(tmp)))
		return -1;
	int x = from_name(tmp);
	if (x < 0)
		return topo_yaml_fail(c, topo_yaml_line(v, key_line),
				      "%s: unknown value '%s' (expected one of: %s)", key, tmp,
				      choices);
	*out = x;
	return 0;
}

static int get_bool(struct topo_yaml_ctx *c, struct fy_node *v, const char *key, int key_line,
		    bool *out)
{
	char tmp[16];
	if (topo_yaml_scalar(c, v, key, key_line, tmp, sizeof(tmp)))
		return -1;
	if (!strcmp(tmp, "true") || !strcmp(tmp, "True") || !strcmp(tmp, "TRUE"))
		*out = true;
	else if (!strcmp(tmp, "false") || !strcmp(tmp, "False") || !strcmp(tmp, "FALSE"))
		*out = false;
	else
		return topo_yaml_fail(c, topo_yaml_line(v, key_line),
				      "%s: expected true or false, got '%s'", key, tmp);
	return 0;
}

/* A number in [0, 1], or a percentage "0.5%". */
static int get_fraction(struct topo_yaml_ctx *c, struct fy_node *v, const char *key, int key_line,
			double *out)
{
	char tmp[64];
	if (topo_yaml_scalar(c, v, key, key_line, tmp, sizeof(tmp)))
		return -1;
	int line = topo_yaml_line(v, key_line);
	char *end = NULL;
	errno = 0;
	double x = strtod(tmp, &end);
	bool pct = end && *end == '%';
	if (pct)
		end++;
	if (errno || end == tmp || !end || *end != '\0' || !isfinite(x) ||
	    !((tmp[0] >= '0' && tmp[0] <= '9') || tmp[0] == '.' || tmp[0] == '-'))
		return topo_yaml_fail(
			c, line,
			"%s: expected a number between 0 and 1 (or a percentage), got '%s'", key,
			tmp);
	if (pct)
		x /= 100.0;
	if (x < 0.0 || x > 1.0)
		return topo_yaml_fail(c, line, "%s: %s is out of range (0..1, or 0%%..100%%)", key,
				      tmp);
	*out = x;
	return 0;
}

struct unit {
	const char *name;
	uint64_t mult;
};

static const struct unit rate_units[] = {
	{"", 1}, {"bps", 1},
	{"k", 1000ull}, {"K", 1000ull}, {"kbps", 1000ull}, {"Kbps", 1000ull},
	{"M", 1000000ull}, {"Mbps", 1000000ull},
	{"G", 1000000000ull}, {"Gbps", 1000000000ull},
	{"T", 1000000000000ull}, {"Tbps", 1000000000000ull},
	{NULL, 0},
};

static const struct unit time_units[] = {
	{"ns", 1}, {"us", 1000ull}, {"ms", 1000000ull}, {"s", 1000000000ull}, {NULL, 0},
};

static const struct unit size_units[] = {
	{"", 1}, {"B", 1},
	{"KB", 1000ull}, {"KiB", 1024ull}, {"MB", 1000000ull}, {"MiB", 1048576ull},
	{NULL, 0},
};

/* Microseconds, as in flowlet_timeout_us: a bare number scaled to ns. */
static const struct unit us_units[] = {{"", 1000ull}, {NULL, 0}};

enum scaled_err { SC_OK, SC_SYNTAX, SC_UNIT, SC_FRACTION, SC_RANGE };

/* "12.5G" with the unit table: exact integer arithmetic, no floating point. */
static enum scaled_err parse_scaled(const char *s, const struct unit *units, bool unitless_zero,
				    uint64_t *out)
{
	uint64_t ip = 0, frac = 0, scale = 1;
	const char *p = s;
	if (!(*p >= '0' && *p <= '9'))
		return SC_SYNTAX;
	for (; *p >= '0' && *p <= '9'; p++)
		if (__builtin_mul_overflow(ip, 10, &ip) || __builtin_add_overflow(ip, *p - '0', &ip))
			return SC_RANGE;
	if (*p == '.') {
		p++;
		if (!(*p >= '0' && *p <= '9'))
			return SC_SYNTAX;
		for (int nd = 0; *p >= '0' && *p <= '9'; p++, nd++) {
			if (nd >= 18)
				return SC_SYNTAX;
			frac = frac * 10 + (uint64_t)(*p - '0');
			scale *= 10;
		}
	}
	while (*p == ' ')
		p++;
	const struct unit *u = NULL;
	for (const struct unit *q = units; q->name; q++)
		if (strcmp(q->name, p) == 0)
			u = q;
	if (!u) {
		if (*p == '\0' && unitless_zero && ip == 0 && frac == 0) {
			*out = 0;
			return SC_OK;
		}
		return SC_UNIT;
	}
	uint64_t whole, part;
	if (__builtin_mul_overflow(ip, u->mult, &whole))
		return SC_RANGE;
	if (__builtin_mul_overflow(frac, u->mult, &part))
		return SC_RANGE;
	if (part % scale)
		return SC_FRACTION;
	if (__builtin_add_overflow(whole, part / scale, &whole))
		return SC_RANGE;
	*out = whole;
	return SC_OK;
}

int topo_parse_rate(const char *s, uint64_t *bps)
{
	uint64_t x;
	if (!s || !bps || parse_scaled(s, rate_units, false, &x) != SC_OK || x == 0 ||
	    x > MAX_RATE)
		return -1;
	*bps = x;
	return 0;
}

int topo_parse_duration(const char *s, uint64_t *ns)
{
	uint64_t x;
	if (!s || !ns || parse_scaled(s, time_units, true, &x) != SC_OK || x > MAX_AT)
		return -1;
	*ns = x;
	return 0;
}

/* kind: "rate" / "duration" / "size", hint: what a valid value looks like. */
static int get_scaled(struct topo_yaml_ctx *c, struct fy_node *v, const char *key, int key_line,
		      const struct unit *units, bool unitless_zero, const char *kind,
		      const char *hint, uint64_t min, uint64_t max, uint64_t *out)
{
	char tmp[64];
	if (topo_yaml_scalar(c, v, key, key_line, tmp, sizeof(tmp)))
		return -1;
	int line = topo_yaml_line(v, key_line);
	uint64_t x = 0;
	switch (parse_scaled(tmp, units, unitless_zero, &x)) {
	case SC_OK:
		break;
	case SC_SYNTAX:
		return topo_yaml_fail(c, line, "%s: '%s' is not a valid %s (%s)", key, tmp, kind,
				      hint);
	case SC_UNIT:
		return topo_yaml_fail(c, line, "%s: '%s' has a bad or missing unit (%s)", key, tmp,
				      hint);
	case SC_FRACTION:
		return topo_yaml_fail(c, line, "%s: '%s' is not a whole number of the base unit",
				      key, tmp);
	case SC_RANGE:
		return topo_yaml_fail(c, line, "%s: '%s' is too large", key, tmp);
	}
	if (x < min || x > max) {
		if (x == 0)
			return topo_yaml_fail(c, line, "%s: must not be zero", key);
		return topo_yaml_fail(c, line, "%s: '%s' is out of range", key, tmp);
	}
	*out = x;
	return 0;
}


/* ------------------------------------------------------------- name maps */

struct nment {
	const char *name;
	uint32_t id;
};

struct nmap {
	uint32_t cap; /* power of two */
	struct nment *e;
};

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++) {
		h ^= (uint8_t)*s;
		h *= 16777619u;
	}
	return h;
}

static int nmap_init(struct nmap *m, uint32_t n)
{
	m->cap = 16;
	while (m->cap < 2 * n + 2)
		m->cap *= 2;
	m->e = calloc(m->cap, sizeof(*m->e));
	return m->e ? 0 : -1;
}

static void nmap_free(struct nmap *m)
{
	free(m->e);
	m->e = NULL;
}

/* Id of name, or -1. */
static long nmap_get(const struct nmap *m, const char *name)
{
	for (uint32_t i = fnv1a(name) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->e[i].name)
			return -1;
		if (strcmp(m->e[i].name, name) == 0)
			return m->e[i].id;
	}
}

/* Insert name -> id unless present; returns the existing id, or -1 when inserted. */
static long nmap_put(struct nmap *m, const char *name, uint32_t id)
{
	for (uint32_t i = fnv1a(name) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->e[i].name) {
			m->e[i].name = name;
			m->e[i].id = id;
			return -1;
		}
		if (strcmp(m->e[i].name, name) == 0)
			return m->e[i].id;
	}
}

/* ----------------------------------------------------------- vals: parse */

enum { SW_BUFFER, SW_PROFILE, SW_ALGO, SW_SEED, SW_LB, SW_FLOWLET, SW_BUCKETS, SW_NFIELDS };

struct sw_vals {
	unsigned set;
	int line[SW_NFIELDS];
	char buffer[TOPO_NAME_MAX];
	const struct pfc_buffer_profile *buffer_profile;
	int profile, algo, lb;
	uint32_t seed;
	uint64_t flowlet_ns;
	uint32_t buckets;
};

enum {
	HO_ATTACH, HO_MTU, HO_NETNS, HO_IFNAME, HO_SOCKET, HO_PCI, HO_DEVARGS, HO_IPV4, HO_MAC,
	HO_NFIELDS
};

struct host_vals {
	unsigned set;
	int line[HO_NFIELDS];
	int attach;
	uint32_t mtu;
	char netns[TOPO_NAME_MAX];
	char ifname[TOPO_IFNAME_MAX];
	char socket[TOPO_PATH_MAX];
	char pci[TOPO_PCI_MAX];
	char devargs[TOPO_DEVARGS_MAX];
	uint32_t ipv4; /* host order */
	uint8_t mac[6];
};

enum { LI_RATE, LI_DELAY, LI_MTU, LI_LOSS, LI_NFIELDS };

struct link_vals {
	unsigned set;
	int line[LI_NFIELDS];
	uint64_t rate, delay;
	uint32_t mtu;
	double loss;
};

#define SET(v, f, l) ((v)->set |= 1u << (f), (v)->line[f] = (l))
#define HAS(v, f) (((v)->set >> (f)) & 1u)

static const char *const switch_val_keys[] = {
	"buffer", "profile", "algo", "seed", "lb", "flowlet_timeout_us", "resilient_buckets", NULL,
};
static const char *const switch_keys[] = {
	"name", "role", "buffer", "profile", "algo", "seed", "lb", "flowlet_timeout_us",
	"resilient_buckets", "partition", NULL,
};

static int sw_val_pair(struct topo_yaml_ctx *c, struct sw_vals *s, const char *key,
		       struct fy_node *v, int kl)
{
	int line = topo_yaml_line(v, kl);
	uint64_t x;
	if (!strcmp(key, "buffer")) {
		if (get_name(c, v, key, kl, s->buffer))
			return -1;
		s->buffer_profile = pfc_buffer_profile_find(s->buffer);
		if (!s->buffer_profile) {
			char known[128] = "";
			size_t off = 0;
			const struct pfc_buffer_profile *bp;
			for (size_t i = 0; (bp = pfc_buffer_profile_at(i)) && off < sizeof(known); i++) {
				int n = snprintf(known + off, sizeof(known) - off, "%s%s", i ? ", " : "",
						 bp->name);
				if (n < 0)
					break;
				off += (size_t)n;
			}
			return topo_yaml_fail(c, line,
					      "buffer: unknown buffer profile '%s' (known: %s)",
					      s->buffer, known);
		}
		SET(s, SW_BUFFER, line);
	} else if (!strcmp(key, "profile")) {
		if (get_enum(c, v, key, kl, rl_profile_from_name, "5tuple, eecmp, dqpn, 3tuple",
			     &s->profile))
			return -1;
		SET(s, SW_PROFILE, line);
	} else if (!strcmp(key, "algo")) {
		if (get_enum(c, v, key, kl, rl_hash_algo_from_name,
			     "crc16, crc32, crc32c, xor, toeplitz", &s->algo))
			return -1;
		SET(s, SW_ALGO, line);
	} else if (!strcmp(key, "seed")) {
		if (get_uint(c, v, key, kl, 0, UINT32_MAX, &x))
			return -1;
		s->seed = (uint32_t)x;
		SET(s, SW_SEED, line);
	} else if (!strcmp(key, "lb")) {
		if (get_enum(c, v, key, kl, topo_lb_from_name, "ecmp, resilient, flowlet, pinning",
			     &s->lb))
			return -1;
		SET(s, SW_LB, line);
	} else if (!strcmp(key, "flowlet_timeout_us")) {
		if (get_scaled(c, v, key, kl, us_units, false, "timeout",
			       "microseconds, e.g. 50 or 12.5", 1, MAX_DELAY, &s->flowlet_ns))
			return -1;
		SET(s, SW_FLOWLET, line);
	} else if (!strcmp(key, "resilient_buckets")) {
		if (get_uint(c, v, key, kl, 2, 65536, &x))
			return -1;
		if (x & (x - 1))
			return topo_yaml_fail(
				c, line, "resilient_buckets: %" PRIu64 " is not a power of two", x);
		s->buckets = (uint32_t)x;
		SET(s, SW_BUCKETS, line);
	}
	return 0;
}

/*
 * A dpdk host's devargs: "NAME[,key=value...]" as EAL's --vdev takes it. The
 * loader checks what it can without DPDK (a device name EAL can hold, no
 * blanks, no empty key=value pair); the driver checks the rest at start-up.
 */
static int get_devargs(struct topo_yaml_ctx *c, struct fy_node *v, const char *key, int kl,
		       char out[TOPO_DEVARGS_MAX])
{
	static const char name_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					 "0123456789_";
	int line = topo_yaml_line(v, kl);
	char s[TOPO_DEVARGS_MAX];

	if (topo_yaml_scalar(c, v, key, kl, s, sizeof(s)))
		return -1;
	size_t n = strcspn(s, ",");
	if (s[0] == '\0')
		return topo_yaml_fail(c, line, "devargs: empty (expected NAME[,key=value...], e.g. "
					       "net_pcap0,rx_pcap=in.pcap)");
	if (n == 0 || n >= TOPO_DEVNAME_MAX || strspn(s, name_chars) < n)
		return topo_yaml_fail(c, line,
				      "devargs: '%s': the device name before the first ',' must be "
				      "1-%d letters, digits or '_' (e.g. net_pcap0)",
				      s, TOPO_DEVNAME_MAX - 1);
	if (s[strcspn(s, " \t\n")] != '\0')
		return topo_yaml_fail(c, line, "devargs: '%s' contains a blank", s);
	/* every ',' starts a key=value pair with a key */
	for (const char *p = strchr(s, ','); p; p = strchr(p + 1, ','))
		if (p[1] == ',' || p[1] == '\0' || p[1] == '=')
			return topo_yaml_fail(c, line, "devargs: '%s' has an empty key=value pair", s);
	memcpy(out, s, strlen(s) + 1);
	return 0;
}

/* A host's own IPv4 address (replacing the derived one): unicast, dotted quad. */
static int get_host_ipv4(struct topo_yaml_ctx *c, struct fy_node *v, const char *key, int kl,
			 uint32_t *out)
{
	char s[TOPO_NAME_MAX];
	struct in_addr a;

	if (topo_yaml_scalar(c, v, key, kl, s, sizeof(s)))
		return -1;
	if (inet_pton(AF_INET, s, &a) != 1)
		return topo_yaml_fail(c, topo_yaml_line(v, kl),
				      "ipv4: '%s' is not an IPv4 address (a.b.c.d)", s);
	*out = ntohl(a.s_addr);
	if (*out == 0 || *out == UINT32_MAX || (*out >> 28) == 0xe)
		return topo_yaml_fail(c, topo_yaml_line(v, kl),
				      "ipv4: '%s' is not a unicast address", s);
	return 0;
}

/* A host's own MAC (replacing the derived one): six hex pairs, unicast, not zero. */
static int get_host_mac(struct topo_yaml_ctx *c, struct fy_node *v, const char *key, int kl,
			uint8_t out[6])
{
	char s[TOPO_NAME_MAX];
	int end = 0;

	if (topo_yaml_scalar(c, v, key, kl, s, sizeof(s)))
		return -1;
	if (sscanf(s, "%2hhx:%2hhx:%2hhx:%2hhx:%2hhx:%2hhx%n", &out[0], &out[1], &out[2], &out[3],
		   &out[4], &out[5], &end) != 6 ||
	    (size_t)end != strlen(s) || strlen(s) != 17)
		return topo_yaml_fail(c, topo_yaml_line(v, kl),
				      "mac: '%s' is not a MAC address (xx:xx:xx:xx:xx:xx)", s);
	if ((out[0] & 1) || !(out[0] | out[1] | out[2] | out[3] | out[4] | out[5]))
		return topo_yaml_fail(c, topo_yaml_line(v, kl),
				      "mac: '%s' is not a unicast address", s);
	return 0;
}

static const char *const host_val_keys[] = {"attach", "mtu", NULL};

static int host_val_pair(struct topo_yaml_ctx *c, struct host_vals *h, const char *key,
			 struct fy_node *v, int kl)
{
	int line = topo_yaml_line(v, kl);
	uint64_t x;
	char tmp[TOPO_PATH_MAX];
	if (!strcmp(key, "attach")) {
		if (get_enum(c, v, key, kl, topo_attach_from_name, ATTACH_HINT, &h->attach))
			return -1;
		SET(h, HO_ATTACH, line);
	} else if (!strcmp(key, "mtu")) {
		if (get_uint(c, v, key, kl, MTU_MIN, MTU_MAX, &x))
			return -1;
		h->mtu = (uint32_t)x;
		SET(h, HO_MTU, line);
	} else if (!strcmp(key, "netns")) {
		if (get_name(c, v, key, kl, h->netns))
			return -1;
		SET(h, HO_NETNS, line);
	} else if (!strcmp(key, "ifname")) {
		if (topo_yaml_scalar(c, v, key, kl, tmp, sizeof(tmp)))
			return -1;
		if (strlen(tmp) >= TOPO_IFNAME_MAX || !valid_name(tmp))
			return topo_yaml_fail(
				c, line,
				"ifname: invalid interface name '%s' (1-15 characters: letters, "
				"digits, '_', '-', '.')",
				tmp);
		memcpy(h->ifname, tmp, strlen(tmp) + 1);
		SET(h, HO_IFNAME, line);
	} else if (!strcmp(key, "socket")) {
		if (topo_yaml_scalar(c, v, key, kl, h->socket, sizeof(h->socket)))
			return -1;
		if (h->socket[0] == '\0')
			return topo_yaml_fail(c, line, "socket: empty path");
		SET(h, HO_SOCKET, line);
	} else if (!strcmp(key, "pci")) {
		if (topo_yaml_scalar(c, v, key, kl, tmp, sizeof(tmp)))
			return -1;
		/* [DDDD:]BB:DD.F, hex; stored with the domain, lower case */
		unsigned dom = 0, bus, dev, fn;
		int end = 0;
		const char *hex = "0123456789abcdefABCDEF";
		size_t n = strlen(tmp);
		bool ok = false;
		if (n == 12 && strspn(tmp, hex) == 4 && tmp[4] == ':' && strspn(tmp + 5, hex) == 2 &&
		    tmp[7] == ':' && strspn(tmp + 8, hex) == 2 && tmp[10] == '.')
			ok = sscanf(tmp, "%4x:%2x:%2x.%1u%n", &dom, &bus, &dev, &fn, &end) == 4;
		else if (n == 7 && strspn(tmp, hex) == 2 && tmp[2] == ':' &&
			 strspn(tmp + 3, hex) == 2 && tmp[5] == '.')
			ok = sscanf(tmp, "%2x:%2x.%1u%n", &bus, &dev, &fn, &end) == 3;
		if (!ok || (size_t)end != n || fn > 7 || dev > 0x1f)
			return topo_yaml_fail(
				c, line, "pci: '%s' is not a PCI address ([DDDD:]BB:DD.F)", tmp);
		snprintf(h->pci, sizeof(h->pci), "%04x:%02x:%02x.%u", dom, bus, dev, fn);
		SET(h, HO_PCI, line);
	} else if (!strcmp(key, "devargs")) {
		if (get_devargs(c, v, key, kl, h->devargs))
			return -1;
		SET(h, HO_DEVARGS, line);
	} else if (!strcmp(key, "ipv4")) {
		if (get_host_ipv4(c, v, key, kl, &h->ipv4))
			return -1;
		SET(h, HO_IPV4, line);
	} else if (!strcmp(key, "mac")) {
		if (get_host_mac(c, v, key, kl, h->mac))
			return -1;
		SET(h, HO_MAC, line);
	}
	return 0;
}

static const char *const link_val_keys[] = {"rate", "delay", "mtu", "loss", NULL};

static int link_val_pair(struct topo_yaml_ctx *c, struct link_vals *l, const char *key,
			 struct fy_node *v, int kl)
{
	int line = topo_yaml_line(v, kl);
	uint64_t x;
	if (!strcmp(key, "rate")) {
		if (get_scaled(c, v, key, kl, rate_units, false, "rate", RATE_HINT, 1, MAX_RATE,
			       &l->rate))
			return -1;
		SET(l, LI_RATE, line);
	} else if (!strcmp(key, "delay")) {
		if (get_scaled(c, v, key, kl, time_units, true, "duration", TIME_HINT, 0, MAX_DELAY,
			       &l->delay))
			return -1;
		SET(l, LI_DELAY, line);
	} else if (!strcmp(key, "mtu")) {
		if (get_uint(c, v, key, kl, MTU_MIN, MTU_MAX, &x))
			return -1;
		l->mtu = (uint32_t)x;
		SET(l, LI_MTU, line);
	} else if (!strcmp(key, "loss")) {
		if (get_fraction(c, v, key, kl, &l->loss))
			return -1;
		SET(l, LI_LOSS, line);
	}
	return 0;
}

static void sw_merge(struct sw_vals *d, const struct sw_vals *s)
{
	for (int f = 0; f < SW_NFIELDS; f++) {
		if (!HAS(s, f))
			continue;
		switch (f) {
		case SW_BUFFER:
			memcpy(d->buffer, s->buffer, sizeof(d->buffer));
			d->buffer_profile = s->buffer_profile;
			break;
		case SW_PROFILE: d->profile = s->profile; break;
		case SW_ALGO: d->algo = s->algo; break;
		case SW_SEED: d->seed = s->seed; break;
		case SW_LB: d->lb = s->lb; break;
		case SW_FLOWLET: d->flowlet_ns = s->flowlet_ns; break;
		case SW_BUCKETS: d->buckets = s->buckets; break;
		}
		SET(d, f, s->line[f]);
	}
}

static void host_merge(struct host_vals *d, const struct host_vals *s)
{
	for (int f = 0; f < HO_NFIELDS; f++) {
		if (!HAS(s, f))
			continue;
		switch (f) {
		case HO_ATTACH: d->attach = s->attach; break;
		case HO_MTU: d->mtu = s->mtu; break;
		case HO_NETNS: memcpy(d->netns, s->netns, sizeof(d->netns)); break;
		case HO_IFNAME: memcpy(d->ifname, s->ifname, sizeof(d->ifname)); break;
		case HO_SOCKET: memcpy(d->socket, s->socket, sizeof(d->socket)); break;
		case HO_PCI: memcpy(d->pci, s->pci, sizeof(d->pci)); break;
		case HO_DEVARGS: memcpy(d->devargs, s->devargs, sizeof(d->devargs)); break;
		case HO_IPV4: d->ipv4 = s->ipv4; break;
		case HO_MAC: memcpy(d->mac, s->mac, sizeof(d->mac)); break;
		}
		SET(d, f, s->line[f]);
	}
}

static void link_merge(struct link_vals *d, const struct link_vals *s)
{
	for (int f = 0; f < LI_NFIELDS; f++) {
		if (!HAS(s, f))
			continue;
		switch (f) {
		case LI_RATE: d->rate = s->rate; break;
		case LI_DELAY: d->delay = s->delay; break;
		case LI_MTU: d->mtu = s->mtu; break;
		case LI_LOSS: d->loss = s->loss; break;
		}
		SET(d, f, s->line[f]);
	}
}

/* ------------------------------------------------------------ spec lists */

struct sw_spec {
	char name[TOPO_NAME_MAX];
	int role;
	int partition;      /* -1: not given */
	int line, name_line, role_line, partition_line;
	struct sw_vals v;
};

struct link_spec {
	char name[TOPO_LINK_NAME_MAX];
	bool named;
	char end[2][TOPO_NAME_MAX];
	int line, name_line;
	struct link_vals v;
	long host; /* the host whose `leaf:` made this link, or -1 */
};

struct host_spec {
	char name[TOPO_NAME_MAX];
	int line, name_line;
	bool has_leaf;
	int leaf_line;
	struct link_spec link; /* the `leaf:` shorthand link, when has_leaf */
	struct host_vals v;
};

struct ev_spec {
	uint64_t at;
	int target; /* -1 unset */
	char name[TOPO_LINK_NAME_MAX];
	int name_line;
	int action; /* -1 unset, 0 down, 1 up */
	int line;
};

struct spec {
	char name[TOPO_NAME_MAX];
	bool named;
	int root_line;
	struct sw_vals d_switch, d_role[TOPO_ROLE_COUNT];
	struct host_vals d_host;
	struct link_vals d_link, d_host_link;
	struct topo_qos qos;
	bool dwrr_set;
	int dwrr_line;
	int qos_line;
	struct sw_spec *sw;
	struct host_spec *ho;
	struct link_spec *li;
	struct ev_spec *ev;
	uint32_t n_sw, n_ho, n_li, n_ev;
};

static void spec_free(struct spec *s)
{
	free(s->sw);
	free(s->ho);
	free(s->li);
	free(s->ev);
}

/* -------------------------------------------------------- parse: objects */

static int switch_pair(struct topo_yaml_ctx *c, void *obj, const char *key, struct fy_node *v,
		       int kl)
{
	struct sw_spec *s = obj;
	if (!strcmp(key, "name")) {
		s->name_line = topo_yaml_line(v, kl);
		return get_name(c, v, key, kl, s->name);
	}
	if (!strcmp(key, "role")) {
		s->role_line = topo_yaml_line(v, kl);
		return get_enum(c, v, key, kl, topo_role_from_name, "rtsw, ctsw, atsw", &s->role);
	}
	if (!strcmp(key, "partition")) { /* rocelab-dp --workers: which partition runs it */
		uint64_t p;
		s->partition_line = topo_yaml_line(v, kl);
		if (get_uint(c, v, key, kl, 0, TOPO_MAX_PARTITIONS - 1, &p))
			return -1;
		s->partition = (int)p;
		return 0;
	}
	return sw_val_pair(c, &s->v, key, v, kl);
}

static int sw_vals_pair(struct topo_yaml_ctx *c, void *obj, const char *key, struct fy_node *v,
			int kl)
{
	return sw_val_pair(c, obj, key, v, kl);
}

static int host_vals_pair(struct topo_yaml_ctx *c, void *obj, const char *key, struct fy_node *v,
			  int kl)
{
	return host_val_pair(c, obj, key, v, kl);
}

static int link_vals_pair(struct topo_yaml_ctx *c, void *obj, const char *key, struct fy_node *v,
			  int kl)
{
	return link_val_pair(c, obj, key, v, kl);
}

static const char *const link_keys[] = {"name", "ends", "rate", "delay", "mtu", "loss", NULL};
static const char *const host_link_keys[] = {"name", "rate", "delay", "mtu", "loss", NULL};

static int link_pair(struct topo_yaml_ctx *c, void *obj, const char *key, struct fy_node *v, int kl)
{
	struct link_spec *l = obj;
	if (!strcmp(key, "name")) {
		char tmp[256];
		if (topo_yaml_scalar(c, v, key, kl, tmp, sizeof(tmp)))
			return -1;
		if (strlen(tmp) >= TOPO_LINK_NAME_MAX || !valid_name(tmp) ||
		    strlen(tmp) >= TOPO_NAME_MAX)
			return topo_yaml_fail(
				c, topo_yaml_line(v, kl),
				"name: invalid link name '%s' (1-%d characters: letters, digits, "
				"'_', '-', '.')",
				tmp, TOPO_NAME_MAX - 1);
		memcpy(l->name, tmp, strlen(tmp) + 1);
		l->named = true;
		l->name_line = topo_yaml_line(v, kl);
		return 0;
	}
	if (!strcmp(key, "ends")) {
		if (topo_yaml_check_list(c, v, key, kl))
			return -1;
		if (fy_node_sequence_item_count(v) != 2)
			return topo_yaml_fail(c, topo_yaml_line(v, kl),
					      "ends: a link has exactly 2 ends, got %d",
					      fy_node_sequence_item_count(v));
		for (int i = 0; i < 2; i++)
			if (get_name(c, fy_node_sequence_get_by_index(v, i), "ends",
				     topo_yaml_line(v, kl), l->end[i]))
				return -1;
		return 0;
	}
	return link_val_pair(c, &l->v, key, v, kl);
}

static int host_pair(struct topo_yaml_ctx *c, void *obj, const char *key, struct fy_node *v, int kl)
{
	struct host_spec *h = obj;
	if (!strcmp(key, "name")) {
		h->name_line = topo_yaml_line(v, kl);
		return get_name(c, v, key, kl, h->name);
	}
	if (!strcmp(key, "leaf")) {
		h->has_leaf = true;
		h->leaf_line = topo_yaml_line(v, kl);
		return get_name(c, v, key, kl, h->link.end[1]);
	}
	if (!strcmp(key, "link"))
		return topo_yaml_walk_map(c, v, kl, "host link", host_link_keys, link_pair,
					  &h->link);
	return host_val_pair(c, &h->v, key, v, kl);
}

static const char *const host_keys[] = {
	"name",   "attach",  "leaf", "mtu", "netns", "ifname", "socket",
	"pci",    "devargs", "ipv4", "mac", "link", NULL,
};

static const char *const event_keys[] = {"at", "link", "switch", "action", NULL};

static int action_from_name(const char *s)
{
	if (!strcmp(s, "down"))
		return 0;
	if (!strcmp(s, "up"))
		return 1;
	return -1;
}

static int event_pair(struct topo_yaml_ctx *c, void *obj, const char *key, struct fy_node *v,
		      int kl)
{
	struct ev_spec *e = obj;
	if (!strcmp(key, "at"))
		return get_scaled(c, v, key, kl, time_units, true, "time", TIME_HINT, 0, MAX_AT,
				  &e->at);
	if (!strcmp(key, "action"))
		return get_enum(c, v, key, kl, action_from_name, "down, up", &e->action);
	/* link or switch */
	if (e->target >= 0)
		return topo_yaml_fail(c, kl, "event: give either 'link' or 'switch', not both");
	e->target = !strcmp(key, "link") ? TOPO_EVENT_LINK : TOPO_EVENT_SWITCH;
	e->name_line = topo_yaml_line(v, kl);
	char tmp[256];
	if (topo_yaml_scalar(c, v, key, kl, tmp, sizeof(tmp)))
		return -1;
	if (strlen(tmp) >= sizeof(e->name))
		return topo_yaml_fail(c, e->name_line, "%s: unknown %s '%s'", key, key, tmp);
	memcpy(e->name, tmp, strlen(tmp) + 1);
	return 0;
}

/* ------------------------------------------------------------ parse: qos */

static int get_prio(struct topo_yaml_ctx *c, struct fy_node *v, const char *key, int kl,
		    uint8_t *out)
{
	uint64_t x;
	if (get_uint(c, v, key, kl, 0, TOPO_NUM_PRIO - 1, &x))
		return -1;
	*out = (uint8_t)x;
	return 0;
}

struct dscp_entry {
	bool have_dscp, have_prio;
	unsigned lo, hi;
	uint8_t prio;
};

static int dscp_entry_pair(struct topo_yaml_ctx *c, void *obj, const char *key, struct fy_node *v,
			   int kl)
{
	struct dscp_entry *e = obj;
	if (!strcmp(key, "prio")) {
		e->have_prio = true;
		return get_prio(c, v, key, kl, &e->prio);
	}
	char tmp[32];
	if (topo_yaml_scalar(c, v, key, kl, tmp, sizeof(tmp)))
		return -1;
	unsigned lo, hi;
	int n = 0;
	if (sscanf(tmp, "%2u-%2u%n", &lo, &hi, &n) == 2 && (size_t)n == strlen(tmp) &&
	    strspn(tmp, "0123456789-") == strlen(tmp)) {
		/* a range */
	} else if (sscanf(tmp, "%2u%n", &lo, &n) == 1 && (size_t)n == strlen(tmp) &&
		   strspn(tmp, "0123456789") == strlen(tmp)) {
		hi = lo;
	} else {
		return topo_yaml_fail(
			c, topo_yaml_line(v, kl),
			"dscp: expected a DSCP value 0-63 or a range like 24-31, got '%s'", tmp);
	}
	if (lo > 63 || hi > 63 || lo > hi)
		return topo_yaml_fail(c, topo_yaml_line(v, kl),
				      "dscp: '%s' is out of range (0-63, low-high)", tmp);
	e->have_dscp = true;
	e->lo = lo;
	e->hi = hi;
	return 0;
}

static const char *const dscp_entry_keys[] = {"dscp", "prio", NULL};

static int parse_dscp_map(struct topo_yaml_ctx *c, struct topo_qos *q, struct fy_node *v, int kl)
{
	if (topo_yaml_check_list(c, v, "dscp_map", kl))
		return -1;
	int n = fy_node_sequence_item_count(v);
	struct fy_node *first = fy_node_sequence_get_by_index(v, 0);
	if (first && fy_node_get_type(first) == FYNT_SCALAR && !topo_yaml_is_null(first)) {
		/* 64 priorities, one per DSCP */
		if (n != 64)
			return topo_yaml_fail(
				c, topo_yaml_line(v, kl),
				"dscp_map: a list of priorities needs 64 entries (one per DSCP), "
				"got %d",
				n);
		for (int i = 0; i < 64; i++)
			if (get_prio(c, fy_node_sequence_get_by_index(v, i), "dscp_map",
				     topo_yaml_line(v, kl), &q->dscp_prio[i]))
				return -1;
		return 0;
	}
	/* ranges over the default map; a DSCP may be named once */
	int seen[64] = {0};
	void *it = NULL;
	struct fy_node *item;
	while ((item = fy_node_sequence_iterate(v, &it))) {
		int line = topo_yaml_line(item, kl);
		struct dscp_entry e = {0};
		if (topo_yaml_walk_map(c, item, line, "dscp_map entry", dscp_entry_keys,
				       dscp_entry_pair, &e))
			return -1;
		if (!e.have_dscp || !e.have_prio)
			return topo_yaml_fail(c, line,
					      "dscp_map entry: needs both 'dscp' and 'prio'");
		for (unsigned d = e.lo; d <= e.hi; d++) {
			if (seen[d])
				return topo_yaml_fail(
					c, line,
					"dscp_map: DSCP %u is mapped twice (also on line %d)", d,
					seen[d]);
			seen[d] = line;
			q->dscp_prio[d] = e.prio;
		}
	}
	return 0;
}

static const char *const ecn_keys[] = {"enabled", "kmin", "kmax", "pmax", NULL};

struct ecn_parse {
	struct topo_qos *q;
	int kmax_line;
};

static int ecn_pair(struct topo_yaml_ctx *c, void *obj, const char *key, struct fy_node *v, int kl)
{
	struct ecn_parse *e = obj;
	uint64_t x;
	if (!strcmp(key, "enabled"))
		return get_bool(c, v, key, kl, &e->q->ecn);
	if (!strcmp(key, "pmax"))
		return get_fraction(c, v, key, kl, &e->q->ecn_pmax);
	if (get_scaled(c, v, key, kl, size_units, false, "size", SIZE_HINT, 0, UINT32_MAX, &x))
		return -1;
	if (!strcmp(key, "kmin")) {
		e->q->ecn_kmin = (uint32_t)x;
	} else {
		e->q->ecn_kmax = (uint32_t)x;
		e->kmax_line = topo_yaml_line(v, kl);
	}
	return 0;
}

static const char *const qos_keys[] = {"dscp_map", "lossless", "control", "dwrr", "ecn", NULL};

static int qos_pair(struct topo_yaml_ctx *c, void *obj, const char *key, struct fy_node *v, int kl)
{
	struct spec *s = obj;
	struct topo_qos *q = &s->qos;
	if (!strcmp(key, "dscp_map"))
		return parse_dscp_map(c, q, v, kl);
	if (!strcmp(key, "control"))
		return get_prio(c, v, key, kl, &q->control_prio);
	if (!strcmp(key, "lossless")) {
		q->lossless_mask = 0;
		if (!topo_yaml_is_null(v) && fy_node_get_type(v) == FYNT_SCALAR &&
		    !fy_node_is_alias(v)) {
			uint8_t p;
			if (get_prio(c, v, key, kl, &p))
				return -1;
			q->lossless_mask = (uint8_t)(1u << p);
			return 0;
		}
		if (topo_yaml_check_list(c, v, key, kl))
			return -1;
		void *it = NULL;
		struct fy_node *item;
		while ((item = fy_node_sequence_iterate(v, &it))) {
			uint8_t p;
			if (get_prio(c, item, key, topo_yaml_line(v, kl), &p))
				return -1;
			if (q->lossless_mask & (1u << p))
				return topo_yaml_fail(c, topo_yaml_line(item, kl),
						      "lossless: priority %u listed twice", p);
			q->lossless_mask |= (uint8_t)(1u << p);
		}
		return 0;
	}
	if (!strcmp(key, "dwrr")) {
		if (topo_yaml_check_list(c, v, key, kl))
			return -1;
		int n = fy_node_sequence_item_count(v);
		if (n != TOPO_NUM_PRIO)
			return topo_yaml_fail(
				c, topo_yaml_line(v, kl),
				"dwrr: expected %d weights (one per priority), got %d",
				TOPO_NUM_PRIO, n);
		for (int i = 0; i < TOPO_NUM_PRIO; i++) {
			uint64_t x;
			if (get_uint(c, fy_node_sequence_get_by_index(v, i), "dwrr",
				     topo_yaml_line(v, kl), 0, 1000, &x))
				return -1;
			q->dwrr_weight[i] = (uint16_t)x;
		}
		s->dwrr_set = true;
		s->dwrr_line = topo_yaml_line(v, kl);
		return 0;
	}
	/* ecn */
	struct ecn_parse e = {.q = q, .kmax_line = topo_yaml_line(v, kl)};
	if (topo_yaml_walk_map(c, v, kl, "qos.ecn", ecn_keys, ecn_pair, &e))
		return -1;
	if (q->ecn_kmin > q->ecn_kmax)
		return topo_yaml_fail(c, e.kmax_line,
				      "ecn: kmax (%" PRIu32 " bytes) is below kmin (%" PRIu32
				      " bytes)",
				      q->ecn_kmax, q->ecn_kmin);
	return 0;
}

/* ------------------------------------------------------- parse: sections */

static const char *const defaults_keys[] = {
	"switch", "rtsw", "ctsw", "atsw", "host", "link", "host_link", NULL,
};

static int defaults_pair(struct topo_yaml_ctx *c, void *obj, const char *key, struct fy_node *v,
			 int kl)
{
	struct spec *s = obj;
	char what[32];
	snprintf(what, sizeof(what), "defaults.%s", key);
	if (!strcmp(key, "switch"))
		return topo_yaml_walk_map(c, v, kl, what, switch_val_keys, sw_vals_pair,
					  &s->d_switch);
	int r = topo_role_from_name(key);
	if (r >= 0)
		return topo_yaml_walk_map(c, v, kl, what, switch_val_keys, sw_vals_pair,
					  &s->d_role[r]);
	if (!strcmp(key, "host"))
		return topo_yaml_walk_map(c, v, kl, what, host_val_keys, host_vals_pair,
					  &s->d_host);
	if (!strcmp(key, "link"))
		return topo_yaml_walk_map(c, v, kl, what, link_val_keys, link_vals_pair,
					  &s->d_link);
	return topo_yaml_walk_map(c, v, kl, what, link_val_keys, link_vals_pair, &s->d_host_link);
}

/* Allocate n zeroed items for a list section; -1 with a message when too many. */
static void *alloc_list(struct topo_yaml_ctx *c, size_t n, size_t size, uint32_t max,
			const char *key, int line)
{
	if (n > max) {
		topo_yaml_fail(c, line, "%s: too many entries (%zu, at most %" PRIu32 ")", key, n,
			       max);
		return NULL;
	}
	void *p = calloc(n ? n : 1, size);
	if (!p)
		topo_yaml_fail(c, line, "%s: out of memory", key);
	return p;
}

static int parse_switches(struct topo_yaml_ctx *c, struct spec *s, struct fy_node *v, int kl)
{
	if (topo_yaml_check_list(c, v, "switches", kl))
		return -1;
	size_t n = (size_t)fy_node_sequence_item_count(v);
	if (!(s->sw = alloc_list(c, n, sizeof(*s->sw), TOPO_MAX_SWITCHES, "switches", kl)))
		return -1;
	void *it = NULL;
	struct fy_node *item;
	while ((item = fy_node_sequence_iterate(v, &it))) {
		struct sw_spec *w = &s->sw[s->n_sw++];
		w->role = -1;
		w->partition = -1;
		w->line = topo_yaml_line(item, kl);
		if (topo_yaml_walk_map(c, item, w->line, "switch", switch_keys, switch_pair, w))
			return -1;
		if (!w->name[0])
			return topo_yaml_fail(c, w->line, "switch: missing required key 'name'");
		if (w->role < 0)
			return topo_yaml_fail(
				c, w->line,
				"switch '%s': missing required key 'role' (rtsw, ctsw or atsw)",
				w->name);
	}
	return 0;
}

static int parse_hosts(struct topo_yaml_ctx *c, struct spec *s, struct fy_node *v, int kl)
{
	if (topo_yaml_check_list(c, v, "hosts", kl))
		return -1;
	size_t n = (size_t)fy_node_sequence_item_count(v);
	if (!(s->ho = alloc_list(c, n, sizeof(*s->ho), TOPO_MAX_HOSTS, "hosts", kl)))
		return -1;
	void *it = NULL;
	struct fy_node *item;
	while ((item = fy_node_sequence_iterate(v, &it))) {
		struct host_spec *h = &s->ho[s->n_ho++];
		h->line = topo_yaml_line(item, kl);
		h->link.host = -1;
		if (topo_yaml_walk_map(c, item, h->line, "host", host_keys, host_pair, h))
			return -1;
		if (!h->name[0])
			return topo_yaml_fail(c, h->line, "host: missing required key 'name'");
		struct fy_node *lk = topo_yaml_map_get(item, "link");
		if (lk && !h->has_leaf)
			return topo_yaml_fail(
				c, topo_yaml_line(lk, h->line),
				"host '%s': 'link' settings need 'leaf' (they describe the link to it)",
				h->name);
	}
	return 0;
}

static int parse_links(struct topo_yaml_ctx *c, struct spec *s, struct fy_node *v, int kl)
{
	if (topo_yaml_check_list(c, v, "links", kl))
		return -1;
	size_t n = (size_t)fy_node_sequence_item_count(v);
	if (!(s->li = alloc_list(c, n, sizeof(*s->li), TOPO_MAX_HOSTS + 4 * TOPO_MAX_SWITCHES,
				 "links", kl)))
		return -1;
	void *it = NULL;
	struct fy_node *item;
	while ((item = fy_node_sequence_iterate(v, &it))) {
		struct link_spec *l = &s->li[s->n_li++];
		l->line = topo_yaml_line(item, kl);
		l->host = -1;
		if (!topo_yaml_is_null(item) && !fy_node_is_alias(item) &&
		    fy_node_get_type(item) == FYNT_SEQUENCE) {
			/* short form: [a, b] */
			if (fy_node_sequence_item_count(item) != 2)
				return topo_yaml_fail(c, l->line,
						      "link: a link has exactly 2 ends, got %d",
						      fy_node_sequence_item_count(item));
			for (int i = 0; i < 2; i++)
				if (get_name(c, fy_node_sequence_get_by_index(item, i), "link end", l->line,
					     l->end[i]))
					return -1;
			continue;
		}
		if (topo_yaml_walk_map(c, item, l->line, "link", link_keys, link_pair, l))
			return -1;
		if (!l->end[0][0])
			return topo_yaml_fail(
				c, l->line,
				"link: missing required key 'ends' (e.g. ends: [leaf0, spine0])");
	}
	return 0;
}

static int parse_events(struct topo_yaml_ctx *c, struct spec *s, struct fy_node *v, int kl)
{
	if (topo_yaml_check_list(c, v, "events", kl))
		return -1;
	size_t n = (size_t)fy_node_sequence_item_count(v);
	if (!(s->ev = alloc_list(c, n, sizeof(*s->ev), 1u << 20, "events", kl)))
		return -1;
	void *it = NULL;
	struct fy_node *item;
	while ((item = fy_node_sequence_iterate(v, &it))) {
		struct ev_spec *e = &s->ev[s->n_ev++];
		e->line = topo_yaml_line(item, kl);
		e->target = -1;
		e->action = -1;
		e->at = UINT64_MAX;
		if (topo_yaml_walk_map(c, item, e->line, "event", event_keys, event_pair, e))
			return -1;
		if (e->at == UINT64_MAX)
			return topo_yaml_fail(c, e->line,
					      "event: missing required key 'at' (e.g. at: 2s)");
		if (e->target < 0)
			return topo_yaml_fail(c, e->line, "event: needs 'link' or 'switch'");
		if (e->action < 0)
			return topo_yaml_fail(c, e->line,
					      "event: missing required key 'action' (down or up)");
	}
	return 0;
}

static const char *const root_keys[] = {
	"name", "defaults", "switches", "hosts", "links", "events", "qos", NULL,
};

static int root_pair(struct topo_yaml_ctx *c, void *obj, const char *key, struct fy_node *v, int kl)
{
	struct spec *s = obj;
	if (!strcmp(key, "name")) {
		s->named = true;
		return get_name(c, v, key, kl, s->name);
	}
	if (!strcmp(key, "defaults"))
		return topo_yaml_walk_map(c, v, kl, "defaults", defaults_keys, defaults_pair, s);
	if (!strcmp(key, "switches"))
		return parse_switches(c, s, v, kl);
	if (!strcmp(key, "hosts"))
		return parse_hosts(c, s, v, kl);
	if (!strcmp(key, "links"))
		return parse_links(c, s, v, kl);
	if (!strcmp(key, "events"))
		return parse_events(c, s, v, kl);
	s->qos_line = kl;
	return topo_yaml_walk_map(c, v, kl, "qos", qos_keys, qos_pair, s);
}

/* ------------------------------------------------------ built-in defaults */

static void builtin_switch(struct sw_vals *v, int role)
{
	memset(v, 0, sizeof(*v));
	/* spines and aggregation: deep buffers statically divided over ports */
	snprintf(v->buffer, sizeof(v->buffer), "%s", role == TOPO_ROLE_RTSW ? "shallow" : "deep");
	v->profile = RL_PROFILE_5TUPLE;
	v->algo = RL_HASH_CRC32;
	v->lb = TOPO_LB_ECMP;
	v->flowlet_ns = 100000; /* 100 us */
	v->buckets = 256;
}

static void builtin_host(struct host_vals *v)
{
	memset(v, 0, sizeof(*v));
	v->attach = TOPO_ATTACH_VETH;
	v->mtu = 1500;
}

static void builtin_link(struct link_vals *v)
{
	memset(v, 0, sizeof(*v));
	v->rate = 100000000000ull; /* 100G */
	v->delay = 1000;           /* 1 us */
	v->mtu = 9000;
	v->loss = 0.0;
}

static void builtin_qos(struct topo_qos *q)
{
	memset(q, 0, sizeof(*q));
	for (int d = 0; d < 64; d++)
		q->dscp_prio[d] = (uint8_t)(d >> 3); /* class selector: DSCP 24-31 -> 3 */
	q->lossless_mask = 1u << 3;              /* RoCE on priority 3 (DSCP 26) */
	q->control_prio = 6;                     /* CNP / CTS on CS6 (DSCP 48) */
	q->ecn = true;
	q->ecn_kmin = 5000; /* the DCQCN paper's thresholds */
	q->ecn_kmax = 200000;
	q->ecn_pmax = 0.01;
}

/* ------------------------------------------------------------- building */

static void set_mac(uint8_t m[6], uint8_t a, uint8_t b, uint8_t c2, uint8_t d, uint8_t e,
		    uint8_t f)
{
	m[0] = a;
	m[1] = b;
	m[2] = c2;
	m[3] = d;
	m[4] = e;
	m[5] = f;
}

static void leaf_ipv6(uint8_t a[16], uint32_t leaf, uint16_t last)
{
	memset(a, 0, 16);
	a[0] = 0xfd;
	a[6] = (uint8_t)(leaf >> 8);
	a[7] = (uint8_t)leaf;
	a[14] = (uint8_t)(last >> 8);
	a[15] = (uint8_t)last;
}

static int role_rank(const struct topo *t, struct topo_node_ref r)
{
	/* host 0, rtsw 1, ctsw 2, atsw 3: a link must join adjacent tiers */
	return r.kind == TOPO_NODE_HOST ? 0 : 1 + (int)t->switches[r.index].role;
}

static const char *node_kind_word(const struct topo *t, struct topo_node_ref r)
{
	return r.kind == TOPO_NODE_HOST ? "host" : topo_role_name(t->switches[r.index].role);
}

static int event_cmp(const void *a, const void *b)
{
	const struct topo_event *x = a, *y = b;
	if (x->at_ns != y->at_ns)
		return x->at_ns < y->at_ns ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line; /* stable: file order */
}

/*
 * build(): from the parsed spec to the topology, in phases. Each phase
 * validates what it builds and returns 0, or -1 after topo_yaml_fail() recorded the
 * first error with its line. Later phases rely on what earlier ones set.
 */
struct builder {
	struct topo_yaml_ctx *c;
	struct spec *s;
	struct topo *t;
	struct nmap nodes;  /* switch and host names -> switch index, or ns + host index */
	struct nmap lnames; /* link names -> link index */
	struct nmap uniq;   /* "n:netns", "i:ifname", "s:socket", "p:pci" -> host; owns its keys */
	uint32_t *hlinks;   /* [host] links attached to it */
};

/* Phase 1: a fabric needs switches and hosts; the QoS settings agree with each other. */
static int build_qos(struct builder *b)
{
	struct topo_yaml_ctx *c = b->c;
	struct spec *s = b->s;
	struct topo *t = b->t;

	if (s->n_sw == 0)
		return topo_yaml_fail(c, s->root_line,
				      "the topology has no switches ('switches:' list)");
	if (s->n_ho == 0)
		return topo_yaml_fail(c, s->root_line, "the topology has no hosts ('hosts:' list)");
	t->qos = s->qos;
	if (!s->dwrr_set) {
		for (int p = 0; p < TOPO_NUM_PRIO; p++)
			t->qos.dwrr_weight[p] = p == t->qos.control_prio ? 0 : 1;
		return 0;
	}
	for (int p = 0; p < TOPO_NUM_PRIO; p++) {
		if (p == t->qos.control_prio && t->qos.dwrr_weight[p] != 0)
			return topo_yaml_fail(c, s->dwrr_line,
					      "dwrr: weight of priority %d must be 0: it is the "
					      "strict-priority control class",
					      p);
		if (p != t->qos.control_prio && t->qos.dwrr_weight[p] == 0)
			return topo_yaml_fail(c, s->dwrr_line,
					      "dwrr: weight of priority %d must be 1..1000", p);
	}
	return 0;
}

/* Phase 2: the arrays and name maps, sized from the spec. */
static int build_alloc(struct builder *b)
{
	struct spec *s = b->s;
	struct topo *t = b->t;
	uint32_t ns = s->n_sw, nh = s->n_ho;
	uint32_t nl = s->n_li + nh; /* upper bound: every host's shorthand link */

	t->switches = calloc(ns, sizeof(*t->switches));
	t->hosts = calloc(nh, sizeof(*t->hosts));
	t->links = calloc(nl, sizeof(*t->links));
	t->events = calloc(s->n_ev ? s->n_ev : 1, sizeof(*t->events));
	b->hlinks = calloc(nh, sizeof(*b->hlinks));
	if (!t->switches || !t->hosts || !t->links || !t->events || !b->hlinks ||
	    nmap_init(&b->nodes, ns + nh) || nmap_init(&b->lnames, nl) ||
	    nmap_init(&b->uniq, 4 * nh))
		return topo_yaml_fail(b->c, 0, "out of memory");
	t->n_switches = ns;
	t->n_hosts = nh;
	return 0;
}

/* Phase 3: switches: unique names, settings merged (built-in < defaults < role < own). */
static int build_switches(struct builder *b)
{
	struct topo_yaml_ctx *c = b->c;
	struct spec *s = b->s;

	for (uint32_t i = 0; i < s->n_sw; i++) {
		struct sw_spec *w = &s->sw[i];
		struct topo_switch *sw = &b->t->switches[i];
		long prev = nmap_put(&b->nodes, w->name, i);
		if (prev >= 0)
			return topo_yaml_fail(c, w->name_line,
					      "duplicate name '%s' (first defined on line %d)",
					      w->name, s->sw[prev].name_line);
		struct sw_vals v;
		builtin_switch(&v, w->role);
		sw_merge(&v, &s->d_switch);
		sw_merge(&v, &s->d_role[w->role]);
		sw_merge(&v, &w->v);
		memcpy(sw->name, w->name, sizeof(sw->name));
		sw->role = (enum topo_role)w->role;
		sw->partition = w->partition;
		memcpy(sw->buffer, v.buffer, sizeof(sw->buffer));
		sw->buffer_profile = HAS(&v, SW_BUFFER) ? v.buffer_profile
							: pfc_buffer_profile_find(v.buffer);
		if (!sw->buffer_profile)
			return topo_yaml_fail(
				c, w->line,
				"switch '%s': built-in buffer profile '%s' is unknown to pfc/",
				w->name, v.buffer);
		sw->profile = (enum rl_hash_profile)v.profile;
		sw->algo = (enum rl_hash_algo)v.algo;
		/* a per-switch seed by default, so that tiers do not polarize */
		sw->seed = HAS(&v, SW_SEED) ? v.seed : fnv1a(w->name);
		sw->lb = (enum topo_lb)v.lb;
		sw->flowlet_timeout_ns = v.flowlet_ns;
		sw->resilient_buckets = v.buckets;
		sw->leaf_index = -1;
		sw->loopback4 = 0xAC100000u | i;
		set_mac(sw->mac, 0x02, 0x01, (uint8_t)(i >> 8), (uint8_t)i, 0xff, 0xff);
		sw->line = w->line;
	}
	return 0;
}

/* Phase 4: host names, unique among switches and hosts. */
static int build_host_names(struct builder *b)
{
	struct spec *s = b->s;
	uint32_t ns = s->n_sw;

	for (uint32_t i = 0; i < s->n_ho; i++) {
		struct host_spec *h = &s->ho[i];
		long prev = nmap_put(&b->nodes, h->name, ns + i);
		if (prev >= 0) {
			int pl = prev < (long)ns ? s->sw[prev].name_line : s->ho[prev - ns].name_line;
			return topo_yaml_fail(b->c, h->name_line,
					      "duplicate name '%s' (first defined on line %d)",
					      h->name, pl);
		}
	}
	return 0;
}

/* Both ends of link spec l resolved to nodes of lk. */
static int link_ends(struct builder *b, const struct link_spec *l, struct topo_link *lk)
{
	uint32_t ns = b->s->n_sw;

	for (int e = 0; e < 2; e++) {
		long id = nmap_get(&b->nodes, l->end[e]);
		if (id < 0) {
			if (l->host >= 0)
				return topo_yaml_fail(
					b->c, l->line,
					"host '%s': leaf '%s' is not a switch in this topology",
					l->end[0], l->end[1]);
			return topo_yaml_fail(b->c, l->line,
					      "link: unknown node '%s' (not a switch or host)",
					      l->end[e]);
		}
		lk->end[e].kind = id < (long)ns ? TOPO_NODE_SWITCH : TOPO_NODE_HOST;
		lk->end[e].index = id < (long)ns ? (uint32_t)id : (uint32_t)(id - ns);
	}
	if (!strcmp(l->end[0], l->end[1]))
		return topo_yaml_fail(b->c, l->line, "link: '%s' is linked to itself", l->end[0]);
	return 0;
}

/* The link joins adjacent tiers: host-rtsw, rtsw-ctsw or ctsw-atsw. */
static int link_tiers(struct builder *b, const struct link_spec *l, const struct topo_link *lk)
{
	const struct topo *t = b->t;
	int ra = role_rank(t, lk->end[0]), rb = role_rank(t, lk->end[1]);

	if (ra == 0 && rb == 0)
		return topo_yaml_fail(
			b->c, l->line,
			"link: joins two hosts ('%s', '%s'); a host attaches to an rtsw", l->end[0],
			l->end[1]);
	if (ra == 0 || rb == 0) {
		int he = ra == 0 ? 0 : 1;
		struct topo_node_ref sref = lk->end[1 - he];
		if (t->switches[sref.index].role != TOPO_ROLE_RTSW)
			return topo_yaml_fail(
				b->c, l->line,
				"host '%s' is attached to %s '%s': hosts attach to an rtsw (leaf)",
				l->end[he], node_kind_word(t, sref), l->end[1 - he]);
	} else if (ra - rb != 1 && rb - ra != 1) {
		return topo_yaml_fail(
			b->c, l->line,
			"link: %s '%s' cannot connect to %s '%s' (allowed: host-rtsw, rtsw-ctsw, "
			"ctsw-atsw)",
			node_kind_word(t, lk->end[0]), l->end[0], node_kind_word(t, lk->end[1]),
			l->end[1]);
	}
	return 0;
}

/* Link k's port number at each end; a host end records the link (once only). */
static int link_ports(struct builder *b, const struct link_spec *l, uint32_t k)
{
	struct topo *t = b->t;
	struct topo_link *lk = &t->links[k];

	for (int e = 0; e < 2; e++) {
		if (lk->end[e].kind == TOPO_NODE_SWITCH) {
			struct topo_switch *sw = &t->switches[lk->end[e].index];
			if (sw->n_ports == TOPO_MAX_PORTS)
				return topo_yaml_fail(b->c, l->line,
						      "switch '%s' has too many ports (at most %d)",
						      sw->name, TOPO_MAX_PORTS);
			lk->port[e] = sw->n_ports++;
			continue;
		}
		uint32_t hi = lk->end[e].index;
		if (b->hlinks[hi]++) {
			struct topo_link *first = &t->links[t->hosts[hi].link];
			return topo_yaml_fail(
				b->c, l->line,
				"host '%s' is attached twice: to '%s' (line %d) and to '%s'",
				b->s->ho[hi].name,
				topo_node_name(t, first->end[first->end[0].kind == TOPO_NODE_HOST]),
				first->line, l->end[1 - e]);
		}
		t->hosts[hi].link = k;
		lk->port[e] = 0;
	}
	return 0;
}

/* Link spec l becomes link k: ends, tiers, a unique name, settings, ports. */
static int build_link(struct builder *b, const struct link_spec *l, uint32_t k)
{
	struct topo_link *lk = &b->t->links[k];

	if (link_ends(b, l, lk) || link_tiers(b, l, lk))
		return -1;
	if (l->named)
		memcpy(lk->name, l->name, sizeof(lk->name));
	else
		snprintf(lk->name, sizeof(lk->name), "%s-%s", l->end[0], l->end[1]);
	long prev = nmap_put(&b->lnames, lk->name, k);
	if (prev >= 0)
		return topo_yaml_fail(b->c, l->named ? l->name_line : l->line,
				      "duplicate link name '%s' (first used on line %d)%s",
				      lk->name, b->t->links[prev].line,
				      l->named ? "" : "; give parallel links a 'name'");
	bool has_host = lk->end[0].kind == TOPO_NODE_HOST || lk->end[1].kind == TOPO_NODE_HOST;
	struct link_vals v;
	builtin_link(&v);
	link_merge(&v, &b->s->d_link);
	if (has_host)
		link_merge(&v, &b->s->d_host_link);
	link_merge(&v, &l->v);
	lk->rate_bps = v.rate;
	lk->delay_ns = v.delay;
	lk->mtu = v.mtu;
	lk->loss = v.loss;
	lk->line = l->line;
	return link_ports(b, l, k);
}

/* Phase 5: links: hosts' `leaf:` shorthand first (host order), then `links:`. */
static int build_links(struct builder *b)
{
	struct spec *s = b->s;
	uint32_t nh = s->n_ho, n_links = 0;

	for (uint32_t k = 0; k < nh + s->n_li; k++) {
		struct link_spec *l;
		if (k < nh) {
			if (!s->ho[k].has_leaf)
				continue;
			l = &s->ho[k].link;
			memcpy(l->end[0], s->ho[k].name, TOPO_NAME_MAX);
			l->line = s->ho[k].leaf_line;
			l->host = k;
		} else {
			l = &s->li[k - nh];
		}
		if (build_link(b, l, n_links))
			return -1;
		n_links++;
	}
	b->t->n_links = n_links;
	return 0;
}

/* Phase 6: every switch's port table (peer, peer port, MAC) from the links. */
static int build_ports(struct builder *b)
{
	struct topo *t = b->t;

	for (uint32_t i = 0; i < t->n_switches; i++) {
		struct topo_switch *sw = &t->switches[i];
		sw->ports = calloc(sw->n_ports ? sw->n_ports : 1, sizeof(*sw->ports));
		if (!sw->ports)
			return topo_yaml_fail(b->c, 0, "out of memory");
	}
	for (uint32_t k = 0; k < t->n_links; k++) {
		struct topo_link *lk = &t->links[k];
		for (int e = 0; e < 2; e++) {
			if (lk->end[e].kind != TOPO_NODE_SWITCH)
				continue;
			uint32_t si = lk->end[e].index;
			struct topo_port *p = &t->switches[si].ports[lk->port[e]];
			p->link = k;
			p->peer = lk->end[1 - e];
			p->peer_port = lk->port[1 - e];
			set_mac(p->mac, 0x02, 0x01, (uint8_t)(si >> 8), (uint8_t)si,
				(uint8_t)(lk->port[e] >> 8), (uint8_t)lk->port[e]);
		}
	}
	return 0;
}

/* Phase 7: role sanity beyond single links: a linked ctsw reaches at least one rtsw. */
static int check_spines(struct builder *b)
{
	const struct topo *t = b->t;

	for (uint32_t i = 0; i < t->n_switches; i++) {
		const struct topo_switch *sw = &t->switches[i];
		if (sw->role != TOPO_ROLE_CTSW)
			continue;
		bool has_leaf = false;
		for (uint16_t p = 0; p < sw->n_ports; p++)
			if (sw->ports[p].peer.kind == TOPO_NODE_SWITCH &&
			    t->switches[sw->ports[p].peer.index].role == TOPO_ROLE_RTSW)
				has_leaf = true;
		if (!has_leaf && sw->n_ports)
			return topo_yaml_fail(
				b->c, sw->line,
				"ctsw '%s' has no link to an rtsw: a spine connects leaves",
				sw->name);
	}
	return 0;
}

/* Phase 8: leaves numbered in switch order; their subnets and gateways. */
static int build_leaves(struct builder *b)
{
	struct topo *t = b->t;
	uint32_t ns = t->n_switches;

	for (uint32_t i = 0; i < ns; i++)
		if (t->switches[i].role == TOPO_ROLE_RTSW)
			t->n_leaves++;
	if (t->n_leaves == 0)
		return topo_yaml_fail(b->c, b->s->root_line,
				      "the topology has no rtsw (leaf) switch");
	if (t->n_leaves > TOPO_MAX_LEAVES)
		return topo_yaml_fail(b->c, b->s->root_line,
				      "too many rtsw switches (%" PRIu32 ", at most %d)",
				      t->n_leaves, TOPO_MAX_LEAVES);
	t->leaves = calloc(t->n_leaves, sizeof(*t->leaves));
	if (!t->leaves)
		return topo_yaml_fail(b->c, 0, "out of memory");
	for (uint32_t i = 0, L = 0; i < ns; i++) {
		struct topo_switch *sw = &t->switches[i];
		if (sw->role != TOPO_ROLE_RTSW)
			continue;
		sw->leaf_index = (int)L;
		t->leaves[L] = i;
		sw->subnet4 = (10u << 24) | (L << 8);
		sw->gw_ipv4 = sw->subnet4 | 254;
		leaf_ipv6(sw->gw_ipv6, L, 0xfe);
		L++;
	}
	return 0;
}

/* Phase 9: every host on exactly one leaf; its index under the leaf by port order. */
static int build_host_leaves(struct builder *b)
{
	struct spec *s = b->s;
	struct topo *t = b->t;

	for (uint32_t i = 0; i < t->n_hosts; i++)
		if (b->hlinks[i] == 0)
			return topo_yaml_fail(
				b->c, s->ho[i].line,
				"host '%s' is not attached to any leaf (give it 'leaf:' or a link)",
				s->ho[i].name);
	for (uint32_t i = 0; i < t->n_switches; i++) {
		struct topo_switch *sw = &t->switches[i];
		for (uint16_t p = 0; p < sw->n_ports; p++) {
			if (sw->ports[p].peer.kind != TOPO_NODE_HOST)
				continue;
			uint32_t hi = sw->ports[p].peer.index;
			struct topo_host *h = &t->hosts[hi];
			if (sw->n_hosts == TOPO_MAX_HOSTS_PER_LEAF)
				return topo_yaml_fail(
					b->c, s->ho[hi].line,
					"leaf '%s' has more than %d hosts (the address scheme's limit)",
					sw->name, TOPO_MAX_HOSTS_PER_LEAF);
			h->leaf = i;
			h->leaf_port = p;
			h->index = sw->n_hosts++;
		}
	}
	return 0;
}

/*
 * Claim an attach-specific name ("n:netns", "i:ifname", ...) for host i;
 * on a clash, name the host that has it. uniq owns the copies.
 */
static int claim_unique(struct builder *b, uint32_t i, int line, const char *key_name,
			char tag, const char *val)
{
	char key[TOPO_PATH_MAX + 8];
	snprintf(key, sizeof(key), "%c:%s", tag, val);
	char *dup = strdup(key);
	if (!dup)
		return topo_yaml_fail(b->c, 0, "out of memory");
	long prev = nmap_put(&b->uniq, dup, i);
	if (prev < 0)
		return 0;
	free(dup);
	return topo_yaml_fail(b->c, line, "host '%s': %s '%s' is already used by host '%s'",
			      b->t->hosts[i].name, key_name, val, b->t->hosts[prev].name);
}

/* Keys that apply to one attach kind only are not set on another. */
static int host_attach_keys(struct builder *b, const struct topo_host *h,
			    const struct host_vals *v)
{
	static const struct {
		int field, attach;
		const char *key;
	} only[] = {
		{HO_NETNS, TOPO_ATTACH_VETH, "netns"},
		{HO_IFNAME, TOPO_ATTACH_VETH, "ifname"},
		{HO_SOCKET, TOPO_ATTACH_VHOST, "socket"},
		{HO_PCI, TOPO_ATTACH_PCI, "pci"},
		{HO_DEVARGS, TOPO_ATTACH_DPDK, "devargs"},
	};
	for (size_t k = 0; k < sizeof(only) / sizeof(only[0]); k++)
		if (HAS(v, only[k].field) && v->attach != only[k].attach)
			return topo_yaml_fail(
				b->c, v->line[only[k].field],
				"host '%s': '%s' applies only to attach: %s (this host is %s)",
				h->name, only[k].key, attach_names[only[k].attach],
				attach_names[v->attach]);
	return 0;
}

/* Attach-specific names (netns/ifname, socket, pci), defaulted, unique across hosts. */
static int host_attach_names(struct builder *b, uint32_t i, const struct host_vals *v)
{
	struct topo_host *h = &b->t->hosts[i];
	int line = b->s->ho[i].line;

	switch (h->attach) {
	case TOPO_ATTACH_VETH:
		snprintf(h->netns, sizeof(h->netns), "%s", HAS(v, HO_NETNS) ? v->netns : h->name);
		if (HAS(v, HO_IFNAME))
			snprintf(h->ifname, sizeof(h->ifname), "%s", v->ifname);
		else if (strlen(h->name) <= TOPO_IFNAME_MAX - 1 - 3)
			snprintf(h->ifname, sizeof(h->ifname), "rl-%.*s", TOPO_IFNAME_MAX - 1 - 3, h->name);
		else
			snprintf(h->ifname, sizeof(h->ifname), "rlh%" PRIu32, i);
		/* one interface per namespace: netns names are unique too */
		if (claim_unique(b, i, HAS(v, HO_NETNS) ? v->line[HO_NETNS] : line, "netns", 'n',
				 h->netns))
			return -1;
		return claim_unique(b, i, HAS(v, HO_IFNAME) ? v->line[HO_IFNAME] : line, "ifname",
				    'i', h->ifname);
	case TOPO_ATTACH_VHOST:
		if (HAS(v, HO_SOCKET))
			snprintf(h->socket, sizeof(h->socket), "%s", v->socket);
		else
			snprintf(h->socket, sizeof(h->socket), "/tmp/rocelab-%s.sock", h->name);
		return claim_unique(b, i, HAS(v, HO_SOCKET) ? v->line[HO_SOCKET] : line, "socket",
				    's', h->socket);
	case TOPO_ATTACH_PCI:
		if (!HAS(v, HO_PCI))
			return topo_yaml_fail(b->c, line,
					      "host '%s': attach: pci needs a 'pci' address",
					      h->name);
		snprintf(h->pci, sizeof(h->pci), "%s", v->pci);
		return claim_unique(b, i, v->line[HO_PCI], "pci", 'p', h->pci);
	case TOPO_ATTACH_DPDK: {
		char dev[TOPO_DEVNAME_MAX];
		if (!HAS(v, HO_DEVARGS))
			return topo_yaml_fail(b->c, line,
					      "host '%s': attach: dpdk needs 'devargs' (e.g. "
					      "net_pcap0,rx_pcap=in.pcap,tx_pcap=out.pcap)",
					      h->name);
		snprintf(h->devargs, sizeof(h->devargs), "%s", v->devargs);
		/* EAL refuses a second device of one name: say so here, with the line */
		return claim_unique(b, i, v->line[HO_DEVARGS], "DPDK device", 'd',
				    topo_devargs_name(h->devargs, dev, sizeof(dev)));
	}
	default:
		return 0;
	}
}

/* Host i's addresses and gateway, derived from its leaf and index (see topo.h). */
static void host_addresses(struct topo *t, uint32_t i)
{
	struct topo_host *h = &t->hosts[i];
	const struct topo_switch *leaf = &t->switches[h->leaf];
	uint32_t L = (uint32_t)leaf->leaf_index;

	h->ipv4 = leaf->subnet4 | (uint32_t)(h->index + 1);
	leaf_ipv6(h->ipv6, L, (uint16_t)(h->index + 1));
	set_mac(h->mac, 0x02, 0x00, 0x0a, (uint8_t)(L >> 8), (uint8_t)L, (uint8_t)(h->index + 1));
	h->gw_ipv4 = leaf->gw_ipv4;
	memcpy(h->gw_ipv6, leaf->gw_ipv6, 16);
	memcpy(h->gw_mac, leaf->ports[h->leaf_port].mac, 6);
}

/*
 * A host's own ipv4:/mac: (a capture replayed through a dpdk host carries
 * the addresses of the machines it was taken on). The fabric routes by /32
 * and rewrites the MAC towards the host, so only uniqueness matters, checked
 * over all hosts by claim_addresses(). Returns whether the host has one.
 */
static bool host_own_addresses(struct topo_host *h, const struct host_vals *v)
{
	if (HAS(v, HO_IPV4))
		h->ipv4 = v->ipv4;
	if (HAS(v, HO_MAC))
		memcpy(h->mac, v->mac, sizeof(h->mac));
	return HAS(v, HO_IPV4) || HAS(v, HO_MAC);
}

/* Every host's IPv4 address and MAC differ from every other's. */
static int claim_addresses(struct builder *b)
{
	for (uint32_t i = 0; i < b->t->n_hosts; i++) {
		const struct topo_host *h = &b->t->hosts[i];
		char a[INET_ADDRSTRLEN], m[sizeof("xx:xx:xx:xx:xx:xx")];
		snprintf(m, sizeof(m), "%02x:%02x:%02x:%02x:%02x:%02x", h->mac[0], h->mac[1],
			 h->mac[2], h->mac[3], h->mac[4], h->mac[5]);
		if (claim_unique(b, i, h->line, "ipv4", '4', topo_ipv4_str(h->ipv4, a, sizeof(a))) ||
		    claim_unique(b, i, h->line, "mac", 'm', m))
			return -1;
	}
	return 0;
}

/* Phase 10: host settings (built-in < defaults < own), attach names, addresses. */
static int build_hosts(struct builder *b)
{
	struct topo *t = b->t;
	bool own = false;

	for (uint32_t i = 0; i < t->n_hosts; i++) {
		struct host_spec *hs = &b->s->ho[i];
		struct topo_host *h = &t->hosts[i];
		struct host_vals v;
		builtin_host(&v);
		host_merge(&v, &b->s->d_host);
		host_merge(&v, &hs->v);
		memcpy(h->name, hs->name, sizeof(h->name));
		h->attach = (enum topo_attach)v.attach;
		h->mtu = v.mtu;
		h->line = hs->line;
		if (host_attach_keys(b, h, &v))
			return -1;
		const struct topo_link *lk = &t->links[h->link];
		if (h->mtu > lk->mtu)
			return topo_yaml_fail(b->c, HAS(&v, HO_MTU) ? v.line[HO_MTU] : hs->line,
					      "host '%s': mtu %" PRIu32
					      " is larger than its link's mtu %" PRIu32,
					      h->name, h->mtu, lk->mtu);
		if (host_attach_names(b, i, &v))
			return -1;
		host_addresses(t, i);
		own |= host_own_addresses(h, &v);
	}
	/* derived addresses are unique by construction: check only when a host has its own */
	return own ? claim_addresses(b) : 0;
}

/* Phase 11: every switch reachable from switch 0 (BFS over switch-switch links). */
static int check_connected(struct builder *b)
{
	const struct topo *t = b->t;
	uint32_t ns = t->n_switches;
	uint32_t *queue = calloc(ns, sizeof(*queue));
	uint8_t *seen = calloc(ns, 1);
	int rc = 0;

	if (!queue || !seen) {
		rc = topo_yaml_fail(b->c, 0, "out of memory");
		goto out;
	}
	uint32_t head = 0, tail = 0;
	queue[tail++] = 0;
	seen[0] = 1;
	while (head < tail) {
		const struct topo_switch *sw = &t->switches[queue[head++]];
		for (uint16_t p = 0; p < sw->n_ports; p++) {
			struct topo_node_ref r = sw->ports[p].peer;
			if (r.kind == TOPO_NODE_SWITCH && !seen[r.index]) {
				seen[r.index] = 1;
				queue[tail++] = r.index;
			}
		}
	}
	for (uint32_t i = 0; i < ns && rc == 0; i++)
		if (!seen[i])
			rc = topo_yaml_fail(
				b->c, t->switches[i].line,
				"switch '%s' is not connected to the rest of the fabric (no path from '%s')",
				t->switches[i].name, t->switches[0].name);
out:
	free(seen);
	free(queue);
	return rc;
}

/* Phase 12: scheduled events resolved to links or switches, sorted by time. */
static int build_events(struct builder *b)
{
	struct spec *s = b->s;
	struct topo *t = b->t;
	uint32_t ns = s->n_sw;

	for (uint32_t i = 0; i < s->n_ev; i++) {
		struct ev_spec *e = &s->ev[i];
		struct topo_event *ev = &t->events[i];
		ev->at_ns = e->at;
		ev->target = (enum topo_event_target)e->target;
		ev->up = e->action == 1;
		ev->line = e->line;
		long id = e->target == TOPO_EVENT_LINK ? nmap_get(&b->lnames, e->name)
						       : nmap_get(&b->nodes, e->name);
		if (e->target == TOPO_EVENT_SWITCH && id >= (long)ns)
			return topo_yaml_fail(b->c, e->name_line,
					      "switch: '%s' is a host, not a switch", e->name);
		if (id < 0) {
			if (e->target == TOPO_EVENT_LINK)
				return topo_yaml_fail(
					b->c, e->name_line,
					"link: unknown link '%s' (links are named 'a-b' after their "
					"ends unless given a 'name')",
					e->name);
			return topo_yaml_fail(b->c, e->name_line, "switch: unknown switch '%s'",
					      e->name);
		}
		ev->index = (uint32_t)id;
	}
	t->n_events = s->n_ev;
	qsort(t->events, t->n_events, sizeof(*t->events), event_cmp);
	return 0;
}

/* The spec as a validated topology in t; 0, or -1 with the error recorded in c. */
static int build(struct topo_yaml_ctx *c, struct spec *s, struct topo *t)
{
	typedef int (*phase_fn)(struct builder *b);
	static const phase_fn phases[] = {
		build_qos,         build_alloc, build_switches, build_host_names,
		build_links,       build_ports, check_spines,   build_leaves,
		build_host_leaves, build_hosts, check_connected, build_events,
	};
	struct builder b = {.c = c, .s = s, .t = t};
	int rc = 0;

	for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]) && rc == 0; i++)
		rc = phases[i](&b);
	if (b.uniq.e)
		for (uint32_t i = 0; i < b.uniq.cap; i++)
			free((char *)(uintptr_t)b.uniq.e[i].name);
	nmap_free(&b.nodes);
	nmap_free(&b.lnames);
	nmap_free(&b.uniq);
	free(b.hlinks);
	return rc;
}

/* ----------------------------------------------------------- entry points */

static void default_name(char out[TOPO_NAME_MAX], const char *display)
{
	const char *base = strrchr(display, '/');
	base = base ? base + 1 : display;
	size_t n = strcspn(base, ".");
	if (n == 0) {
		snprintf(out, TOPO_NAME_MAX, "topology");
		return;
	}
	if (n >= TOPO_NAME_MAX)
		n = TOPO_NAME_MAX - 1;
	memcpy(out, base, n);
	out[n] = '\0';
}

int topo_load_string(const char *yaml, size_t len, const char *display_name,
		     struct topo **out, char *err, size_t errlen)
{
	struct topo_yaml_ctx c = {
		.file = display_name ? display_name : "<string>", .err = err, .errlen = errlen};
	struct spec s;
	struct topo_yaml_doc d = {0};
	struct topo *t = NULL;
	int rc = -1;

	memset(&s, 0, sizeof(s));
	if (err && errlen)
		err[0] = '\0';
	if (out)
		*out = NULL;
	if (!out || (!yaml && len))
		return topo_yaml_fail(&c, 0, "bad arguments");
	if (topo_yaml_open(&c, yaml, len, "topology", &d))
		goto done;
	s.root_line = topo_yaml_line(d.root, 1);
	builtin_qos(&s.qos);
	if (topo_yaml_walk_map(&c, d.root, 1, "the topology", root_keys, root_pair, &s))
		goto done;
	if (!s.named)
		default_name(s.name, c.file);
	t = calloc(1, sizeof(*t));
	if (!t) {
		topo_yaml_fail(&c, 0, "out of memory");
		goto done;
	}
	memcpy(t->name, s.name, sizeof(t->name));
	snprintf(t->path, sizeof(t->path), "%s", c.file);
	if (build(&c, &s, t))
		goto done;
	*out = t;
	t = NULL;
	rc = 0;
done:
	topo_free(t);
	spec_free(&s);
	topo_yaml_close(&d);
	return rc;
}

int topo_load(const char *path, struct topo **out, char *err, size_t errlen)
{
	struct topo_yaml_ctx c = {.file = path ? path : "(null)", .err = err, .errlen = errlen};
	if (err && errlen)
		err[0] = '\0';
	if (out)
		*out = NULL;
	if (!path || !out)
		return topo_yaml_fail(&c, 0, "bad arguments");
	char *buf = NULL;
	size_t len = 0;
	if (topo_yaml_read_file(&c, &buf, &len))
		return -1;
	int rc = topo_load_string(buf, len, path, out, err, errlen);
	free(buf);
	return rc;
}

void topo_free(struct topo *t)
{
	if (!t)
		return;
	if (t->switches)
		for (uint32_t i = 0; i < t->n_switches; i++)
			free(t->switches[i].ports);
	free(t->switches);
	free(t->hosts);
	free(t->links);
	free(t->events);
	free(t->leaves);
	free(t);
}

/* ------------------------------------------------------------------ clos */

int topo_switch_by_name(const struct topo *t, const char *name)
{
	if (!t || !name)
		return -1;
	for (uint32_t i = 0; i < t->n_switches; i++)
		if (!strcmp(t->switches[i].name, name))
			return (int)i;
	return -1;
}

int topo_host_by_name(const struct topo *t, const char *name)
{
	if (!t || !name)
		return -1;
	for (uint32_t i = 0; i < t->n_hosts; i++)
		if (!strcmp(t->hosts[i].name, name))
			return (int)i;
	return -1;
}

uint32_t topo_emulated_hosts(const struct topo *t)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < t->n_hosts; i++)
		n += t->hosts[i].attach == TOPO_ATTACH_EMULATED;
	return n;
}

int topo_link_by_name(const struct topo *t, const char *name)
{
	if (!t || !name)
		return -1;
	for (uint32_t i = 0; i < t->n_links; i++)
		if (!strcmp(t->links[i].name, name))
			return (int)i;
	return -1;
}

const char *topo_node_name(const struct topo *t, struct topo_node_ref ref)
{
	if (!t)
		return "?";
	if (ref.kind == TOPO_NODE_SWITCH && ref.index < t->n_switches)
		return t->switches[ref.index].name;
	if (ref.kind == TOPO_NODE_HOST && ref.index < t->n_hosts)
		return t->hosts[ref.index].name;
	return "?";
}

char *topo_ipv4_str(uint32_t ipv4, char *buf, size_t len)
{
	snprintf(buf, len, "%u.%u.%u.%u", ipv4 >> 24, (ipv4 >> 16) & 255, (ipv4 >> 8) & 255,
		 ipv4 & 255);
	return buf;
}

char *topo_ipv6_str(const uint8_t a[16], char *buf, size_t len)
{
	uint16_t w[8];
	for (int i = 0; i < 8; i++)
		w[i] = (uint16_t)(a[2 * i] << 8 | a[2 * i + 1]);
	/* RFC 5952: compress the longest run (>= 2) of zero groups */
	int best = -1, best_len = 0;
	for (int i = 0; i < 8;) {
		if (w[i]) {
			i++;
			continue;
		}
		int j = i;
		while (j < 8 && !w[j])
			j++;
		if (j - i > best_len && j - i >= 2) {
			best = i;
			best_len = j - i;
		}
		i = j;
	}
	size_t off = 0;
	buf[0] = '\0';
	for (int i = 0; i < 8 && off < len; i++) {
		int n;
		if (i == best) {
			n = snprintf(buf + off, len - off, "::");
			i += best_len - 1;
		} else {
			bool sep = i > 0 && i != best + best_len;
			n = snprintf(buf + off, len - off, "%s%x", sep ? ":" : "", w[i]);
		}
		if (n < 0)
			break;
		off += (size_t)n;
	}
	return buf;
}

char *topo_mac_str(const uint8_t m[6], char *buf, size_t len)
{
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
	return buf;
}

int topo_summary(const struct topo *t, char *buf, size_t len)
{
	unsigned n[TOPO_ROLE_COUNT] = {0};
	for (uint32_t i = 0; i < t->n_switches; i++)
		n[t->switches[i].role]++;
	return snprintf(buf, len,
			"%s: %" PRIu32 " switches (%u rtsw, %u ctsw, %u atsw), %" PRIu32
			" hosts, %" PRIu32 " links, %" PRIu32 " events",
			t->name, t->n_switches, n[TOPO_ROLE_RTSW], n[TOPO_ROLE_CTSW], n[TOPO_ROLE_ATSW],
			t->n_hosts, t->n_links, t->n_events);
}

int topo_check_file(const char *path, FILE *out, FILE *errout)
{
	char err[512];
	struct topo *t = NULL;
	if (topo_load(path, &t, err, sizeof(err))) {
		if (errout)
			fprintf(errout, "%s\n", err);
		return 2;
	}
	char sum[256];
	topo_summary(t, sum, sizeof(sum));
	if (out)
		fprintf(out, "%s: OK\n", sum);
	topo_free(t);
	return 0;
}
