/* SPDX-License-Identifier: BSD-3-Clause */
#include "dp_port.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include "dp_fabric.h"

/* The vdev name rocelab gives host h's port (also its ethdev name). */
static void vdev_name(const struct topo *t, uint32_t h, enum dp_veth_driver drv, char *buf,
		      size_t len)
{
	if (t->hosts[h].attach == TOPO_ATTACH_DPDK)
		topo_devargs_name(t->hosts[h].devargs, buf, len);
	else if (t->hosts[h].attach == TOPO_ATTACH_VHOST)
		snprintf(buf, len, "net_vhost%u", h);
	else if (t->hosts[h].attach == TOPO_ATTACH_NET_NULL)
		snprintf(buf, len, "net_null%u", h);
	else
		snprintf(buf, len, "%s%u", drv == DP_VETH_AF_XDP ? "net_af_xdp" : "net_af_packet", h);
}

static int push(char **argv, int *argc, int cap, char *s)
{
	if (s == NULL || *argc >= cap) {
		free(s);
		return -E2BIG;
	}
	argv[(*argc)++] = s;
	return 0;
}

/*
 * A dpdk host's device may not take the name rocelab gives another host's
 * port (net_null3, net_vhost0...): EAL would refuse the second one with a
 * message that names neither host. Returns 0, or -EINVAL with a message.
 */
static int check_dpdk_names(const struct topo *t, enum dp_veth_driver drv, char *err,
			    size_t errlen)
{
	for (uint32_t h = 0; h < t->n_hosts; h++) {
		const struct topo_host *hc = &t->hosts[h];
		char mine[TOPO_DEVNAME_MAX], other[TOPO_DEVNAME_MAX];

		if (hc->attach != TOPO_ATTACH_DPDK)
			continue;
		topo_devargs_name(hc->devargs, mine, sizeof(mine));
		for (uint32_t o = 0; o < t->n_hosts; o++) {
			enum topo_attach a = t->hosts[o].attach;
			if (a == TOPO_ATTACH_DPDK || a == TOPO_ATTACH_PCI || a == TOPO_ATTACH_EMULATED)
				continue;
			vdev_name(t, o, drv, other, sizeof(other));
			if (strcmp(mine, other) == 0) {
				snprintf(err, errlen,
					 "host %s: devargs '%s': device name %s is the one rocelab "
					 "gives host %s's port; choose another",
					 hc->name, hc->devargs, mine, t->hosts[o].name);
				return -EINVAL;
			}
		}
	}
	return 0;
}

int dp_port_eal_args(const struct topo *t, enum dp_veth_driver drv, const bool *skip, char **argv,
		     int *argc, int argv_cap, char *err, size_t errlen)
{
	bool any_pci = false;
	int rc = check_dpdk_names(t, drv, err, errlen);

	if (rc < 0)
		return rc;
	for (uint32_t h = 0; h < t->n_hosts; h++) {
		const struct topo_host *hc = &t->hosts[h];
		char name[64], arg[512];

		if (skip && skip[h])
			continue; /* another process's host */
		vdev_name(t, h, drv, name, sizeof(name));
		switch (hc->attach) {
		case TOPO_ATTACH_VETH:
			if (drv == DP_VETH_AF_XDP)
				snprintf(arg, sizeof(arg), "--vdev=%s,iface=%s,start_queue=0,queue_count=1",
					 name, hc->ifname);
			else if (hc->mtu > 1500)
				/*
				 * Jumbo frames: the default 2048-byte PACKET_MMAP frame drops
				 * them. A 9216-byte frame holds the tpacket header (64) and a
				 * 9000-MTU Ethernet frame, and the PMD's data part (frame - 32)
				 * fits the jumbo mbuf (9280). The PMD addresses frames as one
				 * array, so a block must hold whole frames with no gap: 4 frames
				 * are a 36 KiB block (9 pages); 512 blocks.
				 */
				snprintf(arg, sizeof(arg),
					 "--vdev=%s,iface=%s,framesz=9216,blocksz=36864,framecnt=2048,"
					 "qpairs=1",
					 name, hc->ifname);
			else
				snprintf(arg, sizeof(arg), "--vdev=%s,iface=%s,framecnt=4096,qpairs=1", name,
					 hc->ifname);
			break;
		case TOPO_ATTACH_VHOST:
			snprintf(arg, sizeof(arg), "--vdev=%s,iface=%s,queues=1,client=0", name,
				 hc->socket);
			break;
		case TOPO_ATTACH_PCI:
			snprintf(arg, sizeof(arg), "-a%s", hc->pci);
			any_pci = true;
			break;
		case TOPO_ATTACH_NET_NULL: /* a sink: traffic comes from --gen */
			snprintf(arg, sizeof(arg), "--vdev=%s,no-rx=1", name);
			break;
		case TOPO_ATTACH_DPDK: /* the user's devargs, as written */
			snprintf(arg, sizeof(arg), "--vdev=%s", hc->devargs);
			break;
		default:
			continue; /* emulated: no port */
		}
		if (push(argv, argc, argv_cap, strdup(arg)) < 0) {
			snprintf(err, errlen, "too many EAL arguments at host %s", hc->name);
			return -E2BIG;
		}
	}
	if (!any_pci && push(argv, argc, argv_cap, strdup("--no-pci")) < 0) {
		snprintf(err, errlen, "too many EAL arguments");
		return -E2BIG;
	}
	return 0;
}

