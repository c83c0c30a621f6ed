#!/usr/bin/env python3
"""Checks libegogeo_gpu (native/gpu) on a GPU machine without Node or OpenCV C++ headers.

  python3 bench/gpu/harness.py --build --frames bench/gpu/frames --out bench/gpu/results.json

(a) accuracy: FAST corners of KITTI frames (GPU vs cv2.FAST, same threshold), then the GPU's
    bucketed corners tracked forward and back by the GPU and by cv2.calcOpticalFlowPyrLK with the
    CPU tracker's parameters (window 13, 10 iterations, eps 0.03, FB 1 px; levels 3 on consecutive
    frames, 4 on frames 3 apart): median endpoint difference and the share of tracks both keep.
(b) throughput: detection + tracking (per frame: FAST + bucketing, forward and backward KLT of up
    to 500 points from the previous frame) over batches of clips at 1241x376 and 1600x900
    (KITTI frames upscaled), GPU vs cv2 on every CPU core (one process per core,
    cv2.setNumThreads(1); FAST + strongest 500, no bucketing) in the same run. Frames are decoded
    beforehand on both sides. The GPU is driven twice: by this script's loop (ctypes) and by
    bench/gpu/throughput.cc (egogeo_gpu_bench, the same loop in C++, as the engine calls the
    library), the latter also profiled, with two contexts, and with the former kernels.
--reference runs (a) with the library's host reference of the kernels' arithmetic instead of the
device (no GPU needed: checks the numerics and this script anywhere). Without a device and
without --reference: prints "no CUDA device" and exits 2.
"""
import argparse
import ctypes as C
import glob
import hashlib
import json
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile
import time

import cv2
import numpy as np

# Before any other cv2 call: the throughput step's CPU pool forks this process, and a fork taken
# after cv2's thread pool has started can hang in the children (seen on the H200 machine).
cv2.setNumThreads(1)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
# The agreement bar, shared with the self-check --device auto|gpu runs (src/native/device.ts).
with open(os.path.join(ROOT, 'native', 'gpu', 'tolerances.json')) as f:
    TOL = json.load(f)
P = C.c_void_p


class Params(C.Structure):
    _fields_ = [(n, C.c_int) for n in ('device', 'max_width', 'max_height', 'levels', 'window', 'iterations')] + \
               [(n, C.c_float) for n in ('epsilon', 'min_eig', 'fb_threshold')] + \
               [(n, C.c_int) for n in ('max_points', 'batch', 'buffers', 'options')]


# egogeo_gpu_params.options (egogeo_gpu.h): the library reads no environment for these; the harness
# maps the variables its runs set (device_check.sh) as the addon does (native/gpu/options_env.h).
OPTIONS_ENV = (('EGOGEO_GPU_PROFILE', 1), ('EGOGEO_GPU_THREAD_KLT', 2), ('EGOGEO_GPU_HOST_SELECT', 4), ('EGOGEO_GPU_SELFTEST_INJECT', 8))


def options_from_env():
    return sum(bit for name, bit in OPTIONS_ENV if os.environ.get(name) == '1')


class Frame(C.Structure):
    _fields_ = [('slot', C.c_int), ('buffer', C.c_int), ('data', P), ('width', C.c_int), ('height', C.c_int), ('stride', C.c_int)]


class TrackJob(C.Structure):
    _fields_ = [('slot', C.c_int), ('from_', C.c_int), ('to', C.c_int), ('n', C.c_int), ('pts', P), ('fwd', P), ('back', P), ('status', P)]


class DetectJob(C.Structure):
    _fields_ = [(n, C.c_int) for n in ('slot', 'buffer', 'threshold', 'max_features', 'grid_cols', 'grid_rows', 'min_distance', 'n_existing')] + \
               [('existing', P), ('capacity', C.c_int), ('out_xy', P), ('out_score', P), ('count', P), ('found', P)]


KEEP = 15
WIN, ITERS, EPS, FB, FAST_T, MAXF = 13, 10, 0.03, 1.0, 12, 500


