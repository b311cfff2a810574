/*
 * gen.c - see gen.h.  The valid part is what a real client sends, so the mutations
 * reach past the framing into protobuf-c and the daemon's checks.
 */
#include <string.h>

#include "frame.h"
#include "gen.h"
#include "mtrace.pb-c.h"

uint64_t gen_next(struct gen *g)
{
	g->rng ^= g->rng << 13;
	g->rng ^= g->rng >> 7;
	g->rng ^= g->rng << 17;
	return g->rng;
}

static unsigned pick(struct gen *g, unsigned n)
{
	return (unsigned)(gen_next(g) % n);
}

static char strings[64][300];

static char *str(struct gen *g, unsigned slot)
{
	/* mostly short; the limits (256) now and then */
	static const unsigned lens[] = { 0, 1, 3, 5, 8, 16, 1, 2, 255, 256, 257, 299 };
	unsigned len = lens[pick(g, 16) ? pick(g, 8) : 8 + pick(g, 4)];
	char *s = strings[slot % 64];

	for (unsigned i = 0; i < len; i++)
		s[i] = pick(g, 8) ? (char)('a' + pick(g, 26)) : (char)(1 + pick(g, 255));
	s[len] = '\0';
	return s;
}

static size_t put_frame(const Mtrace__ClientMsg *m, uint8_t *buf, size_t cap)
{
	size_t len = mtrace__client_msg__get_packed_size(m), hl;

	if (len + FRAME_VARINT_MAX > cap)
		return 0;
	hl = frame_put_len(buf, len);
	mtrace__client_msg__pack(m, buf + hl);
	return hl + len;
}

static size_t subscribe(struct gen *g, uint8_t *buf, size_t cap)
{
	static uint32_t ids[300], ops[300];
	static char *names[300], *labels[300];
	/* mostly a few entries; the limit (256) and past it now and then */
	static const unsigned counts[] = { 0, 1, 2, 5, 3, 1, 256, 257, 300 };
#define COUNT() counts[pick(g, 32) ? pick(g, 6) : 6 + pick(g, 3)]
	static const uint32_t intervals[] = { 0, 1, 99, 100, 1000, 3600000, 3600001, UINT32_MAX };
	Mtrace__ClientMsg m = MTRACE__CLIENT_MSG__INIT;
	Mtrace__Subscribe s = MTRACE__SUBSCRIBE__INIT;
	ProtobufCMessageUnknownField uf;
	uint8_t ud[8] = { 7, 1, 2, 3, 4, 5, 6, 7 };
	unsigned n, slot = 0;

	n = COUNT() * !pick(g, 2);
	for (unsigned i = 0; i < n; i++)
		ids[i] = pick(g, 4) ? pick(g, 64) : (uint32_t)gen_next(g);
	s.n_domids = n;
	s.domids = ids;
	n = COUNT() * !pick(g, 3);
	for (unsigned i = 0; i < n; i++)
		names[i] = str(g, slot++);
	s.n_domain_names = n;
	s.domain_names = names;
	n = COUNT() * !pick(g, 2);
	for (unsigned i = 0; i < n; i++)
		ops[i] = pick(g, 8) ? pick(g, 70) : (uint32_t)gen_next(g);
	s.n_ops = n;
	s.ops = ops;
	n = COUNT() * !pick(g, 2);
	for (unsigned i = 0; i < n; i++)
		labels[i] = str(g, slot++);
	s.n_labels = n;
	s.labels = labels;
	s.events = pick(g, 2);
	s.stats_interval_ms = intervals[pick(g, 8)];
	s.top_n = pick(g, 2) ? pick(g, 2000) : (uint32_t)gen_next(g);
	s.sort = (Mtrace__SortKey)pick(g, 10);
	s.sort_reverse = pick(g, 2);
	s.label_stats = pick(g, 2);
	s.include_finished = pick(g, 2);
	if (!pick(g, 4)) {
		/* an unknown field: protobuf-c keeps it and packs it back */
		memset(&uf, 0, sizeof(uf));
		uf.tag = pick(g, 2) ? 12 + pick(g, 100) : (uint32_t)(gen_next(g) & 0x1fffffff);
		uf.wire_type = PROTOBUF_C_WIRE_TYPE_VARINT;
		uf.len = 1;
		uf.data = ud;
		s.base.n_unknown_fields = 1;
		s.base.unknown_fields = &uf;
	}
	m.msg_case = MTRACE__CLIENT_MSG__MSG_SUBSCRIBE;
	m.subscribe = &s;
	return put_frame(&m, buf, cap);
}

