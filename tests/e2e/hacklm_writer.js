// A stand-in for HackLM Memory's writer, following its `.memory/.lock` protocol as the research
// notes describe it (hacklm-spec §5), for memd's interoperability tests. No npm packages.
//
//   node hacklm_writer.js append <memoryFile> <count> <prefix> [pauseMs]
//       `count` times: take the lock, append "\n- <prefix> entry <i> unique-word-<prefix><i>.\n"
//       (HackLM's append, §1.4, after its stale-lock sweep, §5.5), release, then pause `pauseMs`
//       (default 0) so another writer gets a turn. Prints "done <count>".
//   Both modes print "waiting" the first time they find the lock held (not stale) and back off.
//   node hacklm_writer.js hold <lockDir> <ms>
//       Take the lock, print "locked", hold it for <ms> ms without refreshing it, release.
'use strict';

const fs = require('fs');
const path = require('path');

const MAX_RETRIES = 20;
const RETRY_BASE_MS = 50;
const STALE_MS = 10000;

function sleepSync(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function readLock(lockPath) {
  try {
    return JSON.parse(fs.readFileSync(lockPath, 'utf8'));
  } catch {
    return null;
  }
}

function isStale(content) {
  if (Date.now() - content.ts > STALE_MS) {
    return true;
  }
  try {
    process.kill(content.pid, 0);
    return false;
  } catch {
    return true;
  }
}

let toldWaiting = false;

function acquire(lockPath) {
  for (let attempt = 0; attempt < MAX_RETRIES; attempt++) {
    try {
      const fd = fs.openSync(lockPath, 'wx');
      fs.writeSync(fd, JSON.stringify({ pid: process.pid, ts: Date.now() }));
      fs.closeSync(fd);
      return;
    } catch (err) {
      if (err.code !== 'EEXIST') {
        throw err;
      }
    }
    const content = readLock(lockPath);
    if (content !== null && isStale(content)) {
      try {
        fs.unlinkSync(lockPath);
      } catch {
        // another waiter removed it first
      }
      continue;
    }
    if (!toldWaiting) {
      toldWaiting = true;
      fs.writeSync(1, 'waiting\n'); // for the tests: the lock was found busy (once per run)
    }
    sleepSync(RETRY_BASE_MS * (attempt + 1));
  }
  throw new Error(`[crossProcessLock] Could not acquire lock after ${MAX_RETRIES} retries: ${lockPath}`);
}

function release(lockPath) {
  try {
    fs.unlinkSync(lockPath);
  } catch {
    // HackLM ignores every release error
  }
}

// §5.5: HackLM runs this before every append, outside the lock.
function clearStaleLockOnStartup(lockDir) {
  try {
    const lockPath = path.join(lockDir, '.lock');
    const content = readLock(lockPath);
    if (content !== null && isStale(content)) {
      fs.unlinkSync(lockPath);
    }
  } catch {
    // swallowed, as in HackLM
  }
}

function withLock(lockDir, body) {
  const lockPath = path.join(lockDir, '.lock');
  acquire(lockPath);
  try {
    body();
  } finally {
    release(lockPath);
  }
}

function append(memoryFile, count, prefix, pauseMs) {
  const lockDir = path.dirname(memoryFile);
  for (let i = 0; i < count; i++) {
    clearStaleLockOnStartup(lockDir);
    withLock(lockDir, () => {
      fs.appendFileSync(memoryFile, `\n- ${prefix} entry ${i} unique-word-${prefix}${i}.\n`);
    });
    if (pauseMs > 0) {
      sleepSync(pauseMs);
    }
  }
  process.stdout.write(`done ${count}\n`);
}

function hold(lockDir, ms) {
  withLock(lockDir, () => {
    fs.writeSync(1, 'locked\n');
    sleepSync(ms);
  });
}

const [mode, ...args] = process.argv.slice(2);
if (mode === 'append' && (args.length === 3 || args.length === 4)) {
  append(args[0], Number(args[1]), args[2], Number(args[3] || 0));
} else if (mode === 'hold' && args.length === 2) {
  hold(args[0], Number(args[1]));
} else {
  process.stderr.write('usage: hacklm_writer.js append <memoryFile> <count> <prefix> [pauseMs] | hold <lockDir> <ms>\n');
  process.exit(2);
}
