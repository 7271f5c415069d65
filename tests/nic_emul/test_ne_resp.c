/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The responder's chain of checks (ne_resp.c), one exit at a time: each
 * test hands ne_resp_rx() one request and asserts what IBA and rxe say the
 * responder does: the return value, the counter, the answer it queues
 * (ACK, PSN sequence NAK, RNR NAK, class C NAK with its syndrome), the
 * receive completion, the QP state. White box: it includes ne_priv.h to
 * reach the responder and its output queue directly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ne_priv.h"

#define MTU         1024
#define FIRST_PSN   100
#define RNR_TIMER   5
#define MEM_SIZE    8192
#define WRITE_IOVA  0x10000u
#define WRITE_KEY   0x100u
#define BAD_KEY     0x999u
#define PAYLOAD_OFF 64

struct fix {
	struct ne_nic *nic;
	struct ne_cq *cq;
	struct ne_qp *qp;
	uint32_t qpn;
	uint8_t mem[MEM_SIZE];
	uint8_t frame[PAYLOAD_OFF + 2 * MTU];
};

static int setup(void **state)
{
	static struct fix f;
	struct ne_nic_config cfg;
	struct ne_qp_init_attr ia = {0};
	struct ne_qp_attr a = {0};
	struct ne_mr_attr m = {f.mem, MEM_SIZE, WRITE_IOVA,
			       NE_ACCESS_LOCAL_WRITE | NE_ACCESS_REMOTE_WRITE, WRITE_KEY};
	uint32_t key;

	memset(&f, 0, sizeof(f));
	ne_nic_config_default(&cfg);
	f.nic = ne_nic_create(&cfg);
	assert_non_null(f.nic);
	f.cq = ne_cq_create(f.nic, 64);
	ia.send_cq = ia.recv_cq = f.cq;
	ia.max_send_wr = ia.max_recv_wr = 8;
	assert_int_equal(ne_qp_create(f.nic, &ia, &f.qpn), 0);
	a.state = NE_QPS_INIT;
	assert_int_equal(ne_qp_modify(f.nic, f.qpn, &a, NE_QP_STATE), 0);
	a.state = NE_QPS_RTR;
	a.dest_qpn = 7;
	a.rq_psn = FIRST_PSN;
	a.path_mtu = MTU;
	a.dest_ipv4 = 0x0A000002u;
	a.min_rnr_timer = RNR_TIMER;
	assert_int_equal(ne_qp_modify(f.nic, f.qpn, &a,
				      NE_QP_STATE | NE_QP_AV | NE_QP_PATH_MTU | NE_QP_DEST_QPN |
					      NE_QP_RQ_PSN | NE_QP_MIN_RNR_TIMER),
			 0);
	assert_int_equal(ne_mr_reg(f.nic, &m, &key), 0);
	f.qp = ne_qp_lookup(f.nic, f.qpn);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fix *f = *state;

	ne_nic_destroy(f->nic);
	return 0;
}

/* Hand one request to the responder; payload bytes are 0xAB. */
static int rx(struct fix *f, uint8_t op, uint32_t psn, uint32_t pl, bool ackreq,
	      const struct rl_bth_info *reth)
{
	struct rl_pkt p;

	memset(&p, 0, sizeof(p));
	if (reth)
		p.bth = *reth;
	p.bth.opcode = op;
	p.bth.psn = psn;
	p.bth.ackreq = ackreq;
	p.payload_off = PAYLOAD_OFF;
	p.payload_len = pl;
	memset(f->frame + PAYLOAD_OFF, 0xAB, pl);
	return ne_resp_rx(f->nic, f->qp, f->frame, &p, 0);
}

static void post_recv(struct fix *f, uint32_t len)
{
	struct ne_recv_wr w = {.wr_id = 42, .addr = WRITE_IOVA, .length = len, .lkey = WRITE_KEY};

	assert_int_equal(ne_post_recv(f->nic, f->qpn, &w), 0);
}

