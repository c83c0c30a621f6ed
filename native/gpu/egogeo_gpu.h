/* egogeo_gpu: the VO front end on a CUDA device -- image pyramids, FAST corners with grid
 * bucketing, and pyramidal KLT with a forward-backward check -- batched over clips. A plain C
 * interface so the Node addon can dlopen it (and run without it where there is no GPU) and so it
 * can be driven from Python (ctypes) without Node or OpenCV.
 *
 * Model: a context owns one CUDA stream and every buffer it needs, allocated at creation (device
 * pools, pinned host staging). It holds `batch` slots (one per clip in flight), each with
 * `buffers` pyramid buffers. The caller decides what each buffer holds: push_frames uploads a grey
 * frame into (slot, buffer) and builds its pyramid on the device, where it stays until the buffer
 * is overwritten -- so a frame is uploaded once and serves as the "next" frame of one pair and the
 * "previous" frame of the following one. track and detect run a batch of jobs in one go.
 *
 * Numerics follow OpenCV 4.6 (cv::buildOpticalFlowPyramid, cv::calcOpticalFlowPyrLK with
 * minEigThreshold 1e-4, cv::FAST with non-max suppression), see klt_core.h.
 *
 * Units: `batch` counts slots (clips), `buffers` pyramid buffers per slot. push_frames takes up to
 * batch x buffers frames per call (each into its own (slot, buffer)); track and detect take up to
 * batch jobs per call (any slots, a slot may appear in several jobs).
 *
 * Right by construction: egogeo_gpu_create proves the device's arithmetic once per context. A
 * built-in deterministic textured pair (160 x 120) goes through the same entry points (push, detect,
 * track) on a small inner context, and the FAST score plane, the corners (raw and after the
 * selection) and the KLT tracks must equal the host reference -- scores and corners bit for bit,
 * tracks within 1e-3 px with the same status bits -- else create fails with EGOGEO_GPU_ESELFTEST
 * and one line saying what differed ("device self-test failed (...): FAST score at (x, y) is ..").
 * (A compiler once broke FAST on the device: ptxas mis-folded its unrolled min/max chains.)
 *
 * Environment: EGOGEO_GPU_REFERENCE=1 runs the library's host reference (klt_core.h on the CPU)
 * behind the same batched interface instead of CUDA: device_count is 1, device 0 is named "host
 * reference (...)", create needs no device, and push/detect/track compute on the host -- the whole
 * GPU path of a caller can be tested on any machine (slow: one CPU thread). Everything else is a
 * parameter (egogeo_gpu_params.options).
 *
 * Errors: every call returns an EGOGEO_GPU_* code; the message of the last failure on a context is
 * egogeo_gpu_last_error(ctx). Nothing aborts. A context is not thread-safe; use one per thread. */
#ifndef EGOGEO_GPU_H
#define EGOGEO_GPU_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define EGOGEO_GPU_API __attribute__((visibility("default")))
#else
#define EGOGEO_GPU_API
#endif

/* Bumped on any change to the structs or signatures below; loaders check it. A function added keeps
 * it (loaders that use one look it up by name). */
#define EGOGEO_GPU_ABI 2

enum {
  EGOGEO_GPU_OK = 0,
  EGOGEO_GPU_EINVAL = 1,  /* bad argument (message says which) */
  EGOGEO_GPU_ENODEV = 2,  /* no CUDA device or driver */
  EGOGEO_GPU_ECUDA = 3,   /* a CUDA call failed (message has CUDA's text) */
  EGOGEO_GPU_ENOMEM = 4,  /* device or pinned host allocation failed */
  EGOGEO_GPU_ESELFTEST = 5 /* create: the device's arithmetic differs from the host reference (message says what) */
};