int dp_port_eal_failed(const struct topo *t, int eal_errno, char *err, size_t errlen)
{
	size_t off = 0;
	uint32_t n = 0;

	snprintf(err, errlen, "EAL init failed: %s", rte_strerror(eal_errno));
	/* EAL answers ENODEV when a --vdev names a driver it does not have */
	if (eal_errno != ENODEV)
		return -EIO;
	for (uint32_t h = 0; h < t->n_hosts && off < errlen; h++) {
		const struct topo_host *hc = &t->hosts[h];
		if (hc->attach != TOPO_ATTACH_DPDK)
			continue;
		int w = snprintf(err + off, errlen - off, "%s host %s's devargs '%s'",
				 n++ ? " or" : "DPDK has no driver for", hc->name, hc->devargs);
		if (w < 0)
			break;
		off += (size_t)w;
	}
	if (n == 0)
		return -1; /* err still holds EAL's reason: the loop wrote nothing */
	if (off < errlen)
		snprintf(err + off, errlen - off, " (EAL names the device above)");
	return -EINVAL;
}

int dp_port_start(uint16_t pid, struct rte_mempool *mp, uint32_t mtu, char *err,
		      size_t errlen)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	int rc;

	memset(&conf, 0, sizeof(conf));
	if ((rc = rte_eth_dev_info_get(pid, &info)) != 0 ||
	    (rc = rte_eth_dev_configure(pid, 1, 1, &conf)) != 0 ||
	    (mtu && (rc = rte_eth_dev_set_mtu(pid, (uint16_t)mtu)) != 0) ||
	    (rc = rte_eth_rx_queue_setup(pid, 0, 1024, rte_eth_dev_socket_id(pid), NULL, mp)) != 0 ||
	    (rc = rte_eth_tx_queue_setup(pid, 0, 1024, rte_eth_dev_socket_id(pid), NULL)) != 0 ||
	    (rc = rte_eth_dev_start(pid)) != 0) {
		snprintf(err, errlen, "%s", rte_strerror(-rc));
		return -EIO;
	}
	rte_eth_promiscuous_enable(pid); /* some PMDs do not support it; harmless */
	return 0;
}

int dp_port_setup(struct dp_ports *ps, struct dp_fabric *f, struct rte_mempool *mp,
		  enum dp_veth_driver drv, const bool *skip, char *err, size_t errlen)
{
	const struct topo *t = f->topo;

