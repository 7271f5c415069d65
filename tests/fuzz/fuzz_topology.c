/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the topology loader: any byte string as a YAML
 * topology (topo_load_string). It must be refused with a message or
 * loaded into a consistent topology, never crash or leak.
 * Built with -Dfuzz=true under clang; run by scripts/fuzz.sh.
 */
#include <stdlib.h>
#include <string.h>

#include "topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What a loaded topology promises: names resolve to their own index, hosts sit on leaves. */
static void check(const struct topo *t)
{
	char s[256];

	topo_summary(t, s, sizeof(s));
	for (uint32_t i = 0; i < t->n_switches; i++)
		if (topo_switch_by_name(t, t->switches[i].name) != (int)i)
			abort();
	for (uint32_t i = 0; i < t->n_hosts; i++) {
		if (topo_host_by_name(t, t->hosts[i].name) != (int)i)
			abort();
		if (t->hosts[i].leaf >= t->n_switches)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size copy, so AddressSanitizer catches a read one past the end. */
	char *yaml = malloc(size ? size : 1);
	char err[512];
	struct topo *t = NULL;

	memcpy(yaml, data, size);
	err[0] = '\0';
	if (topo_load_string(yaml, size, "fuzz.yaml", &t, err, sizeof(err)) == 0) {
		if (t == NULL)
			abort();
		check(t);
	} else if (t != NULL || err[0] == '\0' || memchr(err, '\0', sizeof(err)) == NULL) {
		abort(); /* a refusal has a message and no topology */
	}
	topo_free(t);
	free(yaml);
	return 0;
}
