/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * swx_pipe: EAL for the SWX library, rocelab's in-memory ports, table
 * entries, and one frame at a time through a built pipeline.
 *
 * Frames travel in mbufs because the pipeline's drop port is DPDK's sink
 * (rte_swx_pipeline_build adds it), which frees what it is given with
 * rte_pktmbuf_free.
 */
#include "swx_load.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_swx_ctl.h>
#include <rte_swx_pipeline.h>

#include "swx_pipe_int.h"

#define SWX_RUN_BATCH 16 /* instructions run between two looks at whether the frame left */
#define SWX_POOL_MBUFS 63 /* frames in flight: one, plus clones from mirror (mempool: 2^n - 1) */

static int eal_started;
static char eal_dir[4096];

int swx_eal_init(uint32_t mem_mb, char *err, size_t errlen)
{
	char prefix[64], mem[32];

	if (eal_started)
		return 0;
	snprintf(prefix, sizeof(prefix), "--file-prefix=rocelab-p4-%d", (int)getpid());
	snprintf(mem, sizeof(mem), "-m%u", mem_mb ? mem_mb : SWX_EAL_MB);
	char *argv[] = {"rocelab-p4", "-l0", "--no-huge", mem, "--no-pci", "--no-shconf",
			"--no-telemetry", "--log-level=*:error", prefix, NULL};

	if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv) < 0) {
		snprintf(err, errlen, "EAL init failed: %s", rte_strerror(rte_errno));
		return -EIO;
	}
	eal_started = 1;
	snprintf(eal_dir, sizeof(eal_dir), "%s", rte_eal_get_runtime_dir());
	/*
	 * DPDK 22.11's rte_swx_pipeline_free logs "EAL: Error: Invalid memory"
	 * for a pipeline that built and freed correctly (a free of its own, seen
	 * with gdb); rocelab reports its own errors, so only critical ones show.
	 */
	rte_log_set_global_level(RTE_LOG_CRIT);
	return 0;
}

void swx_eal_fini(void)
{
	if (!eal_started)
		return;
	rte_eal_cleanup();
	/* --no-shconf leaves the runtime directory empty: remove it, it is this process's */
	rmdir(eal_dir);
	eal_started = 0;
}

/* ---- input port: hands the program the pushed frame ---- */

static void *in_create(void *args)
{
	return args; /* a swx_port_arg of the swx_pipe */
}

static void port_free(void *port)
{
	(void)port; /* ports live in the swx_pipe, which frees itself */
}

static int in_rx(void *port, struct rte_swx_pkt *pkt)
{
	struct swx_port_arg *ip = port;
	struct swx_pipe *sp = ip->sp;
	struct rte_mbuf *m = sp->pending;

	if (m == NULL || ip->id != sp->pending_port)
		return 0;
	sp->pending = NULL;
	pkt->handle = m;
	pkt->pkt = m->buf_addr;
	pkt->offset = m->data_off;
	pkt->length = m->pkt_len;
	return 1;
}

static void in_stats(void *port, struct rte_swx_port_in_stats *st)
{
	(void)port;
	memset(st, 0, sizeof(*st));
}

/* ---- output ports: copy the frame and its port into the result ---- */

static void *out_create(void *args)
{
	return args; /* a swx_port_arg of the swx_pipe */
}

static void out_copy(struct swx_port_arg *o, const struct rte_swx_pkt *pkt)
{
	struct swx_result *r = o->sp->res;

	if (r == NULL || r->sent)
		return; /* a mirror copy after the frame itself: the first one is reported */
	r->sent = 1;
	r->port = o->id;
	r->len = pkt->length < SWX_FRAME_MAX ? pkt->length : SWX_FRAME_MAX;
	memcpy(r->frame, pkt->pkt + pkt->offset, r->len);
}

static void out_tx(void *port, struct rte_swx_pkt *pkt)
{
	out_copy(port, pkt);
	rte_pktmbuf_free(pkt->handle);
}

static void out_fast_clone(void *port, struct rte_swx_pkt *pkt)
{
	out_copy(port, pkt); /* the program keeps the mbuf */
}

static void out_clone(void *port, struct rte_swx_pkt *pkt, uint32_t truncation)
{
	(void)truncation;
	out_copy(port, pkt);
}

static void out_flush(void *port)
{
	(void)port;
}

static void out_stats(void *port, struct rte_swx_port_out_stats *st)
{
	(void)port;
	memset(st, 0, sizeof(*st));
}

