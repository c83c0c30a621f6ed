// The renderer's outputs: 8-bit grey frames as JPEG (libjpeg, the settings cv::imencode used) and
// as an mp4 (FFmpeg: MPEG-4 part 2, 'mp4v', the codec, rate and GOP cv::VideoWriter chose). Direct
// calls, so the addon does not load OpenCV's imgcodecs and videoio (GDAL and ~140 more libraries,
// ~0.2 s at every process and worker start).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace egogeo::render {

/// Baseline JPEG, quality 1..100 (libjpeg's standard tables), no optimised Huffman tables.
/// Throws std::runtime_error with libjpeg's message.
std::vector<uint8_t> encode_jpeg_grey(const uint8_t* pixels, int width, int height, int quality);
/// The same for 8-bit BGR pixels (3 channels, row-major), as cv::imencode(".jpg") writes a colour image.
std::vector<uint8_t> encode_jpeg_bgr(const uint8_t* pixels, int width, int height, int quality);

/// An mp4 file written frame by frame. Throws std::runtime_error naming the path.
class Mp4Writer {
 public:
  Mp4Writer(const std::string& path, int width, int height, double fps);
  ~Mp4Writer();
  Mp4Writer(const Mp4Writer&) = delete;
  Mp4Writer& operator=(const Mp4Writer&) = delete;

  /// One width*height grey frame.
  void write(const uint8_t* grey);
  /// Flushes the encoder and writes the index; the file is complete after this.
  void finish();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace egogeo::render
