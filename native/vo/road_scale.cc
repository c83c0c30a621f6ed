#include "road_scale.h"

#include "geometry.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace egogeo::vo {

// A point of normalised coordinates x lies road_margin * H rows below the horizon line of the
// prior plane exactly when n . x >= n_y * road_margin * H / fy (for n = (0, 1, 0): v >= cy + margin H).
RoadScale::RoadScale(const Options& opt, const Intrinsics& intr, int /*width*/, int height)
    : opt_(opt), intr_(intr), prior_(opt.road_normal * (1.0 / cv::norm(opt.road_normal))),
      road_depression_(prior_[1] * opt.road_margin * height / intr.fy) {}

void RoadScale::add_pair(const Matches& m, const std::vector<uchar>& inliers) {
  const cv::Matx33d K = intr_.K();
  std::vector<Corr> c;
  for (size_t i = 0; i < m.prev.size(); ++i) {
    if (!inliers[i]) continue;
    const cv::Vec3d x1 = normalize(m.prev[i], K), x2 = normalize(m.curr[i], K);
    if (prior_.dot(x1) < road_depression_ || prior_.dot(x2) < road_depression_) continue;
    c.push_back({x1, x2});
  }
  road_.push_back(std::move(c));
}

// Gauss-Newton on the image-space residual of the plane-induced transfer, Cauchy-reweighted.
// The reweighting is one-sided: tracking errors scatter both ways, but whatever stands on the road
// inside the road region (cars, kerbs, verges, posts) is nearer than the road along its ray and so
// only ever moves MORE than the plane predicts. Symmetric weights let those points pull the
// distance up (KITTI 00: +4.8% median); residuals along the parallax direction get a narrower
// Cauchy (Options::road_above_scale).
// Besides the distance s it fits a small rotation correction: the essential matrix trades pitch
// and yaw against the translation direction, and a pitch error of 0.1 degree shifts road points
// by more than a pixel, which the known plane would otherwise absorb into the scale.
double RoadScale::fit_distance(const PairMotion& pm, const std::vector<Corr>& c, const cv::Vec3d& w, double s0,
                               std::vector<double>* weights) const {
  const double f = intr_.fx;
  const size_t n = c.size();
  std::vector<cv::Vec3d> a(n), b(n);
  for (size_t i = 0; i < n; ++i) {
    a[i] = pm.R * c[i].x1;
    b[i] = pm.t_dir * w.dot(c[i].x1);
  }
  double s = s0;
  if (!(s > 0)) {
    // Initial guess: median of the per-point algebraic solutions of x2 x (a + s b) = 0.
    std::vector<double> si;
    for (size_t i = 0; i < n; ++i) {
      const cv::Vec3d xb = c[i].x2.cross(b[i]), xa = c[i].x2.cross(a[i]);
      const double d = xb.dot(xb);
      if (d > 1e-12) si.push_back(-xb.dot(xa) / d);
    }
    s = median(si);
  }
  cv::Vec3d om(0, 0, 0);
  std::vector<double> r(n), wt(n, 1.0), along(n, 0.0);
  const double prior = 1e4 * static_cast<double>(n);  // keeps the correction within ~0.01 rad
  for (int it = 0; it < 8; ++it) {
    cv::Matx44d H = cv::Matx44d::zeros();
    cv::Vec4d g(0, 0, 0, 0);
    for (size_t i = 0; i < n; ++i) {
      const cv::Vec3d ar = a[i] + om.cross(a[i]);
      const cv::Vec3d p = ar + s * b[i];
      if (p[2] <= 1e-6) {
        r[i] = 1e9;
        continue;
      }
      const double u = p[0] / p[2], v = p[1] / p[2];
      const double ru = c[i].x2[0] - u, rv = c[i].x2[1] - v;
      r[i] = f * std::sqrt(ru * ru + rv * rv);
      // dp/ds = b, dp/d(omega) = -[a]x ; then the projection's Jacobian.
      const cv::Vec3d dp[4] = {b[i], cv::Vec3d(0, -ar[2], ar[1]), cv::Vec3d(ar[2], 0, -ar[0]), cv::Vec3d(-ar[1], ar[0], 0)};
      cv::Vec4d ju, jv;
      for (int k = 0; k < 4; ++k) {
        ju[k] = (dp[k][0] - u * dp[k][2]) / p[2];
        jv[k] = (dp[k][1] - v * dp[k][2]) / p[2];
      }
      // Residual along the plane parallax (dp/ds): > 0 when the point moved more than the road would.
      along[i] = (ju[0] * ru + jv[0] * rv) / std::max(1e-12, std::sqrt(ju[0] * ju[0] + jv[0] * jv[0]));
      H += wt[i] * (ju * ju.t() + jv * jv.t());
      g += wt[i] * (ju * ru + jv * rv);
    }
    for (int k = 1; k < 4; ++k) {
      H(k, k) += prior / (f * f);
      g[k] -= prior / (f * f) * om[k - 1];
    }
    const cv::Vec4d step = H.solve(g, cv::DECOMP_CHOLESKY);
    s += step[0];
    om += cv::Vec3d(step[1], step[2], step[3]);
    const double scale = std::max(0.5, 1.5 * median(r));
    for (size_t i = 0; i < n; ++i) wt[i] = cauchy(r[i], along[i] > 0 ? scale * opt_.road_above_scale : scale);
  }
  if (weights) *weights = wt;
  return s;
}