int swx_pipe_ports(struct swx_pipe *sp, uint32_t n_ports_in, uint32_t n_ports_out)
{
	static struct rte_swx_port_in_ops in_ops = {in_create, port_free, in_rx, in_stats};
	static struct rte_swx_port_out_ops out_ops = {
		out_create, port_free, out_tx, out_fast_clone, out_clone, out_flush, out_stats,
	};
	int rc = rte_swx_pipeline_port_in_type_register(sp->p, "rl_in", &in_ops);

	if (rc == 0)
		rc = rte_swx_pipeline_port_out_type_register(sp->p, "rl_out", &out_ops);
	sp->n_ports_in = n_ports_in;
	for (uint32_t i = 0; rc == 0 && i < n_ports_in; i++) {
		sp->ins[i] = (struct swx_port_arg){sp, i};
		rc = rte_swx_pipeline_port_in_config(sp->p, i, "rl_in", &sp->ins[i]);
	}
	for (uint32_t i = 0; rc == 0 && i < n_ports_out; i++) {
		sp->outs[i] = (struct swx_port_arg){sp, i};
		rc = rte_swx_pipeline_port_out_config(sp->p, i, "rl_out", &sp->outs[i]);
	}
	if (rc == 0) {
		char name[RTE_MEMPOOL_NAMESIZE];
		static unsigned int seq;

		snprintf(name, sizeof(name), "swx%u", seq++);
		sp->pool = rte_pktmbuf_pool_create(name, SWX_POOL_MBUFS, 0, 0,
						   RTE_PKTMBUF_HEADROOM + SWX_FRAME_MAX, SOCKET_ID_ANY);
		rc = sp->pool ? 0 : -ENOMEM;
	}
	return rc;
}

int swx_pipe_entry_add(struct swx_pipe *sp, const char *table, const char *entry, char *err,
		       size_t errlen)
{
	int blank = 0, dflt = strncmp(entry, "default ", 8) == 0;
	struct rte_swx_table_entry *e = rte_swx_ctl_pipeline_table_entry_read(sp->ctl, table,
									     entry + (dflt ? 8 : 0),
									     &blank);

	if (e == NULL) {
		snprintf(err, errlen, blank ? "table %s: an empty entry" :
			 "table %s: DPDK cannot read the entry '%s' (no such table, action or field?)",
			 table, entry);
		return -EINVAL;
	}
	int rc = dflt ? rte_swx_ctl_pipeline_table_default_entry_add(sp->ctl, table, e) :
			rte_swx_ctl_pipeline_table_entry_add(sp->ctl, table, e);

	/* the control copies what it keeps; 22.11 has no public free for a read entry */
	free(e->key);
	free(e->key_mask);
	free(e->action_data);
	free(e);
	if (rc)
		snprintf(err, errlen, "table %s: DPDK refused the entry '%s' (%s)", table, entry,
			 strerror(-rc));
	return rc ? -EINVAL : 0;
}

int swx_pipe_commit(struct swx_pipe *sp, char *err, size_t errlen)
{
	int rc = rte_swx_ctl_pipeline_commit(sp->ctl, 1);

	if (rc)
		snprintf(err, errlen, "DPDK refused to commit the table entries (%s)", strerror(-rc));
	return rc ? -EINVAL : 0;
}

int swx_pipe_entry(struct swx_pipe *sp, const char *table, const char *entry, char *err,
		   size_t errlen)
{
	int rc = swx_pipe_entry_add(sp, table, entry, err, errlen);

	return rc ? rc : swx_pipe_commit(sp, err, errlen);
}

int swx_pipe_push(struct swx_pipe *sp, const uint8_t *frame, uint32_t len, struct swx_result *r)
{
	return swx_pipe_push_port(sp, 0, frame, len, r);
}

int swx_pipe_push_port(struct swx_pipe *sp, uint32_t in_port, const uint8_t *frame, uint32_t len,
		       struct swx_result *r)
{
	if (len == 0 || len > SWX_FRAME_MAX || in_port >= sp->n_ports_in)
		return -EINVAL;
	struct rte_mbuf *m = rte_pktmbuf_alloc(sp->pool);

	if (m == NULL)
		return -ENOMEM;
	memcpy(rte_pktmbuf_append(m, (uint16_t)len), frame, len);
	r->sent = 0;
	r->len = 0;
	sp->res = r;
	sp->pending = m;
	sp->pending_port = in_port;
	/*
	 * One instruction at a time until the mbuf is back in the pool: our
	 * output port or DPDK's drop port freed it, so the frame has left. (The
	 * program's rx hands over to the pipeline's next thread, so an empty rx
	 * poll does not mean this frame is done.) SWX_RUN_BATCH instructions
	 * between looks: those run after the frame left are rx polls that find
	 * nothing, and a look per instruction cost more than the instruction.
	 */
	for (uint32_t i = 0; i < SWX_RUN_STEPS_MAX; i += SWX_RUN_BATCH) {
		rte_swx_pipeline_run(sp->p, SWX_RUN_BATCH);
		if (sp->pending == NULL && rte_mempool_avail_count(sp->pool) == SWX_POOL_MBUFS) {
			sp->res = NULL;
			return 0;
		}
	}
	sp->res = NULL;
	return -ELOOP;
}

void swx_pipe_free(struct swx_pipe *sp)
{
	if (sp == NULL)
		return;
	if (sp->ctl)
		rte_swx_ctl_pipeline_free(sp->ctl);
	if (sp->p)
		rte_swx_pipeline_free(sp->p);
	rte_pktmbuf_free(sp->pending);
	rte_mempool_free(sp->pool);
	free(sp);
}
