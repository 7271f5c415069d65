/* SPDX-License-Identifier: BSD-3-Clause */
/* swx_test: what the swx tests that start EAL share. */
#ifndef SWX_TEST_H
#define SWX_TEST_H

/* cmocka group setup: EAL with 64 MB (the programs tested have small tables); -1 if it fails. */
int swx_test_eal_up(void **state);
/* cmocka group teardown: EAL stopped. */
int swx_test_eal_down(void **state);

#endif /* SWX_TEST_H */
