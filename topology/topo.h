/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * topo: the fabric a rocelab-dp process emulates, loaded from a YAML file
 * (format: topologies/README.md) or built in memory (topo_clos()).
 *
 * Everything here is plain data the data plane walks: arrays of switches,
 * hosts, links and scheduled events, indexed from 0, plus the QoS settings.
 * Addresses and MACs are derived from the topology (a host may name its own
 * IPv4 address and MAC with ipv4:/mac:, e.g. to replay a capture):
 *
 *   leaf L (the L-th rtsw in file order), host i (0-based, by the leaf's port
 *   order) under it:
 *     host IPv4      10.(L>>8).(L&255).(i+1)/24     gateway .254 (the leaf)
 *     host IPv6      fd00:0:0:L::(i+1)/64           gateway fd00:0:0:L::fe
 *     host MAC       02:00:0a:(L>>8):(L&255):(i+1)
 *   switch S (index in topo->switches), port P:
 *     port MAC       02:01:(S>>8):(S&255):(P>>8):(P&255)
 *     router MAC     02:01:(S>>8):(S&255):ff:ff
 *     loopback IPv4  172.16.0.0 + S (172.16.0.0/12)
 *   A host's gateway MAC is the MAC of the leaf port it is attached to.
 *
 * IPv4 addresses are stored in host byte order; MACs and IPv6 addresses as
 * bytes in network order. No function here touches DPDK or reads a clock.
 */
#ifndef TOPO_H
#define TOPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rl_hash.h"

struct pfc_buffer_profile;

/* Longest node or profile name, including the terminating NUL. */
#define TOPO_NAME_MAX 32
/* Longest link name ("a-b" by default), including the NUL. */
#define TOPO_LINK_NAME_MAX (2 * TOPO_NAME_MAX)
/* Longest vhost-user socket path, including the NUL (sun_path is 108). */
#define TOPO_PATH_MAX 108
#define TOPO_SPEC_PATH_MAX 256 /* a switch's pipeline: FILE.spec, with the topology's folder */
/* Linux interface names: IFNAMSIZ. */
#define TOPO_IFNAME_MAX 16
#define TOPO_PCI_MAX 16
/* Longest dpdk devargs string, including the NUL. */
#define TOPO_DEVARGS_MAX 256
/* Longest DPDK device name (the devargs up to its first ','): RTE_DEV_NAME_MAX_LEN. */
#define TOPO_DEVNAME_MAX 64
/* Priorities (traffic classes) per port. */
#define TOPO_NUM_PRIO 8
/* Limits of the address scheme. */
#define TOPO_MAX_HOSTS_PER_LEAF 253
#define TOPO_MAX_LEAVES 4096
#define TOPO_MAX_SWITCHES 65535
#define TOPO_MAX_HOSTS (1u << 20)
#define TOPO_MAX_PORTS 65535

enum topo_role {
	TOPO_ROLE_RTSW, /* rack (leaf) switch: hosts below, CTSWs above */
	TOPO_ROLE_CTSW, /* cluster (spine) switch: RTSWs below, ATSWs above */
	TOPO_ROLE_ATSW, /* aggregation switch: joins the CTSWs of AI zones */
	TOPO_ROLE_COUNT,
};

enum topo_lb {
	TOPO_LB_ECMP,      /* hash mod group size */
	TOPO_LB_RESILIENT, /* resilient hashing table (rl_resilient) */
	TOPO_LB_FLOWLET,   /* flowlet switching with flowlet_timeout_ns */
	TOPO_LB_PINNING,   /* uplink chosen by the destination's index under its leaf */
	TOPO_LB_COUNT,
};

enum topo_attach {
	TOPO_ATTACH_VETH,     /* veth pair into a network namespace (af_xdp/af_packet) */
	TOPO_ATTACH_VHOST,    /* vhost-user socket to a qemu VM */
	TOPO_ATTACH_PCI,      /* a physical NIC by PCI address */
	TOPO_ATTACH_EMULATED, /* the in-process NIC emulator (nic_emul/) */
	TOPO_ATTACH_NET_NULL, /* a DPDK net_null port: receives nothing, frees what it is sent (benchmarks) */
	TOPO_ATTACH_DPDK,     /* any DPDK virtual device, by its devargs (net_pcap, net_tap, net_memif) */
	TOPO_ATTACH_COUNT,
};

