/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Topology loader, part 2: the settings of a switch, a host or a link ("vals"),
 * one key at a time, recording which were set and on which line; merging
 * them in layers (built-in < defaults: < role < the object's own) and the
 * built-in defaults themselves.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pfc_mmu.h"
#include "topo_priv.h"

const char *const topo_switch_val_keys[] = {
	"buffer", "profile", "algo", "seed", "lb", "flowlet_timeout_us", "resilient_buckets", "pipeline",
	NULL,
};

/*
 * A switch's program (rocelab-dp runs it: dataplane/fabric/dp_swx.h): a file
 * that can be read; a relative path is taken from the topology file's folder.
 */
static int get_pipeline(struct topo_yaml_ctx *c, struct fy_node *v, const char *key, int kl,
			char out[TOPO_SPEC_PATH_MAX])
{
	int line = topo_yaml_line(v, kl);
	char s[TOPO_SPEC_PATH_MAX];

	if (topo_yaml_scalar(c, v, key, kl, s, sizeof(s)))
		return -1;
	if (s[0] == '\0')
		return topo_yaml_fail(c, line, "pipeline: empty (expected a .spec file, e.g. ecmp.spec)");
	const char *slash = s[0] != '/' && c->file ? strrchr(c->file, '/') : NULL;
	int n = slash ? snprintf(out, TOPO_SPEC_PATH_MAX, "%.*s/%s", (int)(slash - c->file), c->file, s)
		      : snprintf(out, TOPO_SPEC_PATH_MAX, "%s", s);
	if (n < 0 || n >= TOPO_SPEC_PATH_MAX)
		return topo_yaml_fail(c, line, "pipeline: '%s': the path is longer than %d characters",
				      s, TOPO_SPEC_PATH_MAX - 1);
	if (access(out, R_OK) != 0)
		return topo_yaml_fail(c, line, "pipeline: %s: %s", out, strerror(errno));
	return 0;
}

int topo_sw_val_pair(struct topo_yaml_ctx *c, struct sw_vals *s, const char *key, struct fy_node *v,
		     int kl)
{
	int line = topo_yaml_line(v, kl);
	uint64_t x;
	if (!strcmp(key, "buffer")) {
		if (topo_get_name(c, v, key, kl, s->buffer))
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
		if (topo_get_enum(c, v, key, kl, rl_profile_from_name,
				  "5tuple, eecmp, dqpn, 3tuple", &s->profile))
			return -1;
		SET(s, SW_PROFILE, line);
	} else if (!strcmp(key, "algo")) {
		if (topo_get_enum(c, v, key, kl, rl_hash_algo_from_name,
				  "crc16, crc32, crc32c, xor, toeplitz", &s->algo))
			return -1;
		SET(s, SW_ALGO, line);
	} else if (!strcmp(key, "seed")) {
		if (topo_get_uint(c, v, key, kl, 0, UINT32_MAX, &x))
			return -1;
		s->seed = (uint32_t)x;
		SET(s, SW_SEED, line);
	} else if (!strcmp(key, "lb")) {
		if (topo_get_enum(c, v, key, kl, topo_lb_from_name,
				  "ecmp, resilient, flowlet, pinning", &s->lb))
			return -1;
		SET(s, SW_LB, line);
	} else if (!strcmp(key, "flowlet_timeout_us")) {
		if (topo_get_scaled(c, v, key, kl, topo_us_units, false, "timeout",
				    "microseconds, e.g. 50 or 12.5", 1, MAX_DELAY, &s->flowlet_ns))
			return -1;
		SET(s, SW_FLOWLET, line);
	} else if (!strcmp(key, "resilient_buckets")) {
		if (topo_get_uint(c, v, key, kl, 2, 65536, &x))
			return -1;
		if (x & (x - 1))
			return topo_yaml_fail(
				c, line, "resilient_buckets: %" PRIu64 " is not a power of two", x);
		s->buckets = (uint32_t)x;
		SET(s, SW_BUCKETS, line);
	} else if (!strcmp(key, "pipeline")) {
		if (get_pipeline(c, v, key, kl, s->pipeline))
			return -1;
		SET(s, SW_PIPELINE, line);
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

const char *const topo_host_val_keys[] = {"attach", "mtu", NULL};

int topo_host_val_pair(struct topo_yaml_ctx *c, struct host_vals *h, const char *key,
		       struct fy_node *v, int kl)
{
	int line = topo_yaml_line(v, kl);
	uint64_t x;
	char tmp[TOPO_PATH_MAX];
	if (!strcmp(key, "attach")) {
		if (topo_get_enum(c, v, key, kl, topo_attach_from_name, ATTACH_HINT, &h->attach))
			return -1;
		SET(h, HO_ATTACH, line);
	} else if (!strcmp(key, "mtu")) {
		if (topo_get_uint(c, v, key, kl, MTU_MIN, MTU_MAX, &x))
			return -1;
		h->mtu = (uint32_t)x;
		SET(h, HO_MTU, line);
	} else if (!strcmp(key, "netns")) {
		if (topo_get_name(c, v, key, kl, h->netns))
			return -1;
		SET(h, HO_NETNS, line);
	} else if (!strcmp(key, "ifname")) {
		if (topo_yaml_scalar(c, v, key, kl, tmp, sizeof(tmp)))
			return -1;
		if (strlen(tmp) >= TOPO_IFNAME_MAX || !topo_valid_name(tmp))
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

const char *const topo_link_val_keys[] = {"rate", "delay", "mtu", "loss", NULL};

int topo_link_val_pair(struct topo_yaml_ctx *c, struct link_vals *l, const char *key,
		       struct fy_node *v, int kl)
{
	int line = topo_yaml_line(v, kl);
	uint64_t x;
	if (!strcmp(key, "rate")) {
		if (topo_get_scaled(c, v, key, kl, topo_rate_units, false, "rate", RATE_HINT, 1,
				    MAX_RATE, &l->rate))
			return -1;
		SET(l, LI_RATE, line);
	} else if (!strcmp(key, "delay")) {
		if (topo_get_scaled(c, v, key, kl, topo_time_units, true, "duration", TIME_HINT, 0,
				    MAX_DELAY, &l->delay))
			return -1;
		SET(l, LI_DELAY, line);
	} else if (!strcmp(key, "mtu")) {
		if (topo_get_uint(c, v, key, kl, MTU_MIN, MTU_MAX, &x))
			return -1;
		l->mtu = (uint32_t)x;
		SET(l, LI_MTU, line);
	} else if (!strcmp(key, "loss")) {
		if (topo_get_fraction(c, v, key, kl, &l->loss))
			return -1;
		SET(l, LI_LOSS, line);
	}
	return 0;
}

void topo_sw_merge(struct sw_vals *d, const struct sw_vals *s)
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
		case SW_PIPELINE: memcpy(d->pipeline, s->pipeline, sizeof(d->pipeline)); break;
		}
		SET(d, f, s->line[f]);
	}
}

void topo_host_merge(struct host_vals *d, const struct host_vals *s)
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

void topo_link_merge(struct link_vals *d, const struct link_vals *s)
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

/* ------------------------------------------------------ built-in defaults */

void topo_builtin_switch(struct sw_vals *v, int role)
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

void topo_builtin_host(struct host_vals *v)
{
	memset(v, 0, sizeof(*v));
	v->attach = TOPO_ATTACH_VETH;
	v->mtu = 1500;
}

void topo_builtin_link(struct link_vals *v)
{
	memset(v, 0, sizeof(*v));
	v->rate = 100000000000ull; /* 100G */
	v->delay = 1000;           /* 1 us */
	v->mtu = 9000;
	v->loss = 0.0;
}

void topo_builtin_qos(struct topo_qos *q)
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
