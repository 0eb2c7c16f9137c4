// Per-thread error message storage for gt_last_error.
#include <string.h>

#include "gotensor.h"

static __thread char gt_err[1024];

void gt_set_error(const char *msg, size_t n) {
    if (n >= sizeof gt_err) n = sizeof gt_err - 1;
    memcpy(gt_err, msg, n);
    gt_err[n] = 0;
}

const char *gt_last_error(void) { return gt_err; }