static uint32_t queued(const struct fix *f)
{
	return f->qp->resp.rsp_tail - f->qp->resp.rsp_head;
}

/* The newest answer queued: an ACK/NAK with this syndrome naming this PSN. */
static void assert_answer(const struct fix *f, uint8_t syndrome, uint32_t psn)
{
	const struct ne_rsp_item *it = &f->qp->resp.rsp[(f->qp->resp.rsp_tail - 1) % f->qp->resp.rsp_size];

	assert_true(queued(f) > 0);
	assert_int_equal(it->kind, NE_RSP_ACK);
	assert_int_equal(it->syndrome, syndrome);
	assert_int_equal(it->psn, psn);
}

static void assert_class_c(const struct fix *f, int rc, uint8_t syndrome)
{
	assert_int_equal(rc, NE_RX_PROTOCOL);
	assert_answer(f, syndrome, FIRST_PSN);
	assert_int_equal(f->qp->state, NE_QPS_ERROR);
}

static struct ne_counters counters(const struct fix *f)
{
	struct ne_counters c;

	ne_nic_get_counters(f->nic, &c);
	return c;
}

/* check_psn + acknowledge: SEND_FIRST/SEND_LAST in order place the data,
 * complete the receive WQE and ACK the PSN that asked for it. */
static void test_send_in_order(void **state)
{
	struct fix *f = *state;
	struct ne_wc wc;

	post_recv(f, 2 * MTU);
	assert_int_equal(rx(f, RL_OP_SEND_FIRST, FIRST_PSN, MTU, false, NULL), NE_RX_OK);
	assert_int_equal(queued(f), 0);
	assert_int_equal(rx(f, RL_OP_SEND_LAST, FIRST_PSN + 1, 10, true, NULL), NE_RX_OK);
	assert_answer(f, NE_AETH_ACK_UNLIMITED, FIRST_PSN + 1);
	assert_int_equal(ne_cq_poll(f->cq, &wc, 1), 1);
	assert_int_equal(wc.status, NE_WC_SUCCESS);
	assert_int_equal(wc.byte_len, MTU + 10);
	assert_int_equal(f->mem[MTU + 9], 0xAB);
	assert_int_equal(f->mem[MTU + 10], 0);
}

/* check_psn: a gap gets one PSN sequence NAK naming the expected PSN, the
 * next gap packet is dropped silently. */
static void test_psn_gap(void **state)
{
	struct fix *f = *state;

	assert_int_equal(rx(f, RL_OP_SEND_ONLY, FIRST_PSN + 2, 0, true, NULL), NE_RX_PSN_DROP);
	assert_answer(f, NE_AETH_NAK_PSN_SEQ, FIRST_PSN);
	assert_int_equal(rx(f, RL_OP_SEND_ONLY, FIRST_PSN + 3, 0, true, NULL), NE_RX_PSN_DROP);
	assert_int_equal(queued(f), 1);
	assert_int_equal(counters(f).out_of_seq_request, 1);
}

/* check_psn: a duplicate SEND is acknowledged again with the last accepted PSN. */
static void test_duplicate(void **state)
{
	struct fix *f = *state;

	post_recv(f, MTU);
	assert_int_equal(rx(f, RL_OP_SEND_ONLY, FIRST_PSN, 1, false, NULL), NE_RX_OK);
	assert_int_equal(rx(f, RL_OP_SEND_ONLY, FIRST_PSN, 1, true, NULL), NE_RX_OK);
	assert_answer(f, NE_AETH_ACK_UNLIMITED, FIRST_PSN);
	assert_int_equal(counters(f).duplicate_request, 1);
}

/* check_op_valid: an atomic (not implemented) is dropped without NAK. */
static void test_bad_opcode(void **state)
{
	struct fix *f = *state;

	assert_int_equal(rx(f, RL_OP_CMP_SWAP, FIRST_PSN, 0, true, NULL), NE_RX_BAD_OPCODE);
	assert_int_equal(queued(f), 0);
	assert_int_equal(counters(f).rcv_bad_opcode, 1);
	assert_int_equal(f->qp->state, NE_QPS_RTR);
}

