#include "video.h"

#include <opencv2/imgproc.hpp>

#include "../../ffmpeg.h"
#include "../types.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>

namespace egogeo::vo {
namespace {

/// FFmpeg's functions (loaded on the first video; native/ffmpeg.h).
const Ffmpeg& ff() {
  std::string why;
  const Ffmpeg* f = ffmpeg(why);
  if (!f) throw InputError("video clips need " + why);
  return *f;
}

// One owner per FFmpeg object, so every error path (a throw anywhere) frees what was made.
struct FormatClose {
  void operator()(AVFormatContext* p) const { ff().avformat_close_input(&p); }
};
struct CodecFree {
  void operator()(AVCodecContext* p) const { ff().avcodec_free_context(&p); }
};
struct PacketFree {
  void operator()(AVPacket* p) const { ff().av_packet_free(&p); }
};
struct FrameFree {
  void operator()(AVFrame* p) const { ff().av_frame_free(&p); }
};
struct SwsFree {
  void operator()(SwsContext* p) const { ff().sws_freeContext(p); }
};
using Format = std::unique_ptr<AVFormatContext, FormatClose>;
using Codec = std::unique_ptr<AVCodecContext, CodecFree>;
using Packet = std::unique_ptr<AVPacket, PacketFree>;
using Frame = std::unique_ptr<AVFrame, FrameFree>;
using Sws = std::unique_ptr<SwsContext, SwsFree>;

std::string av_error(int err) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {};
  ff().av_strerror(err, buf, sizeof buf);
  return buf;
}

[[noreturn]] void unreadable(const std::string& path, const std::string& why) {
  throw InputError("'" + path + "' is not a readable video (" + why + ")");
}

template <class T>
T* made(T* p, const std::string& path, const char* what) {
  if (!p) unreadable(path, std::string("out of memory allocating ") + what);
  return p;
}

/// An opened container and its best video stream.
struct Input {
  Format fmt;
  AVStream* stream = nullptr;
};

Input open(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    const bool exists = std::filesystem::exists(path, ec);
    throw InputError("'" + path + "' " + (exists ? "is not a regular file" : "does not exist"));
  }
  if (std::filesystem::file_size(path, ec) == 0 && !ec) unreadable(path, "empty file");
  // "file:" so a ':' in the name is never read as a protocol; the whitelist keeps a playlist-like
  // file (hls, concat) from making FFmpeg open anything but local files.
  const std::string url = "file:" + path;
  AVDictionary* opts = nullptr;
  ff().av_dict_set(&opts, "protocol_whitelist", "file", 0);
  AVFormatContext* ctx = nullptr;
  const int err = ff().avformat_open_input(&ctx, url.c_str(), nullptr, &opts);
  ff().av_dict_free(&opts);
  if (err < 0) unreadable(path, "FFmpeg cannot open it: " + av_error(err));  // FFmpeg frees ctx on failure
  Input in{Format(ctx)};
  // Fills what the header leaves out (the pixel format, the reorder delay, r_frame_rate): FFmpeg
  // decodes the first frame(s) for it, with one thread.
  if (const int e = ff().avformat_find_stream_info(ctx, nullptr); e < 0) unreadable(path, "FFmpeg cannot read its streams: " + av_error(e));
  const int idx = ff().av_find_best_stream(ctx, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  if (idx < 0) unreadable(path, "no video stream");
  in.stream = ctx->streams[idx];
  return in;
}

double declared_fps(const AVStream* st) {
  for (const AVRational r : {st->avg_frame_rate, st->r_frame_rate}) {
    if (r.num > 0 && r.den > 0) {
      const double fps = av_q2d(r);
      if (std::isfinite(fps)) return fps;
    }
  }
  return 0;
}

/// Frames the container declares: nb_frames, else duration × rate (containers without a count), else 0.
int declared_frames(const AVFormatContext* fmt, const AVStream* st, double fps) {
  if (st->nb_frames > 0) return st->nb_frames < 1000000 ? static_cast<int>(st->nb_frames) : 0;
  double seconds = 0;
  if (st->duration != AV_NOPTS_VALUE && st->duration > 0) seconds = static_cast<double>(st->duration) * av_q2d(st->time_base);
  else if (fmt->duration != AV_NOPTS_VALUE && fmt->duration > 0) seconds = static_cast<double>(fmt->duration) / AV_TIME_BASE;
  const double n = seconds * fps;
  return std::isfinite(n) && n > 0 && n < 1e6 ? static_cast<int>(std::lround(n)) : 0;
}

/// Decoded frames → 8-bit grey with swscale (any pixel format; limited-range YUV expanded to 0..255,
/// as OpenCV's YUV → BGR → grey did), remade only if the format or range changes mid-stream.
class ToGrey {
 public:
  ToGrey(const std::string& path, bool via_bgr, bool colour) : path_(path), via_bgr_(via_bgr || colour), colour_(colour) {}

