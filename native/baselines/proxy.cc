#include "proxy.h"

#include "../default_camera.h"

#include <opencv2/calib3d.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/video/tracking.hpp>

#include <algorithm>
#include <cmath>

namespace egogeo::baselines {

float np_median(std::vector<float> v) {
  if (v.empty()) return 0.0f;
  const size_t n = v.size(), h = n / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(h), v.end());
  const float hi = v[h];
  if (n % 2) return hi;
  const float lo = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(h));
  return static_cast<float>(static_cast<double>(lo + hi) / 2.0);  // float32 sum, then the mean cast back
}

namespace {

/// The reference's _horizontal_flow_fallback: median horizontal displacement times 0.06 degrees.
double horizontal_fallback(const std::vector<cv::Point2f>& p1, const std::vector<cv::Point2f>& p2) {
  if (p1.size() < 2) return 0.0;
  std::vector<float> dx(p1.size());
  for (size_t i = 0; i < p1.size(); ++i) dx[i] = p2[i].x - p1[i].x;
  return static_cast<double>(np_median(std::move(dx))) * 0.06;
}

}  // namespace

VoProxySignals vo_proxy_signals(const std::vector<cv::Mat>& grey) {
  VoProxySignals s;
  if (grey.size() < 2) return s;
  const int h = grey[0].rows, w = grey[0].cols;
  const double f = kDefaultFocalPerWidth * w;
  const cv::Matx33d K(f, 0, w / 2.0, 0, f, h / 2.0, 0, 0, 1);
  cv::Mat mask = cv::Mat::zeros(h, w, CV_8U);
  const int rw = static_cast<int>(w * 0.6), rh = static_cast<int>(h * 0.6);
  const cv::Rect roi((w - rw) / 2, (h - rh) / 2, rw, rh);
  mask(roi).setTo(255);
  // Corners are found only inside the ROI, and a corner's score depends on pixels within a few of
  // it (Sobel 3, block 7, the 3×3 non-maximum test): detecting on the ROI plus a margin, as a view
  // of the image (its filters read the real pixels around it), gives the same corners in the same
  // order as detecting on the whole masked image, at a third of the cost.
  constexpr int kMargin = 8;
  const cv::Rect det = (roi + cv::Size(2 * kMargin, 2 * kMargin) - cv::Point(kMargin, kMargin)) & cv::Rect(0, 0, w, h);
  const cv::Mat det_mask = mask(det);
  const cv::TermCriteria lk_term(cv::TermCriteria::EPS | cv::TermCriteria::COUNT, 30, 0.01);

  // KLT's image pyramids, each frame's built once (as calcOpticalFlowPyrLK builds them from images:
  // buildOpticalFlowPyramid with the window and levels, no derivatives), not once per pair it is in.
  const cv::Size win(21, 21);
  std::vector<cv::Mat> prev_pyr, curr_pyr;
  cv::buildOpticalFlowPyramid(grey[0], prev_pyr, win, 3, false);
  for (size_t i = 1; i < grey.size(); ++i) {
    const cv::Mat& prev = grey[i - 1];
    const cv::Mat& curr = grey[i];
    cv::buildOpticalFlowPyramid(curr, curr_pyr, win, 3, false);
    struct Advance {  // the current pyramid is the next pair's previous one, however this pair ends
      std::vector<cv::Mat>& a;
      std::vector<cv::Mat>& b;
      ~Advance() { a.swap(b); }
    } advance{prev_pyr, curr_pyr};
    std::vector<cv::Point2f> corners;
    cv::goodFeaturesToTrack(prev(det), corners, 800, 0.01, 7, det_mask, 7, false, 0.04);
    for (cv::Point2f& c : corners) c += cv::Point2f(static_cast<float>(det.x), static_cast<float>(det.y));
    if (corners.size() < 8) {  // not enough features: zero motion
      s.yaw_deg.push_back(0.0);
      s.disp_mag.push_back(0.0);
      continue;
    }
    std::vector<cv::Point2f> next;
    std::vector<uchar> status;
    std::vector<float> err;
    cv::calcOpticalFlowPyrLK(prev_pyr, curr_pyr, corners, next, status, err, win, 3, lk_term);
    std::vector<cv::Point2f> p1, p2;
    std::vector<float> norms;
    for (size_t k = 0; k < corners.size(); ++k) {
      if (!status[k]) continue;
      const float dx = next[k].x - corners[k].x, dy = next[k].y - corners[k].y;
      const float n = std::sqrt(dx * dx + dy * dy);
      if (!(n < 50.0f)) continue;  // excessive displacement
      p1.push_back(corners[k]);
      p2.push_back(next[k]);
      norms.push_back(n);
    }
    const double med = static_cast<double>(np_median(norms));
    s.disp_mag.push_back(med);
    if (med < 0.3) {  // near-zero displacement: the essential matrix is degenerate
      s.yaw_deg.push_back(0.0);
      continue;
    }
    if (p1.size() < 8) {
      s.yaw_deg.push_back(horizontal_fallback(p1, p2));
      continue;
    }
    cv::Mat inliers;
    const cv::Mat E = cv::findEssentialMat(p1, p2, K, cv::RANSAC, 0.999, 1.0, 1000, inliers);
    if (E.empty() || inliers.empty() || E.rows != 3 || cv::countNonZero(inliers) < 15) {
      s.yaw_deg.push_back(horizontal_fallback(p1, p2));
      continue;
    }
    cv::Mat R, t;
    cv::recoverPose(E, p1, p2, K, R, t, inliers);
    s.yaw_deg.push_back(std::atan2(R.at<double>(0, 2), R.at<double>(2, 2)) * 180.0 / CV_PI);
  }
  return s;
}

