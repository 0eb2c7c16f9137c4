/*
 * Control API of gotensor's fake DOCA (fakedoca.c): the devices it lists
 * and the faults it injects. Tests reset it, then configure it.
 */
#ifndef FAKEDOCA_H_
#define FAKEDOCA_H_

#include <stdint.h>

enum {
	FAKEDOCA_CAP_INFLATE = 1 << 0,	/* DEFLATE decompress */
	FAKEDOCA_CAP_DEFLATE = 1 << 1,	/* DEFLATE compress (BlueField-2) */
	FAKEDOCA_CAP_LZ4 = 1 << 2,	/* LZ4 block decompress (BlueField-3, DOCA 2.7) */
	FAKEDOCA_CAP_ALL = 7,
};

typedef struct {
	long live;		/* objects created and not yet destroyed or freed */
	long tasks;		/* tasks submitted */
	long done;		/* tasks completed successfully */
	long failed;		/* tasks completed with an error (flushes included) */
	long flushed;		/* tasks flushed by a context stop */
	long max_inflight;	/* most tasks in flight at once */
	long ctx_starts;
	long bad_access;	/* tasks whose destination mmap was not writable */
	long src_writable;	/* tasks whose source mmap the device could write */
	long oversize;		/* submissions over the device's maximum buffer (refused) */
	long mmaps;		/* mmaps created */
} fakedoca_stats;

/* back to one device "0000:3b:00.0" with every capability, 2 MiB buffers,
 * 64 tasks, no faults, no delay; clears the statistics (not "live") */
void fakedoca_reset(void);
void fakedoca_clear_devices(void);
/* adds a device; open_fails makes doca_dev_open fail on it */
void fakedoca_add_device(const char *pci, unsigned caps, uint64_t max_buf, int open_fails);
void fakedoca_set_max_tasks(uint32_t n);
void fakedoca_fail_tasks(int n);	/* the next n tasks complete with an error */
void fakedoca_lose_tasks(int n);	/* the next n tasks never complete until the context stops */
void fakedoca_stop_context(void);	/* running contexts stop at their next progress, flushing tasks */
void fakedoca_fail_lz4_conf(int on);	/* LZ4 block set_conf fails */
void fakedoca_set_delay_us(unsigned us);	/* a task completes no sooner than this after submission */
void fakedoca_get_stats(fakedoca_stats *s);

#endif