namespace {

// -2 log likelihood-ratio an AR(1) road-error model must gain over white errors to be chosen: the
// chi-square 1% point with one degree of freedom. Rendered clips' road errors are white (lag-1
// correlation 0.06 once each clip's level is removed) yet a model that is slightly too smooth
// leaves correlated residuals, which plain maximum likelihood reads as correlated errors (34 of 40
// CARLA-like clips); KITTI's are not (0.65 / 0.38 / 0.49 on 00 / 01 / 06).
constexpr double kRoadCorrTest = 6.63;

// Nominal standard deviation of a road distance's log: ~6% for a pair with 50+ road points, growing
// as they thin out (a turn, the clip's end).
double road_log_sigma(int road_points) { return 0.06 * std::sqrt(50.0 / std::clamp(road_points, 10, 50)); }

// Fuses the noisy absolute road distances with the precise relative scales between consecutive
// pairs: least squares over log distances L_k with road terms (robust), ratio terms
// L_k - L_{k-1} = rho_k, and a weak smoothness prior on log speed that bridges pairs with neither.
// Returns the final robust weights of the road (wr_out) and ratio (wq_out) terms and the road
// log distances (road_out) for the speed smoother; false when nothing was fused.
bool fuse_relative(std::vector<double>& v, std::vector<double>& conf, const std::vector<ScaleRatio>& ratios,
                   const std::vector<PairMotion>& pairs, const std::vector<double>& ts, std::vector<double>& road_out,
                   std::vector<double>& wr_out, std::vector<double>& wq_out) {
  const int n = static_cast<int>(v.size());
  std::vector<double> logdt(n);
  for (int k = 0; k < n; ++k) logdt[k] = std::log(ts[k + 1] - ts[k]);
  auto moving = [&](int k) { return pairs[k].quality != PairQuality::LowParallax; };
  std::vector<double> road(n, 0.0), wr(n, 0.0);
  int anchors = 0;
  for (int k = 0; k < n; ++k)
    if (moving(k) && conf[k] > 0 && v[k] > 0) {
      road[k] = std::log(v[k]) + logdt[k];
      const double sr = road_log_sigma(pairs[k].road_points);
      wr[k] = 1.0 / (sr * sr);
      ++anchors;
    }
  if (anchors == 0) return false;
  std::vector<double> L(n, 0.0);
  std::vector<double> w = wr, wq(n, 0.0);
  for (int k = 1; k < n; ++k)
    if (ratios[k].valid) wq[k] = 1.0 / (ratios[k].sigma * ratios[k].sigma);
  for (int it = 0; it < 5; ++it) {
    cv::Mat A = cv::Mat::zeros(n, n, CV_64F), b = cv::Mat::zeros(n, 1, CV_64F);
    auto add2 = [&](int i, int j, double weight, double rhs) {  // weight * (L_i - L_j - rhs)^2
      A.at<double>(i, i) += weight;
      A.at<double>(j, j) += weight;
      A.at<double>(i, j) -= weight;
      A.at<double>(j, i) -= weight;
      b.at<double>(i) += weight * rhs;
      b.at<double>(j) -= weight * rhs;
    };
    for (int k = 0; k < n; ++k) {
      if (!moving(k)) {
        A.at<double>(k, k) += 1.0;  // fixed, not used
        continue;
      }
      A.at<double>(k, k) += w[k];
      b.at<double>(k) += w[k] * road[k];
      if (k >= 1 && moving(k - 1) && ratios[k].valid) add2(k, k - 1, wq[k], ratios[k].log_ratio);
      // Weak prior: log speed changes slowly (bridges gaps, never dominates a measured link).
      if (k >= 1 && moving(k - 1)) add2(k, k - 1, 1.0 / (0.2 * 0.2), logdt[k] - logdt[k - 1]);
    }
    cv::Mat x;
    if (!cv::solve(A, b, x, cv::DECOMP_CHOLESKY)) return false;
    for (int k = 0; k < n; ++k) L[k] = x.at<double>(k);
    // Robust terms: a road estimate or a ratio that disagrees with the rest loses weight.
    for (int k = 0; k < n; ++k) {
      if (wr[k] > 0) w[k] = wr[k] * cauchy((L[k] - road[k]) * std::sqrt(wr[k]), 2.5);
      if (k >= 1 && ratios[k].valid)
        wq[k] = cauchy((L[k] - L[k - 1] - ratios[k].log_ratio) / ratios[k].sigma, 2.5) / (ratios[k].sigma * ratios[k].sigma);
    }
  }
  for (int k = 0; k < n; ++k) {
    if (!moving(k)) continue;
    v[k] = std::exp(L[k] - logdt[k]);
    conf[k] = 1.0;
  }
  road_out = road;
  wr_out = w;
  wq_out.assign(n, 0.0);
  for (int k = 1; k < n; ++k)
    if (ratios[k].valid && moving(k) && moving(k - 1)) wq_out[k] = wq[k];
  return true;
}

}  // namespace