def load(path):
    lib = C.CDLL(path)
    # Every signature (ctypes would pass pointers as 32-bit ints otherwise).
    I, S, R = C.c_int, C.c_size_t, C.POINTER
    sig = {
        'egogeo_gpu_abi_version': [], 'egogeo_gpu_device_count': [], 'egogeo_gpu_device_name': [I, C.c_char_p, S],
        'egogeo_gpu_default_params': [R(Params)], 'egogeo_gpu_create': [R(Params), R(P)], 'egogeo_gpu_destroy': [P],
        'egogeo_gpu_last_error': [P], 'egogeo_gpu_push_frames': [P, R(Frame), I], 'egogeo_gpu_track': [P, R(TrackJob), I],
        'egogeo_gpu_detect': [P, R(DetectJob), I],
        'egogeo_gpu_reference_track': [R(Params), P, P, I, I, I, P, P, P, P, C.c_char_p, S],
        'egogeo_gpu_reference_detect': [P, I, I, R(DetectJob), C.c_char_p, S],
    }
    for name, args in sig.items():
        getattr(lib, name).argtypes = args
        getattr(lib, name).restype = I
    lib.egogeo_gpu_destroy.restype = None
    lib.egogeo_gpu_default_params.restype = None
    lib.egogeo_gpu_last_error.restype = C.c_char_p
    lib.egogeo_gpu_abi_version.restype = C.c_int
    if lib.egogeo_gpu_abi_version() != 2:
        sys.exit(f'{path}: interface version {lib.egogeo_gpu_abi_version()}, this harness speaks 2')
    return lib