	memset(ps, 0, sizeof(*ps));
	ps->host = calloc(t->n_hosts + 1, sizeof(*ps->host));
	ps->port_id = calloc(t->n_hosts + 1, sizeof(*ps->port_id));
	ps->txb = calloc(t->n_hosts + 1, sizeof(*ps->txb));
	ps->tx_dropped = calloc(t->n_hosts + 1, sizeof(*ps->tx_dropped));
	ps->by_host = malloc((t->n_hosts + 1) * sizeof(*ps->by_host));
	if (!ps->host || !ps->port_id || !ps->txb || !ps->tx_dropped || !ps->by_host) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (uint32_t h = 0; h < t->n_hosts; h++) {
		const struct topo_host *hc = &t->hosts[h];
		char name[64], why[200];
		uint16_t pid;

		ps->by_host[h] = -1;
		if (hc->attach == TOPO_ATTACH_EMULATED || (skip && skip[h]))
			continue;
		if (hc->attach == TOPO_ATTACH_PCI)
			snprintf(name, sizeof(name), "%s", hc->pci);
		else
			vdev_name(t, h, drv, name, sizeof(name));
		if (rte_eth_dev_get_port_by_name(name, &pid) != 0) {
			if (hc->attach == TOPO_ATTACH_DPDK) {
				/* EAL logged its reason above; the devargs are the user's input */
				snprintf(err, errlen,
					 "host %s: DPDK refused devargs '%s' (no port %s after EAL "
					 "probed it; EAL's reason is above)",
					 hc->name, hc->devargs, name);
				return -EINVAL;
			}
			snprintf(err, errlen, "host %s: no DPDK port %s (is interface %s there?)", hc->name,
				 name, hc->attach == TOPO_ATTACH_VETH ? hc->ifname : hc->socket);
			return -ENODEV;
		}
		if (dp_port_start(pid, mp, hc->attach == TOPO_ATTACH_PCI ? hc->mtu : 0, why, sizeof(why)) <
		    0) {
			if (hc->attach == TOPO_ATTACH_DPDK) {
				snprintf(err, errlen, "host %s: devargs '%s': port %s: %s", hc->name,
					 hc->devargs, name, why);
				return -EINVAL;
			}
			snprintf(err, errlen, "host %s: port %s: %s", hc->name, name, why);
			return -EIO;
		}
		uint32_t i = ps->n;
		ps->host[i] = h;
		ps->port_id[i] = pid;
		ps->by_host[h] = (int32_t)i;
		ps->txb[i] = rte_zmalloc_socket("rl_txb", RTE_ETH_TX_BUFFER_SIZE(DP_PORT_BURST), 0,
						rte_eth_dev_socket_id(pid));
		if (ps->txb[i] == NULL) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		ps->n++;
		rte_eth_tx_buffer_init(ps->txb[i], DP_PORT_BURST);
		rte_eth_tx_buffer_set_err_callback(ps->txb[i], rte_eth_tx_buffer_count_callback,
						   &ps->tx_dropped[i]);
		f->host[h].port_id = pid;
	}
	return 0;
}

uint32_t dp_port_poll_one(struct dp_ports *ps, struct dp_fabric *f, uint32_t i, uint64_t now_ns)
{
	struct rte_mbuf *pkts[DP_PORT_BURST];
	uint16_t n = rte_eth_rx_burst(ps->port_id[i], 0, pkts, DP_PORT_BURST);

	for (uint16_t k = 0; k < n; k++)
		dp_fabric_host_send(f, ps->host[i], pkts[k], false, now_ns);
	return n;
}

uint32_t dp_port_poll(struct dp_ports *ps, struct dp_fabric *f, uint64_t now_ns)
{
	uint32_t total = 0;

	for (uint32_t i = 0; i < ps->n; i++)
		total += dp_port_poll_one(ps, f, i, now_ns);
	return total;
}

void dp_port_host_rx(void *ctx, struct dp_host *h, struct rte_mbuf *m, uint64_t now_ns)
{
	struct dp_ports *ps = ctx;
	int32_t i = ps->by_host[h->idx];

	(void)now_ns;
	if (i < 0) { /* an emulated host with nothing attached yet */
		rte_pktmbuf_free(m);
		return;
	}
	dp_frame_settle(h->tx->fab, m); /* (header rewrites owed, a payload left unwritten) */
	rte_eth_tx_buffer(ps->port_id[i], 0, ps->txb[i], m);
}

void dp_port_flush_one(struct dp_ports *ps, uint32_t i)
{
	rte_eth_tx_buffer_flush(ps->port_id[i], 0, ps->txb[i]);
}

void dp_port_flush(struct dp_ports *ps)
{
	for (uint32_t i = 0; i < ps->n; i++)
		dp_port_flush_one(ps, i);
}

