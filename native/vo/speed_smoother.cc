// The speed profile: a jerk-driven smoother over a clip's per-pair road distances and relative
// scales (road_scale.cc fuses them into it; smoothSpeed exposes it). Unknowns are the pairs' log
// distances and the ratio chains' offsets, interleaved so that the normal matrix is a band; the
// noise levels and the jerk PSD are chosen per clip by maximum marginal likelihood on a grid, then
// the measurements are reweighted against the profile (three passes).
#include "speed_smoother.h"

#include "geometry.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace egogeo::vo {
namespace {

// -2 log likelihood-ratio an AR(1) road-error model must gain over white errors to be chosen: the
// chi-square 1% point with one degree of freedom. Rendered clips' road errors are white (lag-1
// correlation 0.06 once each clip's level is removed) yet a model that is slightly too smooth
// leaves correlated residuals, which plain maximum likelihood reads as correlated errors (34 of 40
// CARLA-like clips); KITTI's are not (0.65 / 0.38 / 0.49 on 00 / 01 / 06).
constexpr double kRoadCorrTest = 6.63;

/// What a least-squares term of the smoother measures.
enum class TermKind : int {
  Road = 0,          // a pair's road distance (white, or AR(1) prewhitened along a run of road pairs)
  ChainedRatio = 1,  // a pair's log distance against its chain's running sum of ratios (u)
  Jerk = 2,          // the white-noise-jerk prior between consecutive pairs
  OffsetDrift = 3,   // a step of a chain's offset (e): the part of a ratio's error that accumulates
};
constexpr int kTermKinds = 4;
constexpr int index(TermKind k) { return static_cast<int>(k); }

/// A symmetric positive definite band matrix A (A(i, j) = 0 for |i - j| > bandwidth) and its
/// Cholesky factor L (A = L L^T), both stored by rows: entry (i, i - d) at [(bandwidth + 1) i + d].
class BandedCholesky {
 public:
  BandedCholesky(int n, int bandwidth) : n_(n), b_(bandwidth), w_(bandwidth + 1), a_(w_ * n), l_(w_ * n) {}

  /// A's lower band, to fill before `factor`.
  std::vector<double>& matrix() { return a_; }

  /// L from A; false when A is not positive definite. log det A = log of the product of the
  /// pivots, kept in [0.5, 1) x 2^e (frexp) so that it never overflows: one log per factorisation.
  bool factor(double& logdet) {
    l_ = a_;
    double mant = 1;
    long long ex = 0;
    for (int i = 0; i < n_; ++i)
      for (int j = std::max(0, i - b_); j <= i; ++j) {
        double s = l_[w_ * i + (i - j)];
        for (int k = std::max(0, i - b_); k < j; ++k) s -= l_[w_ * i + (i - k)] * l_[w_ * j + (j - k)];
        if (i == j) {
          if (!(s > 0)) return false;
          l_[w_ * i] = std::sqrt(s);
          int e;
          mant = std::frexp(mant * s, &e);
          ex += e;
        } else {
          l_[w_ * i + (i - j)] = s / l_[w_ * j];
        }
      }
    logdet = std::log(mant) + static_cast<double>(ex) * std::log(2.0);
    return true;
  }

  /// y <- L^-1 y.
  void forward(std::vector<double>& y) const {
    for (int i = 0; i < n_; ++i) {
      for (int k = std::max(0, i - b_); k < i; ++k) y[i] -= l_[w_ * i + (i - k)] * y[k];
      y[i] /= l_[w_ * i];
    }
  }

  /// y <- L^-T y.
  void backward(std::vector<double>& y) const {
    for (int i = n_ - 1; i >= 0; --i) {
      for (int k = i + 1; k <= std::min(n_ - 1, i + b_); ++k) y[i] -= l_[w_ * k + (k - i)] * y[k];
      y[i] /= l_[w_ * i];
    }
  }

  /// y <- A^-1 y from the factor.
  void solve(std::vector<double>& y) const {
    forward(y);
    backward(y);
  }

