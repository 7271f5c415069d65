/* SPDX-License-Identifier: BSD-3-Clause */
/* swx_pipe_int: the pipeline's state, shared by swx_load.c and swx_pipe.c only. */
#ifndef SWX_PIPE_INT_H
#define SWX_PIPE_INT_H

#include <stdint.h>

#include "swx_load.h"

struct rte_mbuf;
struct rte_mempool;
struct rte_swx_pipeline;
struct rte_swx_ctl_pipeline;

/* A port's create() argument: its pipe and number. */
struct swx_port_arg {
	struct swx_pipe *sp;
	uint32_t id;
};

struct swx_pipe {
	struct rte_swx_pipeline *p;
	struct rte_swx_ctl_pipeline *ctl;
	struct rte_mempool *pool;
	struct rte_mbuf *pending;   /* the pushed frame, until the program's rx takes it */
	uint32_t pending_port;      /* the input port it arrives on */
	uint32_t n_ports_in;        /* a power of two (DPDK polls them in turn) */
	struct swx_port_arg ins[SWX_PORTS_IN_MAX];
	struct swx_result *res;     /* where the output port copies the frame */
	struct swx_port_arg outs[SWX_PORTS_OUT_MAX];
};

/*
 * Registers rocelab's in-memory port types ("rl_in", "rl_out") and configures
 * n_ports_in (a power of two) input and n_ports_out output ports.
 */
int swx_pipe_ports(struct swx_pipe *sp, uint32_t n_ports_in, uint32_t n_ports_out);

#endif /* SWX_PIPE_INT_H */