enum topo_node_kind { TOPO_NODE_SWITCH, TOPO_NODE_HOST };

/* A switch or a host, by index into topo->switches or topo->hosts. */
struct topo_node_ref {
	enum topo_node_kind kind;
	uint32_t index;
};

/* One port of a switch. Ports are numbered in link order (see README). */
struct topo_port {
	uint32_t link;           /* index into topo->links */
	struct topo_node_ref peer; /* the node at the other end */
	uint16_t peer_port;      /* port number on the peer switch; 0 for a host */
	uint8_t mac[6];
};

#define TOPO_MAX_PARTITIONS 256 /* switch key partition: 0..255 */

struct topo_switch {
	char name[TOPO_NAME_MAX];
	enum topo_role role;
	char buffer[TOPO_NAME_MAX];                   /* buffer profile name */
	const struct pfc_buffer_profile *buffer_profile; /* never NULL after load */
	enum rl_hash_profile profile;
	enum rl_hash_algo algo;
	uint32_t seed;
	enum topo_lb lb;
	uint64_t flowlet_timeout_ns;
	uint32_t resilient_buckets; /* power of two */
	char pipeline[TOPO_SPEC_PATH_MAX]; /* its .spec program (rocelab-dp, dp_swx.h), "" for none */
	uint16_t n_ports;
	struct topo_port *ports;
	int leaf_index;             /* 0.. for an rtsw, -1 otherwise */
	int partition;              /* rocelab-dp --workers: its partition (0..), -1 when not given */
	uint16_t n_hosts;           /* hosts attached (rtsw only) */
	uint32_t subnet4;           /* rtsw: 10.(L>>8).(L&255).0, prefix 24 */
	uint32_t gw_ipv4;           /* rtsw: the gateway address .254 */
	uint8_t gw_ipv6[16];        /* rtsw: fd00:0:0:L::fe */
	uint32_t loopback4;
	uint8_t mac[6];             /* router MAC */
	int line;                   /* line of its entry in the file (1-based, 0 if built) */
};

struct topo_host {
	char name[TOPO_NAME_MAX];
	enum topo_attach attach;
	char netns[TOPO_NAME_MAX];      /* veth: network namespace name */
	char ifname[TOPO_IFNAME_MAX];   /* veth: the end rocelab-dp opens (root netns) */
	char socket[TOPO_PATH_MAX];     /* vhost: vhost-user socket path */
	char pci[TOPO_PCI_MAX];         /* pci: DDDD:BB:DD.F */
	char devargs[TOPO_DEVARGS_MAX]; /* dpdk: "NAME[,key=value...]" as EAL's --vdev takes it */
	uint32_t mtu;                      /* host interface MTU (IP bytes) */
	uint32_t ipv4;
	uint8_t ipv6[16];
	uint8_t mac[6];
	uint32_t gw_ipv4;
	uint8_t gw_ipv6[16];
	uint8_t gw_mac[6];
	uint32_t leaf;      /* switch index of its rtsw */
	uint16_t leaf_port; /* port on that switch */
	uint32_t link;      /* index into topo->links */
	uint16_t index;     /* index under its leaf: 0..n_hosts-1 (path pinning uses it) */
	int line;
	int server;         /* index into topo->servers, -1: not a GPU of a server */
	int gpu;            /* GPU index in its server, 0..gpus_per_server-1; -1: none */
};

struct topo_link {
	char name[TOPO_LINK_NAME_MAX];
	struct topo_node_ref end[2];
	uint16_t port[2];   /* port number at each end (0 for a host end) */
	uint64_t rate_bps;  /* > 0 */
	uint64_t delay_ns;  /* propagation delay, one way */
	uint32_t mtu;       /* largest IP packet, bytes */
	double loss;        /* 0..1, per packet */
	int line;
};

enum topo_event_target { TOPO_EVENT_LINK, TOPO_EVENT_SWITCH };

/* A scheduled failure-injection event; topo->events is sorted by at_ns. */
struct topo_event {
	uint64_t at_ns;
	enum topo_event_target target;
	uint32_t index; /* into topo->links or topo->switches */
	bool up;        /* false: take it down, true: bring it back */
	int line;
};