 private:
  int n_, b_, w_;
  std::vector<double> a_, l_;
};

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
    TermKind kind;
    int tau = 0;  // road terms: which correlation time they model
  };
  constexpr int B = 4, W = B + 1;
  const int N = 2 * n;
  std::vector<double> wr = wr0, x(n, 0.0);
  std::vector<char> broken(n, 0);  // link k (pair k-1 to k) rejected: the offset may jump there
  for (int k = 0; k < n; ++k) x[k] = moving[k] && v[k] > 0 ? std::log(v[k]) + logdt[k] : 0.0;
  BandedCholesky chol(N, B);
  std::vector<double>& a = chol.matrix();
  std::vector<double> zs(N);
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
          terms.push_back({{2 * k, 2 * k - 2, 0}, {a1, -a0, 0}, 2, 1 / (1 - r * r), a1 * road[k] - a0 * road[k - 1], TermKind::Road, ti});
        } else {
          terms.push_back({{2 * k, 0, 0}, {1, 0, 0}, 1, wr[k], road[k], TermKind::Road, ti});
        }
      }
      const bool next = k + 1 < n && linked[k + 1];
      if (linked[k] || next) {
        // x_k - o_k = c_k + u_k, var(u_k) = half the mean nominal variance of its links.
        const double var = 0.5 * ((linked[k] ? 1 / wq0[k] : 0.0) + (next ? 1 / wq0[k + 1] : 0.0)) / (linked[k] && next ? 2 : 1);
        terms.push_back({{2 * k, 2 * k + 1, 0}, {1, -1, 0}, 2, 1 / var, csum[k], TermKind::ChainedRatio});
        used[k] = 1;
      }
      if (linked[k]) terms.push_back({{2 * k + 1, 2 * k - 1, 0}, {1, -1, 0}, 2, wq0[k], 0.0, TermKind::OffsetDrift});
      if (k >= 1 && k + 1 < n && moving[k - 1] && moving[k + 1]) {
        // White-noise jerk: the change of acceleration between the pair midpoints, linearised in
        // log speed about the current estimate, has variance q (h1 + h2) / 2.
        const double h1 = tm[k] - tm[k - 1], h2 = tm[k + 1] - tm[k];
        const double vk = std::exp(x[k] - logdt[k]);
        const double c0 = vk / h1, c2 = vk / h2, c1 = -(c0 + c2);
        terms.push_back({{2 * k - 2, 2 * k, 2 * k + 2}, {c0, c1, c2}, 3, 1 / (0.5 * (h1 + h2)),
                         c0 * logdt[k - 1] + c1 * logdt[k] + c2 * logdt[k + 1], TermKind::Jerk});
      }
    }
    int counts[kTermKinds] = {0, 0, 0, 0};  // terms per kind (a road pair once, whatever its correlation times)
    for (const auto& t : terms) counts[index(t.kind)] += t.kind != TermKind::Road || t.tau == 0;
    // The normal equations are linear in the inverse noise scales. Chained ratios and drift share
    // the ratio scale (their split f is fixed), so the parts are: the road (one per correlation
    // time), the ratios and the jerk prior. Each is assembled once (with the constant sum of
    // weight * rhs^2 that the residual needs); every grid point only combines them.
    const int np_ = nt + 2;
    auto part = [&](const Term& t) { return t.kind == TermKind::Road ? t.tau : t.kind == TermKind::Jerk ? nt + 1 : nt; };
    double split[kTermKinds];  // each kind's share of its part's nominal variance
    split[index(TermKind::Road)] = 1;
    split[index(TermKind::ChainedRatio)] = 1 / (1 - f);
    split[index(TermKind::Jerk)] = 1;
    split[index(TermKind::OffsetDrift)] = 1 / f;
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
      const double w = t.w * split[index(t.kind)];
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
      if (t.kind == TermKind::Road && t.m == 2) ar_logvar[t.tau] -= std::log(t.w);
    auto evaluate = [&](int iq, int ir, int is, int it) {
      const double q = q_at(iq), sr2 = s_at(ir), sq2 = s_at(is);
      const int pr = it, pq = nt, pj = nt + 1;
      const double sr = 1 / sr2, sq = 1 / sq2, sj = 1 / q;
      const double log_terms = counts[index(TermKind::Road)] * std::log(sr2) + ar_logvar[it] +
                               counts[index(TermKind::ChainedRatio)] * std::log((1 - f) * sq2) +
                               counts[index(TermKind::OffsetDrift)] * std::log(f * sq2) + counts[index(TermKind::Jerk)] * std::log(q);
      const double *Ar = &ak[W * N * pr], *Aq = &ak[W * N * pq], *Aj = &ak[W * N * pj];
      for (int i = 0; i < W * N; ++i) a[i] = a0[i] + sr * Ar[i] + sq * Aq[i] + sj * Aj[i];
      double c = c0 + sr * ck[pr] + sq * ck[pq] + sj * ck[pj];
      for (int i = 0; i < N; ++i) zs[i] = b0[i] + sr * bk[N * pr + i] + sq * bk[N * pq + i] + sj * bk[N * pj + i];
      double logdet;
      if (!chol.factor(logdet)) return std::numeric_limits<double>::infinity();
      // c - b . A^-1 b = c - |L^-1 b|^2: half a solve.
      chol.forward(zs);
      for (int i = 0; i < N; ++i) c -= zs[i] * zs[i];
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
    chol.backward(zs);  // the second half of the solve: the posterior mean
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
      chol.solve(e);
      post->var[k] = e[2 * k] + bias2;
      if (k >= 1 && moving[k - 1]) post->cov_prev[k] = e[2 * k - 2] + bias2;
    }
  }
  fit.ok = true;
  return fit;
}

}  // namespace egogeo::vo
