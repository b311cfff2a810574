/*
 * announce-table.h - an announcement as a table of keys (the unit tests and the fuzz
 * target): "key=value" lines, the value up to the line's end, any byte but '\n'.
 */
#ifndef ANNOUNCE_TABLE_H
#define ANNOUNCE_TABLE_H

#include <stdlib.h>
#include <string.h>

#define TABLE_MAX 160

struct table {
	unsigned n;
	const char *key[TABLE_MAX], *val[TABLE_MAX];
	size_t klen[TABLE_MAX], vlen[TABLE_MAX];
	unsigned reads;
};

static void table_parse(struct table *t, const char *s, size_t len)
{
	const char *end = s + len;

	t->n = 0;
	t->reads = 0;
	while (s < end && t->n < TABLE_MAX) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *line_end = nl ? nl : end;
		const char *eq = memchr(s, '=', (size_t)(line_end - s));

		if (eq) {
			t->key[t->n] = s;
			t->klen[t->n] = (size_t)(eq - s);
			t->val[t->n] = eq + 1;
			t->vlen[t->n] = (size_t)(line_end - eq - 1);
			t->n++;
		}
		s = line_end + 1;
	}
}

/* An announce_read_fn: the last line with that key wins, as a later write would. */
static char *table_read(const char *key, size_t *len, void *arg)
{
	struct table *t = arg;
	size_t kl = strlen(key);

	t->reads++;
	for (unsigned i = t->n; i-- > 0;)
		if (t->klen[i] == kl && !memcmp(t->key[i], key, kl)) {
			char *v = malloc(t->vlen[i] + 1);

			if (!v)
				abort();
			memcpy(v, t->val[i], t->vlen[i]);
			v[t->vlen[i]] = 0;
			*len = t->vlen[i];
			return v;
		}
	return NULL;
}

#endif
