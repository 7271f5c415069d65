/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wl_err: the one error message a workload reader or check leaves behind.
 * Every message starts with where the fault is: FILE:LINE for text files,
 * FILE: node ID for traces and graphs.
 */
#ifndef WL_ERR_H
#define WL_ERR_H

#define WL_ERR_LEN 512

struct wl_err {
	char msg[WL_ERR_LEN];
};

/* Formats the message into err (when err is not NULL). Returns -1, so a
 * caller can write `return wl_err_set(err, ...)`. */
int wl_err_set(struct wl_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