class Gpu:
    """One context; raises RuntimeError with the library's message on any failure."""

    def __init__(self, lib, w, h, levels, batch, max_points=2048):
        self.lib = lib
        p = Params()
        lib.egogeo_gpu_default_params(C.byref(p))
        p.max_width, p.max_height, p.levels, p.batch, p.max_points, p.buffers = w, h, levels, batch, max_points, 3
        p.options = options_from_env()
        self.ctx = P()
        rc = lib.egogeo_gpu_create(C.byref(p), C.byref(self.ctx))
        if rc != 0:
            msg = lib.egogeo_gpu_last_error(self.ctx).decode(errors='replace')
            lib.egogeo_gpu_destroy(self.ctx)
            self.ctx = None
            raise RuntimeError(f'create: {msg}')
        self.cap = ((w + 1) // 2) * ((h + 1) // 2)

    def close(self):
        if self.ctx:
            self.lib.egogeo_gpu_destroy(self.ctx)
            self.ctx = None

    def _ok(self, rc, what):
        if rc != 0:
            raise RuntimeError(f'{what}: {self.lib.egogeo_gpu_last_error(self.ctx).decode(errors="replace")}')

    def push(self, items):  # [(slot, buffer, img)]
        arr = (Frame * len(items))(*[Frame(s, b, img.ctypes.data, img.shape[1], img.shape[0], img.strides[0]) for s, b, img in items])
        self._ok(self.lib.egogeo_gpu_push_frames(self.ctx, arr, len(items)), 'push_frames')

    def detect(self, items, max_features=MAXF):  # [(slot, buffer, existing Nx2)] -> [(xy, scores, found)]
        outs, jobs, keep = [], [], []
        for s, b, ex in items:
            cap = self.cap if max_features == 0 else max_features
            xy, sc, cnt, fnd = np.zeros((cap, 2), np.float32), np.zeros(cap, np.float32), C.c_int(), C.c_int()
            ex = np.ascontiguousarray(ex, np.float32).reshape(-1, 2)
            keep += [xy, sc, cnt, fnd, ex]
            jobs.append(DetectJob(s, b, FAST_T, max_features, 10, 4, 8, len(ex), ex.ctypes.data if len(ex) else None, cap,
                                  xy.ctypes.data, sc.ctypes.data, C.addressof(cnt), C.addressof(fnd)))
            outs.append((xy, sc, cnt, fnd))
        arr = (DetectJob * len(jobs))(*jobs)
        self._ok(self.lib.egogeo_gpu_detect(self.ctx, arr, len(jobs)), 'detect')
        return [(xy[:c.value], sc[:c.value], f.value) for xy, sc, c, f in outs]

    def track(self, items):  # [(slot, from, to, pts Nx2)] -> [(fwd, back, status)]
        outs, jobs = [], []
        for s, a, b, pts in items:
            pts = np.ascontiguousarray(pts, np.float32).reshape(-1, 2)
            f, bk, st = np.zeros_like(pts), np.zeros_like(pts), np.zeros(len(pts), np.uint8)
            jobs.append(TrackJob(s, a, b, len(pts), pts.ctypes.data, f.ctypes.data, bk.ctypes.data, st.ctypes.data))
            outs.append((f, bk, st, pts))
        arr = (TrackJob * len(jobs))(*jobs)
        self._ok(self.lib.egogeo_gpu_track(self.ctx, arr, len(jobs)), 'track')
        return [(f, bk, st) for f, bk, st, _ in outs]


def reference_track(lib, a, b, pts, levels):
    p = Params()
    lib.egogeo_gpu_default_params(C.byref(p))
    p.levels = levels
    pts = np.ascontiguousarray(pts, np.float32)
    f, bk, st, err = np.zeros_like(pts), np.zeros_like(pts), np.zeros(len(pts), np.uint8), C.create_string_buffer(256)
    rc = lib.egogeo_gpu_reference_track(C.byref(p), a.ctypes.data, b.ctypes.data, a.shape[1], a.shape[0], len(pts), pts.ctypes.data,
                                        f.ctypes.data, bk.ctypes.data, st.ctypes.data, err, 256)
    if rc != 0:
        raise RuntimeError(err.value.decode(errors='replace'))
    return f, bk, st


def reference_detect(lib, img, max_features, existing=np.zeros((0, 2), np.float32)):
    cap = (img.shape[0] * img.shape[1]) // 4 + 16 if max_features == 0 else max_features
    xy, sc, cnt, fnd, err = np.zeros((cap, 2), np.float32), np.zeros(cap, np.float32), C.c_int(), C.c_int(), C.create_string_buffer(256)
    ex = np.ascontiguousarray(existing, np.float32)
    job = DetectJob(0, 0, FAST_T, max_features, 10, 4, 8, len(ex), ex.ctypes.data if len(ex) else None, cap, xy.ctypes.data, sc.ctypes.data,
                    C.addressof(cnt), C.addressof(fnd))
    if lib.egogeo_gpu_reference_detect(img.ctypes.data, img.shape[1], img.shape[0], C.byref(job), err, 256) != 0:
        raise RuntimeError(err.value.decode(errors='replace'))
    return xy[:cnt.value], sc[:cnt.value], fnd.value


def cv_track(a, b, pts, levels):
    """Tracker::step on the CPU: forward, backward from the forward result, the same four checks."""
    crit = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, ITERS, EPS)
    pts = pts.reshape(-1, 1, 2).astype(np.float32)
    f, s1, _ = cv2.calcOpticalFlowPyrLK(a, b, pts, None, winSize=(WIN, WIN), maxLevel=levels, criteria=crit)
    bk, s2, _ = cv2.calcOpticalFlowPyrLK(b, a, f, pts.copy(), winSize=(WIN, WIN), maxLevel=levels, criteria=crit, flags=cv2.OPTFLOW_USE_INITIAL_FLOW)
    f, bk, p = f.reshape(-1, 2), bk.reshape(-1, 2), pts.reshape(-1, 2)
    h, w = a.shape
    inside = (f[:, 0] >= 0) & (f[:, 1] >= 0) & (f[:, 0] < w - 1) & (f[:, 1] < h - 1)
    fb = ((bk - p) ** 2).sum(1) < np.float32(FB * FB)
    return f, (s1.ravel() > 0) & (s2.ravel() > 0) & inside & fb


