/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_eal: start and stop DPDK's EAL so that a program leaves nothing behind.
 *
 * rte_eal_cleanup() releases memory but keeps the runtime directory
 * (/var/run/dpdk/PREFIX as root: config, fbarray_*, mp_socket*,
 * dpdk_telemetry.v2; about 6 MB with --no-huge). dp_eal_stop() removes it
 * after the cleanup. A directory that existed before our rte_eal_init() is
 * left alone when the init fails: it may belong to a live process with the
 * same prefix (EAL then refuses to start, and that process still needs it).
 *
 * Usage: dp_eal_add() each argument (argv[0] first), dp_eal_start(), ...,
 * dp_eal_stop() on every path out (also when dp_eal_start() failed).
 */
#ifndef DP_EAL_H
#define DP_EAL_H

#include <stdbool.h>
#include <stddef.h>

#define DP_EAL_ARGS_MAX 256
#define DP_EAL_PATH_MAX 512

struct dp_eal {
	char *argv[DP_EAL_ARGS_MAX]; /* our strdup()s, freed by dp_eal_stop() */
	char *perm[DP_EAL_ARGS_MAX]; /* the copy handed to EAL, which permutes it */
	int argc;
	bool started;                /* rte_eal_init() succeeded */
	bool dir_ours;               /* the runtime directory did not exist before */
	char prefix[DP_EAL_PATH_MAX];
	char runtime_dir[DP_EAL_PATH_MAX];
};

/* Append a copy of arg to the EAL arguments. Returns 0, -E2BIG when full, -ENOMEM. */
int dp_eal_add(struct dp_eal *e, const char *arg);

/*
 * Append "--file-prefix=PREFIX" and remember PREFIX (the runtime directory's
 * name). Returns 0 or a dp_eal_add() error, -ENAMETOOLONG for a long prefix.
 */
int dp_eal_set_prefix(struct dp_eal *e, const char *prefix);

/* rte_eal_init() on the arguments. Returns 0, or -EIO with a message in err. */
int dp_eal_start(struct dp_eal *e, char *err, size_t errlen);

/*
 * rte_eal_cleanup() if the EAL started, then remove the runtime directory
 * (when we own it) and free the arguments. Safe to call on every path, once.
 */
void dp_eal_stop(struct dp_eal *e);

/*
 * The runtime directory EAL uses for prefix as this user (the rule of DPDK
 * 22.11's eal_create_runtime_dir(): /var/run/dpdk for root, else
 * $XDG_RUNTIME_DIR/dpdk or /tmp/dpdk). Returns 0, -ENAMETOOLONG.
 */
int dp_eal_runtime_dir(const char *prefix, char *buf, size_t len);

/*
 * Remove dir's entries (files and sockets, not subdirectories: EAL makes
 * none) and dir itself. No DPDK needed. Returns 0 (also when dir is gone
 * already), or a negative errno of the first failure.
 */
int dp_eal_remove_dir(const char *dir);

#endif /* DP_EAL_H */
