{
  "targets": [
    {
      "target_name": "egogeo_native",
      "sources": [
        "native/addon.cc",
        "native/baselines/binding.cc",
        "native/baselines/proxy.cc",
        "native/ffmpeg.cc",
        "native/render/binding.cc",
        "native/render/encode.cc",
        "native/render/raster.cc",
        "native/render/render.cc",
        "native/render/texture.cc",
        "native/render/world.cc",
        "native/vo/band_blur.cc",
        "native/vo/binding.cc",
        "native/vo/bundle_scale.cc",
        "native/vo/camera.cc",
        "native/vo/fast.cc",
        "native/vo/frame_decode.cc",
        "native/vo/jpeg.cc",
        "native/vo/klt.cc",
        "native/vo/motion.cc",
        "native/vo/photometric.cc",
        "native/vo/pipeline.cc",
        "native/vo/png.cc",
        "native/vo/pnm.cc",
        "native/vo/relative_scale.cc",
        "native/vo/road_direct.cc",
        "native/vo/road_scale.cc",
        "native/vo/scale_fusion.cc",
        "native/vo/speed_smoother.cc",
        "native/vo/gpu_backend.cc",
        "native/vo/tracker.cc",
        "native/vo/video.cc"
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