def accuracy(lib, frames, use_reference, batch):
    out = {}
    fast = cv2.FastFeatureDetector_create(FAST_T, True)
    h, w = frames[0].shape
    # Detection: the raw FAST corners (position and score) must be cv2's, exactly.
    det = {'frames': 0, 'identical': 0, 'corners_gpu': 0, 'corners_cv2': 0}
    gpu = None if use_reference else Gpu(lib, w, h, 4, batch)
    try:
        # Every frame, `batch` per call.
        raw = []
        for at in range(0, len(frames), batch):
            chunk = frames[at:at + batch]
            if use_reference:
                raw += [reference_detect(lib, f, 0) for f in chunk]
            else:
                gpu.push([(i, 0, f) for i, f in enumerate(chunk)])
                raw += gpu.detect([(i, 0, np.zeros((0, 2))) for i in range(len(chunk))], max_features=0)
        for f, (xy, sc, _) in zip(frames, raw):
            ours = {(int(x), int(y), int(s)) for (x, y), s in zip(xy, sc)}
            theirs = {(int(k.pt[0]), int(k.pt[1]), int(k.response)) for k in fast.detect(f)}
            det['frames'] += 1
            det['identical'] += ours == theirs
            det['corners_gpu'] += len(ours)
            det['corners_cv2'] += len(theirs)
        out['detection'] = det
        # The selection (grid quota, min_distance, strongest first) on the device against the host
        # reference's, corner for corner, on every frame.
        sel = {'frames': 0, 'identical': 0, 'corners': 0}
        for at in range(0, len(frames), batch):
            chunk = frames[at:at + batch]
            if use_reference:
                got = [reference_detect(lib, f, MAXF) for f in chunk]
            else:
                gpu.push([(i, 0, f) for i, f in enumerate(chunk)])
                got = gpu.detect([(i, 0, np.zeros((0, 2))) for i in range(len(chunk))])
            for f, (xy, sc, fnd) in zip(chunk, got):
                rxy, rsc, rfnd = reference_detect(lib, f, MAXF)
                sel['frames'] += 1
                sel['identical'] += bool(fnd == rfnd and np.array_equal(xy, rxy) and np.array_equal(sc, rsc))
                sel['corners'] += len(xy)
        out['selection'] = sel
        # Tracking: the bucketed corners of frame k, into frame k + step.
        for name, step, levels in (('consecutive', 1, 3), ('sparse_step3', 3, 4)):
            pairs = [(k, k + step) for k in range(0, len(frames) - step, step)]
            diffs, both, either, agree, total, same_bits = [], 0, 0, 0, 0, 0
            for at in range(0, len(pairs), batch):
                chunk = pairs[at:at + batch]
                if use_reference:
                    corners = [reference_detect(lib, frames[a], MAXF)[0] for a, _ in chunk]
                    res = [reference_track(lib, frames[a], frames[b], c, levels) for (a, b), c in zip(chunk, corners)]
                else:
                    g = Gpu(lib, w, h, levels, batch)
                    try:
                        g.push([(i, 0, frames[a]) for i, (a, _) in enumerate(chunk)])
                        g.push([(i, 1, frames[b]) for i, (_, b) in enumerate(chunk)])
                        corners = [xy for xy, _, _ in g.detect([(i, 0, np.zeros((0, 2))) for i in range(len(chunk))])]
                        res = g.track([(i, 0, 1, c) for i, c in enumerate(corners)])
                    finally:
                        g.close()
                for (a, b), c, (f, bk, st) in zip(chunk, corners, res):
                    if not use_reference:  # the device's tracks against its host reference's, bit for bit
                        rf, rb, rs = reference_track(lib, frames[a], frames[b], c, levels)
                        same_bits += int(((f == rf).all(1) & (bk == rb).all(1) & (st == rs)).sum())
                    cf, ck = cv_track(frames[a], frames[b], c, levels)
                    gk = st == KEEP
                    total += len(c)
                    agree += int((gk == ck).sum())
                    both += int((gk & ck).sum())
                    either += int((gk | ck).sum())
                    if (gk & ck).any():
                        diffs.append(np.linalg.norm(f[gk & ck] - cf[gk & ck], axis=1))
            d = np.concatenate(diffs) if diffs else np.zeros(0)
            out[name] = {
                'pairs': len(pairs), 'levels': levels, 'tracks': total,
                'median_endpoint_diff_px': float(np.median(d)) if len(d) else None,
                'p99_endpoint_diff_px': float(np.percentile(d, 99)) if len(d) else None,
                'kept_by_both_of_either': both / either if either else None,
                'keep_flag_agreement': agree / total if total else None,
                # forward point, backward point and status equal to the host reference's (klt_core.h)
                'bit_identical_to_host_reference': None if use_reference else same_bits,
                'pass': bool(len(d) and np.median(d) <= TOL['median_endpoint_diff_px'] and either
                             and both / either >= TOL['kept_by_both_of_either']),
            }
    finally:
        if gpu:
            gpu.close()
    return out


