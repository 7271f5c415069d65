/* SPDX-License-Identifier: BSD-3-Clause */
#include "dp_eal.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>

int dp_eal_add(struct dp_eal *e, const char *arg)
{
	if (e->argc >= DP_EAL_ARGS_MAX)
		return -E2BIG;
	e->argv[e->argc] = strdup(arg);
	if (e->argv[e->argc] == NULL)
		return -ENOMEM;
	e->argc++;
	return 0;
}

int dp_eal_set_prefix(struct dp_eal *e, const char *prefix)
{
	char arg[DP_EAL_PATH_MAX + 16];

	if (strlen(prefix) >= sizeof(e->prefix))
		return -ENAMETOOLONG;
	snprintf(e->prefix, sizeof(e->prefix), "%s", prefix);
	snprintf(arg, sizeof(arg), "--file-prefix=%s", prefix);
	return dp_eal_add(e, arg);
}

int dp_eal_runtime_dir(const char *prefix, char *buf, size_t len)
{
	const char *base = "/var/run";
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (getuid() != 0)
		base = xdg ? xdg : "/tmp";
	int n = snprintf(buf, len, "%s/dpdk/%s", base, prefix);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int dp_eal_start(struct dp_eal *e, char *err, size_t errlen)
{
	struct stat st;

	if (e->prefix[0] && dp_eal_runtime_dir(e->prefix, e->runtime_dir, sizeof(e->runtime_dir)) == 0)
		e->dir_ours = stat(e->runtime_dir, &st) != 0;
	/* rte_eal_init() permutes argv: hand it a copy of the array, keep ours to free */
	memcpy(e->perm, e->argv, (size_t)e->argc * sizeof(*e->argv));
	if (rte_eal_init(e->argc, e->perm) < 0) {
		/* EAL printed why; rte_errno is not always set (then "Success") */
		snprintf(err, errlen, "EAL init failed%s%s", rte_errno ? ": " : " (see EAL's message above)",
			 rte_errno ? rte_strerror(rte_errno) : "");
		return -EIO;
	}
	e->started = true;
	e->dir_ours = true; /* EAL holds the prefix's lock: the directory is ours */
	snprintf(e->runtime_dir, sizeof(e->runtime_dir), "%s", rte_eal_get_runtime_dir());
	return 0;
}

int dp_eal_remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[DP_EAL_PATH_MAX * 2];
	int rc = 0;

	if (d == NULL)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (unlink(path) < 0 && errno != ENOENT && rc == 0)
			rc = -errno;
	}
	closedir(d);
	if (rmdir(dir) < 0 && errno != ENOENT && rc == 0)
		rc = -errno;
	return rc;
}

void dp_eal_stop(struct dp_eal *e)
{
	if (e->started)
		rte_eal_cleanup();
	if (e->dir_ours && e->runtime_dir[0]) {
		int rc = dp_eal_remove_dir(e->runtime_dir);
		if (rc < 0)
			fprintf(stderr, "rocelab: cannot remove %s: %s\n", e->runtime_dir, strerror(-rc));
	}
	for (int i = 0; i < e->argc; i++)
		free(e->argv[i]);
	e->argc = 0;
	e->started = false;
	e->dir_ours = false;
}
