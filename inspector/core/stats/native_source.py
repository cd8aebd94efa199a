"""C source of the comparison statistics kernels (built by `native`).

`flat_*` / `chan_*`: float64 sums per tensor (the per-pair path, and int16 tensors). `fused_*`:
one pass in float32 blocks summed into float64 (`batch`, the per-sample path of every layer).
Each writes a pair's sums as `out[SUM_<name>]`: the positions of the one C list `SUM_FIELDS`,
which must be `native.Sums`' field list (same names, same order). The kernel reports it
(`sums_layout()`) and `native.check_kernel` compares it with `Sums` (and probes every field) when
the library loads; a kernel that disagrees is refused. Python reads the sums by those names only.
"""

SOURCE = r"""
#include <stdint.h>

/* The per-pair sums in the order every kernel writes them (`native.Sums`, checked at load). */
#define SUM_FIELDS(F) F(x2) F(e2) F(y2) F(xy) F(e) F(emax) F(xmin) F(xmax) F(clip)
#define SUM_INDEX(name) SUM_##name,
enum { SUM_FIELDS(SUM_INDEX) SUM_COUNT };
#define SUM_NAME(name) #name ","
const char *sums_layout(void) { return SUM_FIELDS(SUM_NAME); }

/* Whole-tensor sums with per-tensor dequantization y = (q - z) * s; out: 9 values.
   Built with reassociation allowed, so the compiler vectorizes the reductions. */
#define FLAT(NAME, QT, DEQ)                                                                \
void NAME(const float *restrict x, const QT *restrict q, int64_t n, double s, double z,    \
          double lo, double hi, double *restrict out)                                      \
{                                                                                          \
    double x2 = 0, e2 = 0, y2 = 0, xy = 0, se = 0, em = 0, mn = 1.0 / 0.0, mx = -1.0 / 0.0;\
    int64_t cl = 0;                                                                        \
    for (int64_t i = 0; i < n; i++) {                                                      \
        double xv = (double)x[i];                                                          \
        double qv = (double)q[i];                                                          \
        double yv = DEQ;                                                                   \
        double e = xv - yv;                                                                \
        double ab = e < 0 ? -e : e;                                                        \
        x2 += xv * xv; e2 += e * e; y2 += yv * yv; xy += xv * yv; se += e;                 \
        em = ab > em ? ab : em;                                                            \
        mn = xv < mn ? xv : mn;                                                            \
        mx = xv > mx ? xv : mx;                                                            \
        cl += (xv < lo) | (xv > hi);                                                       \
    }                                                                                      \
    out[SUM_x2] = x2; out[SUM_e2] = e2; out[SUM_y2] = y2; out[SUM_xy] = xy; out[SUM_e] = se;  \
    out[SUM_emax] = em; out[SUM_xmin] = mn; out[SUM_xmax] = mx; out[SUM_clip] = (double)cl;   \
}

/* Per-channel (last axis) sums of x^2 and e^2 over a (rows, width) tensor, and per channel
   the minimum and maximum of x and the count of x outside [lo, hi] (cmn/cmx start at +-inf). */
#define CHAN(NAME, QT, DEQ)                                                                \
void NAME(const float *restrict x, const QT *restrict q, int64_t rows, int64_t width,      \
          double s, double z, double lo, double hi, double *restrict cx2,                  \
          double *restrict ce2, double *restrict cmn, double *restrict cmx,                \
          double *restrict ccl)                                                            \
{                                                                                          \
    for (int64_t r = 0; r < rows; r++) {                                                   \
        const float *restrict xr = x + r * width;                                          \
        const QT *restrict qr = q + r * width;                                             \
        for (int64_t c = 0; c < width; c++) {                                              \
            double xv = (double)xr[c], qv = (double)qr[c];                                 \
            double e = xv - (DEQ);                                                         \
            cx2[c] += xv * xv;                                                             \
            ce2[c] += e * e;                                                               \
            cmn[c] = xv < cmn[c] ? xv : cmn[c];                                            \
            cmx[c] = xv > cmx[c] ? xv : cmx[c];                                            \
            ccl[c] += (xv < lo) | (xv > hi);                                               \
        }                                                                                  \
    }                                                                                      \
}

FLAT(flat_f32, float, qv)
FLAT(flat_i8, int8_t, (qv - z) * s)
FLAT(flat_u8, uint8_t, (qv - z) * s)
FLAT(flat_i16, int16_t, (qv - z) * s)
CHAN(chan_f32, float, qv)
CHAN(chan_i8, int8_t, (qv - z) * s)
CHAN(chan_u8, uint8_t, (qv - z) * s)
CHAN(chan_i16, int16_t, (qv - z) * s)


/* One pass for the flat sums and the per-channel (last axis) sums, in float32 within blocks of at
   most BLK elements (BLK terms per channel for the per-channel sums) that are added into float64:
   twice the SIMD width of float64 and one read of each tensor instead of two. Each float32 partial
   sum covers at most BLK elements, spread over the vector lanes, so its relative error stays near
   1e-6: the float64 definitions agree to 1e-5 (tested up to 60 dB SQNR). y = (q - z) * s is
   formed in float32 from exact operands (integers, a float32 scale). lo/hi arrive rounded outward
   to float32, so the clip test on float32 x is the same as in float64. */
#define BLK 4096
/* No channel sums: float32 vector accumulators over chunks of BLK elements. */
#define FLATB(NAME, QT, DEQ)                                                                   \
static void NAME(const float *restrict x, const QT *restrict q, int64_t n, float s, float z,  \
                 float lo, float hi, double *restrict out)                                    \
{                                                                                             \
    double x2 = 0, e2 = 0, y2 = 0, xy = 0, se = 0;                                            \
    float em = 0, mn = 3.402823466e38f, mx = -3.402823466e38f;                                \
    int64_t cl = 0;                                                                           \
    for (int64_t c0 = 0; c0 < n; c0 += BLK) {                                                 \
        int64_t c1 = c0 + BLK < n ? c0 + BLK : n;                                             \
        float ax2 = 0, ae2 = 0, ay2 = 0, axy = 0, ae = 0;                                     \
        int32_t acl = 0;                                                                      \
        for (int64_t i = c0; i < c1; i++) {                                                   \
            float xv = x[i], qv = (float)q[i], yv = DEQ, e = xv - yv;                         \
            float ab = e < 0 ? -e : e;                                                        \
            ax2 += xv * xv; ae2 += e * e; ay2 += yv * yv; axy += xv * yv; ae += e;            \
            em = ab > em ? ab : em; mn = xv < mn ? xv : mn; mx = xv > mx ? xv : mx;           \
            acl += (xv < lo) | (xv > hi);                                                     \
        }                                                                                     \
        x2 += ax2; e2 += ae2; y2 += ay2; xy += axy; se += ae; cl += acl;                      \
    }                                                                                         \
    out[SUM_x2] = x2; out[SUM_e2] = e2; out[SUM_y2] = y2; out[SUM_xy] = xy; out[SUM_e] = se;     \
    out[SUM_emax] = em; out[SUM_xmin] = n > 0 ? mn : 1.0 / 0.0;                               \
    out[SUM_xmax] = n > 0 ? mx : -1.0 / 0.0; out[SUM_clip] = (double)cl;                      \
}
/* Channel sums on the last axis (rows of w channels). The sums of x^2, e^2, e, y^2 and x * y run
   in float32 vector registers, NV <= NVMAX vectors of VL lanes at a time, each lane always on the
   same channel: over super-rows of k rows (k * w a multiple of VL, at most NVMAX * VL: lane i
   holds channel i % w), else over column blocks of a tile of T rows (the tile, a few KiB, stays in
   L1 while its column blocks are summed; the tensor is read once, in order). Between blocks the
   partial sums wait in A (5 float32 arrays of AS lanes); every FLUSH rows they are added into
   float64 (per channel, and the flat x^2, e^2 and e are their sums). Channels no vector covers
   (w % VL) take a scalar loop. The clip count is taken only over tiles whose minimum or maximum
   lies outside [lo, hi] (a second read of the tile, from L1). Vector extensions: the compiler
   picks the instructions. a: 7 * (w + 1024) floats (5 sums, the minimum and maximum of x). */
#define FLUSH 256
#if defined(__AVX512F__)
#define VB 64
#elif defined(__AVX__)
#define VB 32
#else
#define VB 16
#endif
#define VL (VB / 4)
typedef float vf_t __attribute__((vector_size(VB)));
typedef int32_t vi_t __attribute__((vector_size(VB)));
static inline vf_t ld_f32(const float *p) { vf_t v; __builtin_memcpy(&v, p, VB); return v; }
static inline void st_f32(float *p, vf_t v) { __builtin_memcpy(p, &v, VB); }
/* int8/uint8 -> float32 lanes, and min/max: the instructions, where the compiler would not find them. */
#if defined(__AVX512F__)
#include <immintrin.h>
#define NVMAX 4
static inline vf_t ld_i8(const int8_t *p) { return (vf_t)_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)p))); }
static inline vf_t ld_u8(const uint8_t *p) { return (vf_t)_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)p))); }
static inline vf_t vmax(vf_t a, vf_t b) { return (vf_t)_mm512_max_ps((__m512)a, (__m512)b); }
static inline vf_t vmin(vf_t a, vf_t b) { return (vf_t)_mm512_min_ps((__m512)a, (__m512)b); }
#elif defined(__AVX__)
#include <immintrin.h>
#define NVMAX 2
#if defined(__AVX2__)
static inline vf_t ld_i8(const int8_t *p) { return (vf_t)_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)p))); }
static inline vf_t ld_u8(const uint8_t *p) { return (vf_t)_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p))); }
#else
static inline vf_t ld_i8(const int8_t *p) { vf_t v; for (int i = 0; i < VL; i++) v[i] = p[i]; return v; }
static inline vf_t ld_u8(const uint8_t *p) { vf_t v; for (int i = 0; i < VL; i++) v[i] = p[i]; return v; }
#endif
static inline vf_t vmax(vf_t a, vf_t b) { return (vf_t)_mm256_max_ps((__m256)a, (__m256)b); }
static inline vf_t vmin(vf_t a, vf_t b) { return (vf_t)_mm256_min_ps((__m256)a, (__m256)b); }
#else
#define NVMAX 4
static inline vf_t ld_i8(const int8_t *p) { vf_t v; for (int i = 0; i < VL; i++) v[i] = p[i]; return v; }
static inline vf_t ld_u8(const uint8_t *p) { vf_t v; for (int i = 0; i < VL; i++) v[i] = p[i]; return v; }
static inline vf_t vmax(vf_t a, vf_t b) { vi_t m = a > b; return (vf_t)(((vi_t)a & m) | ((vi_t)b & ~m)); }
static inline vf_t vmin(vf_t a, vf_t b) { vi_t m = a < b; return (vf_t)(((vi_t)a & m) | ((vi_t)b & ~m)); }
#endif
typedef struct { double x2, e2, y2, xy, e; int64_t cl; float em, mn, mx; } sums_t;

/* The five partial sums in A (AS lanes each) into float64, then zeroed; the lanes' minimum and
   maximum of x (A + 5 AS, A + 6 AS) into cmn/cmx, then reset. */
static void chan_flush(float *restrict A, int64_t AS, int64_t w, sums_t *restrict t, double *restrict cx2,
                       double *restrict ce2, double *restrict ce1, double *restrict cmn, double *restrict cmx)
{
    for (int64_t i = 0; i < AS; i++) {
        int64_t c = i % w;
        cx2[c] += A[i]; ce2[c] += A[AS + i]; ce1[c] += A[2 * AS + i];
        cmn[c] = A[5 * AS + i] < cmn[c] ? A[5 * AS + i] : cmn[c];
        cmx[c] = A[6 * AS + i] > cmx[c] ? A[6 * AS + i] : cmx[c];
        t->x2 += A[i]; t->e2 += A[AS + i]; t->e += A[2 * AS + i]; t->y2 += A[3 * AS + i]; t->xy += A[4 * AS + i];
    }
    for (int64_t i = 0; i < 5 * AS; i++) A[i] = 0;
    for (int64_t i = 5 * AS; i < 6 * AS; i++) A[i] = 3.402823466e38f;
    for (int64_t i = 6 * AS; i < 7 * AS; i++) A[i] = -3.402823466e38f;
}
/* Range of a tile (m contiguous values of x; the first read, in order, brings the tile into L1,
   and its quantized values are prefetched), then its clip count when the range crosses lo or hi,
   per channel into ccl (the tile starts at a row of w channels). */
static void tile_range(const float *restrict x, const void *q, int64_t m, int qsize, float lo, float hi,
                       sums_t *restrict t, int64_t w, double *restrict ccl)
{
    float mn = 3.402823466e38f, mx = -3.402823466e38f;
    for (int64_t i = 0; i < m; i++) { mn = x[i] < mn ? x[i] : mn; mx = x[i] > mx ? x[i] : mx; }
    for (int64_t i = 0; i < m * qsize; i += 64) __builtin_prefetch((const char *)q + i);
    if (mn < lo || mx > hi) { /* m is whole rows of w channels: row by row, so the loop vectorizes */
        int64_t c = 0;
        for (int64_t r = 0; r < m; r += w) {
            const float *xr = x + r;
            for (int64_t k = 0; k < w; k++) {
                int o = (xr[k] < lo) | (xr[k] > hi);
                c += o; ccl[k] += o;
            }
        }
        t->cl += c;
    }
    t->mn = mn < t->mn ? mn : t->mn; t->mx = mx > t->mx ? mx : t->mx;
}

#define CHANB(NAME, QT, LOADQ, VDEQ, DEQ)                                                      \
/* NV vectors from lane p of A: `steps` steps of S elements from x + p; em: max |e|. */       \
static inline __attribute__((always_inline)) void NAME##_lanes(                               \
    const float *restrict x, const QT *restrict q, int64_t steps, int64_t S, int64_t p,        \
    const int NV, float s, float z, float *restrict A, int64_t AS, vf_t *restrict em)          \
{                                                                                             \
    vf_t X2[4], E2[4], E1[4], Y2[4], XY[4], MN[4], MX[4], zero = {0}, vs = zero + s, vz = zero + z;\
    vf_t EM = *em;                                                                            \
    vi_t ABS = (vi_t){0} + 0x7fffffff;                                                        \
    for (int k = 0; k < NV; k++) {                                                            \
        const float *a = A + p + k * VL;                                                      \
        X2[k] = ld_f32(a); E2[k] = ld_f32(a + AS); E1[k] = ld_f32(a + 2 * AS);                 \
        Y2[k] = ld_f32(a + 3 * AS); XY[k] = ld_f32(a + 4 * AS);                               \
        MN[k] = ld_f32(a + 5 * AS); MX[k] = ld_f32(a + 6 * AS);                               \
    }                                                                                         \
    for (int64_t r = 0; r < steps; r++) {                                                     \
        const float *xr = x + p + r * S;                                                      \
        const QT *qr = q + p + r * S;                                                         \
        for (int k = 0; k < NV; k++) {                                                        \
            vf_t xv = ld_f32(xr + k * VL), qv = LOADQ(qr + k * VL), yv = VDEQ, e = xv - yv;   \
            X2[k] += xv * xv; E2[k] += e * e; E1[k] += e; Y2[k] += yv * yv; XY[k] += xv * yv; \
            EM = vmax(EM, (vf_t)((vi_t)e & ABS));                                             \
            MN[k] = vmin(MN[k], xv); MX[k] = vmax(MX[k], xv);                                 \
        }                                                                                     \
    }                                                                                         \
    for (int k = 0; k < NV; k++) {                                                            \
        float *a = A + p + k * VL;                                                            \
        st_f32(a, X2[k]); st_f32(a + AS, E2[k]); st_f32(a + 2 * AS, E1[k]);                   \
        st_f32(a + 3 * AS, Y2[k]); st_f32(a + 4 * AS, XY[k]);                                 \
        st_f32(a + 5 * AS, MN[k]); st_f32(a + 6 * AS, MX[k]);                                 \
    }                                                                                         \
    *em = EM;                                                                                 \
}                                                                                             \
static void NAME##_blocks(const float *restrict x, const QT *restrict q, int64_t steps,       \
                          int64_t S, int64_t p, int NV, float s, float z, float *restrict A,  \
                          int64_t AS, vf_t *restrict em)                                      \
{                                                                                             \
    switch (NV) {                                                                             \
    case 1: NAME##_lanes(x, q, steps, S, p, 1, s, z, A, AS, em); break;                       \
    case 2: NAME##_lanes(x, q, steps, S, p, 2, s, z, A, AS, em); break;                       \
    case 3: NAME##_lanes(x, q, steps, S, p, 3, s, z, A, AS, em); break;                       \
    default: NAME##_lanes(x, q, steps, S, p, 4, s, z, A, AS, em); break;                      \
    }                                                                                         \
}                                                                                             \
/* Columns c0..w-1 of `rows` rows, scalar, into lanes c of A; em: max |e|. */                 \
static void NAME##_cols(const float *restrict x, const QT *restrict q, int64_t rows,          \
                        int64_t w, int64_t c0, float s, float z, float *restrict A, int64_t AS,\
                        float *restrict em)                                                   \
{                                                                                             \
    for (int64_t r = 0; r < rows; r++)                                                        \
        for (int64_t c = c0; c < w; c++) {                                                    \
            float xv = x[r * w + c], qv = (float)q[r * w + c], yv = DEQ, e = xv - yv;         \
            float ab = e < 0 ? -e : e;                                                        \
            A[c] += xv * xv; A[AS + c] += e * e; A[2 * AS + c] += e;                          \
            A[3 * AS + c] += yv * yv; A[4 * AS + c] += xv * yv;                               \
            A[5 * AS + c] = xv < A[5 * AS + c] ? xv : A[5 * AS + c];                          \
            A[6 * AS + c] = xv > A[6 * AS + c] ? xv : A[6 * AS + c];                          \
            *em = ab > *em ? ab : *em;                                                        \
        }                                                                                     \
}                                                                                             \
static void NAME(const float *restrict x, const QT *restrict q, int64_t n, int64_t w, float s,\
                 float z, float lo, float hi, double *restrict out, double *restrict cx2,     \
                 double *restrict ce2, double *restrict ce1, double *restrict cmn,            \
                 double *restrict cmx, double *restrict ccl, float *restrict A)               \
{                                                                                             \
    const float big = 3.402823466e38f;                                                        \
    sums_t t = {0, 0, 0, 0, 0, 0, 0, big, -big};                                              \
    vf_t em = {0};                                                                            \
    int64_t rows = n / w, k = 0, W, AS, T, c0;                                                \
    for (int64_t j = NVMAX; j >= 1 && !k; j--)                                                \
        if (w <= j * VL && (j * VL) % w == 0) k = j * VL / w;                                 \
    if (k) { W = k * w; c0 = W; } /* super-rows */                                            \
    else { W = w; c0 = w - w % VL; }                                                          \
    AS = W; T = 4096 / W > 1 ? 4096 / W * (W / w) : W / w; /* rows: tiles of ~4096 values */  \
    for (int64_t i = 0; i < 5 * AS; i++) A[i] = 0;                                            \
    for (int64_t i = 5 * AS; i < 6 * AS; i++) A[i] = big;                                     \
    for (int64_t i = 6 * AS; i < 7 * AS; i++) A[i] = -big;                                    \
    int64_t since = 0;                                                                        \
    for (int64_t r0 = 0; r0 < rows; r0 += T) {                                                \
        int64_t r1 = r0 + T < rows ? r0 + T : rows, steps = (r1 - r0) * w / W;               \
        const float *xt = x + r0 * w;                                                         \
        const QT *qt = q + r0 * w;                                                            \
        tile_range(xt, qt, (r1 - r0) * w, (int)sizeof(QT), lo, hi, &t, w, ccl);               \
        for (int64_t p = 0; p < c0; ) {                                                       \
            int nv = (c0 - p) / VL > NVMAX ? NVMAX : (int)((c0 - p) / VL);                    \
            NAME##_blocks(xt, qt, steps, W, p, nv, s, z, A, AS, &em);                         \
            p += nv * VL;                                                                     \
        }                                                                                     \
        int64_t done = steps * W / w; /* super-rows: the rows left over, all columns */       \
        if (k) NAME##_cols(xt + done * w, qt + done * w, r1 - r0 - done, w, 0, s, z, A, AS, &t.em);\
        else if (c0 < w) NAME##_cols(xt, qt, r1 - r0, w, c0, s, z, A, AS, &t.em);             \
        since += r1 - r0;                                                                     \
        if (since >= FLUSH * (W / w) || r1 == rows) { chan_flush(A, AS, w, &t, cx2, ce2, ce1, cmn, cmx); since = 0; }\
    }                                                                                         \
    for (int i = 0; i < VL; i++) t.em = em[i] > t.em ? em[i] : t.em;                          \
    out[SUM_x2] = t.x2; out[SUM_e2] = t.e2; out[SUM_y2] = t.y2; out[SUM_xy] = t.xy;           \
    out[SUM_e] = t.e; out[SUM_emax] = t.em; out[SUM_xmin] = n > 0 ? t.mn : 1.0 / 0.0;          \
    out[SUM_xmax] = n > 0 ? t.mx : -1.0 / 0.0; out[SUM_clip] = (double)t.cl;                   \
}
#define FUSED(NAME, QT, DEQ, LOADQ, VDEQ)                                                                   \
FLATB(NAME##_flat, QT, DEQ)                                                                   \
CHANB(NAME##_chan, QT, LOADQ, VDEQ, DEQ)                                                                   \
void NAME(const float *restrict x, const QT *restrict q, int64_t n, int64_t w, float s,       \
          float z, float lo, float hi, double *restrict out, double *restrict cx2,            \
          double *restrict ce2, double *restrict ce1, double *restrict cmn,                   \
          double *restrict cmx, double *restrict ccl, float *restrict a)                      \
{                                                                                             \
    if (w > 0) NAME##_chan(x, q, n, w, s, z, lo, hi, out, cx2, ce2, ce1, cmn, cmx, ccl, a);   \
    else NAME##_flat(x, q, n, s, z, lo, hi, out);                                             \
}

FUSED(fused_f32, float, qv, ld_f32, qv)
FUSED(fused_i8, int8_t, (qv - z) * s, ld_i8, (qv - vz) * vs)
FUSED(fused_u8, uint8_t, (qv - z) * s, ld_u8, (qv - vz) * vs)

/* Per-channel (last axis) sums of e = x - y over a (rows, w) tensor, for the mean error per
   channel (`TensorStats.add_channel_means`): float32 partial sums of at most FLUSH rows added into float64.
   a: w floats of scratch. */
#define CHMEAN(NAME, QT, DEQ)                                                                  \
void NAME(const float *restrict x, const QT *restrict q, int64_t rows, int64_t w, float s,    \
          float z, double *restrict ce, float *restrict a)                                    \
{                                                                                             \
    for (int64_t c = 0; c < w; c++) a[c] = 0;                                                 \
    for (int64_t r = 0; r < rows; r++) {                                                      \
        const float *restrict xr = x + r * w;                                                 \
        const QT *restrict qr = q + r * w;                                                    \
        for (int64_t c = 0; c < w; c++) { float qv = (float)qr[c]; a[c] += xr[c] - (DEQ); }  \
        if ((r + 1) % FLUSH == 0 || r + 1 == rows)                                            \
            for (int64_t c = 0; c < w; c++) { ce[c] += a[c]; a[c] = 0; }                      \
    }                                                                                         \
}
CHMEAN(chmean_f32, float, qv)
CHMEAN(chmean_i8, int8_t, (qv - z) * s)
CHMEAN(chmean_u8, uint8_t, (qv - z) * s)
/* int16: in float64 (its rounding noise is far below float32 resolution). */
void chmean_i16(const float *restrict x, const int16_t *restrict q, int64_t rows, int64_t w,
                double s, double z, double *restrict ce)
{
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < w; c++) ce[c] += (double)x[r * w + c] - ((double)q[r * w + c] - z) * s;
}

/* Sums per index of a middle axis: x viewed as (outer, n, inner), per index a of n over all
   outer and inner: x^2, e^2 (float32 blocks of at most BLK terms into float64), minimum and maximum
   of x, count of x outside [lo, hi] (a concatenation's slices along an axis that is not the last;
   rmn/rmx start at +-inf). */
#define ROWS(NAME, QT, DEQ)                                                                      \
void NAME(const float *restrict x, const QT *restrict q, int64_t outer, int64_t n, int64_t inner,\
          float s, float z, float lo, float hi, double *restrict rx2, double *restrict re2,      \
          double *restrict rmn, double *restrict rmx, double *restrict rcl)                      \
{                                                                                               \
    for (int64_t o = 0; o < outer; o++)                                                         \
        for (int64_t a = 0; a < n; a++) {                                                       \
            const float *restrict xr = x + (o * n + a) * inner;                                 \
            const QT *restrict qr = q + (o * n + a) * inner;                                    \
            double x2 = 0, e2 = 0;                                                              \
            float mn = 3.402823466e38f, mx = -3.402823466e38f;                                  \
            int64_t cl = 0;                                                                     \
            for (int64_t c0 = 0; c0 < inner; c0 += BLK) {                                       \
                int64_t c1 = c0 + BLK < inner ? c0 + BLK : inner;                               \
                float ax2 = 0, ae2 = 0;                                                         \
                int32_t acl = 0;                                                                \
                for (int64_t i = c0; i < c1; i++) {                                             \
                    float xv = xr[i], qv = (float)qr[i], e = xv - (DEQ);                        \
                    ax2 += xv * xv; ae2 += e * e;                                               \
                    mn = xv < mn ? xv : mn; mx = xv > mx ? xv : mx;                             \
                    acl += (xv < lo) | (xv > hi);                                               \
                }                                                                               \
                x2 += ax2; e2 += ae2; cl += acl;                                                \
            }                                                                                   \
            rx2[a] += x2; re2[a] += e2; rcl[a] += (double)cl;                                   \
            if (inner > 0) { rmn[a] = mn < rmn[a] ? mn : rmn[a]; rmx[a] = mx > rmx[a] ? mx : rmx[a]; } \
        }                                                                                       \
}
ROWS(rows_f32, float, qv)
ROWS(rows_i8, int8_t, (qv - z) * s)
ROWS(rows_u8, uint8_t, (qv - z) * s)

/* Copy n blocks (dst[k] <- src[k], size[k] bytes) in one call: B's values into the inputs of
   the isolated model, without a Python call per tensor. */
void copy_blocks(int64_t n, const uint64_t *dst, const uint64_t *src, const int64_t *size)
{
    for (int64_t k = 0; k < n; k++) __builtin_memcpy((void *)dst[k], (const void *)src[k], (size_t)size[k]);
}

/* Every tensor pair of one sample in one call (no Python between layers, GIL released).
   qtype: 0 float32, 1 int8, 2 uint8 (float32 blocks), 3 int16 (float64: its rounding noise is
   far below float32 resolution). width > 0 adds per-channel sums at choff (x^2, e^2 and e, the
   minimum and maximum of x: chmn/chmx start at +-inf, clip counts); scratch holds
   7 * (max(width) + 1024) floats. s32/z32/lo32/hi32 are the float32 forms (lo/hi rounded outward). */
void batch(int64_t jobs, const uint64_t *xs, const uint64_t *qs, const int32_t *qtype,
           const int64_t *n, const double *s, const double *z, const double *lo, const double *hi,
           const int64_t *width, const int64_t *choff, double *chx2, double *che2, double *che1, double *out,
           const float *s32, const float *z32, const float *lo32, const float *hi32, float *scratch,
           double *chmn, double *chmx, double *chcl)
{
    for (int64_t j = 0; j < jobs; j++) {
        const float *x = (const float *)xs[j];
        const void *q = (const void *)qs[j];
        int64_t w = width[j], rows = w > 0 ? n[j] / w : 0;
        double *cx = chx2 + choff[j], *ce = che2 + choff[j], *c1 = che1 + choff[j];
        double *mn = chmn + choff[j], *mx = chmx + choff[j], *cl = chcl + choff[j];
        switch (qtype[j]) {
        case 0: fused_f32(x, q, n[j], w, s32[j], z32[j], lo32[j], hi32[j], out + SUM_COUNT * j, cx, ce, c1, mn, mx, cl, scratch); break;
        case 1: fused_i8(x, q, n[j], w, s32[j], z32[j], lo32[j], hi32[j], out + SUM_COUNT * j, cx, ce, c1, mn, mx, cl, scratch); break;
        case 2: fused_u8(x, q, n[j], w, s32[j], z32[j], lo32[j], hi32[j], out + SUM_COUNT * j, cx, ce, c1, mn, mx, cl, scratch); break;
        case 3: flat_i16(x, q, n[j], s[j], z[j], lo[j], hi[j], out + SUM_COUNT * j);
                if (w > 0) { chan_i16(x, q, rows, w, s[j], z[j], lo[j], hi[j], cx, ce, mn, mx, cl);
                             chmean_i16(x, q, rows, w, s[j], z[j], c1); } break;
        }
    }
}
"""