def _cpu_clip(args):
    clip, levels = args
    cv2.setNumThreads(1)
    fast = cv2.FastFeatureDetector_create(FAST_T, True)
    crit = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, ITERS, EPS)
    pts, prev_img, pyr_s = None, None, 0.0
    for img in clip:
        # Timed only: the Python binding cannot take pyramids, so each calcOpticalFlowPyrLK call
        # below builds both (4 builds per pair where the C++ tracker builds 1); see cpu_fps_pyramids_once.
        t0 = time.perf_counter()
        cv2.buildOpticalFlowPyramid(img, (WIN, WIN), levels, withDerivatives=False)
        pyr_s += time.perf_counter() - t0
        if pts is not None and len(pts):
            # The Python binding takes images, not pyramids: pass images (it builds the same pyramids).
            f, s1, _ = cv2.calcOpticalFlowPyrLK(prev_img, img, pts, None, winSize=(WIN, WIN), maxLevel=levels, criteria=crit)
            cv2.calcOpticalFlowPyrLK(img, prev_img, f, pts.copy(), winSize=(WIN, WIN), maxLevel=levels, criteria=crit, flags=cv2.OPTFLOW_USE_INITIAL_FLOW)
        kps = fast.detect(img)
        resp = np.array([k.response for k in kps], np.float32)
        order = np.argsort(-resp, kind='stable')[:MAXF]
        pts = np.array([kps[i].pt for i in order], np.float32).reshape(-1, 1, 2)
        prev_img = img
    return len(clip), pyr_s


def native_bench(lib_path, src, clips, length, batch, env, args=()):
    """bench/gpu/throughput.cc (egogeo_gpu_bench, built beside the library) on the same clips: the
    library's throughput without Python in the loop, as the engine calls it. None when not built."""
    exe = os.path.join(os.path.dirname(os.path.abspath(lib_path)), 'egogeo_gpu_bench')
    if not os.path.exists(exe):
        return None
    h, w = src[0].shape
    with tempfile.NamedTemporaryFile(suffix='.u8') as f:
        np.ascontiguousarray(np.stack(src)).tofile(f.name)
        r = subprocess.run([exe, '--frames', f.name, '--count', str(len(src)), '--width', str(w), '--height', str(h), '--clips', str(clips),
                            '--length', str(length), '--batch', str(batch), '--max-features', str(MAXF), '--max-points', str(MAXF), *args],
                           capture_output=True, text=True, errors='replace', env={**os.environ, **env})
    if r.returncode != 0:
        raise RuntimeError(f'egogeo_gpu_bench: {r.stderr.strip() or r.stdout.strip()}')
    return json.loads(r.stdout)


# The library as built (warp KLT, selection on the device, one context), with the device time per
# stage, with two contexts on two host threads (one's copies overlap the other's kernels), and the
# former kernels it replaced (one thread per point; selection on the host), each in the same run.
NATIVE_VARIANTS = (('default', {}, ()), ('profiled', {'EGOGEO_GPU_PROFILE': '1'}, ()), ('two_contexts', {}, ('--contexts', '2')),
                   ('thread_klt', {'EGOGEO_GPU_THREAD_KLT': '1'}, ()), ('host_select', {'EGOGEO_GPU_HOST_SELECT': '1'}, ()))