/* check_op_seq: a SEND_MIDDLE with no SEND in progress is class C. */
static void test_op_seq(void **state)
{
	struct fix *f = *state;

	assert_class_c(f, rx(f, RL_OP_SEND_MIDDLE, FIRST_PSN, MTU, false, NULL),
		       NE_AETH_NAK_INV_REQ);
	assert_int_equal(counters(f).rcv_opcode_seq_err, 1);
}

/* check_pkt_len: a FIRST packet shorter than the MTU is class C. */
static void test_pkt_len(void **state)
{
	struct fix *f = *state;

	post_recv(f, 2 * MTU);
	assert_class_c(f, rx(f, RL_OP_SEND_FIRST, FIRST_PSN, MTU - 1, false, NULL),
		       NE_AETH_NAK_INV_REQ);
	assert_int_equal(counters(f).rcv_len_err, 1);
}

/* check_reth: a WRITE with an rkey nobody registered is a remote access error. */
static void test_bad_rkey(void **state)
{
	struct fix *f = *state;
	struct rl_bth_info reth = {.reth_va = WRITE_IOVA, .reth_rkey = BAD_KEY, .reth_dmalen = 8};

	assert_class_c(f, rx(f, RL_OP_WRITE_ONLY, FIRST_PSN, 8, true, &reth), NE_AETH_NAK_REM_ACC);
	assert_int_equal(counters(f).rcv_access_err, 1);
	assert_int_equal(f->mem[0], 0);
}

/* check_resource: a SEND with no receive WQE gets an RNR NAK carrying our
 * min_rnr_timer; the PSN is not consumed, the QP stays usable. */
static void test_send_rnr(void **state)
{
	struct fix *f = *state;

	assert_int_equal(rx(f, RL_OP_SEND_ONLY, FIRST_PSN, 4, true, NULL), NE_RX_RNR);
	assert_answer(f, NE_AETH_RNR_NAK | RNR_TIMER, FIRST_PSN);
	assert_int_equal(f->qp->resp.psn, FIRST_PSN);
	assert_int_equal(f->qp->state, NE_QPS_RTR);
	assert_int_equal(counters(f).send_rnr_err, 1);
}

/* check_msg_len: a SEND longer than its receive WQE completes the WQE with
 * a local length error and is class C. */
static void test_send_too_long(void **state)
{
	struct fix *f = *state;
	struct ne_wc wc;

	post_recv(f, 100);
	assert_class_c(f, rx(f, RL_OP_SEND_ONLY, FIRST_PSN, 200, true, NULL), NE_AETH_NAK_INV_REQ);
	assert_int_equal(ne_cq_poll(f->cq, &wc, 1), 1);
	assert_int_equal(wc.status, NE_WC_LOC_LEN_ERR);
	assert_int_equal(wc.wr_id, 42);
}

/* check_imm_wqe: a WRITE with immediate and no receive WQE gets an RNR NAK
 * and places no data. */
static void test_write_imm_rnr(void **state)
{
	struct fix *f = *state;
	struct rl_bth_info reth = {.reth_va = WRITE_IOVA, .reth_rkey = WRITE_KEY, .reth_dmalen = 8};

	assert_int_equal(rx(f, RL_OP_WRITE_ONLY_IMM, FIRST_PSN, 8, true, &reth), NE_RX_RNR);
	assert_answer(f, NE_AETH_RNR_NAK | RNR_TIMER, FIRST_PSN);
	assert_int_equal(f->mem[0], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_send_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_psn_gap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_duplicate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_opcode, setup, teardown),
		cmocka_unit_test_setup_teardown(test_op_seq, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pkt_len, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_rkey, setup, teardown),
		cmocka_unit_test_setup_teardown(test_send_rnr, setup, teardown),
		cmocka_unit_test_setup_teardown(test_send_too_long, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_imm_rnr, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
