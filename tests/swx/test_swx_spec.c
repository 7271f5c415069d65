/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * swx_spec (no DPDK): what the parser refuses, each with FILE:LINE and the
 * construct's name, and what it makes of p4/default.spec; rocelab's metadata
 * header (swx_meta.h): its layout checked, its bytes. Line numbers in the
 * expected messages are counted by hand in the texts below.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "swx_meta.h"
#include "swx_spec.h"

/* A program that parses: line 1 'struct h_t {', ..., the apply block at lines 11-15. */
#define OK_HEAD \
	"struct h_t {\n"              /* 1 */ \
	"\tbit<48> dst\n"             /* 2 */ \
	"\tbit<16> type\n"            /* 3 */ \
	"}\n"                         /* 4 */ \
	"header eth instanceof h_t\n" /* 5 */ \
	"struct m_t {\n"              /* 6 */ \
	"\tbit<32> port\n"            /* 7 */ \
	"\tbit<32> hash\n"            /* 8 */ \
	"}\n"                         /* 9 */ \
	"metadata instanceof m_t\n"   /* 10 */

static int parse(const char *text, char *err, struct swx_spec *s)
{
	return swx_spec_parse(text, strlen(text), "t.spec", s, err, SWX_ERR_MAX);
}

/* The text is refused with a message that starts "t.spec:LINE: " and contains what. */
static void refused(const char *text, unsigned int line, const char *what)
{
	char err[SWX_ERR_MAX], prefix[32];
	struct swx_spec s;

	assert_int_equal(parse(text, err, &s), -EINVAL);
	snprintf(prefix, sizeof(prefix), "t.spec:%u: ", line);
	if (strncmp(err, prefix, strlen(prefix)) != 0 || strstr(err, what) == NULL)
		fail_msg("message '%s': wanted '%s' and '%s'", err, prefix, what);
}

static void test_accepts_minimal(void **state)
{
	char err[SWX_ERR_MAX];
	struct swx_spec s;

	(void)state;
	assert_int_equal(parse(OK_HEAD "apply {\n rx m.port\n extract h.eth\n emit h.eth\n tx m.port\n}\n",
			       err, &s), 0);
	assert_int_equal(s.n_structs, 2);
	assert_int_equal(s.structs[0].fields[0].n_bits, 48);
	assert_int_equal(s.n_headers, 1);
	assert_string_equal(s.metadata, "m_t");
	assert_int_equal(s.n_apply, 4);
	assert_int_equal(s.apply_line, 11);
	assert_string_equal(s.apply[1].text, "extract h.eth");
	assert_int_equal(s.apply[3].line, 15);
	swx_spec_free(&s);
}

static void test_table_default_args(void **state)
{
	char err[SWX_ERR_MAX];
	struct swx_spec s;

	(void)state;
	assert_int_equal(parse(OK_HEAD "struct a_t {\n bit<32> p\n bit<32> q\n}\n"
			       "action fwd args instanceof a_t {\n mov m.port t.p\n return\n}\n"
			       "table t {\n key {\n  m.hash exact\n }\n actions {\n  fwd\n }\n"
			       " default_action fwd args p 1 q 0x2 const\n size 8\n}\n"
			       "apply {\n rx m.port\n table t\n tx m.port\n}\n", err, &s), 0);
	assert_string_equal(s.tables[0].default_args, "p 1 q 0x2");
	assert_int_equal(s.tables[0].default_const, 1);
	swx_spec_free(&s);
	/* an argument without its value: OK_HEAD 10 lines, struct 4, action 4, the table's 8th: 26 */
	refused(OK_HEAD "struct a_t {\n bit<32> p\n bit<32> q\n}\n"
		"action fwd args instanceof a_t {\n mov m.port t.p\n return\n}\n"
		"table t {\n key {\n  m.hash exact\n }\n actions {\n  fwd\n }\n"
		" default_action fwd args p 1 q\n size 8\n}\n", 26,
		"table t: default_action is 'NAME args none|ARG VALUE ... [const]'");
}

static void test_unknown_instruction(void **state)
{
	(void)state;
	refused(OK_HEAD "apply {\n rx m.port\n frob m.port\n tx m.port\n}\n", 13,
		"unknown instruction 'frob'");
	/* after a label too */
	refused(OK_HEAD "apply {\n rx m.port\n L : frob m.port\n tx m.port\n}\n", 13,
		"unknown instruction 'frob'");
}

static void test_hash_two_structs(void **state)
{
	(void)state;
	/* h.eth.dst is in header eth, m.hash in the metadata */
	refused(OK_HEAD "apply {\n rx m.port\n extract h.eth\n hash jhash m.hash h.eth.dst m.hash\n"
		" tx m.port\n}\n", 14, "hash over two structs");
	/* one struct: accepted */
	char err[SWX_ERR_MAX];
	struct swx_spec s;

	assert_int_equal(parse(OK_HEAD "apply {\n rx m.port\n hash crc32 m.hash m.port m.hash\n"
			       " tx m.port\n}\n", err, &s), 0);
	swx_spec_free(&s);
}