static size_t one_frame(struct gen *g, uint8_t *buf, size_t cap)
{
	Mtrace__ClientMsg m = MTRACE__CLIENT_MSG__INIT;
	Mtrace__Hello h = MTRACE__HELLO__INIT;
	Mtrace__Ping p = MTRACE__PING__INIT;
	static const uint32_t versions[] = { 1, 1, 1, 0, 2, UINT32_MAX };

	switch (pick(g, 6)) {
	case 0:
	case 1:
		h.version = versions[pick(g, 6)];
		h.software = str(g, 63);
		m.msg_case = MTRACE__CLIENT_MSG__MSG_HELLO;
		m.hello = &h;
		return put_frame(&m, buf, cap);
	case 2:
		p.cookie = gen_next(g);
		m.msg_case = MTRACE__CLIENT_MSG__MSG_PING;
		m.ping = &p;
		return put_frame(&m, buf, cap);
	case 3:
		/* an empty ClientMsg (no oneof), or raw bytes as a frame */
		if (pick(g, 2))
			return put_frame(&m, buf, cap);
		else {
			size_t n = 1 + pick(g, 40);
			if (n + 1 > cap)
				return 0;
			buf[0] = (uint8_t)n;
			for (size_t i = 0; i < n; i++)
				buf[1 + i] = (uint8_t)gen_next(g);
			return n + 1;
		}
	default:
		return subscribe(g, buf, cap);
	}
}

static void mutate(struct gen *g, uint8_t *buf, size_t *len, size_t cap)
{
	size_t n = *len, a, b;

	if (n == 0)
		return;
	a = pick(g, (unsigned)n);
	switch (pick(g, 7)) {
	case 0:
		buf[a] ^= (uint8_t)(1u << pick(g, 8));
		break;
	case 1: {
		static const uint8_t special[] = { 0x00, 0x01, 0x7f, 0x80, 0xff, 0x0a, 0x12 };
		buf[a] = special[pick(g, 7)];
		break;
	}
	case 2: /* cut */
		*len = a;
		break;
	case 3: /* delete a range */
		b = a + pick(g, 16);
		if (b > n)
			b = n;
		memmove(buf + a, buf + b, n - b);
		*len = n - (b - a);
		break;
	case 4: /* repeat a range */
		b = a + 1 + pick(g, 32);
		if (b > n)
			b = n;
		if (n + (b - a) <= cap) {
			memmove(buf + b + (b - a), buf + b, n - b);
			memcpy(buf + b, buf + a, b - a);
			*len = n + (b - a);
		}
		break;
	case 5: /* a random varint over a length */
		buf[a] = (uint8_t)(0x80 | gen_next(g));
		break;
	default:
		buf[a] = (uint8_t)gen_next(g);
		break;
	}
}

size_t gen_stream(struct gen *g, uint8_t *buf, size_t cap)
{
	size_t len = 0, k = 1 + pick(g, 4);

	for (size_t i = 0; i < k; i++)
		len += one_frame(g, buf + len, cap - len);
	/* about one stream in eight goes unmutated: the valid paths get volume too */
	for (unsigned m = pick(g, 8) ? 1 + pick(g, 4) : 0; m; m--)
		mutate(g, buf, &len, cap);
	return len;
}