SpeedFit smooth_speed(std::vector<double>& v, const std::vector<bool>& moving, const std::vector<double>& ts,
                      const std::vector<double>& road, const std::vector<double>& wr0, const std::vector<double>& rho,
                      const std::vector<double>& wq0, const SpeedPrior& prior, SpeedPosterior* post) {
  const int n = static_cast<int>(v.size());
  SpeedFit fit;
  if (post) {
    post->var.assign(n, 0.0);
    post->cov_prev.assign(n, 0.0);
  }
  std::vector<double> logdt(n), tm(n);
  for (int k = 0; k < n; ++k) {
    logdt[k] = std::log(ts[k + 1] - ts[k]);
    tm[k] = 0.5 * (ts[k] + ts[k + 1]);
  }
  int anchors = 0;
  std::vector<double> levels;
  for (int k = 0; k < n; ++k)
    if (moving[k] && wr0[k] > 0) {
      ++anchors;
      levels.push_back(road[k] - logdt[k]);
    }
  if (anchors == 0) return fit;
  const double level = median(levels);  // log speed for a tiny ridge (segments without a road anchor)
  // The relative scales' errors. The ratio of pair k's distance to pair k-1's comes from the
  // triplet of frames k-1, k, k+1, so consecutive ratios share pair k's error: against ground
  // truth their errors correlate at lag 1 by -0.3 to -0.5 (KITTI; -0.5 is a difference of white
  // noise), less where other errors dominate. So a ratio's error is modelled as u_k - u_{k-1} + e_k:
  // white noise u on each pair's log distance, which the running sum of the ratios along a chain
  // carries without accumulating (a slow speed change shows in the sum as clearly as it happened),
  // plus independent steps e, which accumulate (a drift of the chain's offset o_k). A ratio's
  // nominal variance s^2 is split as 2 var(u) = (1 - f) s^2 and var(e) = f s^2 with f =
  // SpeedPrior::ratio_drift = 1 + 2 x (lag-1 correlation), calibrated against ground truth: per
  // clip, maximum likelihood cannot tell a slow speed change from a slow drift and takes the drift
  // (f near 1, the model of independent ratios, which smooths real braking away). A link that is
  // missing, or that the profile rejects (below), lets the offset jump.
  //
  // Unknowns, interleaved so that the normal matrix is banded (bandwidth 4): x_k = log distance of
  // pair k at 2k, the chain offset o_k at 2k + 1. Terms: weight * (c . z[idx] - rhs)^2.
  struct Term {
    int i[3];
    double c[3];
    int m;
    double w, rhs;
    int kind;  // 0 road, 1 chained ratios (u), 2 jerk prior, 3 offset drift (e)
    int tau = 0;  // road terms: which correlation time they model
  };
  constexpr int kKinds = 4, B = 4, W = B + 1;
  const int N = 2 * n;
  std::vector<double> wr = wr0, x(n, 0.0);
  std::vector<char> broken(n, 0);  // link k (pair k-1 to k) rejected: the offset may jump there
  for (int k = 0; k < n; ++k) x[k] = moving[k] && v[k] > 0 ? std::log(v[k]) + logdt[k] : 0.0;
  // Banded Cholesky: A(i, i-d) at a[W i + d].
  std::vector<double> a(W * N), Lb(W * N), zs(N);
  auto factor = [&](double& logdet) {
    Lb = a;
    // log det = log of the product of the pivots, kept in [0.5, 1) x 2^e (frexp) so that it never
    // overflows: one log per factorisation instead of one per row.
    double mant = 1;
    long long ex = 0;
    for (int i = 0; i < N; ++i)
      for (int j = std::max(0, i - B); j <= i; ++j) {
        double s = Lb[W * i + (i - j)];
        for (int k = std::max(0, i - B); k < j; ++k) s -= Lb[W * i + (i - k)] * Lb[W * j + (j - k)];
        if (i == j) {
          if (!(s > 0)) return false;
          Lb[W * i] = std::sqrt(s);
          int e;
          mant = std::frexp(mant * s, &e);
          ex += e;
        } else {
          Lb[W * i + (i - j)] = s / Lb[W * j];
        }
      }
    logdet = std::log(mant) + static_cast<double>(ex) * std::log(2.0);
    return true;
  };
  auto back_substitute = [&](std::vector<double>& y) {  // y <- L^-T y
    for (int i = N - 1; i >= 0; --i) {
      for (int k = i + 1; k <= std::min(N - 1, i + B); ++k) y[i] -= Lb[W * k + (k - i)] * y[k];
      y[i] /= Lb[W * i];
    }
  };
  auto solve_in_place = [&](std::vector<double>& y) {  // y <- A^-1 y from the factor
    for (int i = 0; i < N; ++i) {
      for (int k = std::max(0, i - B); k < i; ++k) y[i] -= Lb[W * i + (i - k)] * y[k];
      y[i] /= Lb[W * i];
    }
    back_substitute(y);
  };
  // Grids of the per-clip choices: q log-spaced in [q_min, q_max]; noise-variance scales 1/64 .. 64
  // of the nominal ones (sd x 1/8 .. 8): rendered clips' road distances err by 0.5% (MAD) against
  // the nominal 6%, KITTI's at 10 frames by 10%; a floor of 1/4 (the grid before) held rendered
  // roads at 3% and made the smoother follow the ratios' drift instead (speed RMSE 0.127 -> 0.110
  // m/s CARLA-like, 0.119 -> 0.082 nuScenes-like, white road errors).
  const int lo_s = 6;
  const int nq = 25, ns = 2 * lo_s + 1;
  const double f = prior.ratio_drift;
  auto q_at = [&](int i) { return prior.jerk_psd > 0 ? prior.jerk_psd : prior.q_min * std::pow(prior.q_max / prior.q_min, i / double(nq - 1)); };
  auto s_at = [&](int i) { return std::pow(2.0, i - lo_s); };
  // The road errors' correlation time: fixed, or chosen per clip between white errors and 0.1 s
  // (road_scale.h).
  const std::vector<double> taus = prior.road_corr_time >= 0 ? std::vector<double>{prior.road_corr_time}
                                                             : std::vector<double>{0.0, kRoadCorrTime};
  const int nt = static_cast<int>(taus.size());
  int g[4] = {0, lo_s, lo_s, 0};  // grid choice (q, road scale, ratio scale, correlation time)
  for (int outer = 0; outer < 3; ++outer) {
    std::vector<Term> terms;
    // Chains: runs of moving pairs joined by valid, unrejected ratios; c_k the running sum.
    std::vector<double> csum(n, 0.0);
    std::vector<char> linked(n, 0);
    for (int k = 0; k < n; ++k) {
      if (!moving[k]) continue;
      linked[k] = k >= 1 && moving[k - 1] && wq0[k] > 0 && !broken[k];
      csum[k] = linked[k] ? csum[k - 1] + rho[k] : 0.0;
    }
    std::vector<char> used(n, 0);  // o_k in a term
    for (int k = 0; k < n; ++k) {
      if (!moving[k]) continue;
      for (int ti = 0; ti < nt && wr[k] > 0; ++ti) {
        // Road errors as AR(1) along a run of road pairs, prewhitened: with e_k = (road_k - x_k) /
        // sigma_k, the innovation e_k - r e_{k-1} has variance 1 - r^2 (r = exp(-dt / tau) between
        // the pairs' midpoints). A run's first pair keeps its plain term.
        const double r = taus[ti] > 0 && k >= 1 && moving[k - 1] && wr[k - 1] > 0 ? std::exp(-(tm[k] - tm[k - 1]) / taus[ti]) : 0.0;
        if (r > 1e-3) {
          const double a1 = std::sqrt(wr[k]), a0 = r * std::sqrt(wr[k - 1]);
          terms.push_back({{2 * k, 2 * k - 2, 0}, {a1, -a0, 0}, 2, 1 / (1 - r * r), a1 * road[k] - a0 * road[k - 1], 0, ti});
        } else {
          terms.push_back({{2 * k, 0, 0}, {1, 0, 0}, 1, wr[k], road[k], 0, ti});
        }
      }
      const bool next = k + 1 < n && linked[k + 1];
      if (linked[k] || next) {
        // x_k - o_k = c_k + u_k, var(u_k) = half the mean nominal variance of its links.
        const double var = 0.5 * ((linked[k] ? 1 / wq0[k] : 0.0) + (next ? 1 / wq0[k + 1] : 0.0)) / (linked[k] && next ? 2 : 1);
        terms.push_back({{2 * k, 2 * k + 1, 0}, {1, -1, 0}, 2, 1 / var, csum[k], 1});
        used[k] = 1;
      }
      if (linked[k]) terms.push_back({{2 * k + 1, 2 * k - 1, 0}, {1, -1, 0}, 2, wq0[k], 0.0, 3});
      if (k >= 1 && k + 1 < n && moving[k - 1] && moving[k + 1]) {
        // White-noise jerk: the change of acceleration between the pair midpoints, linearised in
        // log speed about the current estimate, has variance q (h1 + h2) / 2.
        const double h1 = tm[k] - tm[k - 1], h2 = tm[k + 1] - tm[k];
        const double vk = std::exp(x[k] - logdt[k]);
        const double c0 = vk / h1, c2 = vk / h2, c1 = -(c0 + c2);
        terms.push_back({{2 * k - 2, 2 * k, 2 * k + 2}, {c0, c1, c2}, 3, 1 / (0.5 * (h1 + h2)),
                         c0 * logdt[k - 1] + c1 * logdt[k] + c2 * logdt[k + 1], 2});
      }
    }
    int counts[kKinds] = {0, 0, 0, 0};
    for (const auto& t : terms) counts[t.kind] += t.kind != 0 || t.tau == 0;
    // The normal equations are linear in the inverse noise scales. Chained ratios and drift share
    // the ratio scale (their split f is fixed), so the parts are: the road (one per correlation
    // time), the ratios and the jerk prior. Each is assembled once (with the constant sum of
    // weight * rhs^2 that the residual needs); every grid point only combines them.
    const int np_ = nt + 2;
    auto part = [&](const Term& t) { return t.kind == 0 ? t.tau : t.kind == 2 ? nt + 1 : nt; };
    const double split[kKinds] = {1, 1 / (1 - f), 1, 1 / f};
    std::vector<double> a0(W * N, 0.0), b0(N, 0.0), ak(np_ * W * N, 0.0), bk(np_ * N, 0.0), ck(np_, 0.0);
    double c0 = 0;
    for (int k = 0; k < n; ++k) {
      a0[W * 2 * k] = moving[k] ? 1e-8 : 1.0;  // a tiny ridge to the clip's road level
      b0[2 * k] = moving[k] ? 1e-8 * (level + logdt[k]) : 0.0;
      c0 += moving[k] ? 1e-8 * (level + logdt[k]) * (level + logdt[k]) : 0.0;
      a0[W * (2 * k + 1)] = used[k] ? 1e-8 : 1.0;  // offsets: flat prior
    }
    for (const auto& t : terms) {
      const int pk = part(t);
      const double w = t.w * split[t.kind];
      double* A = &ak[W * N * pk];
      double* Bk = &bk[N * pk];
      ck[pk] += w * t.rhs * t.rhs;
      for (int p = 0; p < t.m; ++p) {
        Bk[t.i[p]] += w * t.c[p] * t.rhs;
        for (int r = 0; r < t.m; ++r)
          if (t.i[p] >= t.i[r]) A[W * t.i[p] + (t.i[p] - t.i[r])] += w * t.c[p] * t.c[r];
      }
    }
    // -2 log marginal likelihood at grid point (q, road scale, ratio scale): the weighted residual
    // at the optimum (c - b . x, by the normal equations), log det of the posterior precision, and
    // the measurements' and prior's log variances.
    // The AR(1) road terms' log variances differ from the white ones by sum log(1 - r^2).
    std::vector<double> ar_logvar(nt, 0.0);
    for (const auto& t : terms)
      if (t.kind == 0 && t.m == 2) ar_logvar[t.tau] -= std::log(t.w);
    auto evaluate = [&](int iq, int ir, int is, int it) {
      const double q = q_at(iq), sr2 = s_at(ir), sq2 = s_at(is);
      const int pr = it, pq = nt, pj = nt + 1;
      const double sr = 1 / sr2, sq = 1 / sq2, sj = 1 / q;
      const double log_terms = counts[0] * std::log(sr2) + ar_logvar[it] + counts[1] * std::log((1 - f) * sq2) +
                               counts[3] * std::log(f * sq2) + counts[2] * std::log(q);
      const double *Ar = &ak[W * N * pr], *Aq = &ak[W * N * pq], *Aj = &ak[W * N * pj];
      for (int i = 0; i < W * N; ++i) a[i] = a0[i] + sr * Ar[i] + sq * Aq[i] + sj * Aj[i];
      double c = c0 + sr * ck[pr] + sq * ck[pq] + sj * ck[pj];
      for (int i = 0; i < N; ++i) zs[i] = b0[i] + sr * bk[N * pr + i] + sq * bk[N * pq + i] + sj * bk[N * pj + i];
      double logdet;
      if (!factor(logdet)) return std::numeric_limits<double>::infinity();
      // c - b . A^-1 b = c - |L^-1 b|^2: half a solve.
      for (int i = 0; i < N; ++i) {
        for (int k = std::max(0, i - B); k < i; ++k) zs[i] -= Lb[W * i + (i - k)] * zs[k];
        zs[i] /= Lb[W * i];
        c -= zs[i] * zs[i];
      }
      // The optional log-normal prior on q (MAP instead of maximum likelihood).
      const double lp = prior.q_prior > 0 && prior.jerk_psd <= 0 ? std::pow(std::log(q / prior.q_prior) / prior.q_prior_width, 2) : 0.0;
      // Correlated road errors only when the data demand them: a likelihood-ratio test of AR(1)
      // against white errors at the 1% level (chi-square, one degree of freedom: 6.63).
      const double test = nt > 1 && taus[it] > 0 ? kRoadCorrTest : 0.0;
      return c + logdet + log_terms + lp + test;
    };
    // The whole grid on the first pass; later passes (weights changed by the reweighting) search a
    // window of +-2 steps around the last choice, moved until the best lies inside it.
    const int size[4] = {prior.jerk_psd > 0 ? 1 : nq, ns, ns, nt};
    double best = std::numeric_limits<double>::infinity();
    for (int moves = 0; moves < 8; ++moves) {
      // The first pass starts on every other grid point (q and both noise scales), then refines
      // +-1 around the best; later passes search +-2 around the last choice.
      const bool coarse = outer == 0 && moves == 0;
      const int reach = outer == 0 ? 1 : 2, step = coarse ? 2 : 1;
      int lo[4], hi[4];
      for (int d = 0; d < 4; ++d) {
        lo[d] = coarse || (d == 3 && outer == 0) ? 0 : std::max(0, g[d] - reach);
        hi[d] = coarse || (d == 3 && outer == 0) ? size[d] - 1 : std::min(size[d] - 1, g[d] + reach);
      }
      const int centre[4] = {g[0], g[1], g[2], g[3]};
      for (int it = lo[3]; it <= hi[3]; ++it)
        for (int iq = lo[0]; iq <= hi[0]; iq += step)
          for (int ir = lo[1]; ir <= hi[1]; ir += step)
            for (int is = lo[2]; is <= hi[2]; is += step) {
              const double v2 = evaluate(iq, ir, is, it);
              if (v2 < best) {
                best = v2;
                g[0] = iq;
                g[1] = ir;
                g[2] = is;
                g[3] = it;
              }
            }
      bool inside = true;
      for (int d = 0; d < 4; ++d)
        if ((g[d] == lo[d] && lo[d] > 0) || (g[d] == hi[d] && hi[d] < size[d] - 1)) inside = false;
      if (coarse) continue;
      if (inside || (g[0] == centre[0] && g[1] == centre[1] && g[2] == centre[2] && g[3] == centre[3])) break;
    }
    if (!std::isfinite(best)) return fit;
    evaluate(g[0], g[1], g[2], g[3]);
    back_substitute(zs);  // the second half of the solve: the posterior mean
    for (int k = 0; k < n; ++k) x[k] = zs[2 * k];
    fit.jerk_psd = q_at(g[0]);
    fit.road_scale = s_at(g[1]);
    fit.ratio_scale = s_at(g[2]);
    fit.road_corr_time = taus[g[3]];
    // Robust reweighting against the smooth profile: a road distance that the motion model cannot
    // explain loses weight (Cauchy, 2.5 sigma of its own calibrated noise); a ratio that far out
    // lets its chain's offset jump, so that it cannot shift the rest of the chain.
    for (int k = 0; k < n; ++k) {
      if (!moving[k]) continue;
      if (wr0[k] > 0) wr[k] = wr0[k] * cauchy((x[k] - road[k]) * std::sqrt(wr0[k] / fit.road_scale), 2.5);
      if (k >= 1 && wq0[k] > 0) broken[k] = cauchy((x[k] - x[k - 1] - rho[k]) * std::sqrt(wq0[k] / fit.ratio_scale), 2.5) < 0.5;
    }
  }
  for (int k = 0; k < n; ++k) v[k] = moving[k] ? std::exp(x[k] - logdt[k]) : 0.0;
  if (post) {
    // The normal matrix of the last evaluation is still factored: its inverse is the posterior
    // covariance (the pairs' columns). Plus the road's common bias: a level error shared by all of
    // a clip's road distances (their errors correlate at lag 1 by +0.4 to +0.8 against ground
    // truth). Everything else is blind to a common shift of the log distances (the chains have
    // offsets, the jerk term's coefficients sum to zero), so that bias adds its variance to every
    // pair's and every covariance exactly, and leaves the mean alone.
    const double bias2 = prior.road_bias * prior.road_bias;
    std::vector<double> e(N);
    for (int k = 0; k < n; ++k) {
      if (!moving[k]) continue;
      std::fill(e.begin(), e.end(), 0.0);
      e[2 * k] = 1.0;
      solve_in_place(e);
      post->var[k] = e[2 * k] + bias2;
      if (k >= 1 && moving[k - 1]) post->cov_prev[k] = e[2 * k - 2] + bias2;
    }
  }
  fit.ok = true;
  return fit;
}

