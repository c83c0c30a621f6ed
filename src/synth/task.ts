/** The unit of work a synth pool worker receives and returns (plain data: structured-cloned). */
import type { RenderRequest, RenderResult } from '../native/index.js';

export interface RenderTask {
  id: string;
  request: Omit<RenderRequest, 'output'>;
  /** Staging folder (absolute); paths below are relative to it. */
  stage: string;
  video: boolean;
  /** Frame paths relative to the dataset root (JPEG mode). */
  framePaths: string[];
  /** The mp4 path relative to the dataset root (video mode). */
  videoPath: string;
  fps: number;
  jpegQuality: number;
  /** JPEG encoder: 'opencv' (libjpeg inside the render call, the bytes cv::imencode wrote; the default: faster) or 'sharp'. */
  encoder: JpegEncoder;
}

export type JpegEncoder = 'opencv' | 'sharp';

export interface RenderTaskResult {
  id: string;
  frames: number;
  bytes: number;
  timing: RenderResult['timing'];
}
