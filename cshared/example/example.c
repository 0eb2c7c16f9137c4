// Minimal gotensor C usage: write a tensor to the embedded store and read it back.
#include <stdio.h>

#include "gotensor.h"

int main(void) {
    gt_store s;
    float w[2][3] = {{1, 2, 3}, {4, 5, 6}}, back[2][3];
    int64_t shape[2] = {2, 3};
    if (gt_open("mem://", &s) != GT_OK ||
        gt_write_tensor(s, "w", w, sizeof w, GT_FLOAT32, shape, 2, "none") != GT_OK ||
        gt_read_tensor(s, "w", back, sizeof back, NULL) != GT_OK) {
        fprintf(stderr, "gotensor: %s\n", gt_last_error());
        return 1;
    }
    printf("w[1][2] = %g\n", back[1][2]);
    return gt_close(s);
}
