/* SPDX-License-Identifier: BSD-3-Clause */
#include "ne_peer.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NE_PEER_LID_MAX 0xFFFFu
#define NE_PEER_24BIT_MAX 0xFFFFFFu
#define NE_PEER_GID_HEX 32

void ne_peer_format(const struct ne_peer_dest *d, char msg[NE_PEER_MSG_LEN])
{
	char g[NE_PEER_GID_HEX + 1];

	for (int i = 0; i < 16; i++)
		snprintf(g + 2 * i, 3, "%02x", d->gid[i]);
	memset(msg, 0, NE_PEER_MSG_LEN);
	snprintf(msg, NE_PEER_MSG_LEN, "%04x:%06x:%06x:%s", d->lid & NE_PEER_LID_MAX,
		 d->qpn & NE_PEER_24BIT_MAX, d->psn & NE_PEER_24BIT_MAX, g);
}

/*
 * One hex field of at most max_digits digits ending at sep ('\0': end of
 * string) at *p; advances *p past sep. False when empty, too long or not hex.
 */
static bool hex_field(const char **p, int max_digits, char sep, uint32_t *out)
{
	const char *s = *p;
	uint32_t v = 0;
	int n = 0;

	for (; isxdigit((unsigned char)*s); s++, n++) {
		if (n == max_digits)
			return false;
		v = v << 4 | (uint32_t)(isdigit((unsigned char)*s) ? *s - '0' : (tolower((unsigned char)*s) - 'a' + 10));
	}
	if (n == 0 || *s != sep)
		return false;
	*out = v;
	*p = sep ? s + 1 : s;
	return true;
}

int ne_peer_parse(const char *msg, size_t len, struct ne_peer_dest *d)
{
	char buf[NE_PEER_MSG_LEN];
	const char *p = buf;
	uint32_t byte;

	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	memcpy(buf, msg, len);
	buf[len] = '\0';
	/* ibv_rc_pingpong prints the LID with %04x, QPN and PSN with %06x: no wider */
	if (!hex_field(&p, 4, ':', &d->lid) || !hex_field(&p, 6, ':', &d->qpn) ||
	    !hex_field(&p, 6, ':', &d->psn) || strlen(p) != NE_PEER_GID_HEX)
		return -EINVAL;
	for (int i = 0; i < 16; i++) {
		char two[3] = {p[2 * i], p[2 * i + 1], '\0'};
		const char *q = two;
		if (!hex_field(&q, 2, '\0', &byte))
			return -EINVAL;
		d->gid[i] = (uint8_t)byte;
	}
	return 0;
}