  cv::Mat operator()(const AVFrame* f) {
    const bool full = f->color_range == AVCOL_RANGE_JPEG;
    if (!sws_ || f->width != w_ || f->height != h_ || f->format != format_ || full != full_) remake(f, full);
    // swscale writes into FFmpeg's aligned, padded planes (its SIMD may overrun a tight row), then
    // one copy into the continuous Mat the engine wants.
    if (const int e = ff().sws_scale(sws_.get(), f->data, f->linesize, 0, f->height, grey_->data, grey_->linesize); e < 0) {
      unreadable(path_, "converting a frame to grey: " + av_error(e));
    }
    const int ch = via_bgr_ ? 3 : 1;
    cv::Mat m(f->height, f->width, via_bgr_ ? CV_8UC3 : CV_8UC1);
    for (int y = 0; y < f->height; ++y) std::memcpy(m.ptr(y), grey_->data[0] + static_cast<ptrdiff_t>(y) * grey_->linesize[0], static_cast<size_t>(f->width) * ch);
    if (!via_bgr_ || colour_) return m;
    cv::Mat g;
    cv::cvtColor(m, g, cv::COLOR_BGR2GRAY);
    return g;
  }

 private:
  void remake(const AVFrame* f, bool full) {
    const auto fmt = static_cast<AVPixelFormat>(f->format);
    if (f->width <= 0 || f->height <= 0 || !ff().sws_isSupportedInput(fmt)) {
      const char* name = ff().av_get_pix_fmt_name(fmt);
      unreadable(path_, std::string("cannot convert pixel format ") + (name ? name : "none") + " to grey");
    }
    sws_.reset(made(ff().sws_alloc_context(), path_, "a converter"));
    SwsContext* s = sws_.get();
    ff().av_opt_set_int(s, "srcw", f->width, 0);
    ff().av_opt_set_int(s, "srch", f->height, 0);
    ff().av_opt_set_int(s, "src_format", fmt, 0);
    ff().av_opt_set_int(s, "dstw", f->width, 0);
    ff().av_opt_set_int(s, "dsth", f->height, 0);
    if (via_bgr_) {
      // As OpenCV's FFmpeg backend converts (cap_ffmpeg_impl.hpp: BGR24, SWS_BICUBIC, swscale's
      // default colour details), for cvtColor to grey after it.
      ff().av_opt_set_int(s, "dst_format", AV_PIX_FMT_BGR24, 0);
      ff().av_opt_set_int(s, "sws_flags", SWS_BICUBIC, 0);
    } else {
      ff().av_opt_set_int(s, "dst_format", AV_PIX_FMT_GRAY8, 0);
      // The frame's own range (yuvj* formats are full range whatever it says); grey out is full range.
      ff().av_opt_set_int(s, "src_range", full ? 1 : 0, 0);
      ff().av_opt_set_int(s, "dst_range", 1, 0);
      ff().av_opt_set_int(s, "sws_flags", SWS_POINT | SWS_ACCURATE_RND, 0);  // same size: no filtering; exact rounding
    }
    if (const int e = ff().sws_init_context(s, nullptr, nullptr); e < 0) unreadable(path_, "cannot make a grey converter: " + av_error(e));
    grey_.reset(made(ff().av_frame_alloc(), path_, "a frame"));
    grey_->format = via_bgr_ ? AV_PIX_FMT_BGR24 : AV_PIX_FMT_GRAY8;
    grey_->width = f->width;
    grey_->height = f->height;
    if (const int e = ff().av_frame_get_buffer(grey_.get(), 0); e < 0) unreadable(path_, "cannot allocate a grey frame: " + av_error(e));
    w_ = f->width;
    h_ = f->height;
    format_ = f->format;
    full_ = full;
  }

  const std::string& path_;
  bool via_bgr_, colour_;
  Sws sws_;
  Frame grey_;
  int w_ = 0, h_ = 0, format_ = -1;
  bool full_ = false;
};

}  // namespace

VideoInfo probe_video(const std::string& path) {
  const Input in = open(path);
  VideoInfo v;
  v.fps = declared_fps(in.stream);
  v.frames = declared_frames(in.fmt.get(), in.stream, v.fps);
  v.width = in.stream->codecpar->width;
  v.height = in.stream->codecpar->height;
  return v;
}

