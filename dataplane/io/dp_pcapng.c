/* SPDX-License-Identifier: BSD-3-Clause */
#include "dp_pcapng.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* block types and option codes (draft-ietf-opsawg-pcapng, sections 4 and 3.5) */
#define BT_SHB 0x0A0D0D0Au
#define BT_IDB 0x00000001u
#define BT_EPB 0x00000006u
#define BYTE_ORDER_MAGIC 0x1A2B3C4Du
#define OPT_END 0
#define OPT_SHB_USERAPPL 4
#define OPT_IF_NAME 2
#define OPT_IF_DESCRIPTION 3
#define OPT_IF_TSRESOL 9
#define OPT_EPB_FLAGS 2
#define LINKTYPE_ETHERNET 1

struct dp_pcapng {
	FILE *f;
	uint32_t n_if;
	bool packets;   /* a packet was written: no more interfaces */
	bool failed;    /* a write failed */
};

static uint32_t pad4(size_t n)
{
	return (uint32_t)((n + 3) & ~(size_t)3);
}

static void put(struct dp_pcapng *w, const void *p, size_t n)
{
	static const uint8_t zeros[4];

	if (n && fwrite(p, 1, n, w->f) != n)
		w->failed = true;
	if (pad4(n) != n && fwrite(zeros, 1, pad4(n) - n, w->f) != pad4(n) - n)
		w->failed = true;
}

static void put32(struct dp_pcapng *w, uint32_t v)
{
	put(w, &v, 4);
}

/* An option: code, length, the value padded to 32 bits. */
static void put_opt(struct dp_pcapng *w, uint16_t code, const void *v, uint16_t len)
{
	uint16_t h[2] = {code, len};

	put(w, h, sizeof(h));
	put(w, v, len);
}

/* The bytes an option of len bytes takes. */
static uint32_t opt_size(size_t len)
{
	return 4 + pad4(len);
}

/* Option strings are cut to what the 16-bit length holds. */
static uint16_t str_len(const char *s)
{
	size_t n = strlen(s);
	return n > 0xfff0 ? 0xfff0 : (uint16_t)n;
}

struct dp_pcapng *dp_pcapng_open(const char *path, const char *appname, char *err, size_t errlen)
{
	struct dp_pcapng *w = calloc(1, sizeof(*w));

	if (w == NULL || (w->f = fopen(path, "wb")) == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(w ? errno : ENOMEM));
		free(w);
		return NULL;
	}
	uint16_t alen = str_len(appname);
	/* type, length, magic, version, section length; options; length */
	uint32_t total = 4 + 4 + 4 + 4 + 8 + opt_size(alen) + opt_size(0) + 4;
	uint16_t version[2] = {1, 0};
	int64_t section_len = -1; /* not given: the writer does not go back */

	put32(w, BT_SHB);
	put32(w, total);
	put32(w, BYTE_ORDER_MAGIC);
	put(w, version, sizeof(version));
	put(w, &section_len, sizeof(section_len));
	put_opt(w, OPT_SHB_USERAPPL, appname, alen);
	put_opt(w, OPT_END, NULL, 0);
	put32(w, total);
	if (w->failed) {
		snprintf(err, errlen, "%s: write failed", path);
		fclose(w->f);
		free(w);
		return NULL;
	}
	return w;
}

int dp_pcapng_add_interface(struct dp_pcapng *w, const char *name, const char *descr,
			    uint32_t snaplen)
{
	if (w->packets)
		return -EINVAL;
	uint16_t nlen = str_len(name), dlen = descr ? str_len(descr) : 0;
	uint8_t tsresol = 9; /* 10^-9 s */
	uint32_t total = 4 + 4 + 2 + 2 + 4 + opt_size(nlen) + (descr ? opt_size(dlen) : 0) +
			 opt_size(1) + opt_size(0) + 4;
	uint16_t link[2] = {LINKTYPE_ETHERNET, 0};

	put32(w, BT_IDB);
	put32(w, total);
	put(w, link, sizeof(link));
	put32(w, snaplen);
	put_opt(w, OPT_IF_NAME, name, nlen);
	if (descr)
		put_opt(w, OPT_IF_DESCRIPTION, descr, dlen);
	put_opt(w, OPT_IF_TSRESOL, &tsresol, 1);
	put_opt(w, OPT_END, NULL, 0);
	put32(w, total);
	return w->failed ? -EIO : (int)w->n_if++;
}

int dp_pcapng_write(struct dp_pcapng *w, uint32_t ifid, uint64_t ts_ns, const void *data,
		    uint32_t caplen, uint32_t len, enum dp_pcapng_dir dir)
{
	uint32_t flags = (uint32_t)dir;
	/* type, length, interface, timestamp (2), captured and original length */
	uint32_t head[7] = {BT_EPB, 0, ifid, (uint32_t)(ts_ns >> 32), (uint32_t)ts_ns, caplen, len};

	head[1] = (uint32_t)sizeof(head) + pad4(caplen) + opt_size(4) + opt_size(0) + 4;
	w->packets = true;
	put(w, head, sizeof(head));
	put(w, data, caplen);
	put_opt(w, OPT_EPB_FLAGS, &flags, 4);
	put_opt(w, OPT_END, NULL, 0);
	put32(w, head[1]);
	return w->failed ? -EIO : 0;
}

int dp_pcapng_close(struct dp_pcapng *w)
{
	if (w == NULL)
		return 0;
	bool failed = w->failed || fflush(w->f) != 0 || ferror(w->f);
	if (fclose(w->f) != 0)
		failed = true;
	free(w);
	return failed ? -EIO : 0;
}
