#!/usr/bin/env python3
"""What placing a sweep's jobs by memory can gain at best, with no overhead: an event-driven
model of memory_packing.sh's sweep (its file of "PEAK_MIB SECONDS" lines) on GPUS GPUs of
USABLE_MIB, each job setting up for SETUP seconds, against one job per GPU. Prints each
order's makespan as a share of one job per GPU's, and the memory-time bound (every GPU's
memory full all the time).

    bench/memory_packing_model.py SWEEP [GPUS USABLE_MIB SETUP]
"""
import heapq
import sys


def makespan(jobs, gpus, usable, setup, one_per_gpu=False, fit="fullest", window=1):
    """Jobs start in their order, each on a GPU with room for its peak (`fit`: the fullest or
    the least loaded of those); with `window` > 1 a later job among the next `window` may
    start while the head waits, on any GPU but the one with the most free memory, which the
    head keeps."""
    free = [usable] * gpus
    load = [0] * gpus
    ends = []
    queue = list(range(len(jobs)))
    now = 0.0

    def place(need, kept):
        fits = [g for g in range(gpus) if g != kept and
                (load[g] == 0 if one_per_gpu else free[g] >= need)]
        if not fits:
            return None
        if fit == "fullest":
            return min(fits, key=lambda g: free[g])
        return min(fits, key=lambda g: (load[g], -free[g]))

    while queue or ends:
        started = True
        while started and queue:
            started = False
            kept = None
            for position, job in enumerate(queue[:window]):
                need = usable if one_per_gpu else jobs[job][0]
                gpu = place(need, kept)
                if gpu is None:
                    if position == 0:
                        kept = max(range(gpus), key=lambda g: free[g])
                    continue
                free[gpu] -= need
                load[gpu] += 1
                heapq.heappush(ends, (now + setup + jobs[job][1], gpu, need))
                queue.remove(job)
                started = True
                break
        if ends:
            now, gpu, need = heapq.heappop(ends)
            free[gpu] += need
            load[gpu] -= 1
    return now


def main():
    if len(sys.argv) not in (2, 5):
        sys.exit(__doc__)
    with open(sys.argv[1], encoding="utf-8") as sweep:
        jobs = [tuple(map(float, line.split())) for line in sweep if line.strip()]
    gpus, usable, setup = (int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])) \
        if len(sys.argv) == 5 else (8, 81920.0, 0.3)
    alone = makespan(jobs, gpus, usable, setup, one_per_gpu=True)
    bound = sum(peak * (setup + seconds) for peak, seconds in jobs) / (gpus * usable)
    largest_first = sorted(jobs, key=lambda job: -job[0])
    for name, share in (
            ("first-come, least loaded GPU", makespan(jobs, gpus, usable, setup, fit="least")),
            ("first-come, fullest GPU that fits", makespan(jobs, gpus, usable, setup)),
            ("first-come with backfilling (8 behind the head)",
             makespan(jobs, gpus, usable, setup, window=8)),
            ("largest first with backfilling (any)",
             makespan(largest_first, gpus, usable, setup, window=len(jobs))),
            ("memory-time bound", bound)):
        print(f"model: {name}: {share / alone:.2f} of one job per GPU")


if __name__ == "__main__":
    main()
