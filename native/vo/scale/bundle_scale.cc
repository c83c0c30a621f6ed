#include "bundle_scale.h"

#include "../pose/geometry.h"

#include <opencv2/calib3d.hpp>

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace egogeo::vo {
namespace {

// Longest window (pairs). The reduced camera system is dense, 6 unknowns a camera; 20 pairs keep
// it at 120 and the cost linear in the clip's length through overlapping windows.
constexpr int kMaxWindowPairs = 20;
// Floor on a ratio's standard error: the adjustment's covariance knows only the pixel noise, not
// the tracks' correlated errors; the speed smoother fits the level per clip (road_scale.cc).
constexpr double kMinSigma = 0.001;
// Shortest window (pairs). A run of two pairs (three frames, one link) keeps its three-frame ratio:
// there the adjustment adds nothing but freedom for two poses, and on KITTI 01 at 3 Hz it moved a
// good ratio by 17%.
constexpr int kMinWindowPairs = 3;
// Levenberg-Marquardt iterations per stage, and the relative cost decrease that ends one early
// (on KITTI 00, 1e-4 reads the same ratios as 1e-6 to 0.01% at two thirds of the cost).
constexpr int kMaxIter = 10;
constexpr double kTol = 1e-4;

struct Obs {
  int cam;
  cv::Vec2d m;  // normalized image coordinates
  double w = 1;  // Huber weight, fixed per pass (0 = rejected)
};

/// A point by its inverse depth along its ray in the first frame that sees it (its anchor): well
/// conditioned for distant points, whose depth is uncertain but whose direction is not.
struct Point {
  int anchor;
  cv::Vec3d m_a;
  double rho = 0;
  std::vector<Obs> obs;  // the other frames
};

struct Cam {
  cv::Matx33d R = cv::Matx33d::eye();  // X_cam = R X_world + p
  cv::Vec3d p{0, 0, 0};
};

cv::Matx33d skew(const cv::Vec3d& v) { return {0, -v[2], v[1], v[2], 0, -v[0], -v[1], v[0], 0}; }

cv::Matx33d exp_so3(const cv::Vec3d& w) {
  cv::Mat R;
  cv::Rodrigues(cv::Mat(w), R);
  return cv::Matx33d(R);
}

cv::Vec3d centre(const Cam& c) { return -(c.R.t() * c.p); }

double huber_cost(double e, double delta) { return e <= delta ? 0.5 * e * e : delta * (e - 0.5 * delta); }

class Window {
 public:
  Window(const std::vector<Matches>& matches, const std::vector<std::vector<uchar>>& inliers, const std::vector<PairMotion>& pairs,
         const Intrinsics& intr, const std::vector<ScaleRatio>& three_frame, int first, int last)
      : first_(first), ncam_(last - first + 2), fx_(intr.fx), fy_(intr.fy) {
    const cv::Matx33d K = intr.K();
    // Cameras chained from the pairs' motions, the scales from the three-frame ratios.
    cams_.resize(ncam_);
    double s = 1;
    for (int k = first; k <= last; ++k) {
      if (k > first) s *= std::exp(three_frame[k].log_ratio);
      const int c = k - first;
      cams_[c + 1].R = pairs[k].R * cams_[c].R;
      cams_[c + 1].p = pairs[k].R * cams_[c].p + pairs[k].t_dir * s;
    }
    gauge_ = cv::norm(cams_[1].p);
    // Tracks: an id's run of consecutive inlier correspondences is one point.
    std::unordered_map<int, int> live, next;
    for (int k = first; k <= last; ++k) {
      const Matches& m = matches[k];
      next.clear();
      for (size_t j = 0; j < m.ids.size(); ++j) {
        if (!inliers[k][j]) continue;
        const auto it = live.find(m.ids[j]);
        int i;
        if (it != live.end()) {
          i = it->second;
        } else {
          i = static_cast<int>(pts_.size());
          pts_.push_back({k - first, normalize(m.prev[j], K), 0.0, {}});
        }
        const cv::Vec3d x = normalize(m.curr[j], K);
        pts_[i].obs.push_back({k + 1 - first, {x[0], x[1]}});
        next.emplace(m.ids[j], i);
      }
      live.swap(next);
    }
    for (auto& pt : pts_) init_depth(pt);
  }

  /// Levenberg-Marquardt on the reprojection errors (pixels) in two passes: unit weights first
  /// (steps accepted on the Huber cost), then, without the errors beyond 5 robust sigmas, with
  /// Huber weights fixed at the first pass's residuals (a one-step M-estimate). Re-weighting at
  /// every iteration (full IRLS) lowered the ratios' MAD on KITTI (0.60 -> 0.56%) but made the
  /// consecutive ratio errors less anti-correlated (lag-1 -0.41 -> -0.19 on 01+06), away from the
  /// speed smoother's error model, and the speed answers worse (pooled all-14 0.868 -> 0.833).
  /// False when it does not converge to a finite solution.
  bool solve() {
    if (pts_.empty()) return false;
    for (int stage = 0; stage < 2; ++stage) {
      const double sigma = robust_sigma();
      if (!(sigma > 0) || !std::isfinite(sigma)) return false;
      delta_ = 1.5 * sigma;
      if (stage == 1) reject(5 * sigma);
      double cost = total_cost(cams_, rho());
      if (!std::isfinite(cost)) return false;
      double lambda = 1e-3;
      for (int it = 0; it < kMaxIter; ++it) {
        std::vector<Cam> cams;
        std::vector<double> rhos;
        if (!step(lambda, cams, rhos)) {
          lambda *= 10;
          if (lambda > 1e6) break;
          continue;
        }
        const double c = total_cost(cams, rhos);
        if (c < cost) {
          const bool done = cost - c < kTol * cost;
          cams_ = cams;
          for (size_t i = 0; i < pts_.size(); ++i) pts_[i].rho = rhos[i];
          cost = c;
          lambda = std::max(1e-7, lambda / 3);
          if (done) break;
        } else {
          lambda *= 10;
          if (lambda > 1e6) break;
        }
      }
      reweight();
    }
    sigma_px_ = robust_sigma();
    return std::isfinite(sigma_px_) && sigma_px_ > 0;
  }

  /// The robust sigma (pixels) of the reprojection errors at the solution.
  double residual_px() const { return sigma_px_; }

  /// The adjusted log ratio of pair k's length to pair k-1's, and its standard error (k global).
  bool ratio(int k, const cv::Mat& cov, double& log_ratio, double& sigma) const {
    const int c1 = k - first_;
    const cv::Vec3d a = centre(cams_[c1 - 1]), b = centre(cams_[c1]), c = centre(cams_[c1 + 1]);
    const double s0 = cv::norm(b - a), s1 = cv::norm(c - b);
    if (!(s0 > 0) || !(s1 > 0)) return false;
    log_ratio = std::log(s1 / s0);
    // Gradient of the log ratio in the cameras' perturbations (camera 0 is fixed).
    const int D = 6 * (ncam_ - 1);
    cv::Mat g = cv::Mat::zeros(D, 1, CV_64F);
    auto add = [&](int cam, const cv::Vec3d& dlogs_dc) {  // d log s / d centre of `cam`
      if (cam == 0) return;
      const Cam& C = cams_[cam];
      const cv::Matx33d dth = -(C.R.t() * skew(C.p)), dp = -C.R.t();
      const cv::Vec3d gth = dth.t() * dlogs_dc, gp = dp.t() * dlogs_dc;
      for (int r = 0; r < 3; ++r) {
        g.at<double>(6 * (cam - 1) + r) += gth[r];
        g.at<double>(6 * (cam - 1) + 3 + r) += gp[r];
      }
    };
    const cv::Vec3d u0 = (b - a) * (1.0 / (s0 * s0)), u1 = (c - b) * (1.0 / (s1 * s1));
    add(c1 + 1, u1);
    add(c1, -u1 - u0);
    add(c1 - 1, u0);
    const double var = g.dot(cov * g) * sigma_px_ * sigma_px_;
    if (!std::isfinite(var) || var < 0) return false;
    sigma = std::max(kMinSigma, std::sqrt(var));
    return std::isfinite(log_ratio);
  }

  /// The adjusted translation direction of pair k (k global), unit length: X_{k+1} = R X_k + t.
  cv::Vec3d heading(int k) const {
    const Cam &a = cams_[k - first_], &b = cams_[k + 1 - first_];
    const cv::Vec3d t = b.p - (b.R * a.R.t()) * a.p;
    return t * (1.0 / cv::norm(t));
  }

  /// Covariance of the cameras' perturbations per unit pixel variance (gauge fixed), empty on failure.
  cv::Mat covariance() {
    std::vector<double> S, g;
    std::vector<PointBlock> blocks;
    assemble(cams_, 0.0, S, g, blocks);
    const int D = 6 * (ncam_ - 1);
    cv::Mat cov;
    if (cv::invert(cv::Mat(D, D, CV_64F, S.data()), cov, cv::DECOMP_CHOLESKY) == 0) return {};
    return cov;
  }

 private:
  struct PointBlock {
    std::vector<std::pair<int, cv::Vec6d>> hcp;  // (camera, J_c^T W J_rho)
    double hpp = 0, bp = 0;
  };

  std::vector<double> rho() const {
    std::vector<double> r(pts_.size());
    for (size_t i = 0; i < pts_.size(); ++i) r[i] = pts_[i].rho;
    return r;
  }

  /// Predicted homogeneous point in camera j, up to the positive factor rho:
  /// h = R_j R_a^T (m_a - rho p_a) + rho p_j.
  static cv::Vec3d predict(const Cam& a, const Cam& j, const cv::Vec3d& m_a, double rho) {
    return j.R * (a.R.t() * (m_a - rho * a.p)) + rho * j.p;
  }

  /// Linear least squares for the inverse depth: o x (v + rho b) = 0 in every other frame.
  void init_depth(Point& pt) const {
    double num = 0, den = 0;
    const Cam& a = cams_[pt.anchor];
    for (const auto& o : pt.obs) {
      const Cam& j = cams_[o.cam];
      const cv::Matx33d A = j.R * a.R.t();
      const cv::Vec3d v = A * pt.m_a, b = j.p - A * a.p, x(o.m[0], o.m[1], 1.0);
      const cv::Vec3d cb = x.cross(b), cv_ = x.cross(v);
      num -= cb.dot(cv_);
      den += cb.dot(cb);
    }
    const double r = den > 0 ? num / den : 0;
    pt.rho = std::isfinite(r) && r > 1e-4 ? r : 1e-4;  // behind or at infinity: start far away
  }

  bool residual(const Cam& a, const Cam& j, const Point& pt, double rho, const Obs& o, cv::Vec2d& r, cv::Vec3d& h) const {
    h = predict(a, j, pt.m_a, rho);
    if (!(h[2] > 1e-9)) return false;
    r = {fx_ * (h[0] / h[2] - o.m[0]), fy_ * (h[1] / h[2] - o.m[1])};
    return true;
  }

  double robust_sigma() const {
    std::vector<double> e;
    for (const auto& pt : pts_)
      for (const auto& o : pt.obs) {
        if (o.w <= 0) continue;
        cv::Vec2d r;
        cv::Vec3d h;
        if (residual(cams_[pt.anchor], cams_[o.cam], pt, pt.rho, o, r, h)) e.push_back(cv::norm(r));
      }
    return e.size() < 20 ? 0.0 : median(e) / 1.1774;  // the median of a 2-D Gaussian's norm is 1.1774 sigma
  }

  void reject(double limit) {
    for (auto& pt : pts_)
      for (auto& o : pt.obs) {
        cv::Vec2d r;
        cv::Vec3d h;
        if (!residual(cams_[pt.anchor], cams_[o.cam], pt, pt.rho, o, r, h) || cv::norm(r) > limit) o.w = 0;
      }
  }

  void reweight() {
    for (auto& pt : pts_)
      for (auto& o : pt.obs) {
        if (o.w <= 0) continue;
        cv::Vec2d r;
        cv::Vec3d h;
        const double e = residual(cams_[pt.anchor], cams_[o.cam], pt, pt.rho, o, r, h) ? cv::norm(r) : 1e9;
        o.w = e <= delta_ ? 1.0 : delta_ / e;
      }
  }

  double total_cost(const std::vector<Cam>& cams, const std::vector<double>& rhos) const {
    double c = 0;
    for (size_t i = 0; i < pts_.size(); ++i) {
      const Point& pt = pts_[i];
      for (const auto& o : pt.obs) {
        if (o.w <= 0) continue;
        cv::Vec2d r;
        cv::Vec3d h;
        c += residual(cams[pt.anchor], cams[o.cam], pt, rhos[i], o, r, h) ? huber_cost(cv::norm(r), delta_) : huber_cost(1e3, delta_);
      }
    }
    const double dg = cv::norm(cams[1].p) - gauge_;
    return c + 0.5 * gauge_weight_ * dg * dg;
  }

  /// The reduced camera system S dx = -g (points eliminated by their Schur complement) at `cams`,
  /// with Marquardt damping lambda; each observation weighted by its Huber weight.
  void assemble(const std::vector<Cam>& cams, double lambda, std::vector<double>& S, std::vector<double>& g,
                std::vector<PointBlock>& blocks) {
    const int D = 6 * (ncam_ - 1);
    S.assign(static_cast<size_t>(D) * D, 0.0);
    g.assign(D, 0.0);
    blocks.assign(pts_.size(), {});
    auto at = [&](int r, int c) -> double& { return S[static_cast<size_t>(r) * D + c]; };
    for (size_t i = 0; i < pts_.size(); ++i) {
      const Point& pt = pts_[i];
      PointBlock& B = blocks[i];
      const Cam& a = cams[pt.anchor];
      cv::Vec6d hcp_a(0, 0, 0, 0, 0, 0);
      for (const auto& o : pt.obs) {
        if (o.w <= 0) continue;
        const Cam& j = cams[o.cam];
        cv::Vec2d r;
        cv::Vec3d h;
        if (!residual(a, j, pt, pt.rho, o, r, h)) continue;
        const cv::Matx33d A = j.R * a.R.t();
        const cv::Vec3d w = pt.m_a - pt.rho * a.p, v = A * w;
        const cv::Matx23d P(fx_ / h[2], 0, -fx_ * h[0] / (h[2] * h[2]), 0, fy_ / h[2], -fy_ * h[1] / (h[2] * h[2]));
        // dh/d(theta_j, p_j) = [-[v]x, rho I]; dh/d(theta_a, p_a) = [A [w]x, -rho A]; dh/drho = p_j - A p_a.
        const cv::Matx23d Jj_th = P * (-skew(v)), Jj_p = P * (pt.rho * cv::Matx33d::eye());
        const cv::Matx23d Ja_th = P * (A * skew(w)), Ja_p = P * (-pt.rho * A);
        const cv::Vec2d Jr = P * (j.p - A * a.p);
        cv::Matx<double, 2, 6> Jj, Ja;
        for (int rr = 0; rr < 2; ++rr)
          for (int cc = 0; cc < 3; ++cc) {
            Jj(rr, cc) = Jj_th(rr, cc);
            Jj(rr, cc + 3) = Jj_p(rr, cc);
            Ja(rr, cc) = Ja_th(rr, cc);
            Ja(rr, cc + 3) = Ja_p(rr, cc);
          }
        const double wt = o.w;
        const int cams_idx[2] = {o.cam, pt.anchor};
        const cv::Matx<double, 2, 6>* Js[2] = {&Jj, &Ja};
        for (int x = 0; x < 2; ++x) {
          if (cams_idx[x] == 0) continue;
          const int ox = 6 * (cams_idx[x] - 1);
          const cv::Vec6d gx = Js[x]->t() * r * wt;
          for (int q = 0; q < 6; ++q) g[ox + q] += gx[q];
          for (int y = 0; y < 2; ++y) {
            if (cams_idx[y] == 0 || cams_idx[y] < cams_idx[x]) continue;  // the upper triangle; mirrored below
            const int oy = 6 * (cams_idx[y] - 1);
            const cv::Matx66d H = Js[x]->t() * (*Js[y]) * wt;
            for (int p = 0; p < 6; ++p)
              for (int q = 0; q < 6; ++q) at(ox + p, oy + q) += H(p, q);
          }
        }
        B.hcp.push_back({o.cam, Jj.t() * Jr * wt});
        hcp_a += Ja.t() * Jr * wt;
        B.hpp += wt * Jr.dot(Jr);
        B.bp += wt * Jr.dot(r);
      }
      B.hcp.push_back({pt.anchor, hcp_a});
    }
    // Gauge: the first pair's length is held (the problem is otherwise free in scale).
    {
      double tr = 0;
      for (int d = 0; d < D; ++d) tr += at(d, d);
      gauge_weight_ = 1e3 * std::max(1.0, tr / D);
      const cv::Vec3d p1 = cams[1].p, u = p1 * (1.0 / cv::norm(p1));
      const double dg = cv::norm(p1) - gauge_;
      for (int p = 0; p < 3; ++p) {
        g[3 + p] += gauge_weight_ * u[p] * dg;
        for (int q = 0; q < 3; ++q) at(3 + p, 3 + q) += gauge_weight_ * u[p] * u[q];
      }
    }
    for (int d = 0; d < D; ++d) at(d, d) *= 1 + lambda;
    // Eliminate the points.
    for (auto& B : blocks) {
      B.hpp = B.hpp * (1 + lambda) + 1e-12;
      if (B.hpp <= 1e-12 || B.hcp.empty()) continue;
      for (const auto& [cx, vx] : B.hcp) {
        if (cx == 0) continue;
        const int ox = 6 * (cx - 1);
        const cv::Vec6d ux = vx * (1.0 / B.hpp);
        for (int p = 0; p < 6; ++p) g[ox + p] -= ux[p] * B.bp;
        for (const auto& [cy, vy] : B.hcp) {
          if (cy < cx) continue;
          const int oy = 6 * (cy - 1);
          for (int p = 0; p < 6; ++p)
            for (int q = 0; q < 6; ++q) at(ox + p, oy + q) -= ux[p] * vy[q];
        }
      }
    }
    for (int r = 0; r < D; ++r)
      for (int c = 0; c < r; ++c) at(r, c) = at(c, r);
  }

  bool step(double lambda, std::vector<Cam>& cams, std::vector<double>& rhos) {
    std::vector<double> S, g;
    std::vector<PointBlock> blocks;
    assemble(cams_, lambda, S, g, blocks);
    const int D = 6 * (ncam_ - 1);
    cv::Mat dx;
    cv::Mat rhs(D, 1, CV_64F);
    for (int d = 0; d < D; ++d) rhs.at<double>(d) = -g[d];
    if (!cv::solve(cv::Mat(D, D, CV_64F, S.data()), rhs, dx, cv::DECOMP_CHOLESKY)) return false;
    cams = cams_;
    for (int c = 1; c < ncam_; ++c) {
      const double* x = dx.ptr<double>(6 * (c - 1));
      cams[c].R = nearest_rotation(exp_so3({x[0], x[1], x[2]}) * cams[c].R);
      cams[c].p += cv::Vec3d(x[3], x[4], x[5]);
    }
    rhos.resize(pts_.size());
    for (size_t i = 0; i < pts_.size(); ++i) {
      const PointBlock& B = blocks[i];
      double d = B.bp;
      for (const auto& [c, v] : B.hcp)
        if (c > 0) d += v.dot(cv::Vec6d(dx.ptr<double>(6 * (c - 1))));
      const double r = pts_[i].rho - (B.hpp > 1e-12 ? d / B.hpp : 0.0);
      rhos[i] = std::isfinite(r) ? std::max(1e-6, r) : pts_[i].rho;
    }
    for (const auto& c : cams)
      if (!std::isfinite(c.p[0] + c.p[1] + c.p[2])) return false;
    return true;
  }

  int first_, ncam_;
  double fx_, fy_;
  std::vector<Cam> cams_;
  std::vector<Point> pts_;
  double gauge_ = 1, gauge_weight_ = 0, delta_ = 1, sigma_px_ = 0;
};

}  // namespace

std::vector<ScaleRatio> bundle_relative_scales(const std::vector<Matches>& matches, const std::vector<std::vector<uchar>>& inliers,
                                               const std::vector<PairMotion>& pairs, const Intrinsics& intr,
                                               const std::vector<ScaleRatio>& three_frame, std::vector<cv::Vec3d>* headings,
                                               double* residual_px) {
  std::vector<ScaleRatio> out = three_frame;
  double residual_sum = 0;
  int solved = 0;
  if (headings) headings->assign(pairs.size(), cv::Vec3d(0, 0, 0));
  std::vector<int> heading_margin(pairs.size(), -1);
  const int np = static_cast<int>(pairs.size());
  auto linked = [&](int k) { return k >= 1 && k < np && three_frame[k].valid; };  // pairs k-1 and k share a ratio
  // Runs of pairs joined by valid links, then windows of at most kMaxWindowPairs pairs overlapping
  // by half; each link takes the window in which it lies farthest from the ends.
  std::vector<int> best_margin(np, -1);
  for (int a = 0; a < np;) {
    int b = a;
    while (linked(b + 1)) ++b;
    const int len = b - a + 1;
    if (len >= kMinWindowPairs) {
      const int W = std::min(len, kMaxWindowPairs), stride = std::max(1, W / 2);
      for (int s = a;; s += stride) {
        const int ws = std::min(s, b - W + 1), we = ws + W - 1;
        Window win(matches, inliers, pairs, intr, three_frame, ws, we);
        if (win.solve()) {
          residual_sum += win.residual_px();
          ++solved;
          if (headings)  // each pair from the window in which it lies farthest from the ends
            for (int k = ws; k <= we; ++k) {
              const int margin = std::min(k - ws, we - k);
              if (margin <= heading_margin[k]) continue;
              (*headings)[k] = win.heading(k);
              heading_margin[k] = margin;
            }
          const cv::Mat cov = win.covariance();
          if (!cov.empty()) {
            for (int k = ws + 1; k <= we; ++k) {
              const int margin = std::min(k - 1 - ws, we - k);
              if (margin <= best_margin[k]) continue;
              double lr, sd;
              if (!win.ratio(k, cov, lr, sd)) continue;
              out[k] = {lr, sd, true};
              best_margin[k] = margin;
            }
          }
        }
        if (we >= b) break;
      }
    }
    a = b + 1;
  }
  if (residual_px) *residual_px = solved > 0 ? residual_sum / solved : 0.0;
  return out;
}

}  // namespace egogeo::vo
