// The speed profile: a jerk-driven smoother over a clip's per-pair road distances and relative
// scales (road_scale.cc fuses them into it; smoothSpeed exposes it). Unknowns are the pairs' log
// distances and the ratio chains' offsets, interleaved so that the normal matrix is a band; the
// noise levels and the jerk PSD are chosen per clip by maximum marginal likelihood on a grid, then
// the measurements are reweighted against the profile (three passes).
#include "speed_smoother.h"

#include "../pose/geometry.h"

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

// The per-clip grids: q log-spaced in [q_min, q_max] (kGridQ points); noise-variance scales 1/64 ..
// 64 of the nominal ones (sd x 1/8 .. 8): rendered clips' road distances err by 0.5% (MAD) against
// the nominal 6%, KITTI's at 10 frames by 10%; a floor of 1/4 (the grid before) held rendered
// roads at 3% and made the smoother follow the ratios' drift instead (speed RMSE 0.127 -> 0.110
// m/s CARLA-like, 0.119 -> 0.082 nuScenes-like, white road errors).
constexpr int kScaleLo = 6;
constexpr int kGridQ = 25, kGridScale = 2 * kScaleLo + 1;
// The normal matrix's bandwidth: x_k = log distance of pair k at 2k, the chain offset o_k at 2k + 1.
constexpr int kBand = 4, kBandW = kBand + 1;

/// A least-squares term: weight * (c . z[idx] - rhs)^2.
struct Term {
  int i[3];
  double c[3];
  int m;
  double w, rhs;
  TermKind kind;
  int tau = 0;  // road terms: which correlation time they model
};

/// One pass's normal equations, split into parts linear in the inverse noise scales (the road, one
/// per correlation time; the ratios; the jerk prior), each with the constant sum of weight * rhs^2
/// that the residual needs; plus the fixed ridge (a0, b0, c0). Every grid point only combines them.
struct NormalParts {
  std::vector<double> a0, b0, ak, bk, ck;
  double c0 = 0;
  int counts[kTermKinds] = {0, 0, 0, 0};  // terms per kind (a road pair once, whatever its correlation times)
  std::vector<double> ar_logvar;           // per correlation time: the AR(1) road terms' log variances beyond the white ones
};

/// The smoother over one clip: its measurements, the current estimate (x, the reweighted road
/// weights, the rejected links) and the grid choice, carried from pass to pass.
class Smoother {
 public:
  Smoother(int n, const SpeedMeasurements& m, const SpeedPrior& prior)
      : m_(m), prior_(prior), n_(n), N_(2 * n_), f_(prior.ratio_drift),
        taus_(prior.road_corr_time >= 0 ? std::vector<double>{prior.road_corr_time} : std::vector<double>{0.0, kRoadCorrTime}),
        nt_(static_cast<int>(taus_.size())), logdt_(n_), tm_(n_), wr_(m.wr), x_(n_, 0.0), broken_(n_, 0), chol_(N_, kBand), zs_(N_) {
    for (int k = 0; k < n_; ++k) {
      logdt_[k] = std::log(m.timestamps[k + 1] - m.timestamps[k]);
      tm_[k] = 0.5 * (m.timestamps[k] + m.timestamps[k + 1]);
    }
    std::vector<double> levels;
    for (int k = 0; k < n_; ++k)
      if (m.moving[k] && m.wr[k] > 0) {
        ++anchors_;
        levels.push_back(m.road[k] - logdt_[k]);
      }
    if (anchors_ > 0) level_ = median(levels);  // log speed for a tiny ridge (segments without a road anchor)
  }

  /// False when no moving pair has a road distance: nothing anchors the profile.
  bool anchored() const { return anchors_ > 0; }

  /// The initial estimate from the per-pair speeds.
  void start(const std::vector<double>& v) {
    for (int k = 0; k < n_; ++k) x_[k] = m_.moving[k] && v[k] > 0 ? std::log(v[k]) + logdt_[k] : 0.0;
  }

  /// One pass: the terms under the current weights, the grid search, the posterior mean, the
  /// reweighting. False when no grid point gives a positive definite system.
  bool pass(int outer, SpeedFit& fit) {
    std::vector<char> used;
    const std::vector<Term> terms = build_terms(used);
    const NormalParts parts = assemble(terms, used);
    const double best = search(parts, outer);
    if (!std::isfinite(best)) return false;
    evaluate(parts, g_[0], g_[1], g_[2], g_[3]);
    chol_.backward(zs_);  // the second half of the solve: the posterior mean
    for (int k = 0; k < n_; ++k) x_[k] = zs_[2 * k];
    fit.jerk_psd = q_at(g_[0]);
    fit.road_scale = s_at(g_[1]);
    fit.ratio_scale = s_at(g_[2]);
    fit.road_corr_time = taus_[g_[3]];
    fit.neg2_log_ml = best;
    reweight(fit);
    return true;
  }

