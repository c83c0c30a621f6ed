#include "photometric.h"

#include <algorithm>
#include <cmath>

namespace egogeo::vo {

namespace {

/// CDF of an 8-bit image at the middle of each grey level's bin: (#below + #at / 2) / N.
std::vector<double> mid_cdf(const cv::Mat& img) {
  std::vector<double> h(256, 0.0);
  for (int y = 0; y < img.rows; ++y) {
    const uchar* p = img.ptr<uchar>(y);
    for (int x = 0; x < img.cols; ++x) h[p[x]] += 1.0;
  }
  const double n = static_cast<double>(img.total());
  std::vector<double> c(256);
  double acc = 0;
  for (int v = 0; v < 256; ++v) {
    c[static_cast<size_t>(v)] = (acc + 0.5 * h[static_cast<size_t>(v)]) / n;
    acc += h[static_cast<size_t>(v)];
  }
  return c;
}

}  // namespace

PhotometricStage::PhotometricStage(const Options& opt) : opt_(opt) {
  // Equalize: one tile = a global mapping; the clip limit bounds its slope (noise gain) to 2.
  // Clahe: VINS-Mono's front end (clip limit 3, 8x8 tiles).
  if (opt.photometric == Photometric::Equalize) clahe_ = cv::createCLAHE(2.0, cv::Size(1, 1));
  if (opt.photometric == Photometric::Clahe) clahe_ = cv::createCLAHE(3.0, cv::Size(8, 8));
}

cv::Mat PhotometricStage::apply(const cv::Mat& raw) {
  cv::Mat img = raw;
  if (opt_.denoise_sigma > 0) {
    cv::Mat blurred;
    cv::GaussianBlur(img, blurred, cv::Size(0, 0), opt_.denoise_sigma, opt_.denoise_sigma, cv::BORDER_REPLICATE);
    img = blurred;
  }
  switch (opt_.photometric) {
    case Photometric::None:
    case Photometric::Pair:  // per pair, in step()
      break;
    case Photometric::Global: {
      // Same mean and contrast every frame: 128 +- 48 grey levels per standard deviation.
      cv::Scalar mean, sd;
      cv::meanStdDev(img, mean, sd);
      if (sd[0] > 1e-3) {
        cv::Mat out;
        const double a = 48.0 / sd[0];
        img.convertTo(out, CV_8U, a, 128.0 - a * mean[0]);
        img = out;
      }
      break;
    }
    case Photometric::Gain: {
      cv::Scalar mean, sd;
      cv::meanStdDev(img, mean, sd);
      if (!have_ref_) {
        have_ref_ = true;
        ref_mean_ = mean[0];
        ref_sd_ = sd[0];
      } else if (sd[0] > 1e-3) {
        cv::Mat out;
        const double a = ref_sd_ / sd[0];
        img.convertTo(out, CV_8U, a, ref_mean_ - a * mean[0]);
        img = out;
      }
      break;
    }
    case Photometric::Match: {
      const std::vector<double> cdf = mid_cdf(img);
      if (!have_ref_) {
        have_ref_ = true;
        ref_cdf_ = cdf;
      } else {
        // v -> the grey level where the first frame's CDF reaches this frame's CDF at v
        // (linear between levels; monotone, so the order of intensities is kept).
        cv::Mat lut(1, 256, CV_8U);
        int u = 0;
        for (int v = 0; v < 256; ++v) {
          const double c = cdf[static_cast<size_t>(v)];
          while (u < 255 && ref_cdf_[static_cast<size_t>(u) + 1] < c) ++u;
          double out = u;
          const double c0 = ref_cdf_[static_cast<size_t>(u)];
          if (u < 255 && c > c0) {
            const double c1 = ref_cdf_[static_cast<size_t>(u) + 1];
            out = u + (c1 > c0 ? std::min(1.0, (c - c0) / (c1 - c0)) : 0.0);
          }
          lut.at<uchar>(v) = cv::saturate_cast<uchar>(out);
        }
        cv::Mat out;
        cv::LUT(img, lut, out);
        img = out;
      }
      break;
    }
    case Photometric::Equalize:
    case Photometric::Clahe: {
      cv::Mat out;
      clahe_->apply(img, out);
      img = out;
      break;
    }
  }
  return img;
}

void PhotometricStage::first(const cv::Mat& img) {
  if (opt_.photometric == Photometric::Pair) cv::meanStdDev(img, prev_mean_, prev_sd_);
}

cv::Mat PhotometricStage::pair_mapped(const cv::Mat& img) {
  if (opt_.photometric != Photometric::Pair) return {};
  cv::Scalar mean, sd;
  cv::meanStdDev(img, mean, sd);
  cv::Mat adj;
  if (sd[0] > 1e-3 && prev_sd_[0] > 1e-3) {
    const double a = prev_sd_[0] / sd[0], b = prev_mean_[0] - a * mean[0];
    if (std::abs(a - 1.0) > 0.01 || std::abs(b) > 0.5) {
      img.convertTo(mapped_, CV_8U, a, b);
      adj = mapped_;
    }
  }
  prev_mean_ = mean;
  prev_sd_ = sd;
  return adj;
}

}  // namespace egogeo::vo
