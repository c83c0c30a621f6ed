/* The pyramidal KLT's default parameters, shared by the CPU tracker (native/vo/types.h Options)
 * and the CUDA library's egogeo_gpu_default_params (native/gpu): one place, plain C so the
 * standalone GPU build (no OpenCV, no Node) reads it too. */
#ifndef EGOGEO_KLT_DEFAULTS_H
#define EGOGEO_KLT_DEFAULTS_H

#define EGOGEO_KLT_WINDOW 13        /* window side (px) */
#define EGOGEO_KLT_LEVELS 3         /* pyramid levels above the base (OpenCV's maxLevel) */
#define EGOGEO_KLT_ITERATIONS 10    /* iterations per level at most */
#define EGOGEO_KLT_EPSILON 0.03     /* stop when a step moves less than this (px): cv::TermCriteria's EPS (a double there, a float on the GPU) */
#define EGOGEO_KLT_FB_THRESHOLD 1.0 /* forward-backward check (px) */

#endif