int dp_port_by_part(struct dp_ports *ps, uint32_t n_parts,
		    uint32_t (*part_of)(const void *ctx, uint32_t host), const void *ctx)
{
	uint32_t *idx = malloc((ps->n ? ps->n : 1) * sizeof(*idx)), *at = calloc(n_parts + 1, sizeof(*at));

	if (idx == NULL || at == NULL) {
		free(idx);
		free(at);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < ps->n; i++) { /* counting sort: partition k's ports in port order */
		uint32_t k = part_of(ctx, ps->host[i]);
		if (k >= n_parts) {
			free(idx);
			free(at);
			return -EINVAL;
		}
		at[k + 1]++;
	}
	for (uint32_t k = 0; k < n_parts; k++)
		at[k + 1] += at[k];
	/* place: at[k] moves to partition k's end, so shift back to the starts after */
	for (uint32_t i = 0; i < ps->n; i++)
		idx[at[part_of(ctx, ps->host[i])]++] = i;
	for (uint32_t k = n_parts; k > 0; k--)
		at[k] = at[k - 1];
	at[0] = 0;
	free(ps->part_idx);
	free(ps->part_at);
	ps->part_idx = idx;
	ps->part_at = at;
	ps->n_parts = n_parts;
	return 0;
}

uint32_t dp_port_poll_part(struct dp_ports *ps, struct dp_fabric *f, uint32_t part, uint64_t now_ns)
{
	uint32_t total = 0;

	for (uint32_t j = ps->part_at[part]; j < ps->part_at[part + 1]; j++)
		total += dp_port_poll_one(ps, f, ps->part_idx[j], now_ns);
	return total;
}

void dp_port_flush_part(struct dp_ports *ps, uint32_t part)
{
	for (uint32_t j = ps->part_at[part]; j < ps->part_at[part + 1]; j++)
		dp_port_flush_one(ps, ps->part_idx[j]);
}

int dp_port_row(const struct dp_ports *ps, const struct topo *t, uint32_t i, struct dp_port_row *row)
{
	struct rte_eth_stats st;

	if (i >= ps->n)
		return -1;
	if (rte_eth_stats_get(ps->port_id[i], &st) != 0)
		memset(&st, 0, sizeof(st));
	if (rte_eth_dev_get_name_by_port(ps->port_id[i], row->name) != 0)
		snprintf(row->name, sizeof(row->name), "port%u", ps->port_id[i]);
	row->host = t->hosts[ps->host[i]].name;
	row->rx = st.ipackets;
	row->tx = st.opackets;
	row->refused = ps->tx_dropped[i];
	row->imissed = st.imissed;
	row->rx_nombuf = st.rx_nombuf;
	row->ierrors = st.ierrors;
	row->oerrors = st.oerrors;
	return 0;
}

void dp_port_print(const struct dp_ports *ps, const struct topo *t, FILE *out)
{
	struct dp_port_row r;

	if (ps->n == 0)
		return;
	fprintf(out, "\n%-20s %-12s %12s %12s %10s %10s %10s %10s %10s\n", "port", "host", "rx",
		"tx", "refused", "imissed", "rx_nombuf", "ierrors", "oerrors");
	for (uint32_t i = 0; dp_port_row(ps, t, i, &r) == 0; i++)
		fprintf(out,
			"%-20s %-12s %12" PRIu64 " %12" PRIu64 " %10" PRIu64 " %10" PRIu64
			" %10" PRIu64 " %10" PRIu64 " %10" PRIu64 "\n",
			r.name, r.host, r.rx, r.tx, r.refused, r.imissed, r.rx_nombuf, r.ierrors, r.oerrors);
}

void dp_port_close(struct dp_ports *ps)
{
	for (uint32_t i = 0; i < ps->n; i++) {
		rte_eth_tx_buffer_flush(ps->port_id[i], 0, ps->txb[i]);
		rte_eth_dev_stop(ps->port_id[i]);
		rte_eth_dev_close(ps->port_id[i]);
		rte_free(ps->txb[i]);
	}
	free(ps->host);
	free(ps->port_id);
	free(ps->txb);
	free(ps->tx_dropped);
	free(ps->by_host);
	free(ps->part_idx);
	free(ps->part_at);
	memset(ps, 0, sizeof(*ps));
}
