#include "tracker.h"

#include "fast.h"
#include "klt.h"
#include "klt_scale.h"
#include "../timer.h"

#include <opencv2/imgproc.hpp>
#include <opencv2/video/tracking.hpp>

#include <algorithm>
#include <cmath>

namespace egogeo::vo {

Tracker::Tracker(const Options& opt, CornerCache* corners) : opt_(opt), corners_(corners), photometric_(opt), threshold_(opt.fast_threshold) {
  // FAST (the default) is fast.cc's: cv::FAST's corners, faster.
  if (opt.detector == Detector::Orb) orb_ = cv::ORB::create(opt.max_features * 2, 1.2f, 1, 31, 0, 2, cv::ORB::FAST_SCORE, 31, opt.fast_threshold);
  if (opt.device == Options::Device::Gpu) gpu_ = std::make_unique<GpuKlt>(opt);  // [gpu] gpu_backend.cc
}

double estimate_noise_sigma(const cv::Mat& img) {
  CV_Assert(img.type() == CV_8UC1);
  if (img.rows < 3 || img.cols < 3) return 0.0;
  // |response| <= 16 * 255; an integer histogram gives the exact median in O(N).
  std::vector<int> hist(16 * 255 + 1, 0);
  size_t count = 0;
  for (int y = 1; y + 1 < img.rows; ++y) {
    const uchar* a = img.ptr<uchar>(y - 1);
    const uchar* b = img.ptr<uchar>(y);
    const uchar* c = img.ptr<uchar>(y + 1);
    for (int x = 1; x + 1 < img.cols; ++x) {
      const int r = (a[x - 1] - 2 * a[x] + a[x + 1]) - 2 * (b[x - 1] - 2 * b[x] + b[x + 1]) + (c[x - 1] - 2 * c[x] + c[x + 1]);
      hist[static_cast<size_t>(std::abs(r))]++;
      ++count;
    }
  }
  size_t acc = 0;
  int med = 0;
  for (; med < static_cast<int>(hist.size()); ++med) {
    acc += static_cast<size_t>(hist[static_cast<size_t>(med)]);
    if (2 * acc >= count) break;
  }
  // For Gaussian noise the response is N(0, 36 sigma^2): sigma = median |r| / (0.6745 * 6).
  return med / (0.6745 * 6.0);
}


cv::Mat Tracker::prepare(const cv::Mat& raw) {
  cv::Mat img = photometric_.apply(raw);
  if (opt_.fast_noise_factor > 0) {
    const double t = opt_.fast_noise_factor * estimate_noise_sigma(img);
    threshold_ = std::clamp(static_cast<int>(std::lround(std::max<double>(opt_.fast_threshold, t))), 1, 255);
  } else {
    threshold_ = opt_.fast_threshold;
  }
  return img;
}

void Tracker::build_pyramid(const cv::Mat& img, std::vector<cv::Mat>& pyr) const {
  if (gpu_) return pyr.assign(1, img);  // [gpu] the device builds (and keeps) the pyramid of pyr[0]
  // With the derivatives klt_track reads: a frame's pyramid is KLT's previous image in the next pair.
  cv::buildOpticalFlowPyramid(img, pyr, cv::Size(opt_.klt_window, opt_.klt_window), opt_.klt_levels, true);
}

void Tracker::start(const cv::Mat& raw, StageTimes& ms) {
  cv::Mat img;
  {
    Timer t(ms.track);
    img = prepare(raw);
  }
  pts_.clear();
  ids_.clear();
  ages_.clear();
  {
    Timer t(ms.detect);
    detect(img);
  }
  Timer t(ms.track);
  build_pyramid(img, prev_pyr_);
  prev_img_ = img;
  photometric_.first(img);
}

// Corners are detected once over the whole image, then the strongest few per grid cell are kept
// where no live track is near, so tracks cover the road and the far field alike.
void Tracker::detect(const cv::Mat& img) {
  const int want = opt_.max_features - static_cast<int>(pts_.size());
  if (want <= 0) return;
  const int cols = opt_.grid_cols, rows = opt_.grid_rows;
  const float cw = static_cast<float>(img.cols) / cols, ch = static_cast<float>(img.rows) / rows;

  // Occupancy at min_distance resolution marks where live tracks already are.
  const int cell = std::max(1, opt_.min_distance);
  const int ow = img.cols / cell + 1, oh = img.rows / cell + 1;
  std::vector<uint8_t> occupied(static_cast<size_t>(ow) * oh, 0);
  std::vector<int> per_bucket(static_cast<size_t>(cols) * rows, 0);
  auto mark = [&](const cv::Point2f& p) {
    const int cx = static_cast<int>(p.x) / cell, cy = static_cast<int>(p.y) / cell;
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const int x = cx + dx, y = cy + dy;
        if (x >= 0 && y >= 0 && x < ow && y < oh) occupied[static_cast<size_t>(y) * ow + x] = 1;
      }
  };
  auto bucket_of = [&](const cv::Point2f& p) {
    const int bx = std::min(cols - 1, static_cast<int>(p.x / cw));
    const int by = std::min(rows - 1, static_cast<int>(p.y / ch));
    return by * cols + bx;
  };
  for (const auto& p : pts_) {
    mark(p);
    per_bucket[bucket_of(p)]++;
  }

