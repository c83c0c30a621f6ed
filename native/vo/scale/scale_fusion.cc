#include "scale_fusion.h"

#include "../pose/geometry.h"

#include <opencv2/core.hpp>

#include <cmath>
#include <limits>
#include <utility>

namespace egogeo::vo {
namespace {

// Fuses the noisy absolute road distances with the precise relative scales between consecutive
// pairs: least squares over log distances L_k with road terms (robust), ratio terms
// L_k - L_{k-1} = rho_k, and a weak smoothness prior on log speed that bridges pairs with neither.
// Returns the final robust weights of the road (wr_out) and ratio (wq_out) terms and the road
// log distances (road_out) for the speed smoother; false when nothing was fused.
bool fuse_relative(std::vector<double>& v, std::vector<double>& conf, const std::vector<ScaleRatio>& ratios,
                   const ScaleMeasurements& m, std::vector<double>& road_out, std::vector<double>& wr_out,
                   std::vector<double>& wq_out) {
  const std::vector<double>& ts = m.timestamps;
  const int n = static_cast<int>(v.size());
  std::vector<double> logdt(n);
  for (int k = 0; k < n; ++k) logdt[k] = std::log(ts[k + 1] - ts[k]);
  auto moving = [&](int k) { return static_cast<bool>(m.moving[k]); };
  std::vector<double> road(n, 0.0), wr(n, 0.0);
  int anchors = 0;
  for (int k = 0; k < n; ++k)
    if (moving(k) && conf[k] > 0 && v[k] > 0) {
      road[k] = std::log(v[k]) + logdt[k];
      const double sr = m.road_sigma[k];
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

void fuse_scales(const ScaleMeasurements& m, const SpeedPrior& prior, bool smoother, std::vector<double>& v,
                 std::vector<double>& conf, std::vector<double>& var, std::vector<double>& covp, SpeedFit& fit) {
  const size_t np = v.size();
  std::vector<double> road, wr, wq;
  if (!fuse_relative(v, conf, m.ratios, m, road, wr, wq) || !smoother) return;
  std::vector<double> rho(np, 0.0);
  for (size_t k = 0; k < np; ++k)
    if (m.ratios[k].valid) rho[k] = m.ratios[k].log_ratio;
  std::vector<double> vs = v;
  SpeedPosterior post;
  const SpeedMeasurements sm{m.moving, m.timestamps, std::move(road), std::move(wr), std::move(rho), std::move(wq)};
  fit = smooth_speed(vs, sm, prior, &post);
  if (!fit.ok) return;
  v = vs;
  for (size_t k = 0; k < np; ++k) {
    if (!m.moving[k]) {
      var[k] = 0;
      continue;
    }
    var[k] = post.var[k];  // of log distance = log speed + const
    covp[k] = post.cov_prev[k];
  }
}

MeasuredSpeed speed_from_pairs(const std::vector<double>& ts, const std::vector<double>& d, const std::vector<double>& ds,
                               const std::vector<double>& lr, const std::vector<double>& rs, const std::vector<bool>& moving,
                               const SpeedPrior& prior) {
  const size_t n = d.size();
  ScaleMeasurements m;
  m.timestamps = ts;
  m.road_distance = d;
  m.road_sigma = ds;
  m.ratios.resize(n);
  m.moving = moving;
  std::vector<double> v(n, 0.0), conf(n, 0.0), var(n, std::numeric_limits<double>::quiet_NaN()), covp(n, 0.0);
  for (size_t k = 0; k < n; ++k) {
    if (k >= 1 && rs[k] > 0) m.ratios[k] = {lr[k], rs[k], true};
    if (!m.moving[k]) {
      conf[k] = 1.0;  // standing still is known exactly
    } else if (d[k] > 0 && ds[k] > 0) {
      v[k] = d[k] / (ts[k + 1] - ts[k]);
      conf[k] = 1.0;
    }
  }
  MeasuredSpeed out;
  fuse_scales(m, prior, true, v, conf, var, covp, out.fit);
  out.speed = v;
  out.sigma.resize(n);
  for (size_t k = 0; k < n; ++k) out.sigma[k] = v[k] * std::sqrt(var[k]);
  return out;
}

}  // namespace egogeo::vo
