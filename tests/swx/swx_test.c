/* SPDX-License-Identifier: BSD-3-Clause */
#include "swx_test.h"

#include <stdio.h>

#include "swx_load.h"
#include "swx_spec.h"

int swx_test_eal_up(void **state)
{
	char err[SWX_ERR_MAX];

	(void)state;
	if (swx_eal_init(64, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	return 0;
}

int swx_test_eal_down(void **state)
{
	(void)state;
	swx_eal_fini();
	return 0;
}