struct topo_qos {
	uint8_t dscp_prio[64];          /* DSCP -> priority 0..7 */
	uint8_t lossless_mask;          /* bit p set: priority p is lossless (PFC) */
	uint8_t control_prio;           /* the strict-priority class */
	uint16_t dwrr_weight[TOPO_NUM_PRIO]; /* 0 for control_prio, >= 1 otherwise */
	bool ecn;                       /* ECN marking on enqueue */
	uint32_t ecn_kmin;              /* bytes queued where marking starts */
	uint32_t ecn_kmax;              /* bytes where the probability reaches pmax */
	double ecn_pmax;                /* 0..1 */
};

/*
 * Servers of GPUs (topologies/README.md, `servers:`): each GPU is an emulated
 * host with its own NIC on its own leaf port; the GPUs of one server are
 * joined by NVLink (through NVSwitch), each GPU to its NIC by PCIe. These are
 * the parameters nccl/nc_nvlink takes (its bytes/s are these bit/s / 8); a
 * collective's hops between GPUs of one server use the NVLink ones
 * (docs/reference/coll.md, "Servers and NVLink"); a GPU's NIC sends at most
 * at the PCIe rate (topo_host_nic_rate_bps).
 */
#define TOPO_MAX_GPUS_PER_SERVER TOPO_MAX_HOSTS_PER_LEAF /* a server fits on one leaf */

struct topo_server_params {
	uint32_t gpus_per_server; /* GPUs of every server, 1..TOPO_MAX_GPUS_PER_SERVER */
	uint64_t nvlink_bps;      /* NVLink per GPU per direction, bit/s */
	uint64_t nvlink_lat_ns;   /* one NVLink hop */
	uint64_t pcie_bps;        /* GPU <-> NIC PCIe, per direction, bit/s */
	uint64_t pcie_lat_ns;
};

struct topo_server {
	char name[TOPO_NAME_MAX];
	uint32_t *hosts; /* [gpu] -> host index; gpus_per_server entries */
	int line;        /* line of its first GPU's host entry */
};

struct topo {
	char name[TOPO_NAME_MAX];
	char path[256];                 /* the file it came from ("<clos>" if built) */
	uint32_t n_switches, n_hosts, n_links, n_events;
	uint32_t n_leaves;
	struct topo_switch *switches;
	struct topo_host *hosts;
	struct topo_link *links;
	struct topo_event *events;
	uint32_t *leaves;               /* leaf index -> switch index */
	struct topo_qos qos;
	struct topo_server_params server_params; /* built-in, then `servers:` */
	uint32_t n_servers;             /* 0: no host is a GPU of a server */
	struct topo_server *servers;    /* n_servers, in order of first GPU in hosts: */
};

/*
 * Load and validate a topology file. Returns 0 and sets *out (free it with
 * topo_free()), or -1 with *out = NULL and err filled with
 * "FILE:LINE: what is wrong" (lines 1-based; a file that cannot be read gives
 * "FILE: cannot read: reason"). err may be NULL; 512 bytes hold any message (longer ones are cut).
 * Never crashes on malformed input.
 */
int topo_load(const char *path, struct topo **out, char *err, size_t errlen);

/*
 * Same as topo_load() on YAML text in memory; display_name stands for the
 * file in messages and in topo->path.
 */
int topo_load_string(const char *yaml, size_t len, const char *display_name,
			struct topo **out, char *err, size_t errlen);

/*
 * The 2-tier Clos: `spines` ctsw spine0.., `leaves` rtsw leaf0.., and
 * hosts_per_leaf veth hosts h0.. per leaf (h0..h(H-1) on leaf0), every leaf
 * linked to every spine, all other settings the file defaults (the result
 * equals topologies/default.yaml for 2,2,4 except for its name, "clos-SxLxH").
 * Returns NULL with err filled when a count is 0 or beyond the address scheme.
 * Built by the generator (topo_gen.c); topo_gen() takes rates, delays,
 * oversubscription, attach kind and AI zones.
 */
struct topo *topo_clos(unsigned spines, unsigned leaves, unsigned hosts_per_leaf,
		       char *err, size_t errlen);

/* Free a topology; NULL is fine. */
void topo_free(struct topo *t);