def throughput(lib, lib_path, frames, sizes, clips, length, batch, workers):
    res = []
    for (w, h) in sizes:
        src = [cv2.resize(f, (w, h), interpolation=cv2.INTER_LINEAR) if f.shape != (h, w) else f for f in frames]
        clip_list = [[src[(c * 3 + t) % len(src)] for t in range(length)] for c in range(clips)]
        n = clips * length
        # GPU: `batch` clips at a time; per time step one push, one detect, one track for all of them.
        g = Gpu(lib, w, h, 3, batch, max_points=MAXF)
        steps = {'push': 0.0, 'track': 0.0, 'detect': 0.0}
        try:
            def run_gpu():
                for k in steps:
                    steps[k] = 0.0
                for at in range(0, clips, batch):
                    group = clip_list[at:at + batch]
                    pts = [np.zeros((0, 2), np.float32)] * len(group)
                    for t in range(length):
                        t0 = time.perf_counter()
                        g.push([(i, t % 2, c[t]) for i, c in enumerate(group)])
                        t1 = time.perf_counter()
                        if t > 0:
                            g.track([(i, (t - 1) % 2, t % 2, p) for i, p in enumerate(pts)])
                        t2 = time.perf_counter()
                        pts = [xy for xy, _, _ in g.detect([(i, t % 2, np.zeros((0, 2))) for i in range(len(group))])]
                        steps['push'] += t1 - t0
                        steps['track'] += t2 - t1
                        steps['detect'] += time.perf_counter() - t2
            run_gpu()  # warm-up (first launches, page-in)
            t0 = time.perf_counter()
            run_gpu()
            gpu_s = time.perf_counter() - t0
        finally:
            g.close()
        calls = length * ((clips + batch - 1) // batch)
        native = {}
        for name, env, args in NATIVE_VARIANTS:
            got = native_bench(lib_path, src, clips, length, batch, env, args)
            if got is None:
                break
            native[name] = got
            print(f'  {w}x{h}: C++ loop ({name}): {got["fps"]:.0f} frames/s; ms per call: '
                  + ', '.join(f'{k} {v:.2f}' for k, v in got['ms_per_call'].items()), flush=True)
        with mp.get_context('fork').Pool(workers) as pool:
            pool.map(_cpu_clip, [(clip_list[0], 3)] * workers)  # warm-up
            t0 = time.perf_counter()
            got = pool.map(_cpu_clip, [(c, 3) for c in clip_list], chunksize=1)
            cpu_s = time.perf_counter() - t0
        done, pyr_s = sum(g[0] for g in got), sum(g[1] for g in got)
        # The CPU as the C++ tracker would run: one pyramid per frame instead of the 5 built here
        # (1 timed + 4 inside the two LK calls): an estimate from the timed builds.
        once_s = max(1e-9, cpu_s - 4 * pyr_s / workers)
        res.append({'width': w, 'height': h, 'clips': clips, 'frames_per_clip': length, 'frames': n, 'gpu_batch': batch,
                    'gpu_fps': n / gpu_s, 'cpu_fps': done / cpu_s, 'cpu_fps_pyramids_once': done / once_s, 'cpu_processes': workers,
                    'speedup': (n / gpu_s) / (done / cpu_s), 'speedup_vs_pyramids_once': (n / gpu_s) / (done / once_s),
                    'gpu_ms_per_call': {k: 1000 * v / calls for k, v in steps.items()}})
        if native:
            d = native['default']
            res[-1].update({'native': native, 'native_fps': d['fps'], 'native_speedup': d['fps'] / (done / cpu_s)})
        print(f'  {w}x{h}: GPU {n / gpu_s:.0f} frames/s (Python loop), CPU ({workers} processes) {done / cpu_s:.0f} frames/s '
              f'({done / once_s:.0f} with one pyramid per frame, estimated); GPU ms per call of {batch} clips: '
              + ', '.join(f'{k} {1000 * v / calls:.2f}' for k, v in steps.items()), flush=True)
        if native:
            print(f'  {w}x{h}: GPU {native["default"]["fps"]:.0f} frames/s (C++ loop) = {res[-1]["native_speedup"]:.1f}x the CPU processes; '
                  f'two contexts {native["two_contexts"]["fps"]:.0f}; former KLT kernel {native["thread_klt"]["fps"]:.0f}, '
                  f'selection on the host {native["host_select"]["fps"]:.0f} frames/s', flush=True)
    return res


def git_commit():
    """This checkout's commit as egogeo's bench JSON records it (`-dirty` when tracked files differ;
    src/throughput/provenance.ts), or None: a GPU machine's copy of the tree often has no .git."""
    def git(*args):
        try:
            r = subprocess.run(['git', *args], cwd=ROOT, capture_output=True, text=True, timeout=5)
        except (OSError, subprocess.SubprocessError):
            return None
        return r.stdout.strip() if r.returncode == 0 else None
    top = git('rev-parse', '--show-toplevel')
    if not top or os.path.realpath(top) != os.path.realpath(ROOT):
        return None
    head = git('rev-parse', 'HEAD')
    if not head:
        return None
    return head + '-dirty' if git('status', '--porcelain', '--untracked-files=no') else head


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--build', action='store_true', help='configure and build native/gpu into build-gpu (CMake + Ninja) and run its ctest first')
    ap.add_argument('--arch', default='90', help='CMAKE_CUDA_ARCHITECTURES for --build (default 90: H100/H200)')
    ap.add_argument('--lib', default=os.path.join(ROOT, 'build-gpu', 'libegogeo_gpu.so'))
    ap.add_argument('--frames', required=True, help='folder of KITTI grey frames (*.jpg or *.png; image_0/ inside is used when present)')
    ap.add_argument('--max-frames', type=int, default=60)
    ap.add_argument('--out', required=True, help='JSON results')
    ap.add_argument('--reference', action='store_true', help='accuracy only, with the host reference instead of the device')
    ap.add_argument('--clips', type=int, default=64, help='clips per throughput run')
    ap.add_argument('--length', type=int, default=10, help='frames per clip')
    ap.add_argument('--batch', type=int, default=32, help='clips in flight on the GPU')
    ap.add_argument('--workers', type=int, default=os.cpu_count() or 1)
    ap.add_argument('--sizes', default='1241x376,1600x900', help='throughput frame sizes, WxH,WxH')
    ap.add_argument('--git-commit', default=None, help='the commit measured, where this copy of the tree has no .git (default: git rev-parse HEAD here)')
    a = ap.parse_args()

    # The engine measured is the library file (result['library']['sha256']); the commit, where known.
    result = {'started': time.strftime('%Y-%m-%dT%H:%M:%S'), 'git_commit': a.git_commit or git_commit(), 'cv2': cv2.__version__}
    if a.build:
        b = os.path.join(ROOT, 'build-gpu')
        t0 = time.perf_counter()
        for cmd in (['cmake', '-S', os.path.join(ROOT, 'native', 'gpu'), '-B', b, '-G', 'Ninja', f'-DCMAKE_CUDA_ARCHITECTURES={a.arch}'],
                    ['cmake', '--build', b]):
            subprocess.run(cmd, check=True)
        # Whatever its bytes (a test may print a buffer that is not UTF-8).
        t = subprocess.run(['ctest', '--test-dir', b, '--output-on-failure'], capture_output=True, text=True, errors='replace')
        print(t.stdout[-3000:], flush=True)
        result['build_s'] = time.perf_counter() - t0
        result['ctest'] = {'ok': t.returncode == 0, 'output': t.stdout[-12000:]}
    lib = load(a.lib)
    with open(a.lib, 'rb') as f:
        result['library'] = {'path': os.path.relpath(a.lib, ROOT), 'sha256': hashlib.sha256(f.read()).hexdigest(),
                             'reference_backend': os.environ.get('EGOGEO_GPU_REFERENCE') == '1'}
    devices = lib.egogeo_gpu_device_count()
    if devices == 0 and not a.reference:
        print('no CUDA device')
        sys.exit(2)
    if devices:
        name = C.create_string_buffer(256)
        lib.egogeo_gpu_device_name(0, name, 256)
        result['device'] = name.value.decode(errors='replace')
        print(f'device: {result["device"]}', flush=True)
    d = os.path.join(a.frames, 'image_0') if os.path.isdir(os.path.join(a.frames, 'image_0')) else a.frames
    files = sorted(glob.glob(os.path.join(d, '*.jpg')) + glob.glob(os.path.join(d, '*.png')))[: a.max_frames]
    if len(files) < 4:
        sys.exit(f'{d}: needs at least 4 frames, found {len(files)}')
    frames = [cv2.imread(f, cv2.IMREAD_GRAYSCALE) for f in files]
    result['frames'] = {'dir': d, 'count': len(frames), 'size': [frames[0].shape[1], frames[0].shape[0]]}
    t0 = time.perf_counter()
    try:
        result['accuracy'] = accuracy(lib, frames, a.reference or devices == 0, min(a.batch, 16))
        result['accuracy']['mode'] = 'host reference' if (a.reference or devices == 0) else 'device'
        result['accuracy_s'] = time.perf_counter() - t0
        print(json.dumps(result['accuracy'], indent=1), flush=True)
        if not a.reference:
            sizes = [tuple(int(v) for v in s.split('x')) for s in a.sizes.split(',')]
            result['throughput'] = throughput(lib, a.lib, frames, sizes, a.clips, a.length, a.batch, a.workers)
    except RuntimeError as e:  # the library's message (a failed self-test, say): keep it in the JSON
        result['error'] = str(e)
        print(f'error: {e}', flush=True)
    result['finished'] = time.strftime('%Y-%m-%dT%H:%M:%S')
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, 'w') as f:
        json.dump(result, f, indent=1)
    print(f'wrote {a.out}')
    acc = result.get('accuracy', {})
    failed = ['error'] if 'error' in result else []
    failed += [k for k, v in acc.items() if isinstance(v, dict) and v.get('pass') is False]
    for k in ('detection', 'selection'):
        if k in acc and acc[k]['identical'] != acc[k]['frames']:
            failed.append(k)
    if not result.get('ctest', {'ok': True})['ok']:
        failed.append('ctest')
    if failed:
        print(f'FAILED: {", ".join(failed)}')
        sys.exit(1)


if __name__ == '__main__':
    main()