  /// The posterior mean as per-pair speeds (0 standing still).
  void speeds(std::vector<double>& v) const {
    for (int k = 0; k < n_; ++k) v[k] = m_.moving[k] ? std::exp(x_[k] - logdt_[k]) : 0.0;
  }

  /// The posterior's variances, from the last evaluation's factor.
  void posterior(SpeedPosterior& post) const {
    // The normal matrix of the last evaluation is still factored: its inverse is the posterior
    // covariance (the pairs' columns). Plus the road's common bias: a level error shared by all of
    // a clip's road distances (their errors correlate at lag 1 by +0.4 to +0.8 against ground
    // truth). Everything else is blind to a common shift of the log distances (the chains have
    // offsets, the jerk term's coefficients sum to zero), so that bias adds its variance to every
    // pair's and every covariance exactly, and leaves the mean alone.
    const double bias2 = prior_.road_bias * prior_.road_bias;
    std::vector<double> e(N_);
    for (int k = 0; k < n_; ++k) {
      if (!m_.moving[k]) continue;
      std::fill(e.begin(), e.end(), 0.0);
      e[2 * k] = 1.0;
      chol_.solve(e);
      post.var[k] = e[2 * k] + bias2;
      if (k >= 1 && m_.moving[k - 1]) post.cov_prev[k] = e[2 * k - 2] + bias2;
    }
  }

 private:
  double q_at(int i) const { return prior_.jerk_psd > 0 ? prior_.jerk_psd : prior_.q_min * std::pow(prior_.q_max / prior_.q_min, i / double(kGridQ - 1)); }
  static double s_at(int i) { return std::pow(2.0, i - kScaleLo); }

