/* malloc-tune.h - glibc heap settings for programs that move millions of events a second. */
#ifndef MTRACE_MALLOC_TUNE_H
#define MTRACE_MALLOC_TUNE_H

/*
 * Call first thing in main.  Encoded batches (mtraced) and unpacked ones (clients)
 * are a few hundred KiB each and live for one message.  With glibc's defaults each
 * is an mmap/munmap pair or a heap trim followed by fresh page faults: measured at
 * a third of a client's time and a tenth of mtraced's (git log -p bench/README.md).  This keeps
 * them on the heap and lets up to 16 MiB of freed heap be reused, not returned.
 */
void malloc_tune(void);

#endif
