/*
 * negotiate.c - which exposition a scraper asked for (Accept: Prometheus's text 0.0.4
 * or OpenMetrics 1.0.0, by q-value) and whether it takes gzip (Accept-Encoding).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "exporter.h"

static double accept_q(const char *params, size_t len)
{
	const char *p = params, *end = params + len;

	while (p < end) {
		while (p < end && (*p == ';' || *p == ' ' || *p == '\t'))
			p++;
		if (end - p > 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=')
			return strtod(p + 2, NULL);
		while (p < end && *p != ';')
			p++;
	}
	return 1.0;
}

enum expo_format expo_negotiate(const char *accept)
{
	static const char om[] = "application/openmetrics-text";
	double best_om = 0, best_text = 0;
	const char *p = accept;

	if (!accept)
		return EXPO_TEXT;
	while (*p) {
		size_t len = strcspn(p, ","), tlen;
		const char *t = p;

		while (len && (*t == ' ' || *t == '\t'))
			t++, len--;
		tlen = strcspn(t, ";,");
		if (tlen > len)
			tlen = len;
		while (tlen && (t[tlen - 1] == ' ' || t[tlen - 1] == '\t'))
			tlen--;
		if (tlen == sizeof(om) - 1 && !strncasecmp(t, om, tlen)) {
			double q = accept_q(t + tlen, len - tlen);
			if (q > best_om)
				best_om = q;
		} else if ((tlen == 10 && !strncasecmp(t, "text/plain", 10)) ||
		    (tlen == 3 && !strncmp(t, "*/*", 3))) {
			double q = accept_q(t + tlen, len - tlen);
			if (q > best_text)
				best_text = q;
		}
		p = t + len;
		if (*p == ',')
			p++;
	}
	return best_om > 0 && best_om >= best_text ? EXPO_OPENMETRICS : EXPO_TEXT;
}

bool expo_accepts_gzip(const char *ae)
{
	const char *p = ae;

	while (p && *p) {
		size_t len = strcspn(p, ","), tlen;
		const char *t = p;

		while (len && (*t == ' ' || *t == '\t'))
			t++, len--;
		tlen = strcspn(t, ";, \t");
		if (tlen > len)
			tlen = len;
		if (tlen == 4 && !strncasecmp(t, "gzip", 4))
			return accept_q(t + tlen, len - tlen) > 0;
		p = t + len;
		if (*p == ',')
			p++;
	}
	return false;
}