namespace {

cv::Mat preprocess(const cv::Mat& grey, int max_width) {
  cv::Mat g = grey;
  if (g.cols > max_width) {
    const double scale = static_cast<double>(max_width) / g.cols;
    cv::Mat r;
    cv::resize(g, r, cv::Size(), scale, scale, cv::INTER_AREA);
    g = r;
  }
  cv::Mat out;
  cv::GaussianBlur(g, out, cv::Size(3, 3), 0.8);
  return out;
}

}  // namespace

FlowSignals flow_signals(const std::vector<cv::Mat>& grey) {
  FlowSignals s;
  if (grey.size() < 2) return s;
  cv::Mat prev = preprocess(grey[0], 320);
  const int h = prev.rows, w = prev.cols;
  const float cy = static_cast<float>(h / 2.0), cx = static_cast<float>(w / 2.0);
  const int y_top = static_cast<int>(h * 0.20), y_bot = static_cast<int>(h * 0.85);
  const size_t n = static_cast<size_t>(std::max(0, y_bot - y_top)) * static_cast<size_t>(w);
  // The pixel grid about the centre, in float32 as NumPy builds it.
  std::vector<float> gx(n), gy(n), gr(n);
  for (int y = y_top, k = 0; y < y_bot; ++y) {
    for (int x = 0; x < w; ++x, ++k) {
      const float dx = static_cast<float>(x) - cx, dy = static_cast<float>(y) - cy;
      float r = std::sqrt(dx * dx + dy * dy);
      if (r < 1e-6f) r = 1.0f;
      gx[static_cast<size_t>(k)] = dx;
      gy[static_cast<size_t>(k)] = dy;
      gr[static_cast<size_t>(k)] = r;
    }
  }
  std::vector<float> tan(n), rad(n), mag(n);
  for (size_t i = 1; i < grey.size(); ++i) {
    cv::Mat curr = preprocess(grey[i], 320);
    cv::Mat flow;
    cv::calcOpticalFlowFarneback(prev, curr, flow, 0.5, 3, 15, 3, 5, 1.2, 0);
    size_t k = 0;
    for (int y = y_top; y < y_bot; ++y) {
      const cv::Point2f* row = flow.ptr<cv::Point2f>(y);
      for (int x = 0; x < w; ++x, ++k) {
        const float fx = row[x].x, fy = row[x].y;
        const float a = fx * gy[k], b = fy * gx[k];
        tan[k] = (a - b) / gr[k];
        const float c = fx * gx[k], d = fy * gy[k];
        rad[k] = (c + d) / gr[k];
        const float e = fx * fx, g = fy * fy;
        mag[k] = std::sqrt(e + g);
      }
    }
    s.turn_score.push_back(static_cast<double>(np_median(tan)));
    s.exp_score.push_back(static_cast<double>(np_median(rad)));
    s.motion_mag.push_back(static_cast<double>(np_median(mag)));
    prev = curr;
  }
  return s;
}

}  // namespace egogeo::baselines