  // The frame's corners, strongest first. FAST's on the CPU are a function of the pixels and the
  // threshold alone: a frame an earlier clip detected on takes that clip's list.
  std::vector<cv::KeyPoint> found;
  Corners kept;
  const bool keyed = corners_ && !orb_ && !gpu_ && img.isContinuous();
  CornerKey key;
  if (keyed) key = {content_hash(img.data, img.total() * img.elemSize()), img.cols, img.rows, threshold_};
  if (!keyed || !corners_->find(key, kept)) {
    if (orb_) {
      orb_->setFastThreshold(threshold_);
      orb_->detect(img, found);
    } else if (gpu_) {
      gpu_->detect(img, threshold_, found);  // [gpu]
    } else {
      fast_corners(img, threshold_, found, fast_scratch_);
    }
    std::sort(found.begin(), found.end(), [](const cv::KeyPoint& a, const cv::KeyPoint& b) { return a.response > b.response; });
    if (keyed) {
      kept = std::make_shared<const std::vector<cv::KeyPoint>>(std::move(found));
      corners_->keep(key, kept, kept->size() * sizeof(cv::KeyPoint));
    }
  }
  const std::vector<cv::KeyPoint>& kps = kept ? *kept : found;
  const int quota = std::max(1, opt_.max_features / (cols * rows));
  const int border = 4;
  int added = 0;
  for (const auto& kp : kps) {
    if (added >= want) break;
    const cv::Point2f p = kp.pt;
    if (p.x < border || p.y < border || p.x >= img.cols - border || p.y >= img.rows - border) continue;
    const int b = bucket_of(p);
    if (per_bucket[b] >= quota) continue;
    const size_t o = static_cast<size_t>(static_cast<int>(p.y) / cell) * ow + static_cast<int>(p.x) / cell;
    if (occupied[o]) continue;
    mark(p);
    per_bucket[b]++;
    pts_.push_back(p);
    ids_.push_back(next_id_++);
    ages_.push_back(1);
    ++added;
  }
}

