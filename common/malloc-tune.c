/* malloc-tune.c - see malloc-tune.h for why. */
#include <malloc.h>

#include "malloc-tune.h"

void malloc_tune(void)
{
	mallopt(M_MMAP_THRESHOLD, 4 << 20);
	mallopt(M_TRIM_THRESHOLD, 16 << 20);
}
