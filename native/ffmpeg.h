// FFmpeg, loaded on first use. The addon does not link it: loading libavformat and libavcodec
// (and the ~60 codec libraries behind them) costs ~70 ms at every process and worker start, and
// only mp4 clips and the renderer's mp4 output need it. The headers give every function's exact
// type; the first call dlopens the libraries of the major versions built against and resolves
// each function once (a table that never changes afterwards, shared by every thread).
#pragma once

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
}

#include <string>

namespace egogeo {

#define EGOGEO_FFMPEG_FUNCTIONS(X)                                                                                   \
  X(avutil, av_strerror)                                                                                             \
  X(avutil, av_log_get_level)                                                                                        \
  X(avutil, av_log_set_level)                                                                                        \
  X(avutil, av_opt_set_int)                                                                                          \
  X(avutil, av_frame_alloc)                                                                                          \
  X(avutil, av_frame_free)                                                                                           \
  X(avutil, av_frame_unref)                                                                                          \
  X(avutil, av_frame_get_buffer)                                                                                     \
  X(avutil, av_frame_make_writable)                                                                                  \
  X(avutil, av_dict_set)                                                                                             \
  X(avutil, av_dict_free)                                                                                            \
  X(avutil, av_get_pix_fmt_name)                                                                                     \
  X(avutil, av_d2q)                                                                                                  \
  X(avcodec, avcodec_find_decoder)                                                                                   \
  X(avcodec, avcodec_find_encoder)                                                                                   \
  X(avcodec, avcodec_get_name)                                                                                       \
  X(avcodec, avcodec_alloc_context3)                                                                                 \
  X(avcodec, avcodec_free_context)                                                                                   \
  X(avcodec, avcodec_parameters_to_context)                                                                          \
  X(avcodec, avcodec_parameters_from_context)                                                                        \
  X(avcodec, avcodec_open2)                                                                                          \
  X(avcodec, avcodec_send_packet)                                                                                    \
  X(avcodec, avcodec_receive_frame)                                                                                  \
  X(avcodec, avcodec_send_frame)                                                                                     \
  X(avcodec, avcodec_receive_packet)                                                                                 \
  X(avcodec, av_packet_alloc)                                                                                        \
  X(avcodec, av_packet_free)                                                                                         \
  X(avcodec, av_packet_unref)                                                                                        \
  X(avcodec, av_packet_rescale_ts)                                                                                   \
  X(avformat, avformat_open_input)                                                                                   \
  X(avformat, avformat_close_input)                                                                                  \
  X(avformat, avformat_find_stream_info)                                                                             \
  X(avformat, avformat_index_get_entries_count)                                                                      \
  X(avformat, av_find_best_stream)                                                                                   \
  X(avformat, av_read_frame)                                                                                         \
  X(avformat, avformat_alloc_output_context2)                                                                        \
  X(avformat, avformat_new_stream)                                                                                   \
  X(avformat, avformat_free_context)                                                                                 \
  X(avformat, avformat_write_header)                                                                                 \
  X(avformat, av_interleaved_write_frame)                                                                            \
  X(avformat, av_write_trailer)                                                                                      \
  X(avformat, avio_open)                                                                                             \
  X(avformat, avio_closep)                                                                                           \
  X(swscale, sws_alloc_context)                                                                                      \
  X(swscale, sws_init_context)                                                                                       \
  X(swscale, sws_getContext)                                                                                         \
  X(swscale, sws_scale)                                                                                              \
  X(swscale, sws_isSupportedInput)                                                                                  \
  X(swscale, sws_freeContext)

/// The FFmpeg functions the engine calls, by their own names.
struct Ffmpeg {
#define EGOGEO_FFMPEG_MEMBER(lib, name) decltype(&::name) name = nullptr;
  EGOGEO_FFMPEG_FUNCTIONS(EGOGEO_FFMPEG_MEMBER)
#undef EGOGEO_FFMPEG_MEMBER
};

/// The loaded table, or nullptr with `why` set (a library or function missing: dlerror's words).
/// Also quiets FFmpeg's console log once (the callers' errors say why), unless someone set a level.
const Ffmpeg* ffmpeg(std::string& why);

}  // namespace egogeo
