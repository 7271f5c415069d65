/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory regions (rxe_mr.c's role): registration and the key and bounds
 * checks the requester and the responder make before touching memory.
 */
#include <errno.h>
#include <string.h>

#include "ne_mem.h"
#include "ne_priv.h"

struct ne_mr *ne_mr_lookup(struct ne_nic *nic, uint32_t key)
{
	for (uint32_t i = 0; i < nic->cfg.max_mrs; i++)
		if (nic->mrs[i].used && nic->mrs[i].key == key)
			return &nic->mrs[i];
	return NULL;
}

uint8_t *ne_mr_ptr(struct ne_nic *nic, uint32_t key, uint64_t iova, uint32_t len, uint32_t access)
{
	struct ne_mr *mr = ne_mr_lookup(nic, key);

	if (!mr || (mr->access & access) != access)
		return NULL;
	if (iova < mr->iova || iova - mr->iova > mr->len || len > mr->len - (iova - mr->iova))
		return NULL;
	return mr->addr + (iova - mr->iova);
}

/* Index into nic->held_keys of key, or nheld_keys when it is not held. */
static uint32_t key_held_at(const struct ne_nic *nic, uint32_t key)
{
	uint32_t i = 0;

	while (i < nic->nheld_keys && nic->held_keys[i] != key)
		i++;
	return i;
}

/* The next key not in use (0 skipped). */
static uint32_t key_next(struct ne_nic *nic)
{
	uint32_t k;

	do {
		k = nic->next_key++;
		if (k == 0)
			k = nic->next_key++;
	} while (ne_mr_lookup(nic, k) || key_held_at(nic, k) < nic->nheld_keys);
	return k;
}

int ne_mr_hold(struct ne_nic *nic, uint32_t *key)
{
	if (!nic || !key)
		return -EINVAL;
	uint32_t k = key_next(nic);

	if (ne_u32_push(&nic->held_keys, &nic->nheld_keys, &nic->held_keys_cap, k))
		return -ENOMEM;
	*key = k;
	return 0;
}

int ne_mr_reg(struct ne_nic *nic, const struct ne_mr_attr *attr, uint32_t *key)
{
	struct ne_mr *slot = NULL;
	uint32_t k;

	if (!nic || !attr || !key || !attr->addr || attr->len == 0 ||
	    (attr->access & ~(uint32_t)(NE_ACCESS_LOCAL_WRITE | NE_ACCESS_REMOTE_WRITE |
					NE_ACCESS_REMOTE_READ)))
		return -EINVAL;
	if (attr->iova + attr->len < attr->iova)
		return -EINVAL;
	for (uint32_t i = 0; i < nic->cfg.max_mrs; i++)
		if (!nic->mrs[i].used) {
			slot = &nic->mrs[i];
			break;
		}
	if (!slot)
		return -ENOMEM;
	if (attr->key) {
		if (ne_mr_lookup(nic, attr->key) || key_held_at(nic, attr->key) < nic->nheld_keys)
			return -EEXIST;
		k = attr->key;
	} else {
		k = key_next(nic);
	}
	slot->used = true;
	slot->key = k;
	slot->addr = attr->addr;
	slot->len = attr->len;
	slot->iova = attr->iova;
	slot->access = attr->access;
	*key = k;
	return 0;
}

int ne_mr_dereg(struct ne_nic *nic, uint32_t key)
{
	struct ne_mr *mr = ne_mr_lookup(nic, key);

	if (!mr) {
		uint32_t h = key_held_at(nic, key);

		if (h == nic->nheld_keys)
			return -ENOENT;
		nic->held_keys[h] = nic->held_keys[--nic->nheld_keys]; /* (a held key: ne_mr_hold) */
		return 0;
	}
	memset(mr, 0, sizeof(*mr));
	return 0;
}
