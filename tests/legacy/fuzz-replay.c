/*
 * fuzz-replay.c - main() for the fuzz entry point where libFuzzer is not available (gcc
 * builds): run every corpus file given, then `-m N` deterministic mutations of each
 * (byte flips, inserted/deleted bytes, splices), so the gcc build exercises the same
 * entry point beyond the fixed corpus.
 *
 * Usage: fuzz-replay [-m N] FILE|DIR...
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static unsigned long runs;

static uint64_t
next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void
mutate_and_run(const uint8_t *in, size_t len, unsigned mutations)
{
	uint8_t *buf = malloc(len + 64);

	for (unsigned m = 0; m < mutations && buf; m++) {
		size_t n = len;

		memcpy(buf, in, len);
		for (unsigned k = 1 + next() % 8; k > 0; k--) {
			size_t at = n ? next() % n : 0;

			switch (next() % 4) {
			case 0:		/* flip */
				if (n)
					buf[at] ^= (uint8_t)(1u << (next() % 8));
				break;
			case 1:		/* set an interesting byte */
				if (n)
					buf[at] = (uint8_t[]){ 0, 0xff, 0x7f, 0x80, ',', '0', '9',
							       0xc1 }[next() % 8];
				break;
			case 2:		/* delete */
				if (n) {
					memmove(buf + at, buf + at + 1, n - at - 1);
					n--;
				}
				break;
			default:	/* insert */
				if (n < len + 64) {
					memmove(buf + at + 1, buf + at, n - at);
					buf[at] = (uint8_t)next();
					n++;
				}
				break;
			}
		}
		LLVMFuzzerTestOneInput(buf, n);
		runs++;
	}
	free(buf);
}

static void
run_file(const char *path, unsigned mutations)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f) {
		perror(path);
		exit(1);
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n > 0 ? (size_t)n : 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "%s: read failed\n", path);
		exit(1);
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	runs++;
	mutate_and_run(buf, (size_t)n, mutations);
	free(buf);
}

int
main(int argc, char **argv)
{
	unsigned mutations = 0;
	int c;

	while ((c = getopt(argc, argv, "m:")) != -1) {
		if (c != 'm') {
			fprintf(stderr, "usage: fuzz-replay [-m N] FILE|DIR...\n");
			return 2;
		}
		mutations = (unsigned)strtoul(optarg, NULL, 10);
	}
	for (int i = optind; i < argc; i++) {
		struct stat sb;

		if (stat(argv[i], &sb) == 0 && S_ISDIR(sb.st_mode)) {
			struct dirent **ents;
			int n = scandir(argv[i], &ents, NULL, alphasort);

			for (int k = 0; k < n; k++) {
				char p[4096];

				if (ents[k]->d_name[0] != '.') {
					snprintf(p, sizeof(p), "%s/%s", argv[i], ents[k]->d_name);
					run_file(p, mutations);
				}
				free(ents[k]);
			}
			free(ents);
		} else {
			run_file(argv[i], mutations);
		}
	}
	printf("%lu inputs run without a crash\n", runs);
	return 0;
}