/* Track status bits; a track is kept when all four are set (EGOGEO_GPU_KEEP), as Tracker::step. */
enum {
  EGOGEO_GPU_FWD = 1,     /* forward KLT converged (OpenCV status) */
  EGOGEO_GPU_BACK = 2,    /* backward KLT converged */
  EGOGEO_GPU_INSIDE = 4,  /* forward point inside [0, w-1) x [0, h-1) */
  EGOGEO_GPU_FB = 8,      /* |back - start| < fb_threshold */
  EGOGEO_GPU_KEEP = 15
};

typedef struct egogeo_gpu_params {
  int device;          /* CUDA device index (default 0) */
  int max_width;       /* largest frame (default 1600 x 900) */
  int max_height;
  int levels;          /* pyramid levels above the base, OpenCV's maxLevel (default 3; 0..8) */
  int window;          /* KLT window, px (default 13; 3..31) */
  int iterations;      /* KLT iterations per level (default 10; 1..100) */
  float epsilon;       /* KLT stops when a step is below this, px (default 0.03) */
  float min_eig;       /* OpenCV's minEigThreshold (default 1e-4) */
  float fb_threshold;  /* forward-backward threshold, px (default 1.0) */
  int max_points;      /* points per track job (default 2048) */
  int batch;           /* slots: clips in flight (default 1); also the most jobs per track/detect call */
  int buffers;         /* pyramid buffers per slot (default 3); push_frames takes up to batch x buffers frames */
  int options;         /* EGOGEO_GPU_OPT_* bits (default 0) */
} egogeo_gpu_params;

/* egogeo_gpu_params.options: the former kernels, kept so bench/gpu can measure both in one run
 * (the same answers), the per-stage profile, and a test hook. The library reads no environment for
 * these: its callers decide (the addon and bench/gpu map EGOGEO_GPU_PROFILE=1 and the like to them). */
#define EGOGEO_GPU_OPT_PROFILE 1          /* device time per stage, read with egogeo_gpu_profile */
#define EGOGEO_GPU_OPT_THREAD_KLT 2       /* one thread per tracked point instead of a warp */
#define EGOGEO_GPU_OPT_HOST_SELECT 4      /* corners ranked and bucketed on the host */
#define EGOGEO_GPU_OPT_SELFTEST_INJECT 8  /* test hook: the self-test perturbs one FAST score of the device's
                                             answer, so create fails as on a device whose arithmetic is wrong */

typedef struct egogeo_gpu_context egogeo_gpu_context;

/* One grey frame (8-bit, row-major, `stride` bytes per row >= width) for (slot, buffer). */
typedef struct egogeo_gpu_frame {
  int slot, buffer;
  const unsigned char* data;
  int width, height, stride;
} egogeo_gpu_frame;

/* Track n points from buffer `from` to buffer `to` of `slot` (same frame size), then back. */
typedef struct egogeo_gpu_track_job {
  int slot, from, to;
  int n;                  /* 0..max_points */
  const float* pts;       /* 2n: x, y in `from` */
  float* fwd;             /* out 2n: the points in `to` */
  float* back;            /* out 2n (may be NULL): tracked back into `from` */
  unsigned char* status;  /* out n: EGOGEO_GPU_* bits */
} egogeo_gpu_track_job;

/* FAST corners of (slot, buffer), strongest first (ties in raster order). With max_features > 0
 * they are then bucketed as Tracker::detect does: at most max(1, max_features / (grid_cols *
 * grid_rows)) per grid cell counting the `existing` tracks, none within one min_distance cell
 * (3x3 cells) of a track or of a corner already taken, 4 px from the border, and at most
 * max_features - n_existing in all (n_existing <= max_points of the context). With max_features
 * == 0 every corner is returned (up to capacity). */
typedef struct egogeo_gpu_detect_job {
  int slot, buffer;
  int threshold;          /* FAST threshold 1..255 */
  int max_features, grid_cols, grid_rows, min_distance;
  int n_existing;
  const float* existing;  /* 2 n_existing */
  int capacity;           /* room in out_xy / out_score */
  float* out_xy;          /* out 2 * count */
  float* out_score;       /* out count (may be NULL) */
  int* count;             /* out: corners written (capped at capacity) */
  int* found;             /* out (may be NULL): corners FAST found before bucketing */
} egogeo_gpu_detect_job;

