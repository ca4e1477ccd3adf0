/*
 * runlock.pml: a Promela model of workers.runLock (workers/runlock.go), the
 * run lock of a set: one word (free, or the holder's token with a "queue not
 * empty" bit), a FIFO queue of waiters under a mutex, a direct hand-off from
 * the holder to the head of the queue, and waiters that may leave the queue
 * (a context done, a cycle confirmed) at any time. See docs/model/README.md.
 *
 * N goroutines (ids 1..N) each take the lock ROUNDS times, each time by the
 * fast path or, failing it, by queueing; a queued goroutine either waits for
 * good or may leave (chosen per attempt), racing with the hand-off. Every
 * loop is bounded, so a lost hand-off (a waiter that waits for good with
 * nobody left to grant it the lock) is an invalid end state.
 *
 * Checked (safety search, -DSAFETY, with -q):
 *   - mutual exclusion, and the holder's token in the word while it holds it;
 *   - no overtaking: a fast-path lock succeeds only with an empty queue;
 *   - at most one grant token per waiter (the "never blocks" send);
 *   - at the end the word is free and the queue empty; no invalid end state.
 *
 * Broken variants (each must be rejected):
 *   BUG_LOAD_STORE_UNLOCK  unlock's fast path reads the word, then stores 0
 *                          (no CAS): a waiter that set the bit in between is
 *                          left in the queue with the lock free.
 *   BUG_NO_BIT             enqueue joins the queue without setting the bit:
 *                          the holder's fast unlock frees the lock and
 *                          nobody hands it over.
 *   BUG_IGNORE_GRANT       abandon leaves without looking at granted: a
 *                          waiter granted the lock leaves holding it.
 */

#ifndef N
#define N 3
#endif
#ifndef ROUNDS
#define ROUNDS 2
#endif

byte state = 0;        /* holder*2 + queued bit; 0 = free */
bool qmu = false;      /* the queue's mutex */
byte q[N];             /* the FIFO queue, q[0] the head */
byte qlen = 0;
bool granted[N + 1];
chan ready[N + 1] = [1] of { bit };
byte incs = 0;         /* goroutines in the critical section */

inline lockq()   { atomic { !qmu -> qmu = true } }
inline unlockq() { qmu = false }

/* CAS on state: got = (state == old), then state = new. */
inline cas(old, new, got) {
  atomic {
    if
    :: state == old -> state = new; got = true
    :: else -> got = false
    fi
  }
}

inline append(id) { q[qlen] = id; qlen++ }

inline remove(id) {
  j = 0;
  do
  :: j < qlen && q[j] != id -> j++
  :: else -> break
  od;
  assert(j < qlen);
  do
  :: j + 1 < qlen -> q[j] = q[j + 1]; j++
  :: else -> break
  od;
  qlen--;
  q[qlen] = 0
}

inline popHead(h) {
  h = q[0];
  j = 0;
  do
  :: j + 1 < qlen -> q[j] = q[j + 1]; j++
  :: else -> break
  od;
  qlen--;
  q[qlen] = 0
}

inline unlock(id) {
  s = state;
#ifdef BUG_LOAD_STORE_UNLOCK
  if
  :: (s & 1) == 0 -> state = 0; got = true
  :: else -> got = false
  fi;
#else
  if
  :: (s & 1) == 0 -> cas(s, 0, got)
  :: else -> got = false
  fi;
#endif
  if
  :: got -> skip
  :: else ->
    /* unlockSlow */
    lockq();
    if
    :: qlen == 0 -> state = 0
    :: else ->
      popHead(h);
      if
      :: qlen > 0 -> state = h * 2 + 1
      :: else -> state = h * 2
      fi;
      granted[h] = true;
      assert(len(ready[h]) == 0);
      ready[h] ! 1
    fi;
    unlockq()
  fi
}

proctype G(byte id) {
  byte k, s, h, j;
  bool got, mayLeave;
  for (k : 1 .. ROUNDS) {
    /* tryLock */
    atomic {
      if
      :: state == 0 -> state = id * 2; got = true; assert(qlen == 0)
      :: else -> got = false
      fi
    }
    if
    :: got -> goto cs
    :: else -> skip
    fi;
    /* enqueue */
    lockq();
retry:
    s = state;
    if
    :: s == 0 ->
      atomic {
        if
        :: state == 0 -> state = id * 2; got = true; assert(qlen == 0)
        :: else -> got = false
        fi
      };
      if
      :: got -> unlockq(); goto cs
      :: else -> goto retry
      fi
    :: else ->
#ifndef BUG_NO_BIT
      if
      :: (s & 1) == 0 ->
        cas(s, s | 1, got);
        if
        :: !got -> goto retry
        :: else -> skip
        fi
      :: else -> skip
      fi
#else
      skip
#endif
    fi;
    granted[id] = false;
    append(id);
    unlockq();
    /* wait, or leave at any time (a context done, a cycle confirmed) */
    if
    :: mayLeave = true
    :: mayLeave = false
    fi;
    if
    :: ready[id] ? 1 -> goto cs
    :: mayLeave ->
      /* abandon */
      lockq();
#ifndef BUG_IGNORE_GRANT
      if
      :: granted[id] ->
        ready[id] ? 1;   /* sent in the granter's critical section: never blocks */
        unlockq();
        goto cs
      :: else -> skip
      fi;
#endif
      if
      :: !granted[id] ->
        remove(id);
        if
        :: qlen == 0 -> state = state & 254
        :: else -> skip
        fi
      :: else -> skip  /* BUG_IGNORE_GRANT: leaves holding the lock */
      fi;
      unlockq();
      goto next
    fi;
cs:
    atomic { incs++; assert(incs == 1) };
    assert(state / 2 == id);
    incs--;
    unlock(id);
next:
    skip
  }
}

init {
  byte i;
  atomic {
    for (i : 1 .. N) {
      run G(i)
    }
  };
  (_nr_pr == 1);
  assert(state == 0 && qlen == 0 && !qmu);
  for (i : 1 .. N) {
    assert(len(ready[i]) == 0)
  }
}
