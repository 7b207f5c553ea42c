/** Batch lists kept ascending by sequence: membership and merging. */
import type { BatchFrame } from '../../protocol/index.js';

/** Whether an ascending batch list holds `seq` (binary search). */
export function hasSeq(batches: readonly BatchFrame[], seq: number): boolean {
  let lo = 0;
  let hi = batches.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const s = batches[mid]!.sequence;
    if (s === seq) return true;
    if (s < seq) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/** Merge two ascending batch lists; a sequence in both is kept once (from `a`). */
export function mergeSorted(a: readonly BatchFrame[], b: readonly BatchFrame[]): BatchFrame[] {
  const out: BatchFrame[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && a[i]!.sequence < b[j]!.sequence)) out.push(a[i++]!);
    else if (i >= a.length || b[j]!.sequence < a[i]!.sequence) out.push(b[j++]!);
    else {
      out.push(a[i++]!);
      j++;
    }
  }
  return out;
}
