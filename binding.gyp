{
  "targets": [
    {
      "target_name": "egogeo_native",
      "sources": [
        "native/addon.cc",
        "native/baselines/binding.cc",
        "native/baselines/proxy.cc",
        "native/ffmpeg.cc",
        "native/huge_pages.cc",
        "native/render/binding.cc",
        "native/render/encode.cc",
        "native/render/raster.cc",
        "native/render/render.cc",
        "native/render/texture.cc",
        "native/render/world.cc",
        "native/vo/binding.cc",
        "native/vo/decode/clip_frames.cc",
        "native/vo/decode/frame_cache.cc",
        "native/vo/decode/frame_decode.cc",
        "native/vo/decode/jpeg.cc",
        "native/vo/decode/png.cc",
        "native/vo/decode/pnm.cc",
        "native/vo/decode/video.cc",
        "native/vo/pipeline.cc",
        "native/vo/pose/camera.cc",
        "native/vo/pose/motion.cc",
        "native/vo/scale/bundle_scale.cc",
        "native/vo/scale/relative_scale.cc",
        "native/vo/scale/road_direct.cc",
        "native/vo/scale/road_scale.cc",
        "native/vo/scale/scale_fusion.cc",
        "native/vo/scale/speed_smoother.cc",
        "native/vo/track/band_blur.cc",
        "native/vo/track/fast.cc",
        "native/vo/track/gpu_backend.cc",
        "native/vo/track/klt.cc",
        "native/vo/track/klt_scale.cc",
        "native/vo/track/photometric.cc",
        "native/vo/track/tracker.cc",
        "native/work_pool.cc"
      ],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")",
        "<!@(pkg-config --cflags-only-I opencv4 | sed s/-I//g)",
        "<!@(pkg-config --cflags-only-I libavformat libavcodec libavutil libswscale | sed s/-I//g)"
      ],
      "libraries": [
        "<!@(pkg-config --libs-only-L opencv4)",
        "-lopencv_core", "-lopencv_imgproc", "-lopencv_video", "-lopencv_calib3d", "-lopencv_features2d",
        "-lpng16",
        "-ljpeg",
        "-ldl"
      ],
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS", "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS", "NODE_ADDON_API_DISABLE_DEPRECATED"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti"],
      "cflags_cc": ["-std=c++17", "-O3", "-fexceptions", "-frtti", "-Wall", "-Wextra", "-Wno-unused-parameter"]
    }
  ]
}