Matches Tracker::step(const cv::Mat& raw, StageTimes& ms, bool last, const std::vector<cv::Point2f>* predicted) {
  Matches m;
  // This frame's pyramid goes into the buffers of the one before the previous (a clip's frames
  // share one size, so nothing is allocated after the first pairs).
  std::vector<cv::Mat>& pyr = spare_pyr_;
  cv::Mat img;
  {
    Timer t(ms.track);
    img = prepare(raw);
    // Gain-compensated tracking: KLT compares this frame, mapped to the previous frame's mean and
    // contrast, with the previous frame; the unmapped pyramid stays for the next pair (so the
    // clip's last frame, mapped, needs none).
    const cv::Mat adj = photometric_.pair_mapped(img);
    if (!last || adj.empty()) build_pyramid(img, pyr);
    const std::vector<cv::Mat>* track_pyr = &pyr;
    if (!adj.empty()) {
      build_pyramid(adj, mapped_pyr_);
      track_pyr = &mapped_pyr_;
    }
    if (!pts_.empty()) {
      std::vector<cv::Point2f> fwd, back;
      std::vector<uchar> st1, st2;
      const cv::Size win(opt_.klt_window, opt_.klt_window);
      KltParams kp;
      kp.window = opt_.klt_window;
      kp.max_level = opt_.klt_levels;
      kp.max_count = opt_.klt_iterations;
      kp.epsilon = EGOGEO_KLT_EPSILON;
      const float fb2 = static_cast<float>(opt_.fb_threshold * opt_.fb_threshold);
      auto inside = [&](const cv::Point2f& q) { return q.x >= 0 && q.y >= 0 && q.x < img.cols - 1 && q.y < img.rows - 1; };
      // Forward from `from` (started at `init` when given), back to `from` (started there), on
      // pyramids P -> N.
      auto klt = [&](const std::vector<cv::Mat>& P, const std::vector<cv::Mat>& N, const std::vector<cv::Point2f>& from,
                     const std::vector<cv::Point2f>* init, std::vector<cv::Point2f>& f, std::vector<cv::Point2f>& b, std::vector<uchar>& s1,
                     std::vector<uchar>& s2) {
        if (init) f = *init;
        klt_track(P, N, from, f, s1, kp, init != nullptr);
        // Back only from the tracks that can still pass (KLT tracks each point on its own, so the
        // others' answers are the same as with every point; a lost track is not checked).
        std::vector<int> idx;
        std::vector<cv::Point2f> fs, bs;
        for (size_t i = 0; i < f.size(); ++i) {
          if (!s1[i] || !inside(f[i])) continue;
          idx.push_back(static_cast<int>(i));
          fs.push_back(f[i]);
          bs.push_back(from[i]);
        }
        b = from;
        s2.assign(f.size(), 0);
        if (idx.empty()) return;
        std::vector<uchar> ss;
        klt_track(N, P, fs, bs, ss, kp, true);
        for (size_t j = 0; j < idx.size(); ++j) {
          b[idx[j]] = bs[j];
          s2[idx[j]] = ss[j];
        }
      };
      auto passed = [&](size_t i) {
        const cv::Point2f d = back[i] - pts_[i];
        return st1[i] && st2[i] && inside(fwd[i]) && d.dot(d) < fb2;
      };
      if (gpu_)  // [gpu] the same two calls on the device
        gpu_->track(prev_pyr_[0], (*track_pyr)[0], pts_, fwd, back, st1, st2);
      else
        klt(prev_pyr_, *track_pyr, pts_, nullptr, fwd, back, st1, st2);
      if (predicted && predicted->size() == pts_.size()) {
        // Guided tracking's second try: the points lost from their last positions, tracked again
        // from their predicted ones. The device library has no initial flow, so with the GPU this
        // runs on CPU pyramids built here (the CPU path's very calls, on the few points lost).
        std::vector<size_t> lost;
        for (size_t i = 0; i < pts_.size(); ++i)
          if (!passed(i) && cv::norm((*predicted)[i] - pts_[i]) > 1.0) lost.push_back(i);
        if (!lost.empty()) {
          const std::vector<cv::Mat>*P = &prev_pyr_, *N = track_pyr;
          if (gpu_) {
            cv::buildOpticalFlowPyramid(prev_pyr_[0], retry_prev_pyr_, win, opt_.klt_levels, true);
            cv::buildOpticalFlowPyramid((*track_pyr)[0], retry_next_pyr_, win, opt_.klt_levels, true);
            P = &retry_prev_pyr_, N = &retry_next_pyr_;
          }
          std::vector<cv::Point2f> from, init, f, b;
          std::vector<uchar> s1, s2;
          for (size_t i : lost) {
            from.push_back(pts_[i]);
            init.push_back((*predicted)[i]);
          }
          klt(*P, *N, from, &init, f, b, s1, s2);
          for (size_t j = 0; j < lost.size(); ++j) {
            const size_t i = lost[j];
            fwd[i] = f[j];
            back[i] = b[j];
            st1[i] = s1[j];
            st2[i] = s2[j];
          }
        }
      }
      if (opt_.klt_scale) {  // on the CPU after either device's KLT (with the GPU, pyr[0] is the frame)
        const cv::Mat& cur = (*track_pyr)[0];
        std::vector<bool> use(pts_.size());
        for (size_t i = 0; i < pts_.size(); ++i) use[i] = passed(i);  // each reads its own track only
        // The CPU pyramid's derivatives where there is one (no second Scharr); [gpu] the device keeps the pyramid.
        refine_tracks_scaled(prev_pyr_[0], cur, track_pyr->size() > 1 ? &(*track_pyr)[1] : nullptr, grad_x_, grad_y_, pts_, fwd, use,
                             opt_.klt_window / 2, 2.0f);
      }
      std::vector<cv::Point2f> keep_pts;
      std::vector<int> keep_ids, keep_ages;
      for (size_t i = 0; i < pts_.size(); ++i) {
        if (passed(i)) {
          const cv::Point2f& q = fwd[i];
          m.prev.push_back(pts_[i]);
          m.curr.push_back(q);
          m.ids.push_back(ids_[i]);
          keep_pts.push_back(q);
          keep_ids.push_back(ids_[i]);
          keep_ages.push_back(ages_[i] + 1);
        } else {
          finished_age_sum_ += ages_[i];
          ++finished_;
        }
      }
      pts_.swap(keep_pts);
      ids_.swap(keep_ids);
      ages_.swap(keep_ages);
    }
  }
  if (!last && (static_cast<double>(pts_.size()) < opt_.redetect_ratio * opt_.max_features || road_needs_corners())) {
    Timer t(ms.detect);
    detect(img);
  }
  prev_pyr_.swap(spare_pyr_);
  prev_img_ = img;
  return m;
}

bool Tracker::road_needs_corners() const {
  if (!in_road_) return false;
  return std::count_if(pts_.begin(), pts_.end(), [&](const cv::Point2f& p) { return in_road_(p); }) < min_road_tracks_;
}

double Tracker::mean_track_length() const {
  long long sum = finished_age_sum_;
  int n = finished_;
  for (int a : ages_) {
    sum += a;
    ++n;
  }
  return n ? static_cast<double>(sum) / n : 0.0;
}

}  // namespace egogeo::vo