void RoadScale::solve(std::vector<PairMotion>& pairs, const std::vector<double>& ts, const std::vector<ScaleRatio>& ratios,
                      double normal_out[3]) {
  const size_t np = pairs.size();
  // On a locally flat road the direction of travel lies in the road plane, so the road normal is
  // the mount's prior normal (Options::road_normal; default the camera's down axis) made
  // perpendicular to the clip's median heading: the motion measures the pitch (including the
  // vehicle's own, which no mount calibration knows), the mount gives the roll, which forward
  // motion cannot observe (without forward motion the prior stands as it is). A per-pair rotation
  // correction in fit_distance absorbs the essential matrix's remaining pitch errors.
  std::vector<double> dx, dy, dz;
  for (const auto& p : pairs) {
    if (p.quality != PairQuality::Ok) continue;
    dx.push_back(-p.t_dir[0]);
    dy.push_back(-p.t_dir[1]);
    dz.push_back(-p.t_dir[2]);
  }
  cv::Vec3d n = prior_;
  if (dz.size() >= 3) {
    cv::Vec3d d(median(dx), median(dy), median(dz));
    if (d[2] > 0.5) {  // moving forward: the heading is meaningful
      d *= 1.0 / cv::norm(d);
      n = n - n.dot(d) * d;
      n *= 1.0 / cv::norm(n);
    }
  }
  const cv::Vec3d w = n * (1.0 / opt_.camera_height);
  const size_t min_pts = 15;
  std::vector<double> v(np, 0.0), conf(np, 0.0);
  for (size_t k = 0; k < np; ++k) {
    pairs[k].road_points = static_cast<int>(road_[k].size());
    if (k < ratios.size() && ratios[k].valid) {
      pairs[k].log_ratio = ratios[k].log_ratio;
      pairs[k].ratio_sigma = ratios[k].sigma;
    }
    const double dt = ts[k + 1] - ts[k];
    if (pairs[k].quality == PairQuality::LowParallax) {
      conf[k] = 1.0;  // standing still is known exactly
    } else if (pairs[k].quality == PairQuality::Ok && road_[k].size() >= min_pts) {
      const double sk = fit_distance(pairs[k], road_[k], w, 0.0, nullptr);
      if (sk > 0 && std::isfinite(sk)) {
        v[k] = sk / dt;
        conf[k] = 1.0;
        pairs[k].road_distance = sk;
        pairs[k].road_sigma = road_log_sigma(pairs[k].road_points);
      }
    }
  }
  std::vector<double> var(np, std::numeric_limits<double>::quiet_NaN()), covp(np, 0.0);
  fit_ = SpeedFit{};
  if (!ratios.empty() || opt_.speed_smoother) {
    // Without relative scales the road distances alone go through the same fusion and smoother.
    const std::vector<ScaleRatio> none(np);
    const std::vector<ScaleRatio>& rat = ratios.empty() ? none : ratios;
    std::vector<double> road, wr, wq;
    if (fuse_relative(v, conf, rat, pairs, ts, road, wr, wq) && opt_.speed_smoother) {
      std::vector<bool> moving(np);
      std::vector<double> rho(np, 0.0);
      for (size_t k = 0; k < np; ++k) {
        moving[k] = pairs[k].quality != PairQuality::LowParallax;
        if (rat[k].valid) rho[k] = rat[k].log_ratio;
      }
      std::vector<double> vs = v;
      const SpeedPrior prior{opt_.jerk_psd,       opt_.jerk_psd_min, opt_.jerk_psd_max,   opt_.ratio_drift,
                             opt_.road_bias,      opt_.road_corr_time, opt_.jerk_psd_prior, opt_.jerk_psd_prior_width};
      SpeedPosterior post;
      fit_ = smooth_speed(vs, moving, ts, road, wr, rho, wq, prior, &post);
      if (fit_.ok) {
        v = vs;
        for (size_t k = 0; k < np; ++k) {
          if (!moving[k]) {
            var[k] = 0;
            continue;
          }
          var[k] = post.var[k];  // of log distance = log speed + const
          covp[k] = post.cov_prev[k];
        }
      }
    }
  }
  // Optional extra smoothing (scale_smoothing > 0; the only consistency there is when relative
  // scales are off): a robust Whittaker smoother over the per-pair speeds, so single bad pairs are
  // outvoted by their neighbours and pairs without an estimate take their neighbours' speed.
  std::vector<double> u = v;
  if (opt_.scale_smoothing > 0) {
    std::vector<double> c = conf;
    for (int it = 0; it < 4; ++it) {
      u = whittaker(v, c, opt_.scale_smoothing);
      std::vector<double> res;
      for (size_t k = 0; k < np; ++k)
        if (conf[k] > 0) res.push_back(std::abs(v[k] - u[k]));
      const double sigma = std::max(0.05, 1.4826 * median(res));
      for (size_t k = 0; k < np; ++k) c[k] = conf[k] * cauchy(v[k] - u[k], 2.0 * sigma);
    }
  }
  for (size_t k = 0; k < np; ++k) {
    const double dt = ts[k + 1] - ts[k];
    pairs[k].scale = pairs[k].quality == PairQuality::LowParallax ? 0.0 : std::max(0.0, u[k]) * dt;
    const double sp = pairs[k].scale / dt;
    pairs[k].speed_sigma = sp * std::sqrt(var[k]);
    pairs[k].speed_cov_prev = k >= 1 ? sp * (pairs[k - 1].scale / (ts[k] - ts[k - 1])) * covp[k] : 0.0;
    if (pairs[k].quality == PairQuality::LowParallax) pairs[k].speed_sigma = 0;
  }
  normal_out[0] = n[0];
  normal_out[1] = n[1];
  normal_out[2] = n[2];
}

