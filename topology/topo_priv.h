/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to topology/: what the loader's files (topo.c, topo_value.c,
 * topo_vals.c, topo_parse.c, topo_build.c) share. Not installed, not for
 * other modules: their API is topo.h.
 */
#ifndef TOPO_PRIV_H
#define TOPO_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include <libfyaml.h>

#include "rl_units.h"
#include "topo.h"
#include "topo_yaml.h"

#define RATE_HINT "a number with an optional unit k, M, G, T and optional 'bps', e.g. 100G, 25Gbps, 100M"
#define TIME_HINT "a number with a unit ns, us, ms or s, e.g. 1us, 2ms"
#define SIZE_HINT RL_SIZE_HINT /* (common/rl_units.h: the one grammar) */
#define MAX_RATE 10000000000000ull          /* 10 Tbit/s */
#define MAX_DELAY 10000000000ull            /* 10 s */
#define MAX_AT 86400000000000ull            /* one day */
#define MTU_MIN 68
#define MTU_MAX 9216
#define ATTACH_HINT "veth, vhost, pci, emulated, net_null, dpdk"


enum { SW_BUFFER, SW_PROFILE, SW_ALGO, SW_SEED, SW_LB, SW_FLOWLET, SW_BUCKETS, SW_PIPELINE, SW_NFIELDS };

struct sw_vals {
	unsigned set;
	int line[SW_NFIELDS];
	char buffer[TOPO_NAME_MAX];
	const struct pfc_buffer_profile *buffer_profile;
	int profile, algo, lb;
	uint32_t seed;
	uint64_t flowlet_ns;
	uint32_t buckets;
	char pipeline[TOPO_SPEC_PATH_MAX]; /* resolved against the topology file's folder */
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
	char server[TOPO_NAME_MAX]; /* `server:`, "" when none */
	int server_line;
	int gpu;                    /* `gpu:`, -1 when none */
	int gpu_line;
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
	struct topo_server_params servers; /* built-in < `servers:` */
	int servers_line;                  /* line of `servers:`, 0 when absent */
	int gpus_line;                     /* line of gpus_per_server, else servers_line */
	struct sw_spec *sw;
	struct host_spec *ho;
	struct link_spec *li;
	struct ev_spec *ev;
	uint32_t n_sw, n_ho, n_li, n_ev;
};

/* topo_value.c: names and scalar values */

extern const char *const topo_attach_names[TOPO_ATTACH_COUNT];
/* The grammars of common/rl_units.h, and flowlet_timeout_us's bare microseconds. */
#define topo_rate_units rl_rate_units()
#define topo_time_units rl_time_units()
#define topo_size_units rl_size_units()
extern const struct rl_unit topo_us_units[];

/* A valid object name: 1..TOPO_NAME_MAX-1 of [A-Za-z0-9_.-], first a letter or digit. */
bool topo_valid_name(const char *s);

/*
 * The value v of key (on key_line when v has no line of its own) as a name,
 * an integer in [min, max], an enum by from_name, a boolean, a fraction in
 * [0, 1] or a number with one of units in [min, max]. Each returns 0, or -1
 * with the error recorded in c.
 */
int topo_get_name(struct topo_yaml_ctx *c, struct fy_node *v, const char *key, int key_line,
		  char buf[TOPO_NAME_MAX]);
int topo_get_uint(struct topo_yaml_ctx *c, struct fy_node *v, const char *key, int key_line,
		  uint64_t min, uint64_t max, uint64_t *out);
int topo_get_enum(struct topo_yaml_ctx *c, struct fy_node *v, const char *key, int key_line,
		  int (*from_name)(const char *), const char *choices, int *out);
int topo_get_bool(struct topo_yaml_ctx *c, struct fy_node *v, const char *key, int key_line,
		  bool *out);
int topo_get_fraction(struct topo_yaml_ctx *c, struct fy_node *v, const char *key, int key_line,
		      double *out);
int topo_get_scaled(struct topo_yaml_ctx *c, struct fy_node *v, const char *key, int key_line,
		    const struct rl_unit *units, bool unitless_zero, const char *kind,
		    const char *hint, uint64_t min, uint64_t max, uint64_t *out);

/* topo_vals.c: an object's settings */

/* The keys of defaults.switch/<role>, defaults.host, defaults.link (NULL-ended). */
extern const char *const topo_switch_val_keys[];
extern const char *const topo_host_val_keys[];
extern const char *const topo_link_val_keys[];

/* One settings key of a switch, host or link into its vals; an unknown key is
   left alone (0). 0, or -1 with the error recorded in c. */
int topo_sw_val_pair(struct topo_yaml_ctx *c, struct sw_vals *s, const char *key, struct fy_node *v,
		     int kl);
int topo_host_val_pair(struct topo_yaml_ctx *c, struct host_vals *h, const char *key,
		       struct fy_node *v, int kl);
int topo_link_val_pair(struct topo_yaml_ctx *c, struct link_vals *l, const char *key,
		       struct fy_node *v, int kl);

/* d takes every setting that s set (with its line). */
void topo_sw_merge(struct sw_vals *d, const struct sw_vals *s);
void topo_host_merge(struct host_vals *d, const struct host_vals *s);
void topo_link_merge(struct link_vals *d, const struct link_vals *s);

/* The built-in defaults, the lowest layer (nothing marked set). */
void topo_builtin_switch(struct sw_vals *v, int role);
void topo_builtin_host(struct host_vals *v);
void topo_builtin_link(struct link_vals *v);
void topo_builtin_qos(struct topo_qos *q);

/* topo_parse.c: the document into a spec */

/* The root mapping's keys, and its walker (topo_yaml_walk_map()) into a struct spec. */
extern const char *const topo_root_keys[];
int topo_root_pair(struct topo_yaml_ctx *c, void *obj, const char *key, struct fy_node *v, int kl);
/* Frees the spec's lists (not s itself). */
void topo_spec_free(struct spec *s);

/* topo_server.c: servers of GPUs */

/* The built-in server parameters (H100, nccl/nc_nvlink.h). */
void topo_builtin_servers(struct topo_server_params *p);
/* The `servers:` section into s->servers; 0, or -1 with the error recorded in c. */
int topo_servers_pair(struct topo_yaml_ctx *c, void *obj, const char *key, struct fy_node *v,
		      int kl);
extern const char *const topo_servers_keys[];
/*
 * The build phase after the hosts: group the hosts that name a server into
 * t->servers, each GPU index once, every GPU present and emulated. 0, or -1
 * with the error recorded in c.
 */
int topo_build_servers(struct topo_yaml_ctx *c, const struct spec *s, struct topo *t);

/* topo_build.c */

/* The spec as a validated topology in t; 0, or -1 with the error recorded in c. */
int topo_build(struct topo_yaml_ctx *c, struct spec *s, struct topo *t);

#endif /* TOPO_PRIV_H */