/* Index of the switch / host / link with that name, or -1. */
int topo_switch_by_name(const struct topo *t, const char *name);
int topo_host_by_name(const struct topo *t, const char *name);
int topo_link_by_name(const struct topo *t, const char *name);

/*
 * Servers of GPUs. topo_servers(): how many (0 when none, or t is NULL).
 * topo_host_server() / topo_host_gpu(): the server index and GPU index of
 * host h, or -1 when h is not a GPU of a server or is out of range.
 * topo_server_hosts(): the host index of every GPU of server s in GPU order
 * (gpus_per_server of them, stored in *n), or NULL (and *n = 0) when s is
 * out of range. topo_server_by_name(): its index, or -1.
 * topo_host_nic_rate_bps(): the rate host h's NIC sends at, bit/s: its
 * link's rate, or for a GPU of a server the lower of that and the server's
 * GPU-to-NIC PCIe rate (servers.pcie_rate: the NIC cannot send data faster
 * than PCIe brings it); 0 when t is NULL or h is out of range.
 */
uint32_t topo_servers(const struct topo *t);
int topo_host_server(const struct topo *t, uint32_t h);
int topo_host_gpu(const struct topo *t, uint32_t h);
const uint32_t *topo_server_hosts(const struct topo *t, uint32_t s, uint32_t *n);
int topo_server_by_name(const struct topo *t, const char *name);
uint64_t topo_host_nic_rate_bps(const struct topo *t, uint32_t h);

/* Number of hosts with attach: emulated (the in-process NICs). */
uint32_t topo_emulated_hosts(const struct topo *t);

/* Name of a node (switch or host); "?" for a bad reference. */
const char *topo_node_name(const struct topo *t, struct topo_node_ref ref);

/* Names used in the file ("rtsw", "ecmp", "veth", ...); NULL when out of range. */
const char *topo_role_name(enum topo_role role);
const char *topo_lb_name(enum topo_lb lb);
const char *topo_attach_name(enum topo_attach attach);
/* Reverse lookups; -1 for an unknown name. */
int topo_role_from_name(const char *name);
int topo_lb_from_name(const char *name);
int topo_attach_from_name(const char *name);

/*
 * The DPDK device name in a dpdk host's devargs: the text before the first
 * ',' (truncated to len - 1). Returns buf.
 */
char *topo_devargs_name(const char *devargs, char *buf, size_t len);

/* "10.0.1.2" from a host-order IPv4 address; buf of at least 16 bytes. Returns buf. */
char *topo_ipv4_str(uint32_t ipv4, char *buf, size_t len);
/* "fd00:0:0:1::2" from 16 bytes; buf of at least 46 bytes. Returns buf. */
char *topo_ipv6_str(const uint8_t ipv6[16], char *buf, size_t len);
/* "02:00:0a:00:01:02"; buf of at least 18 bytes. Returns buf. */
char *topo_mac_str(const uint8_t mac[6], char *buf, size_t len);

/*
 * The topology format's units, for command lines and other tools:
 * a rate "100G", "25Gbps", "100M", "2.5G", "1000000" (bit/s; k K M G T, an
 * optional "bps"), 1 bit/s .. 10 Tbit/s; a duration "1us", "2ms", "1.5s",
 * "0" (ns, us, ms, s; only 0 may omit the unit), at most one day.
 * Return 0 with the value stored, or -1 (value untouched) when s is NULL,
 * malformed, has a bad unit, is not a whole number of bit/s or ns, or is out
 * of range (a rate of 0 included).
 */
int topo_parse_rate(const char *s, uint64_t *bps);
int topo_parse_duration(const char *s, uint64_t *ns);

/*
 * One line: "NAME: S switches (R rtsw, C ctsw, A atsw), H hosts, L links,
 * E events", then ", N servers x G GPUs" when the topology has servers.
 * Returns what snprintf returns.
 */
int topo_summary(const struct topo *t, char *buf, size_t len);

/*
 * What `--check FILE` does (rocelab-topo, rocelab-dp): load path; when valid,
 * print the summary line to out and return 0; when not, print the
 * "FILE:LINE: ..." message to errout and return 2 (the exit code).
 */
int topo_check_file(const char *path, FILE *out, FILE *errout);

#endif /* TOPO_H */