std::vector<double> whittaker(const std::vector<double>& v, const std::vector<double>& c, double lambda) {
  const int n = static_cast<int>(v.size());
  if (n == 0) return {};
  double csum = 0;
  for (double x : c) csum += x;
  if (csum == 0) return std::vector<double>(n, 0.0);
  cv::Mat A = cv::Mat::zeros(n, n, CV_64F), b = cv::Mat::zeros(n, 1, CV_64F);
  for (int i = 0; i < n; ++i) {
    A.at<double>(i, i) += c[i];
    b.at<double>(i) = c[i] * v[i];
  }
  // A small ridge keeps the system regular when few pairs have a measurement.
  const double lam = std::max(lambda, 1e-6);
  for (int i = 0; i + 2 < n; ++i) {
    const int idx[3] = {i, i + 1, i + 2};
    const double d[3] = {1, -2, 1};
    for (int p = 0; p < 3; ++p)
      for (int q = 0; q < 3; ++q) A.at<double>(idx[p], idx[q]) += lam * d[p] * d[q];
  }
  if (n < 3) {
    for (int i = 0; i + 1 < n; ++i) {
      A.at<double>(i, i) += lam;
      A.at<double>(i + 1, i + 1) += lam;
      A.at<double>(i, i + 1) -= lam;
      A.at<double>(i + 1, i) -= lam;
    }
  }
  cv::Mat u;
  if (!cv::solve(A, b, u, cv::DECOMP_LU)) return v;
  return std::vector<double>(u.begin<double>(), u.end<double>());
}

}  // namespace egogeo::vo