DecodedVideo decode_video(const std::string& path, GreyPath grey, bool colour) {
  Input in = open(path);
  AVStream* st = in.stream;
  const AVCodec* decoder = ff().avcodec_find_decoder(st->codecpar->codec_id);
  if (!decoder) unreadable(path, std::string("no decoder for codec ") + ff().avcodec_get_name(st->codecpar->codec_id));
  Codec dec(made(ff().avcodec_alloc_context3(decoder), path, "a decoder"));
  if (const int e = ff().avcodec_parameters_to_context(dec.get(), st->codecpar); e < 0) unreadable(path, "bad codec parameters: " + av_error(e));
  dec->pkt_timebase = st->time_base;
  // One thread: egogeo decodes one clip per worker and the worker pool is the parallelism; FFmpeg's
  // default (a thread per core, in every worker) only oversubscribes the cores.
  dec->thread_count = 1;
  // Damage is an error, not a frame the decoder patched up (concealment hides corrupt macroblocks
  // behind plausible pixels that the tracker would follow): checksums and bitstream checks on, and
  // any error stops the decoder (EXPLODE); frames it still marks corrupt are refused below.
  dec->err_recognition = AV_EF_CRCCHECK | AV_EF_BITSTREAM | AV_EF_BUFFER | AV_EF_EXPLODE;
  if (const int e = ff().avcodec_open2(dec.get(), decoder, nullptr); e < 0) unreadable(path, "cannot open its decoder: " + av_error(e));

  DecodedVideo out;
  out.fps = declared_fps(st);
  if (const int hint = declared_frames(in.fmt.get(), st, out.fps); hint > 0 && hint < 100000) out.frames.reserve(static_cast<size_t>(hint));
  Packet pkt(made(ff().av_packet_alloc(), path, "a packet"));
  Frame frame(made(ff().av_frame_alloc(), path, "a frame"));
  ToGrey to_grey(path, grey == GreyPath::OpenCvBgr, colour);

  // Every frame the decoder has ready (until it wants more input, or its end after the flush).
  const auto drain = [&] {
    for (;;) {
      const int e = ff().avcodec_receive_frame(dec.get(), frame.get());
      if (e == AVERROR(EAGAIN) || e == AVERROR_EOF) return;
      if (e < 0) unreadable(path, "decoding frame " + std::to_string(out.frames.size()) + ": " + av_error(e));
      if (frame->decode_error_flags != 0 || (frame->flags & AV_FRAME_FLAG_CORRUPT) != 0) {
        ff().av_frame_unref(frame.get());
        unreadable(path, "damaged: frame " + std::to_string(out.frames.size()) + " decodes with errors");
      }
      cv::Mat grey = to_grey(frame.get());
      ff().av_frame_unref(frame.get());
      if (!out.frames.empty() && grey.size() != out.frames[0].size()) {
        throw InputError("'" + path + "': frame " + std::to_string(out.frames.size()) + " changes size");
      }
      out.frames.push_back(std::move(grey));
    }
  };
  const auto send = [&](const AVPacket* p) {
    if (const int e = ff().avcodec_send_packet(dec.get(), p); e < 0 && e != AVERROR_EOF) {
      unreadable(path, "decoding after frame " + std::to_string(out.frames.size()) + ": " + av_error(e));
    }
    drain();
  };
  // A truncated or damaged file is an error, not a shorter clip whose frame numbers would be off:
  // a read error, a packet the demuxer flags corrupt (cut short), or fewer packets than its index
  // lists (a file cut at a packet boundary reads as a clean EOF).
  int64_t packets = 0;
  for (;;) {
    const int e = ff().av_read_frame(in.fmt.get(), pkt.get());
    if (e == AVERROR_EOF) break;
    if (e < 0) unreadable(path, "reading after frame " + std::to_string(out.frames.size()) + ": " + av_error(e));
    if (pkt->stream_index == st->index) {  // (a throw leaves pkt to its owner)
      ++packets;
      if (pkt->flags & AV_PKT_FLAG_CORRUPT) unreadable(path, "truncated or damaged after frame " + std::to_string(out.frames.size()));
      send(pkt.get());
    }
    ff().av_packet_unref(pkt.get());
  }
  if (const int listed = ff().avformat_index_get_entries_count(st); packets < listed) {
    unreadable(path, "truncated: " + std::to_string(packets) + " of the " + std::to_string(listed) + " packets its index lists");
  }
  send(nullptr);  // flush: the frames the decoder still holds (reordering delay)
  if (out.frames.empty()) unreadable(path, "no frames decoded");
  return out;
}

}  // namespace egogeo::vo
