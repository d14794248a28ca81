/**
 * Loaded into a server by the memory phase only (`node --import .bench-build/bench/probe.mjs …`, bundled
 * from this file): over the IPC channel the bench opens, it answers `memory` with process.memoryUsage() and
 * V8's heap statistics, and `snapshot` by writing a heap snapshot (v8.writeHeapSnapshot) to the file given.
 * Nothing else: no timers, no patching; without an IPC channel (any other start) it does nothing at all.
 */
import v8 from 'node:v8';

type Ask = { probe: number; type: 'memory' } | { probe: number; type: 'snapshot'; file: string };

if (process.send) {
  process.on('message', (message: Ask) => {
    if (typeof message !== 'object' || message === null || typeof message.probe !== 'number') return;
    try {
      if (message.type === 'memory') {
        process.send!({ probe: message.probe, memory: process.memoryUsage(), heap: v8.getHeapStatistics(), spaces: v8.getHeapSpaceStatistics() });
      } else if (message.type === 'snapshot') {
        process.send!({ probe: message.probe, file: v8.writeHeapSnapshot(message.file) });
      }
    } catch (error) {
      process.send!({ probe: message.probe, error: String(error) });
    }
  });
  // The channel must not keep a server alive that is told to stop.
  process.channel?.unref();
}