static void test_hash_functions(void **state)
{
	char err[SWX_ERR_MAX];
	struct swx_spec s;

	(void)state;
	/* rl_hash, rocelab's own (swx/swx_hash.h), is known; a made-up name is not */
	assert_int_equal(parse(OK_HEAD "apply {\n rx m.port\n hash rl_hash m.hash m.port m.hash\n"
			       " tx m.port\n}\n", err, &s), 0);
	swx_spec_free(&s);
	refused(OK_HEAD "apply {\n rx m.port\n hash fnv m.hash m.port m.hash\n tx m.port\n}\n", 13,
		"hash: no hash function 'fnv' (DPDK 22.11 has jhash and crc32, rocelab adds rl_hash)");
}

/* A metadata struct of n 64-bit fields and one of tail bits, a wildcard table keyed on all. */
static void wide_key_text(char *buf, size_t len, unsigned int n, unsigned int tail)
{
	size_t k = (size_t)snprintf(buf, len, "struct m_t {\n");

	for (unsigned int i = 0; i < n; i++)
		k += (size_t)snprintf(buf + k, len - k, "\tbit<64> f%u\n", i);
	k += (size_t)snprintf(buf + k, len - k, "\tbit<%u> tail\n}\nmetadata instanceof m_t\n"
			      "action a args none {\n return\n}\ntable wide {\n key {\n", tail);
	for (unsigned int i = 0; i < n; i++)
		k += (size_t)snprintf(buf + k, len - k, "  m.f%u wildcard\n", i);
	snprintf(buf + k, len - k, "  m.tail wildcard\n }\n actions {\n  a\n }\n"
		 " default_action a args none\n size 16\n}\napply {\n rx m.f0\n tx m.f0\n}\n");
}

static void test_key_too_wide(void **state)
{
	static char text[8192];
	char err[SWX_ERR_MAX];
	struct swx_spec s;

	(void)state;
	/*
	 * An ACL key (DPDK 22.11 rte_swx_table_wm.c): its first field is 1 byte,
	 * every later one 4, at most 64 (RTE_ACL_MAX_FIELDS): 1 + 63 * 4 = 253
	 * bytes. 31 * 8 + 5 = 253 bytes fit; 31 * 8 + 6 = 254 need 65 fields.
	 * The table statement is at line 1 + 32 + 1 + 1 + 3 + 1 = 39.
	 */
	wide_key_text(text, sizeof(text), 31, 40);
	assert_int_equal(parse(text, err, &s), 0);
	swx_spec_free(&s);
	wide_key_text(text, sizeof(text), 31, 48);
	refused(text, 39, "table wide: key of 254 bytes is too wide: it needs 65 ACL fields");
}

static void test_learner_refused(void **state)
{
	(void)state;
	refused(OK_HEAD "learner flows {\n key {\n  m.port\n }\n}\n", 11,
		"learner table 'flows' is not supported: it ages its entries by the TSC");
	refused(OK_HEAD "apply {\n rx m.port\n learn a m.port\n}\n", 13, "'learn' is not supported");
}

static void test_other_refusals(void **state)
{
	(void)state;
	refused(OK_HEAD "metarray meters size 4\n", 11, "metarray 'meters' is not supported");
	refused(OK_HEAD "apply {\n rx m.port\n movh m.port m.hash\n}\n", 13, "DPDK 24.03");
	refused("struct s {\n bit<128> wide\n}\n", 2, "struct s: field wide: size '128'");
	refused("struct s {\n bit<12> odd\n}\n", 2, "size '12' is not a multiple of 8");
	refused(OK_HEAD "apply {\n rx m.port\n}\napply {\n tx m.port\n}\n", 14, "a second apply");
	refused(OK_HEAD "header ip instanceof nope_t\napply {\n rx m.port\n tx m.port\n}\n", 11,
		"header ip: no struct nope_t");
	refused("bogus statement\n", 1, "unknown statement 'bogus'");
}

static void test_truncated(void **state)
{
	(void)state;
	/* ends inside the table's key block: the last line is 13, the key block began at 12 */
	refused(OK_HEAD "table t {\n key {\n  m.port exact\n", 13,
		"the file ends inside the table key block begun at line 12");
	/* no newline at the end, inside apply */
	refused(OK_HEAD "apply {\n rx m.port", 12, "ends inside the apply block begun at line 11");
}

