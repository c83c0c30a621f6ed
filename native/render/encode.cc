#include "encode.h"

#include <algorithm>
#include <csetjmp>
#include <cstdio>  // jpeglib.h needs FILE
#include <cstdlib>
#include <stdexcept>

#include <jpeglib.h>

#include "../ffmpeg.h"

namespace egogeo::render {
namespace {

struct JpegError {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

extern "C" void on_jpeg_error(j_common_ptr c) {
  auto* e = reinterpret_cast<JpegError*>(c->err);
  (*c->err->format_message)(c, e->message);
  std::longjmp(e->jump, 1);
}

/// FFmpeg's functions (loaded on the first mp4; native/ffmpeg.h).
const Ffmpeg& ff() {
  std::string why;
  const Ffmpeg* f = ffmpeg(why);
  if (!f) throw std::runtime_error("mp4 output needs " + why);
  return *f;
}

std::string av_message(int code) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {0};
  ff().av_strerror(code, buf, sizeof buf);
  return buf;
}

}  // namespace

namespace {

std::vector<uint8_t> encode_jpeg(const uint8_t* pixels, int width, int height, int channels, int quality) {
  jpeg_compress_struct cinfo;
  JpegError err;
  cinfo.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = on_jpeg_error;
  err.message[0] = '\0';
  unsigned char* buf = nullptr;  // libjpeg allocates (malloc) and grows it
  unsigned long size = 0;
  if (setjmp(err.jump)) {
    jpeg_destroy_compress(&cinfo);
    std::free(buf);
    throw std::runtime_error(std::string("JPEG encoding failed: ") + err.message);
  }
  jpeg_create_compress(&cinfo);
  jpeg_mem_dest(&cinfo, &buf, &size);
  cinfo.image_width = static_cast<JDIMENSION>(width);
  cinfo.image_height = static_cast<JDIMENSION>(height);
  cinfo.input_components = channels;
  cinfo.in_color_space = channels == 3 ? JCS_EXT_BGR : JCS_GRAYSCALE;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, quality, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(pixels + static_cast<size_t>(cinfo.next_scanline) * width * channels);
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  std::vector<uint8_t> out(buf, buf + size);
  jpeg_destroy_compress(&cinfo);
  std::free(buf);
  return out;
}

}  // namespace

std::vector<uint8_t> encode_jpeg_grey(const uint8_t* pixels, int width, int height, int quality) { return encode_jpeg(pixels, width, height, 1, quality); }

std::vector<uint8_t> encode_jpeg_bgr(const uint8_t* pixels, int width, int height, int quality) { return encode_jpeg(pixels, width, height, 3, quality); }

// Every FFmpeg object is owned here and freed in ~State, whatever step failed.
struct Mp4Writer::State {
  std::string path;
  int width = 0, height = 0;
  AVFormatContext* fmt = nullptr;
  AVCodecContext* enc = nullptr;
  AVStream* stream = nullptr;
  AVFrame* frame = nullptr;
  AVPacket* pkt = nullptr;
  SwsContext* sws = nullptr;
  bool opened = false, finished = false;  // opened: the header is written
  int64_t next_pts = 0;

  ~State() {
    std::string why;
    const Ffmpeg* f = ffmpeg(why);
    if (!f) return;  // nothing was made
    f->sws_freeContext(sws);
    f->av_packet_free(&pkt);
    f->av_frame_free(&frame);
    f->avcodec_free_context(&enc);
    if (fmt) {
      if (fmt->pb) f->avio_closep(&fmt->pb);
      f->avformat_free_context(fmt);
    }
  }

  [[noreturn]] void fail(const std::string& what, int code = 0) const {
    const std::string where = opened ? "cannot write the mp4 '" + path + "'" : "cannot open an mp4 (mp4v) video writer for '" + path + "'";
    throw std::runtime_error(where + ": " + what + (code ? " (" + av_message(code) + ")" : ""));
  }