EGOGEO_GPU_API int egogeo_gpu_abi_version(void);
/* Devices visible (0 when there is no device or no driver; never an error). */
EGOGEO_GPU_API int egogeo_gpu_device_count(void);
/* The device's name and compute capability ("NVIDIA H200 (sm_90, 139 GiB)"); EGOGEO_GPU_ENODEV
 * when it does not exist. */
EGOGEO_GPU_API int egogeo_gpu_device_name(int device, char* buf, size_t len);

EGOGEO_GPU_API void egogeo_gpu_default_params(egogeo_gpu_params* p);
/* Always sets *out when out is not NULL and host memory allows, also on failure, so the message
 * can be read with egogeo_gpu_last_error; destroy it either way. */
EGOGEO_GPU_API int egogeo_gpu_create(const egogeo_gpu_params* p, egogeo_gpu_context** out);
EGOGEO_GPU_API void egogeo_gpu_destroy(egogeo_gpu_context* ctx);
/* The last failure's message ("" when none); valid until the next call on ctx. */
EGOGEO_GPU_API const char* egogeo_gpu_last_error(const egogeo_gpu_context* ctx);

/* Uploads n frames, 0 <= n <= batch x buffers, each into a distinct (slot, buffer), through pinned
 * staging, and builds their pyramids and derivatives on the device. Returns once the copies are
 * queued; later calls on the context see the results. */
EGOGEO_GPU_API int egogeo_gpu_push_frames(egogeo_gpu_context* ctx, const egogeo_gpu_frame* frames, int n);
/* Forward and backward KLT for every job (n <= batch) in one launch; returns when the outputs are
 * written. detect: n <= batch jobs; returns when the outputs are written. */
EGOGEO_GPU_API int egogeo_gpu_track(egogeo_gpu_context* ctx, const egogeo_gpu_track_job* jobs, int n);
EGOGEO_GPU_API int egogeo_gpu_detect(egogeo_gpu_context* ctx, const egogeo_gpu_detect_job* jobs, int n);

/* EGOGEO_GPU_PROFILE=1 at create: the device time spent so far in each stage of the context's calls,
 * from CUDA events around its copies and launches, as one JSON object: {"enabled": true, "upload":
 * {"ms": 12.5, "spans": 40}, ...} with the stages upload, pyramids (push_frames), fast, nms, sort,
 * select, detect_download (detect), track_upload, track, track_download (track); {"enabled": false}
 * without it. A push's spans are counted once a later track or detect has waited for them. EINVAL
 * when buf is too small (1 KiB is enough). For bench/gpu; the events cost a little time. */
EGOGEO_GPU_API int egogeo_gpu_profile(const egogeo_gpu_context* ctx, char* buf, size_t len);

/* Host reference of the same numerics (klt_core.h run on the CPU, no device needed): pyramids of
 * two frames of one size and forward + backward KLT of n points with the parameters of p.
 * For checking the arithmetic against OpenCV where there is no GPU. err: room for a message. */
EGOGEO_GPU_API int egogeo_gpu_reference_track(const egogeo_gpu_params* p, const unsigned char* prev, const unsigned char* next,
                                              int width, int height, int n, const float* pts, float* fwd, float* back,
                                              unsigned char* status, char* err, size_t err_len);
/* Host reference FAST + bucketing of one frame (the detect job's fields slot/buffer are ignored). */
EGOGEO_GPU_API int egogeo_gpu_reference_detect(const unsigned char* img, int width, int height, const egogeo_gpu_detect_job* job,
                                               char* err, size_t err_len);

#ifdef __cplusplus
}
#endif

#endif /* EGOGEO_GPU_H */
