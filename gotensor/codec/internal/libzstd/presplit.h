// gt_compress_presplit writes one zstd frame holding src[0:n] into
// dst[0:cap] with c's parameters (ZSTD_c_stableInBuffer and
// ZSTD_c_stableOutBuffer set), its blocks pre-split: the frame's size or a
// libzstd error code.
size_t gt_compress_presplit(ZSTD_CCtx *c, void *dst, size_t cap, const void *src, size_t n);