  /// Sends `f` (nullptr: flush) and writes every packet the encoder returns.
  void drain(const AVFrame* f) {
    int rc = ff().avcodec_send_frame(enc, f);
    if (rc < 0) fail("encoding failed", rc);
    while ((rc = ff().avcodec_receive_packet(enc, pkt)) >= 0) {
      pkt->duration = 1;  // one frame: without it the muxer gives the last frame no duration
      ff().av_packet_rescale_ts(pkt, enc->time_base, stream->time_base);
      pkt->stream_index = stream->index;
      rc = ff().av_interleaved_write_frame(fmt, pkt);
      if (rc < 0) fail("writing failed", rc);
    }
    if (rc != AVERROR(EAGAIN) && rc != AVERROR_EOF) fail("encoding failed", rc);
  }
};

Mp4Writer::Mp4Writer(const std::string& path, int width, int height, double fps) : s_(std::make_unique<State>()) {
  State& s = *s_;
  s.path = path;
  s.width = width;
  s.height = height;
  int rc = ff().avformat_alloc_output_context2(&s.fmt, nullptr, "mp4", path.c_str());
  if (rc < 0 || !s.fmt) s.fail("no mp4 muxer", rc);
  const AVCodec* codec = ff().avcodec_find_encoder(AV_CODEC_ID_MPEG4);
  if (!codec) s.fail("this FFmpeg has no MPEG-4 encoder");
  s.stream = ff().avformat_new_stream(s.fmt, nullptr);
  s.enc = ff().avcodec_alloc_context3(codec);
  s.frame = ff().av_frame_alloc();
  s.pkt = ff().av_packet_alloc();
  if (!s.stream || !s.enc || !s.frame || !s.pkt) s.fail("out of memory");
  // The frame rate as a rational (denominators up to 10^5).
  const AVRational rate = ff().av_d2q(fps, 100000);
  s.enc->width = width;
  s.enc->height = height;
  s.enc->time_base = av_inv_q(rate);
  s.enc->framerate = rate;
  s.enc->pix_fmt = AV_PIX_FMT_YUV420P;
  s.enc->gop_size = 12;
  s.enc->bit_rate = static_cast<int64_t>(std::min(fps * width * height, 1e9));  // bits/s, as OpenCV sets it
  s.enc->codec_tag = MKTAG('m', 'p', '4', 'v');
  s.enc->thread_count = 1;  // the pool is the parallelism
  if (s.fmt->oformat->flags & AVFMT_GLOBALHEADER) s.enc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  if ((rc = ff().avcodec_open2(s.enc, codec, nullptr)) < 0) s.fail("cannot open the MPEG-4 encoder", rc);
  if ((rc = ff().avcodec_parameters_from_context(s.stream->codecpar, s.enc)) < 0) s.fail("bad stream parameters", rc);
  s.stream->time_base = s.enc->time_base;
  s.stream->avg_frame_rate = rate;
  s.frame->format = AV_PIX_FMT_YUV420P;
  s.frame->width = width;
  s.frame->height = height;
  if ((rc = ff().av_frame_get_buffer(s.frame, 0)) < 0) s.fail("out of memory", rc);
  // Grey to YUV 4:2:0 by libswscale, as cv::VideoWriter converted it (limited-range luma, neutral chroma).
  s.sws = ff().sws_getContext(width, height, AV_PIX_FMT_GRAY8, width, height, AV_PIX_FMT_YUV420P, SWS_BICUBIC, nullptr, nullptr, nullptr);
  if (!s.sws) s.fail("no grey to YUV conversion");
  if ((rc = ff().avio_open(&s.fmt->pb, path.c_str(), AVIO_FLAG_WRITE)) < 0) s.fail("cannot create the file", rc);
  if ((rc = ff().avformat_write_header(s.fmt, nullptr)) < 0) s.fail("cannot write the header", rc);
  s.opened = true;
}

Mp4Writer::~Mp4Writer() = default;

void Mp4Writer::write(const uint8_t* grey) {
  State& s = *s_;
  int rc = ff().av_frame_make_writable(s.frame);
  if (rc < 0) s.fail("out of memory", rc);
  const uint8_t* src[1] = {grey};
  const int stride[1] = {s.width};
  ff().sws_scale(s.sws, src, stride, 0, s.height, s.frame->data, s.frame->linesize);
  s.frame->pts = s.next_pts++;
  s.drain(s.frame);
}

void Mp4Writer::finish() {
  State& s = *s_;
  if (s.finished) return;
  s.finished = true;
  s.drain(nullptr);
  const int rc = ff().av_write_trailer(s.fmt);
  if (rc < 0) s.fail("cannot write the index", rc);
  ff().avio_closep(&s.fmt->pb);
}

}  // namespace egogeo::render
