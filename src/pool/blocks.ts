/**
 * Which task a pool lane takes next: each lane owns a contiguous block of the task list and takes
 * from its front; a lane whose block is empty takes the back half of the largest block left. So a
 * lane answers runs of neighbouring tasks — a dataset's neighbouring clips, whose frames overlap
 * (KITTI's windows every 5 frames share 26 of 31), and each worker thread's addon keeps the frames
 * it decoded (native/vo/decode/frame_cache.h) — while no lane idles while others have work. One
 * lane takes the tasks in order.
 */
export class BlockQueue {
  /** Per lane: [next, end) of its block. */
  private readonly blocks: [number, number][];

  constructor(tasks: number, lanes: number) {
    const n = Math.max(0, Math.floor(tasks)), k = Math.max(1, Math.floor(lanes));
    this.blocks = Array.from({ length: k }, (_, i) => [Math.floor((i * n) / k), Math.floor(((i + 1) * n) / k)] as [number, number]);
  }

  /** The next task index for `lane`, or undefined when every block is empty. */
  take(lane: number): number | undefined {
    const own = this.blocks[lane];
    if (own[0] >= own[1]) {
      let victim = -1;
      for (let i = 0; i < this.blocks.length; i++) {
        const left = this.blocks[i][1] - this.blocks[i][0];
        if (left > 0 && (victim < 0 || left > this.blocks[victim][1] - this.blocks[victim][0])) victim = i;
      }
      if (victim < 0) return undefined;
      const v = this.blocks[victim];
      // Its back half (all of it when one task is left); its owner keeps the front it is working through.
      const mid = v[1] - v[0] === 1 ? v[0] : v[0] + Math.ceil((v[1] - v[0]) / 2);
      own[0] = mid;
      own[1] = v[1];
      v[1] = mid;
    }
    return own[0]++;
  }
}