  /// The terms under the current weights and rejected links; used[k]: o_k is in a term.
  std::vector<Term> build_terms(std::vector<char>& used) const {
    const auto& moving = m_.moving;
    const auto &road = m_.road, &rho = m_.rho, &wq0 = m_.wq;
    const auto &wr = wr_, &x = x_, &logdt = logdt_, &tm = tm_;
    const int n = n_;
    std::vector<Term> terms;
    // Chains: runs of moving pairs joined by valid, unrejected ratios; c_k the running sum.
    std::vector<double> csum(n, 0.0);
    std::vector<char> linked(n, 0);
    for (int k = 0; k < n; ++k) {
      if (!moving[k]) continue;
      linked[k] = k >= 1 && moving[k - 1] && wq0[k] > 0 && !broken_[k];
      csum[k] = linked[k] ? csum[k - 1] + rho[k] : 0.0;
    }
    used.assign(n, 0);
    for (int k = 0; k < n; ++k) {
      if (!moving[k]) continue;
      for (int ti = 0; ti < nt_ && wr[k] > 0; ++ti) {
        // Road errors as AR(1) along a run of road pairs, prewhitened: with e_k = (road_k - x_k) /
        // sigma_k, the innovation e_k - r e_{k-1} has variance 1 - r^2 (r = exp(-dt / tau) between
        // the pairs' midpoints). A run's first pair keeps its plain term.
        const double r = taus_[ti] > 0 && k >= 1 && moving[k - 1] && wr[k - 1] > 0 ? std::exp(-(tm[k] - tm[k - 1]) / taus_[ti]) : 0.0;
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
    return terms;
  }

  /// The normal equations' parts (see NormalParts). Chained ratios and drift share the ratio
  /// scale (their split f is fixed).
  NormalParts assemble(const std::vector<Term>& terms, const std::vector<char>& used) const {
    constexpr int W = kBandW;
    const int n = n_, N = N_, nt = nt_;
    const auto& moving = m_.moving;
    const auto& logdt = logdt_;
    const double level = level_, f = f_;
    NormalParts P;
    for (const auto& t : terms) P.counts[index(t.kind)] += t.kind != TermKind::Road || t.tau == 0;
    const int np_ = nt + 2;
    auto part = [&](const Term& t) { return t.kind == TermKind::Road ? t.tau : t.kind == TermKind::Jerk ? nt + 1 : nt; };
    double split[kTermKinds];  // each kind's share of its part's nominal variance
    split[index(TermKind::Road)] = 1;
    split[index(TermKind::ChainedRatio)] = 1 / (1 - f);
    split[index(TermKind::Jerk)] = 1;
    split[index(TermKind::OffsetDrift)] = 1 / f;
    P.a0.assign(W * N, 0.0);
    P.b0.assign(N, 0.0);
    P.ak.assign(np_ * W * N, 0.0);
    P.bk.assign(np_ * N, 0.0);
    P.ck.assign(np_, 0.0);
    for (int k = 0; k < n; ++k) {
      P.a0[W * 2 * k] = moving[k] ? 1e-8 : 1.0;  // a tiny ridge to the clip's road level
      P.b0[2 * k] = moving[k] ? 1e-8 * (level + logdt[k]) : 0.0;
      P.c0 += moving[k] ? 1e-8 * (level + logdt[k]) * (level + logdt[k]) : 0.0;
      P.a0[W * (2 * k + 1)] = used[k] ? 1e-8 : 1.0;  // offsets: flat prior
    }
    for (const auto& t : terms) {
      const int pk = part(t);
      const double w = t.w * split[index(t.kind)];
      double* A = &P.ak[W * N * pk];
      double* Bk = &P.bk[N * pk];
      P.ck[pk] += w * t.rhs * t.rhs;
      for (int p = 0; p < t.m; ++p) {
        Bk[t.i[p]] += w * t.c[p] * t.rhs;
        for (int r = 0; r < t.m; ++r)
          if (t.i[p] >= t.i[r]) A[W * t.i[p] + (t.i[p] - t.i[r])] += w * t.c[p] * t.c[r];
      }
    }
    // The AR(1) road terms' log variances differ from the white ones by sum log(1 - r^2).
    P.ar_logvar.assign(nt, 0.0);
    for (const auto& t : terms)
      if (t.kind == TermKind::Road && t.m == 2) P.ar_logvar[t.tau] -= std::log(t.w);
    return P;
  }

  /// -2 log marginal likelihood at grid point (q, road scale, ratio scale, correlation time): the
  /// weighted residual at the optimum (c - b . x, by the normal equations), log det of the
  /// posterior precision, and the measurements' and prior's log variances. Leaves the system
  /// factored and zs = L^-1 b (half a solve).
  double evaluate(const NormalParts& P, int iq, int ir, int is, int it) {
    constexpr int W = kBandW;
    const int N = N_, nt = nt_;
    const double f = f_;
    std::vector<double>& a = chol_.matrix();
    const double q = q_at(iq), sr2 = s_at(ir), sq2 = s_at(is);
    const int pr = it, pq = nt, pj = nt + 1;
    const double sr = 1 / sr2, sq = 1 / sq2, sj = 1 / q;
    const double log_terms = P.counts[index(TermKind::Road)] * std::log(sr2) + P.ar_logvar[it] +
                             P.counts[index(TermKind::ChainedRatio)] * std::log((1 - f) * sq2) +
                             P.counts[index(TermKind::OffsetDrift)] * std::log(f * sq2) + P.counts[index(TermKind::Jerk)] * std::log(q);
    const double *Ar = &P.ak[W * N * pr], *Aq = &P.ak[W * N * pq], *Aj = &P.ak[W * N * pj];
    for (int i = 0; i < W * N; ++i) a[i] = P.a0[i] + sr * Ar[i] + sq * Aq[i] + sj * Aj[i];
    double c = P.c0 + sr * P.ck[pr] + sq * P.ck[pq] + sj * P.ck[pj];
    for (int i = 0; i < N; ++i) zs_[i] = P.b0[i] + sr * P.bk[N * pr + i] + sq * P.bk[N * pq + i] + sj * P.bk[N * pj + i];
    double logdet;
    if (!chol_.factor(logdet)) return std::numeric_limits<double>::infinity();
    // c - b . A^-1 b = c - |L^-1 b|^2: half a solve.
    chol_.forward(zs_);
    for (int i = 0; i < N; ++i) c -= zs_[i] * zs_[i];
    // The optional log-normal prior on q (MAP instead of maximum likelihood).
    const double lp = prior_.q_prior > 0 && prior_.jerk_psd <= 0 ? std::pow(std::log(q / prior_.q_prior) / prior_.q_prior_width, 2) : 0.0;
    // Correlated road errors only when the data demand them: a likelihood-ratio test of AR(1)
    // against white errors at the 1% level (chi-square, one degree of freedom: 6.63).
    const double test = nt > 1 && taus_[it] > 0 ? kRoadCorrTest : 0.0;
    return c + logdet + log_terms + lp + test;
  }

  /// The grid search: the whole grid on the first pass; later passes (weights changed by the
  /// reweighting) search a window of +-2 steps around the last choice, moved until the best lies
  /// inside it. Sets g_; returns the best value (infinite: none).
  double search(const NormalParts& P, int outer) {
    int* g = g_;
    const int size[4] = {prior_.jerk_psd > 0 ? 1 : kGridQ, kGridScale, kGridScale, nt_};
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
              const double v2 = evaluate(P, iq, ir, is, it);
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
    return best;
  }

  /// Robust reweighting against the smooth profile: a road distance that the motion model cannot
  /// explain loses weight (Cauchy, 2.5 sigma of its own calibrated noise); a ratio that far out
  /// lets its chain's offset jump, so that it cannot shift the rest of the chain.
  void reweight(const SpeedFit& fit) {
    const auto &road = m_.road, &rho = m_.rho, &wr0 = m_.wr, &wq0 = m_.wq;
    for (int k = 0; k < n_; ++k) {
      if (!m_.moving[k]) continue;
      if (wr0[k] > 0) wr_[k] = wr0[k] * cauchy((x_[k] - road[k]) * std::sqrt(wr0[k] / fit.road_scale), 2.5);
      if (k >= 1 && wq0[k] > 0) broken_[k] = cauchy((x_[k] - x_[k - 1] - rho[k]) * std::sqrt(wq0[k] / fit.ratio_scale), 2.5) < 0.5;
    }
  }

  const SpeedMeasurements& m_;
  const SpeedPrior& prior_;
  const int n_, N_;
  const double f_;
  // The road errors' correlation time: fixed, or chosen per clip between white errors and 0.1 s
  // (road_scale.h).
  const std::vector<double> taus_;
  const int nt_;
  std::vector<double> logdt_, tm_;
  int anchors_ = 0;
  double level_ = 0;
  std::vector<double> wr_, x_;
  std::vector<char> broken_;  // link k (pair k-1 to k) rejected: the offset may jump there
  BandedCholesky chol_;
  std::vector<double> zs_;
  int g_[4] = {0, kScaleLo, kScaleLo, 0};  // grid choice (q, road scale, ratio scale, correlation time)
};

}  // namespace

// The relative scales' errors. The ratio of pair k's distance to pair k-1's comes from the triplet
// of frames k-1, k, k+1, so consecutive ratios share pair k's error: against ground truth their
// errors correlate at lag 1 by -0.3 to -0.5 (KITTI; -0.5 is a difference of white noise), less
// where other errors dominate. So a ratio's error is modelled as u_k - u_{k-1} + e_k: white noise u
// on each pair's log distance, which the running sum of the ratios along a chain carries without
// accumulating (a slow speed change shows in the sum as clearly as it happened), plus independent
// steps e, which accumulate (a drift of the chain's offset o_k). A ratio's nominal variance s^2 is
// split as 2 var(u) = (1 - f) s^2 and var(e) = f s^2 with f = SpeedPrior::ratio_drift = 1 + 2 x
// (lag-1 correlation), calibrated against ground truth: per clip, maximum likelihood cannot tell a
// slow speed change from a slow drift and takes the drift (f near 1, the model of independent
// ratios, which smooths real braking away). A link that is missing, or that the profile rejects
// (Smoother::reweight), lets the offset jump.
//
// Unknowns, interleaved so that the normal matrix is banded (bandwidth 4): x_k = log distance of
// pair k at 2k, the chain offset o_k at 2k + 1. Three passes: terms under the current weights, the
// grid search of the noise levels and q, the posterior mean, the reweighting.
SpeedFit smooth_speed(std::vector<double>& v, const SpeedMeasurements& m, const SpeedPrior& prior, SpeedPosterior* post) {
  const int n = static_cast<int>(v.size());
  SpeedFit fit;
  if (post) {
    post->var.assign(n, 0.0);
    post->cov_prev.assign(n, 0.0);
  }
  Smoother s(n, m, prior);
  if (!s.anchored()) return fit;
  s.start(v);
  for (int outer = 0; outer < 3; ++outer)
    if (!s.pass(outer, fit)) return fit;
  s.speeds(v);
  if (post) s.posterior(*post);
  fit.ok = true;
  return fit;
}

}  // namespace egogeo::vo
