/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * How fast the collective engine + NIC model + test switch simulate:
 * simulated frames (data + ACK + CTS) per wall second, on one core.
 * Usage: bench_ne_coll [ranks] [qps] [MiB] [rr|split] [alltoall]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ne_coll.h"
#include "ne_fab.h"

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	struct ne_coll_config c;
	struct ne_coll_result r;
	struct fab f;
	char hdr[256], line[256];
	double t0, t1;
	bool ok;

	ne_coll_config_default(&c);
	c.nranks = argc > 1 ? (uint32_t)atoi(argv[1]) : 8;
	c.qps_per_conn = argc > 2 ? (uint32_t)atoi(argv[2]) : 16;
	c.bytes = (argc > 3 ? (uint64_t)atoi(argv[3]) : 64) << 20;
	c.qp_mode = argc > 4 && !strcmp(argv[4], "split") ? NE_COLL_QP_SPLIT : NE_COLL_QP_RR;
	c.op = argc > 5 && !strcmp(argv[5], "alltoall") ? NE_COLL_ALLTOALL : NE_COLL_ALLREDUCE;
	c.channels = 2;
	c.window = 4;
	c.chunk_bytes = 128 << 10;
	c.data = false;
	fab_init(&f, &c, 100000000000ull, 1000);
	if (getenv("ICRC_OFF")) { /* NICs skip the ICRC: rebuild them */
		for (uint32_t i = 0; i < c.nranks; i++) {
			struct ne_nic_config nc;

			ne_nic_destroy(f.nic[i]);
			ne_coll_nic_config(&c, i, 100000000000ull, &nc);
			nc.icrc_off = true;
			f.nic[i] = ne_nic_create(&nc);
		}
	}
	f.keep_log = false;
	f.verify_icrc = false;
	if (!fab_coll(&f, &c)) {
		fprintf(stderr, "create failed\n");
		return 1;
	}
	ne_coll_start(f.coll, 0);
	t0 = wall();
	ok = fab_run(&f, UINT64_MAX - 1);
	t1 = wall();
	if (!ok || ne_coll_get_result(f.coll, &r)) {
		fprintf(stderr, "run failed\n");
		return 1;
	}
	ne_coll_format_header(hdr, sizeof(hdr));
	ne_coll_format_result(&r, NULL, line, sizeof(line));
	printf("%s %u ranks, %u QPs/conn %s, 2 channels, window 4, 128 KiB chunks, 100G\n%s%s",
	       ne_coll_op_name(c.op), c.nranks, c.qps_per_conn, ne_coll_qp_mode_name(c.qp_mode), hdr,
	       line);
	printf("simulated %.3f ms in %.3f s wall: %llu frames, %.2f M frames/s, %llu loop steps\n",
	       f.now / 1e6, t1 - t0, (unsigned long long)f.frames, f.frames / (t1 - t0) / 1e6,
	       (unsigned long long)f.loops);
	fab_free(&f);
	return 0;
}