static void test_bad_bytes(void **state)
{
	char line[SWX_LINE_MAX + 8];

	(void)state;
	memset(line, 'x', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\0';
	refused(line, 1, "line longer than 2047 characters");
	char err[SWX_ERR_MAX];
	struct swx_spec s;

	assert_int_equal(swx_spec_parse("apply {\0}\n", 10, "t.spec", &s, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.spec:1: a NUL byte");
}

static void test_default_program(void **state)
{
	char err[SWX_ERR_MAX];
	struct swx_spec s;

	(void)state;
	if (swx_spec_parse_file(SWX_P4_DIR "/default.spec", &s, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_int_equal(s.n_headers, 3); /* ethernet, ipv4, udp */
	assert_int_equal(s.n_actions, 2);
	assert_int_equal(s.n_tables, 1);
	assert_string_equal(s.tables[0].name, "route");
	assert_int_equal(s.tables[0].n_keys, 1);
	assert_int_equal(s.tables[0].keys[0].match, SWX_MATCH_LPM);
	assert_int_equal(s.tables[0].size, 4096);
	assert_int_equal(s.tables[0].actions[0].for_default, 0); /* route_fwd @tableonly */
	assert_string_equal(s.apply[0].text, "rx m.port_in");
	assert_string_equal(s.apply[s.n_apply - 1].text, "DROP : drop");
	swx_spec_free(&s);
}

/* A program with header rl_meta of struct rl_meta_h at line 1; fields as given. */
static int meta_check(const char *fields, bool *has, char *err)
{
	char text[1024];
	struct swx_spec s;

	snprintf(text, sizeof(text), "struct rl_meta_h {\n%s}\nheader rl_meta instanceof rl_meta_h\n"
		 OK_HEAD "apply {\n rx m.port\n extract h.rl_meta\n tx m.port\n}\n", fields);
	assert_int_equal(parse(text, err, &s), 0);
	int rc = swx_meta_check(&s, has, err, SWX_ERR_MAX);

	swx_spec_free(&s);
	return rc;
}

static void test_meta_layout(void **state)
{
	static const char good[] = "\tbit<64> now_ns\n\tbit<64> flowlet_timeout_ns\n\tbit<32> port_in\n"
		"\tbit<32> seed\n\tbit<32> n_members\n\tbit<32> rand\n\tbit<8> algo\n\tbit<8> eecmp\n";
	char err[SWX_ERR_MAX], fields[512];
	struct swx_spec s;
	bool has = true;

	(void)state;
	assert_int_equal(meta_check(good, &has, err), 0);
	assert_true(has);
	/* rand of 16 bits: the 6th field named, at the struct's line */
	snprintf(fields, sizeof(fields), "%s", good);
	memcpy(strstr(fields, "bit<32> rand"), "bit<16>", 7);
	assert_int_equal(meta_check(fields, &has, err), -EINVAL);
	assert_string_equal(err, "t.spec:1: header rl_meta: struct rl_meta_h's field 6 must be bit<32> rand "
			    "(rocelab's metadata layout, docs/reference/rocelab-p4.md)");
	/* a field too many */
	snprintf(fields, sizeof(fields), "%s\tbit<8> more\n", good);
	assert_int_equal(meta_check(fields, &has, err), -EINVAL);
	assert_non_null(strstr(err, "t.spec:1: header rl_meta: struct rl_meta_h has fields past rocelab's 8"));
	/* no rl_meta: nothing to check */
	assert_int_equal(parse(OK_HEAD "apply {\n rx m.port\n tx m.port\n}\n", err, &s), 0);
	assert_int_equal(swx_meta_check(&s, &has, err, sizeof(err)), 0);
	assert_false(has);
	swx_spec_free(&s);
}

/* The bytes in front of a frame, laid out by hand: big-endian, in the header's order. */
static void test_meta_bytes(void **state)
{
	const struct swx_meta m = {.now_ns = 0x0102030405060708ull, .flowlet_timeout_ns = 100000,
				   .port_in = 3, .seed = 0xdeadbeef, .n_members = 4, .rand = 0x80000001u,
				   .algo = 2, .eecmp = 1};
	const uint8_t want[SWX_META_LEN] = {
		1, 2, 3, 4, 5, 6, 7, 8,  0, 0, 0, 0, 0, 0x01, 0x86, 0xa0, /* 100000 = 0x186a0 */
		0, 0, 0, 3,  0xde, 0xad, 0xbe, 0xef,  0, 0, 0, 4,  0x80, 0, 0, 1,  2,  1,
	};
	uint8_t got[SWX_META_LEN];

	(void)state;
	swx_meta_put(got, &m);
	assert_memory_equal(got, want, SWX_META_LEN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepts_minimal),
		cmocka_unit_test(test_table_default_args),
		cmocka_unit_test(test_unknown_instruction),
		cmocka_unit_test(test_hash_two_structs),
		cmocka_unit_test(test_hash_functions),
		cmocka_unit_test(test_key_too_wide),
		cmocka_unit_test(test_learner_refused),
		cmocka_unit_test(test_other_refusals),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_bad_bytes),
		cmocka_unit_test(test_default_program),
		cmocka_unit_test(test_meta_layout),
		cmocka_unit_test(test_meta_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
