/*
 * dispatch.pml: a SPIN model of workgang's dispatch protocol as package gang
 * implements it: one run word, a claim word per copy with a generation test,
 * per-worker park state (awake/parked/waking) with a Dekker re-check, parking
 * and waking through package semaphore (a count that is both the permits and
 * the committed waiters, one read-modify-write on each side), a wake tree,
 * the bounded look-ahead, surplus helpers, end accounting in groups, and the
 * coordinator's spin-then-park end wait tagged with the run's generation
 * (gang/run.go: Run, runOnCaller, claim, wakeIfParked, Stop, waitEnd, finish;
 * gang/serve.go: Serve, next, park; gang/copy.go: execute, retire;
 * semaphore/semaphore.go: Signal, Wait with spin budget 0; workers/workers.go:
 * worker creation, Goexit replacement, the run lock, Close; with SIDE,
 * gang/side.go: RunBeside, claimSide, serveSide, retireSide, waitSide,
 * wakeHelper, and workers/concurrent.go's runBusy).
 * docs/model/README.md maps every step below to the Go statement it stands
 * for; keep the two in step.
 *
 * One submitter (the goroutine holding the set's run lock) performs RUNS
 * consecutive runs, each with a nondeterministic n and, depending on CALLER,
 * caller-runs off, on, or chosen per run; then it stops the NW workers
 * (Workers.Close: Dispatcher.Stop + wg.Wait). With SUBMIT, two submitters
 * contend for the run lock (below). NW worker processes run Serve. Every Go
 * atomic operation (Load, Store, Add, CompareAndSwap) is one indivisible
 * Promela step, apart from the merges listed below; Go's atomics are
 * sequentially consistent, so SPIN's interleaving semantics is the Go memory
 * model for these words. Plain fields (task) are also one step: the race
 * detector, not this model, checks that the atomics order them.
 *
 * Checked (see .ci/spin-check):
 *   safety:  no assertion violation (each copy id of each run runs exactly
 *            once, with that run's gen and task, by a goroutine that read
 *            that run's word; every end-accounting step belongs to the run in
 *            progress; Run returns only after all n copies ran and all their
 *            accounting is done; every semaphore's count stays within -1..1
 *            and is 0 at the end; never two submitters inside Run; with
 *            SIDE, each copy id of each side run runs once, with the task
 *            and gen of the side run it claimed, while it is in progress,
 *            and its holder returns only after all of them finished) and no
 *            invalid end state (a goroutine parked for good or stuck at a
 *            barrier; after Stop every worker has exited), with -DSAFETY
 *            -DNOCLAIM and pan -q (no wake token left in a channel);
 *   liveness: the LTL property `live` (<> finished: every run completes and
 *            Stop's wg.Wait returns), with pan -a.
 *
 * Configuration (-D flags to spin, e.g. spin -a -DNW=2 -DCALLER=1 dispatch.pml):
 *   NW        worker goroutines (1..3)                          default 3
 *   RUNS      runs per submitter before Stop                    default 2
 *   CALLER    0: caller-runs off, 1: on, 2: chosen per run      default 2
 *   STEAL     gang.stealAhead                                   default 2
 *   G         copies per end-accounting group (Go: 8)           default 2
 *             (2 makes runs of n >= 3 use two groups, so groupsLeft is used)
 *   GOEXIT    if defined, one copy may call runtime.Goexit: on a worker the
 *             goroutine dies after the copy's accounting and a replacement
 *             with the same slot (and so the same seen) continues
 *             (Workers.work's defer); on the caller the coordinator stops
 *             claiming and waits for the end (runOnCaller's defer), and the
 *             next run is made by another goroutine, modelled by the same
 *             process.
 *   BARRIER   the copies of each run wait for each other: Work increments
 *             the run's arrival counter and blocks until all n copies of
 *             the run arrived (gang/README.md, "Copies of a plain run may
 *             wait for each other"). Only plain runs make that promise, so
 *             BARRIER requires CALLER=0.
 *   SUBMIT    two submitters contend for the run lock, each making RUNS
 *             runs: 1 = submitter 0 caller-runs, submitter 1 plain; 2 =
 *             both caller-runs. The run lock's tryLock is a CAS from free;
 *             a caller-runs run that finds it taken runs its n copies on its
 *             caller without touching the dispatcher (a set with concurrent
 *             runs); a plain run waits until the lock is free. The winner
 *             dispatches through the coordinator steps below. Needs CALLER
 *             unset or 2 (the modes are fixed per submitter) and no GOEXIT.
 *             3 = three submitters, 0 and 2 caller-runs, 1 plain (with
 *             SIDE: two caller-runs losers contend for the side slot).
 *   SIDE      (with SUBMIT) a set with concurrent runs and the side slot
 *             (gang/side.go): a caller-runs run that finds the run lock
 *             taken takes the side slot (CAS on owner; if it is held too, all
 *             copies on the caller as without SIDE), publishes its word
 *             (tag | n | claimed, copy 0 pre-claimed), wakes one parked
 *             worker the main run does not need, runs copy 0, claims copies
 *             by CAS on the word like the workers, and waits for left == 0
 *             with the tagged park of the coordinator's end wait. Workers
 *             whose run word is not fresh claim side copies (state aside
 *             meanwhile); park's re-check and the spin look at the side word
 *             too.
 * Spinning has no parameter: a poll that finds nothing new is a stutter step
 * (it changes nothing), so only the poll that finds news is modelled, and a
 * waiter may park at any time; that covers every spin budget (zero, the
 * demand policy's 1/8 and full budgets, GOMAXPROCS = 1, the coordinator's
 * capped budget).
 *
 * Deliberately broken variants (each must be REJECTED by SPIN):
 *   BUG_NO_RECHECK    park does not re-check the run word after
 *                     state.Store(parked): it blocks at once (lost wake-up).
 *   BUG_STALE_CLAIM   claim tests old != gen instead of old < gen, so a CAS
 *                     from an older or a NEWER value succeeds: a stale
 *                     claimer (one that read an older run word) claims a copy
 *                     of a later run.
 *   BUG_NO_TREE       a worker does not wake its children in the tree
 *                     (checked with STEAL=0: with NW=3 the look-ahead alone
 *                     reaches every copy, so only speed would depend on it).
 *   BUG_EARLY_DONE    the copy that empties its group calls finish before
 *                     its groupsLeft decrement (so each group's last copy
 *                     ends the run).
 *   BUG_UNTAGGED_END  the coordinator parks with a flag instead of the run's
 *                     generation (coordParked.Store(1), finish CASes 1 -> 0),
 *                     as the protocol was first specified: a finisher of run k
 *                     that is slow between its done.Store and its CAS wakes
 *                     the coordinator's park for run k+1, and Run returns
 *                     before run k+1's copies finished.
 *   BUG_BATCH_CLAIM   (with BARRIER) a needed worker claims its own copy and
 *                     the next one, (i+1) % m, before running either: the
 *                     own copy waits at the barrier for the next one, which
 *                     only this goroutine may now run (deadlock).
 *   BUG_NO_WAKE_CAS   wakeIfParked takes the worker from parked to waking
 *                     with a Store after its Load instead of a CAS, so two
 *                     wakers (the coordinator and a parent, or a stale one)
 *                     may both signal one park: the count leaves -1..1.
 *   BUG_NO_LOCK       (with SUBMIT) a caller-runs run that finds the run lock
 *                     taken dispatches anyway: two coordinators in Run.
 *   BUG_SIDE_CLAIM_STORE   (SIDE) a side claim stores the loaded word + 1
 *                     instead of a CAS: two claimers of one id, or a stale
 *                     word stored over a newer side run's.
 *   BUG_SIDE_NO_END_CAS    (SIDE) the side finisher signals when it loads
 *                     parked == gen, without the CAS: a permit for a park
 *                     that the holder withdrew (or two for one).
 *   BUG_SIDE_UNTAGGED_END  (SIDE) the holder parks with a flag instead of its
 *                     gen: a slow finisher of side run k wakes the park of
 *                     side run k+1.
 *   BUG_SIDE_GEN_AFTER     (SIDE) the side finisher reads gen after its
 *                     decrement: it may read the next side run's gen and
 *                     wake that run's park.
 *   BUG_SIDE_EARLY_RELEASE (SIDE, SUBMIT=3) the holder releases owner when
 *                     its claims find none left, before left reaches 0: the
 *                     next holder reuses the slot under the previous run's
 *                     last copies.
 */

#ifndef NW
#define NW 3
#endif
#ifndef RUNS
#define RUNS 2
#endif
#ifndef CALLER
#define CALLER 2
#endif
#ifndef STEAL
#define STEAL 2   /* gang.stealAhead: copies a needed worker tries after its own */
#endif
#ifndef G
#define G 2
#endif
#if defined(BARRIER) && CALLER != 0
#error BARRIER is promised for plain runs only: use it with -DCALLER=0
#endif
#ifdef SUBMIT
#if CALLER != 2
#error SUBMIT fixes the mode per submitter: leave CALLER at 2
#endif
#ifdef GOEXIT
#error SUBMIT is not combined with GOEXIT
#endif
#if SUBMIT == 3
#define NSUB 3
#else
#define NSUB 2
#endif
#else
#define NSUB 1
#endif
#ifdef SIDE
#ifndef SUBMIT
#error SIDE needs SUBMIT: a side run is made by a submitter that finds the run lock taken
#endif
#ifdef BARRIER
#error SIDE is not combined with BARRIER (side runs are caller-runs runs)
#endif
#endif

#define NG ((NW + 1 + G - 1) / G)  /* end-accounting groups: n <= NW + 1 */
#define AWAKE  0
#define PARKED 1
#define WAKING 2
#define ASIDE  3                 /* running a copy of the side run (SIDE) */

#ifdef BUG_UNTAGGED_END
#define TAG(g) 1                 /* broken: the coordinator parks with a flag */
#else
#define TAG(g) (g)               /* coordParked holds the gen it sleeps for */
#endif

/* ---- Dispatcher state ---- */
/* the run word gen<<22 | stop<<21 | caller<<20 | n: four fields, always
   written together in one atomic step (run.Store) and read together in one
   (run.Load) */
byte rGen;
bit  rStop;
bit  rCaller;
byte rN;
byte dgen;                     /* d.gen: written only by the lock holder */
byte task;                     /* 0: nil; g: the task of run g (plain field) */
byte claimv[NW];               /* slot[c].claim */
byte state[NW];                /* slot[i].state: AWAKE, PARKED, WAKING */
/* slot[i].wake, a semaphore.Semaphore: wcnt is its count (> 0: permits,
   < 0: committed waiters), wtok its token channel (capacity 64 in the code;
   1 here, and a send asserts it is empty) */
short wcnt[NW];
chan wtok[NW] = [1] of { bit };
byte left[NG];                 /* left[g] */
byte groupsLeft;               /* groupsLeft */
byte done;                     /* done: gen of the last finished run */
byte coordParked;              /* coordParked: 0, or the gen the coordinator sleeps for */
short ccnt;                    /* coordWake's count */
chan ctok = [1] of { bit };    /* coordWake's token channel */
#ifdef SUBMIT
byte lockv;                    /* runLock.holder: 0 free, else the holder's id + 1 */
#endif
#ifdef BARRIER
byte arr;                      /* the user's barrier: copies of the current run that arrived */
#endif
#ifdef SIDE
/* the side slot (struct side in Dispatcher) */
bit  sOwner;                   /* side.owner: 0 free, 1 held */
byte sGen;                     /* side.gen: written only by the holder (plain field) */
byte sTask;                    /* side.task: 0 nil, g: the task of side run g (plain field) */
/* side.word tag<<40 | n<<20 | claimed: three fields, always written together
   in one atomic step and read together in one (tag: the full gen here,
   model generations never wrap) */
byte swTag;
byte swN;
byte swCl;
byte sLeft;                    /* side.left */
byte sParked;                  /* side.parked: 0, or the gen the holder sleeps for */
short scnt;                    /* side.wake's count */
chan stok = [1] of { bit };    /* side.wake's token channel */
#endif

/* ---- ghost state: observation only, never read by the protocol ---- */
byte curGen;          /* gen of the run in progress, 0 between runs */
byte curDone;         /* bitmap of the copy ids of that run that ran */
byte exited;          /* workers that saw the stop word and returned (wg.Done) */
byte subsDone;        /* submitters that made all their runs */
bool finished;        /* Stop's wg.Wait returned */
#ifdef SUBMIT
byte coords;          /* submitters inside Dispatcher.Run */
#endif
#ifdef GOEXIT
bool goexited;        /* the one Goexit was used */
#endif
#ifdef SIDE
byte sCur;            /* gen of the side run in progress (published, holder not returned), else 0 */
byte sDone;           /* bitmap of the copy ids of that side run that ran */
#endif

ltl live { <> finished }

#define loadRun() rg = rGen; rs = rStop; rc = rCaller; rn = rN
#define clearRun() rg = 0; rs = 0; rc = 0; rn = 0
#define groupsOf(nn) (((nn) + G - 1) / G)

/*
 * How the model is cut into steps. Each Go atomic operation on a shared
 * word is one Promela transition (an atomic { } block), with the local
 * computation after it (the Go code between two shared accesses) folded
 * into the same block, which ends with a goto to the next shared access.
 * Some pairs of Go steps are merged into one transition because no other
 * goroutine can tell the difference; README.md argues each:
 *   - fresh(s) and the snapshot() right after it (no step of the worker
 *     between them; a newer word seen by the snapshot is a later poll);
 *     snapshot's runGen is not modelled (model generations never wrap);
 *   - a claimer's winning CAS, its read of task and the copy's Work
 *     (nobody writes task while a claimed copy is unfinished);
 *   - a helper's state Load and its claim's Load (the state only filters
 *     which copies it tries);
 *   - a waker's state Load and its CAS (the Load only filters); the CAS,
 *     the semaphore's Signal and the token send stay three steps;
 *   - Signal's Load and CAS (a failed CAS changes nothing and retries);
 *     Wait with spin budget 0 is TryWait's Load and CAS, then park's Add:
 *     one decrement of the count either way (a TryWait that finds no
 *     permit changes nothing);
 *   - a parked goroutine's token receive (the return of Wait) and its next
 *     step;
 *   - the copy's left[] decrement, groupsLeft decrement and done.Store
 *     (only decrementers read left[] and groupsLeft, and nobody else
 *     decrements after the last copy);
 *   - the coordinator's lock CAS (SUBMIT), its setup of a run (gen, task,
 *     left[], groupsLeft) and its publish (read only by goroutines that read
 *     the new run word).
 */

/* claim(c, gen): old := s.claim.Load(); return old < gen && CAS(old, gen) */
#ifdef BUG_STALE_CLAIM
#define claimOK(o, g) ((o) != (g))    /* broken: only "not claimed in this run" */
#else
#define claimOK(o, g) ((o) < (g))
#endif

#ifdef BARRIER
#define arrive() ; arr++                /* the user's Work: arrive at the barrier */
#define atBarrier(nn) arr == (nn) ->    /* ... and return once all n copies arrived */
#else
#define arrive()
#define atBarrier(nn)
#endif

/* execute: t.Work(c) with the task read after the claim (d.task), observed
   by the ghost checks. A panic takes the same path (runCopy recovers it). */
#define work(cc, g, nn) \
	assert(task == (g));                    /* the task of the run it claimed */ \
	assert((g) == curGen);                  /* claimed in the run in progress */ \
	assert((cc) < (nn));                    /* ids are 0..n-1 */ \
	assert((curDone & (1 << (cc))) == 0);   /* each id once */ \
	curDone = curDone | (1 << (cc)) arrive()

/*
 * semaphore.Semaphore with spin budget 0 (gang's wake and coordWake).
 * Signal(1): old := count.Load(); count.CompareAndSwap(old, old+1) (a failed
 * CAS retries: a stutter); if old < 0 { wake <- token }. Wait: TryWait (Load,
 * CAS from a positive count) or park's count.Add(-1): either is one
 * decrement; if the result is < 0, <-wake. The asserts are the property the
 * dispatcher's comments claim: one permit per park, so the count stays in
 * -1..1 (and the token channel never holds two tokens).
 */
/* Signal on (cnt, tok); SEND is the label of the token send, AFTER what
   follows Signal's return */
#define semSignal(cnt, tok, SEND, AFTER) \
	if \
	:: cnt < 0 -> cnt++; goto SEND          /* old < 0: a waiter committed */ \
	:: else -> cnt++; assert(cnt <= 1); AFTER \
	fi; \
	}; \
SEND: \
	atomic { assert(len(tok) == 0); tok ! 1; AFTER
/* Wait on (cnt, tok): RECV is the label of the blocking receive; AFTER
   what follows Wait's return */
#define semWait(cnt, tok, RECV, AFTER) \
	cnt--; assert(cnt >= -1); \
	if \
	:: cnt >= 0 -> AFTER                    /* a permit was there */ \
	:: else -> goto RECV                    /* committed: block for the token */ \
	fi; \
	}; \
RECV: \
	atomic { tok ? _; AFTER

/* wakeIfParked(j): if s.state.Load() == parked &&
   s.state.CompareAndSwap(parked, waking) { s.wake.Signal(1) }: the CAS is
   step W, Signal's count update step SIG, its token send step SEND. */
#ifdef BUG_NO_WAKE_CAS
#define mayWake(j) ((state[j] == PARKED || state[j] == WAKING))  /* broken: Load, then a plain Store(waking) */
#else
#define mayWake(j) (state[j] == PARKED)        /* CompareAndSwap(parked, waking) */
#endif
#define wakeIfParked(j, W, SIG, SEND, AFTER) \
W: \
	atomic { \
		if \
		:: mayWake(j) -> state[j] = WAKING; goto SIG \
		:: else -> AFTER \
		fi \
	}; \
SIG: \
	atomic { semSignal(wcnt[j], wtok[j], SEND, AFTER) }

/*
 * wakeFor(j, m): switch s.state.Load() { case parked: CAS(parked, waking)
 * and Signal as in wakeIfParked; case aside: wakeFor(2j+2, m) if 2j+2 < m,
 * then wakeFor(2j+3, m) if 2j+3 < m; default: return }. Without SIDE no slot
 * is ever aside, and wakeFor is wakeIfParked. With NW <= 3 (m <= 3) only
 * slot 0 has children below m (2; slot 1's are 4 and 5), so only the
 * coordinator's wakeFor(0, m) can descend, one level, to slots whose own
 * wakeFor is wakeIfParked: the model has wakeFor at that call site only.
 * The Load and the CAS are one step, as in wakeIfParked (W); C1 and C2 are
 * the children's steps.
 */
#define wakeFor(j, W, SIG, SEND, C1, C1SIG, C1SEND, C2, C2SIG, C2SEND, AFTER) \
W: \
	atomic { \
		if \
		:: mayWake(j) -> state[j] = WAKING; goto SIG \
		:: !mayWake(j) && state[j] == ASIDE && 2 * (j) + 2 < m -> goto C1  /* aside: its children */ \
		:: else -> AFTER \
		fi \
	}; \
SIG: \
	atomic { semSignal(wcnt[j], wtok[j], SEND, AFTER) }; \
	wakeIfParked(2 * (j) + 2, C1, C1SIG, C1SEND, if :: 2 * (j) + 3 < m -> goto C2 :: else -> AFTER fi); \
	wakeIfParked(2 * (j) + 3, C2, C2SIG, C2SEND, AFTER)

/* finish, after done.Store(gen): if d.coordParked.Load() == gen &&
   d.coordParked.CompareAndSwap(gen, 0) { d.coordWake.Signal(1) }. The CAS
   is a step of its own: between done.Store and it the coordinator may
   already have returned and parked for the next run (BUG_UNTAGGED_END). */
#define wakeCoord(g, WAKEC, CSIG, CSEND, AFTER) \
WAKEC: \
	atomic { \
		if \
		:: coordParked == TAG(g) -> coordParked = 0; goto CSIG \
		:: else -> AFTER \
		fi \
	}; \
CSIG: \
	atomic { semSignal(ccnt, ctok, CSEND, AFTER) }

/*
 * retire(c, n, gen), after the copy's Work: if groups[c/G].left.Add(-1) != 0
 * { return }; if n > G && groupsLeft.Add(-1) != 0 { return }; finish(gen).
 * Used by the workers and by the caller, with their own labels: ACCT (this
 * step), WAKEC, CSIG, CSEND (finish's wake-up steps) and, for
 * BUG_EARLY_DONE, GRP; AFTER is the code run after the copy's last step.
 * With BARRIER the step is enabled only once every copy of the run arrived
 * (Work's return; nothing shared happens between it and the decrement).
 */
#ifndef BUG_EARLY_DONE
#define account(ACCT, WAKEC, CSIG, CSEND, GRP, cc, g, nn, AFTER) \
ACCT: \
	atomic { \
		atBarrier(nn) \
		assert((g) == curGen);              /* accounting of the run in progress only */ \
		left[(cc) / G]--; lv = left[(cc) / G];  /* groups[c/G].left.Add(-1) */ \
		if \
		:: lv == 0 && groupsOf(nn) > 1 -> \
			groupsLeft--; lv = groupsLeft   /* n > G: groupsLeft.Add(-1) */ \
		:: else -> skip \
		fi; \
		if \
		:: lv == 0 -> done = (g); goto WAKEC  /* finish: d.done.Store(gen) */ \
		:: else -> lv = 0; AFTER \
		fi \
	}; \
	wakeCoord(g, WAKEC, CSIG, CSEND, AFTER)
#else
#define account(ACCT, WAKEC, CSIG, CSEND, GRP, cc, g, nn, AFTER) \
ACCT: \
	atomic { \
		atBarrier(nn) \
		assert((g) == curGen); \
		left[(cc) / G]--; \
		if \
		:: left[(cc) / G] == 0 -> done = (g); goto WAKEC  /* broken: finish first */ \
		:: else -> AFTER \
		fi \
	}; \
	wakeCoord(g, WAKEC, CSIG, CSEND, afterFinish(nn, GRP, AFTER)); \
GRP: \
	atomic { assert((g) == curGen); groupsLeft--; AFTER }
#define afterFinish(nn, GRP, AFTER) \
	if \
	:: groupsOf(nn) > 1 -> goto GRP \
	:: else -> AFTER \
	fi
#endif

#ifdef SIDE
/*
 * The side run (gang/side.go). Its claim: w := word.Load(); if claimed(w) >=
 * n(w) { none left }; if word.CompareAndSwap(w, w+1) { copy claimed(w) }.
 * sideLoad is the Load (NONE: what follows "none left"; the loaded fields go
 * to the claimer's ot, on, oc), sideCAS the CAS (WON / LOST: what follows
 * success / failure; a failure goes back to the Load).
 */
#define sideLoad(NONE) \
	if \
	:: swCl < swN -> ot = swTag; on = swN; oc = swCl \
	:: else -> NONE \
	fi
#define forgetWord() ot = 0; on = 0; oc = 0
#ifdef BUG_SIDE_CLAIM_STORE
/* broken: a plain Store of the loaded word + 1, no compare */
#define sideCAS(WON, LOST) \
	swTag = ot; swN = on; swCl = oc + 1; WON
#else
#define sideCAS(WON, LOST) \
	if \
	:: swTag == ot && swN == on && swCl == oc -> swCl++; WON \
	:: else -> forgetWord(); LOST \
	fi
#endif

/* the claimer's gen, read right after its claim, is the gen of the word its
   CAS succeeded on (ot: that word's tag): no claim of another side run */
#define claimedGen(g) g = sGen; assert((g) == ot)
/* a side copy's Work, with the task read after the claim, observed by the
   ghost checks: the task of the side run it claimed, that run still in
   progress, each id 0..n-1 once */
#define sideWork(cc, g, nn) \
	assert(sTask == (g));                   /* the task of the run it claimed */ \
	assert((g) == sCur);                    /* a side run in progress */ \
	assert((cc) < (nn)); \
	assert((sDone & (1 << (cc))) == 0); \
	sDone = sDone | (1 << (cc))

/* the worker's claim won copy oc of the side run of n = on: t, gen :=
   sd.task, sd.gen, and the copy's Work; the first claim of serveSide marks
   the slot aside, later ones find it aside already */
#define sideWon() \
	claimedGen(sg); sideWork(oc, sg, on); forgetWord(); \
	if \
	:: state[i] == ASIDE -> goto sopen \
	:: else -> goto saside \
	fi
/* claimSide found none left: serveSide returns (through the deferred
   Store(awake) if it had claimed a copy) */
#define sideNone() \
	if \
	:: state[i] == ASIDE -> goto sawake \
	:: else -> goto poll \
	fi

#ifdef BUG_SIDE_UNTAGGED_END
#define STAG(g) 1                /* broken: the holder parks with a flag */
#else
#define STAG(g) (g)              /* side.parked holds the gen it sleeps for */
#endif
#ifdef BUG_SIDE_GEN_AFTER
#define lateGen(g) g = sGen;     /* broken: the finisher reads gen after its decrement */
#else
#define lateGen(g)
#endif
#ifdef BUG_SIDE_NO_END_CAS
#define sideEndCAS(g, SIG) sParked == STAG(g) -> goto SIG   /* broken: Load only, no CAS */
#else
#define sideEndCAS(g, SIG) sParked == STAG(g) -> sParked = 0; goto SIG  /* CAS(gen, 0) */
#endif

/*
 * The end of a side copy (holder and workers): if left.Add(-1) == 0 { if
 * parked.Load() == gen && parked.CompareAndSwap(gen, 0) { wake.Signal(1) } },
 * with gen read right after the claim. ACCT is the decrement, WAKE the
 * tagged CAS, SIG and SEND Signal's count update and token send.
 */
#define sideAccount(ACCT, WAKE, SIG, SEND, g, AFTER) \
ACCT: \
	atomic { \
		assert((g) == sCur);                /* the side run in progress only */ \
		sLeft--; \
		if \
		:: sLeft == 0 -> goto WAKE          /* the side run's finisher */ \
		:: else -> AFTER \
		fi \
	}; \
WAKE: \
	atomic { \
		lateGen(g) \
		if \
		:: sideEndCAS(g, SIG) \
		:: else -> AFTER \
		fi \
	}; \
SIG: \
	atomic { semSignal(scnt, stok, SEND, AFTER) }

/*
 * wakeHelper: wake one parked worker that the main run does not use: r :=
 * d.run.Load(); none after Stop; m = n, less one with caller-runs; m = 0 if
 * d.done.Load() == d.runGen.Load() (that run ended); then for i := NW-1; i
 * >= m; i-- { if state.Load() == parked && CAS(parked, waking) { Signal(1);
 * return true } }. LOAD is the run word's Load, DONE the two loads of done
 * and runGen (one step: they only choose which slots the scan tries, and
 * each CAS decides by itself), W one slot's Load and CAS. wm and j are the
 * waker's locals.
 */
#define wakeOne(LOAD, DONE, W, SIG, SEND, wm, j, AFTER) \
LOAD: \
	atomic { \
		if \
		:: rStop -> AFTER                   /* r&stopBit != 0: return false */ \
		:: else -> wm = rN - rCaller; goto DONE \
		fi \
	}; \
DONE: \
	atomic { \
		if \
		:: done == rGen -> wm = 0           /* the main run ended: any worker */ \
		:: else -> skip \
		fi; \
		j = NW - 1; \
		if \
		:: j >= wm -> goto W \
		:: else -> wm = 0; j = 0; AFTER \
		fi \
	}; \
W: \
	atomic { \
		if \
		:: mayWake(j) -> state[j] = WAKING; goto SIG \
		:: !mayWake(j) && j > wm -> j--; goto W    /* next slot down */ \
		:: else -> wm = 0; j = 0; AFTER \
		fi \
	}; \
SIG: \
	atomic { semSignal(wcnt[j], wtok[j], SEND, wm = 0; j = 0; AFTER) }
#endif

/*
 * The worker: Serve(i), with next and park. seen is s.seen, the gen of the
 * last run word it acted on (a Goexit replacement serves the same slot, so
 * it starts with its predecessor's).
 */
#ifdef BUG_NO_TREE
#define hasChild(j) false                       /* broken: no tree wake-ups */
#else
#define hasChild(j) ((j) < m)                   /* if c := 2*i + 2; c < m (and c+1 < m) */
#endif

/* the for loop of Serve: back to next */
#define next() \
	m = 0; c = 0; k = 0; clearRun(); goto poll

/* Serve after next returned r: s.seen = gen; stop: return; m = n - caller;
   wake the children 2i+2, 2i+3 if < m; then the own copy (i < m) or the
   helper scan (i >= m) */
#define dispatch() \
	seen = rg; \
	if \
	:: rs -> clearRun(); exited++; goto gone    /* r&stopBit != 0: return (wg.Done) */ \
	:: else -> \
		m = rn - rc; \
		if \
		:: hasChild(2 * i + 2) -> goto child1 \
		:: else -> toWork() \
		fi \
	fi

#define toWork() \
	if \
	:: i < m -> goto own \
	:: else -> c = 0; goto help \
	fi

#define afterChild1() \
	if \
	:: hasChild(2 * i + 3) -> goto child2 \
	:: else -> toWork() \
	fi

/* after a copy ran on this worker (c is its id): the own copy ends this
   pass of Serve's loop, the helper scan goes on with c+1 */
#define helpNext() \
	if \
	:: c + 1 < m -> c++; goto help \
	:: else -> next() \
	fi
/* the look-ahead after the own copy: for k := 1; k <= stealAhead && k < m;
   k++ { if c := (i + k) % m; d.claim(c, gen) { execute } } */
#define lookNext() \
	if \
	:: k + 1 <= STEAL && k + 1 < m -> k++; c = (i + k) % m; goto look \
	:: else -> next() \
	fi
#ifdef BUG_BATCH_CLAIM
/* broken: the copy claimed together with the own one runs after it */
#define ownNext() \
	if \
	:: pend -> pend = 0; c = (i + 1) % m; work(c, rg, rn); goto wacct \
	:: else -> lookNext() \
	fi
#else
#define ownNext() lookNext()
#endif
#define afterCopyNoExit() \
	if \
	:: i < m -> ownNext() \
	:: else -> helpNext() \
	fi
#ifdef GOEXIT
#define afterCopy() goto wexit
#else
#define afterCopy() afterCopyNoExit()
#endif

/* park's return: s.state.Store(awake) (merged with the end of Wait); then
   back in next: return d.snapshot() */
#define wokenSnap() state[i] = AWAKE; goto WITHDRAWN
#define wokenSlept() state[i] = AWAKE; goto slept

/* With SIDE, next looks at the side word whenever the run word is not fresh:
   after the first test (sidepoll), and after a park that returned with no
   fresh run word (sidepark); park's re-check and the spin's condition are
   "fresh OR side open". Without SIDE these are the single-path steps. */
#ifdef SIDE
#define NOTFRESH goto sidepoll
#define NOTFRESHPARK goto sidepark
#define PSIDE pside
#define PWITHDRAW goto withdraw
#define WITHDRAWN slept   /* withdrawn: back in next's loop (fresh? side? park) */
#else
#define NOTFRESH goto spinning
#define NOTFRESHPARK skip
#define PSIDE sleep
#define PWITHDRAW skip
#define WITHDRAWN snap    /* withdrawn: the run word was fresh */
#endif

proctype worker(byte i; byte seen) {
	byte rg, rn, m, c, k, old, lv;
	bit rs, rc;
#ifdef BUG_BATCH_CLAIM
	bit pend;
#endif
#ifdef SIDE
	byte ot, on, oc;      /* the side word as the claim loaded it */
	byte sg;              /* the gen of the side copy it claimed (read after the claim) */
#endif
poll:
	/* next: if d.fresh(s) { return d.snapshot() }; then spin polling fresh;
	   then park */
	if
	:: atomic { rGen != seen -> loadRun(); dispatch() }  /* fresh: a new run word */
	:: atomic { rGen == seen -> NOTFRESH }     /* not fresh */
	fi;
spinning:
	/* spin.Until(budget, ..., fresh): a poll that finds nothing is a
	   stutter step; the budget may run out at any time (0 included) */
	if
	:: atomic { rGen != seen -> loadRun(); dispatch() }  /* a poll found a new run word */
#ifdef SIDE
	:: atomic { swCl < swN -> goto poll }       /* a poll found the side open */
#endif
	:: atomic { state[i] = PARKED; goto parked }  /* park: s.state.Store(parked) */
	fi;
parked:
#ifdef BUG_NO_RECHECK
	goto sleep;                                 /* broken: block without the re-check */
#endif
	atomic {
		if
		:: rGen == seen -> goto PSIDE           /* if d.fresh(s) (the re-check) */
		:: else -> PWITHDRAW
		fi
	};
#ifdef SIDE
pside:
	atomic {
		if
		:: swCl >= swN -> goto sleep            /* ... || side open: the re-check of the side word */
		:: else -> skip
		fi
	};
withdraw:
#endif
	atomic {
		if
		:: state[i] == PARKED -> state[i] = AWAKE; goto WITHDRAWN  /* withdraw: CAS(parked, awake) */
		:: else -> skip
		fi
	};
	/* a waker won the CAS and owes a permit: s.wake.Wait(); s.state.Store(awake) */
	atomic { semWait(wcnt[i], wtok[i], wrecv1, wokenSnap()) };
snap:
	atomic { loadRun(); dispatch() };           /* return d.snapshot() */
sleep:
	/* s.wake.Wait(); s.state.Store(awake) */
	atomic { semWait(wcnt[i], wtok[i], wrecv2, wokenSlept()) };
slept:
	/* back in next's loop: if d.fresh(s) { return d.snapshot() }; else
	   park again at once (no spinning) */
	if
	:: atomic { rGen != seen -> loadRun(); dispatch() }
	:: atomic { rGen == seen -> NOTFRESHPARK }
	fi;
repark:
	atomic { state[i] = PARKED; goto parked };  /* d.park(s): s.state.Store(parked) */
#ifdef SIDE
	/* next's loop with no fresh run word: if d.sideOpen() { d.serveSide(s);
	   continue }. serveSide: claim a copy (claimSide: the Load, merged with
	   sideOpen's, then the CAS; a lost CAS loads again); on the first one
	   s.state.Store(aside); per copy: read task and gen, if d.sideOpen() {
	   d.wakeHelper() }, run it, retireSide; claim the next; when none is
	   left, the deferred s.state.Store(awake) and back to next's loop, where
	   a fresh run word comes first */
sidepoll:
	atomic { sideLoad(goto spinning); goto scas };   /* none open: spin */
sidepark:
	/* sleep's return: if d.sideOpen() { return 0, 0, false }, then next's
	   loop from the top; else park again */
	atomic {
		if
		:: swCl < swN -> goto poll
		:: else -> goto repark
		fi
	};
scas:
	atomic { sideCAS(sideWon(), goto sreload) };
saside:
	atomic { state[i] = ASIDE; goto sopen };    /* s.state.Store(aside) */
sopen:
	atomic {
		if
		:: swCl < swN -> goto swload            /* d.sideOpen(): d.wakeHelper() */
		:: else -> goto sacct
		fi
	};
	wakeOne(swload, swdone, swcas, swsig, swsend, m, k, goto sacct);
	/* executeSide: runCopy (the Work above), then retireSide(gen) */
	sideAccount(sacct, swakec, sssig, sssend, sg, sg = 0; goto sreload);
sreload:
	atomic { sideLoad(sideNone()); goto scas };
sawake:
	atomic { state[i] = AWAKE; goto poll };     /* defer s.state.Store(awake) */
#endif
	/* the tree: wakeIfParked(2i+2), then 2i+3 */
	wakeIfParked(2 * i + 2, child1, c1sig, c1send, afterChild1());
	wakeIfParked(2 * i + 3, child2, c2sig, c2send, toWork());
own:
	/* i < m: if d.claim(i, gen) { d.execute(d.task, i, n, gen, false, handBack) } */
	atomic {
		old = claimv[i];                        /* old := s.claim.Load() */
		if
		:: claimOK(old, rg) -> skip
		:: else -> old = 0; lookNext()          /* old < gen is false */
		fi
	};
	atomic {
		if
		:: claimv[i] == old ->                  /* s.claim.CompareAndSwap(old, gen) */
			claimv[i] = rg; old = 0;
#ifdef BUG_BATCH_CLAIM
			goto batch
#else
			work(i, rg, rn); c = i; goto wacct
#endif
		:: else -> old = 0; lookNext()
		fi
	};
#ifdef BUG_BATCH_CLAIM
batch:
	/* broken: claim the next copy too (Load and CAS in one step), then run
	   the own copy, then the other one */
	atomic {
		c = (i + 1) % m;
		if
		:: m > 1 && claimOK(claimv[c], rg) -> claimv[c] = rg; pend = 1
		:: else -> skip
		fi;
		c = i; work(i, rg, rn); goto wacct
	};
#endif
look:
	/* if c := (i + k) % m; d.claim(c, gen) { d.execute(d.task, c, n, gen, false, handBack) } */
	atomic {
		old = claimv[c];
		if
		:: claimOK(old, rg) -> skip
		:: else -> old = 0; lookNext()
		fi
	};
	atomic {
		if
		:: claimv[c] == old ->
			claimv[c] = rg; old = 0;
			work(c, rg, rn); goto wacct
		:: else -> old = 0; lookNext()
		fi
	};
help:
	/* i >= m: for c := range m { if d.slots[c].state.Load() != awake &&
	   d.claim(c, gen) { d.execute(d.task, c, n, gen, false, handBack) } } */
	atomic {
		if
		:: state[c] != AWAKE ->
			old = claimv[c];
			if
			:: claimOK(old, rg) -> goto hcas
			:: else -> old = 0
			fi
		:: else -> skip
		fi;
		helpNext()
	};
hcas:
	atomic {
		if
		:: claimv[c] == old ->                  /* s.claim.CompareAndSwap(old, gen) */
			claimv[c] = rg; old = 0;
			work(c, rg, rn); goto wacct
		:: else -> old = 0; helpNext()
		fi
	};
	account(wacct, wwakec, wcsig, wcsend, wgrp, c, rg, rn, afterCopy());
#ifdef GOEXIT
wexit:
	/* the copy may have called runtime.Goexit: execute's deferred retire
	   did its accounting; Workers.work's defer starts a replacement
	   Serve(i) (same slot, same seen), and this goroutine ends */
	if
	:: atomic {
		!goexited -> goexited = true; run worker(i, seen);
		i = 0; seen = 0; m = 0; c = 0; k = 0; clearRun(); goto gone
	   }
	:: atomic { true -> afterCopyNoExit() }
	fi;
#endif
gone:
	skip
}

/*
 * A submitter: a goroutine that makes RUNS runs on the set (RunN), holding
 * the set's run lock for each, so that it is the coordinator of the
 * dispatcher meanwhile (Dispatcher.Run); the last one to finish closes the
 * set (Workers.Close: Dispatcher.Stop(NW); wg.Wait).
 */

/* runOnCaller: for c := m - 1; c >= 0; c-- { if d.claim(c, gen) { ... } } */
#define callerNext() \
	if \
	:: c > 0 -> c--; goto cload \
	:: else -> goto endwait \
	fi
#ifdef GOEXIT
#define callerAfter() goto cexit
#else
#define callerAfter() callerNext()
#endif

#ifdef SUBMIT
/* Run's return, then the deferred w.mu.unlock() (holder.Store(0)): nothing
   shared happens between them */
#define leaveRun() coords--; lockv = 0
#else
#define leaveRun() skip
#endif

/* Run returns (asserting that every copy of run gen ran, each once, and
   that its accounting is complete); d.task = nil */
#define runReturns() \
	assert(done == gen); \
	assert(curDone == (1 << n) - 1); \
	k = 0; \
	do \
	:: k < NG -> assert(left[k] == 0); k++ \
	:: else -> k = 0; break \
	od; \
	assert(groupsOf(n) == 1 || groupsLeft == 0); \
	assert(coordParked == 0);               /* CoordinatorParked() is false again */ \
	task = 0; curGen = 0; \
	leaveRun(); \
	n = 0; m = 0; c = 0; callerRuns = false; \
	r++; \
	goto runs

#ifdef SUBMIT
#define enterRun() coords++; assert(coords == 1)  /* one coordinator at a time */
#else
#define enterRun() skip
#endif

/* d.gen++; d.task = p.t; the groups' left and groupsLeft (read only by
   goroutines that read the run word); publish: d.runGen.Store(gen);
   d.run.Store(word) */
#ifdef BARRIER
#define resetBarrier() arr = 0
#else
#define resetBarrier() skip
#endif
#define setupRun() \
	enterRun(); \
	dgen++; gen = dgen; curGen = gen; curDone = 0; \
	task = gen; resetBarrier(); \
	k = 0; \
	do \
	:: k < NG -> \
		left[k] = (k * G >= n -> 0 : (n - k * G >= G -> G : n - k * G)); \
		k++ \
	:: else -> k = 0; break \
	od; \
	groupsLeft = groupsOf(n); \
	rGen = gen; rStop = 0; rCaller = callerRuns; rN = n; \
	goto wroot0

/* the submitter's mode for its next run */
#ifdef SUBMIT
/* SUBMIT 1: 0 caller-runs, 1 plain; 2: both caller-runs; 3: 0 and 2
   caller-runs, 1 plain */
#define chooseMode() callerRuns = (me != 1 || SUBMIT == 2)
#elif CALLER == 0
#define chooseMode() callerRuns = false
#elif CALLER == 1
#define chooseMode() callerRuns = true
#else
#define chooseMode() \
	if \
	:: callerRuns = false \
	:: callerRuns = true \
	fi
#endif

#define chooseN() \
	if \
	:: callerRuns -> select(n : 2 .. NW + 1) \
	:: else -> select(n : 1 .. NW) \
	fi; \
	m = n - callerRuns

/* the lock CAS and the run's setup and publish: one step without SIDE (only
   goroutines that read the new run word read the setup, and a loser runs
   inline, touching nothing); two with SIDE, where a loser that saw the lock
   taken publishes a side run that workers may serve before the publish */
#ifdef SIDE
#define lockedSetup() goto setup
#else
#define lockedSetup() setupRun()
#endif

#ifdef BUG_NO_LOCK
#define lockLost() goto setup                   /* broken: dispatch without the lock */
#elif defined(SIDE)
#define lockLost() goto sidetry                 /* try the side slot */
#else
#define lockLost() c = 0; goto inlrun           /* run every copy on the caller */
#endif

#ifdef SIDE
/* the side slot taken: gen++, task, left = n, then publish the word with copy
   0 claimed (the holder runs it); the CAS on owner, these plain stores and
   the publish are one step: they are read only by goroutines whose claim
   succeeded on the new word */
#define setupSide() \
	sGen++; gen = sGen; sTask = gen; sLeft = n; \
	sCur = gen; sDone = 0; \
	swTag = gen; swN = n; swCl = 1; \
	goto hwload
#ifdef BUG_SIDE_EARLY_RELEASE
#define releaseSide() skip                      /* broken: released before the end */
#else
#define releaseSide() sOwner = 0                /* owner.Store(0) */
#endif
/* the holder returns (asserting that every copy of its side run ran, each
   once, and that the end accounting is complete): task = nil, then
   owner.Store(0) (one step: the word is closed, nobody reads task) */
#define sideReturns() \
	assert(sLeft == 0); \
	assert(sDone == (1 << n) - 1); \
	assert(sParked == 0); \
	sTask = 0; sCur = 0; releaseSide(); \
	n = 0; m = 0; c = 0; k = 0; gen = 0; callerRuns = false; \
	r++; goto runs
#define sideClosed() \
	assert(scnt == 0); assert(sOwner == 0); assert(sParked == 0); assert(swCl >= swN)
#else
#define sideClosed() skip
#endif

#define afterRoot0() if :: 1 < m -> goto wroot1 :: else -> goto caller fi

proctype submitter(byte me) {
	byte gen, n, m, c, k, old, lv, r;
	bool callerRuns;
#ifdef SUBMIT
	byte inlDone;     /* ghost: the copies of an inline run that ran */
#endif
#ifdef SIDE
	byte ot, on, oc;  /* the side word as the holder's claim loaded it */
#endif
runs:
	if
	:: atomic {
		r < RUNS ->
		/* the arguments of Run(p, n): n copies, 1..NW without caller-runs
		   (every copy needs a worker), 2..NW+1 with it (n = 1 caller-runs
		   runs inline, RunInline, outside the dispatcher) */
		chooseMode();
#ifdef SUBMIT
		goto lock                               /* n is chosen when it is first used */
#else
		chooseN();
		setupRun()
#endif
	   }
	:: atomic { r >= RUNS -> goto subend }
	fi;
#ifdef SUBMIT
lock:
	/* caller-runs on a set with concurrent runs: w.mu.tryLock (CAS 0 ->
	   token), and if taken, all copies on the caller; plain: w.mu.lock,
	   which returns once this goroutine's CAS took a free lock (the
	   queue and the handoff are the run lock's own business) */
	atomic {
		if
		:: lockv == 0 -> lockv = me + 1; chooseN(); lockedSetup()
		:: lockv != 0 && callerRuns -> chooseN(); lockLost()
		fi
	};
setup:
	atomic { setupRun() };
#ifdef SIDE
sidetry:
	/* the run lock is taken: d.side.owner.CompareAndSwap(0, 1), and if it
	   is held too, every copy on the caller (runBusy) */
	atomic {
		if
		:: sOwner == 0 -> sOwner = 1; setupSide()
		:: else -> c = 0; goto inlrun
		fi
	};
	/* wake one parked worker the main run does not need */
	wakeOne(hwload, hwdone, hwcas, hwsig, hwsend, m, k, goto hcopy0);
hcopy0:
	/* copy 0, pre-claimed by the publish */
	atomic { sideWork(0, gen, n); goto hacct };
hclaim:
	/* then claim copies like the workers, until none is left */
	atomic { sideLoad(goto hwait); goto hcas };
hcas:
	atomic { sideCAS(c = oc; claimedGen(k); k = 0; forgetWord(); sideWork(c, gen, n); c = 0; goto hacct, goto hclaim) };
	sideAccount(hacct, hwakec, hssig, hssend, gen, goto hclaim);
hwait:
	/* the end: spin on left == 0 (the budget may run out at any time),
	   then parked.Store(gen); if left.Load() == 0 { if !CAS(parked, gen, 0)
	   { wake.Wait() } } else { wake.Wait() } */
#ifdef BUG_SIDE_EARLY_RELEASE
	atomic { sOwner = 0 };                      /* broken: release before the end */
#endif
	if
	:: atomic { sLeft == 0 -> sideReturns() }   /* a poll saw the end */
	:: sParked = STAG(gen)                      /* parked.Store(gen) */
	fi;
	atomic {
		if
		:: sLeft == 0 -> skip                   /* the re-check: left.Load() == 0 */
		:: else -> goto hsleep
		fi
	};
	atomic {
		if
		:: sParked == STAG(gen) -> sParked = 0; sideReturns()  /* CAS(gen, 0) */
		:: else -> skip
		fi
	};
	/* the finisher got there first and owes the permit: wake.Wait() */
	atomic { semWait(scnt, stok, hrecv1, sideReturns()) };
hsleep:
	atomic { semWait(scnt, stok, hrecv2, sideReturns()) };
#endif
inlrun:
	/* for c := range n { t.Work(c) } on the caller: it touches no word of
	   the dispatcher, so the whole inline run is one step; the ghost
	   bitmap checks that each id 0..n-1 ran once */
	atomic {
		do
		:: c < n ->
			assert((inlDone & (1 << c)) == 0);
			inlDone = inlDone | (1 << c); c++
		:: else -> break
		od;
		assert(inlDone == (1 << n) - 1);
		inlDone = 0; n = 0; m = 0; c = 0; callerRuns = false;
		r++; goto runs
	};
#endif
	/* wake the tree roots: 0 if m > 0 (always here), 1 if m > 1 */
#ifdef SIDE
	wakeFor(0, wroot0, r0sig, r0send, r0c1, r0c1sig, r0c1send, r0c2, r0c2sig, r0c2send, afterRoot0());
#else
	wakeIfParked(0, wroot0, r0sig, r0send, afterRoot0());
#endif
	wakeIfParked(1, wroot1, r1sig, r1send, goto caller);
caller:
	/* runOnCaller: d.execute(t, n-1, ...) without a claim (nobody else
	   ever runs copy n-1 of a caller run; the ghost checks would see it) */
	atomic {
		if
		:: callerRuns -> work(n - 1, gen, n); c = n - 1; goto cacct  /* c = n-1 = m: the loop starts at m-1 */
		:: else -> goto endwait
		fi
	};
cload:
	atomic {
		old = claimv[c];                        /* d.claim(c, gen): old := s.claim.Load() */
		if
		:: claimOK(old, gen) -> skip
		:: else -> old = 0; callerNext()
		fi
	};
	atomic {
		if
		:: claimv[c] == old -> claimv[c] = gen; old = 0; work(c, gen, n); goto cacct
		:: else -> old = 0; callerNext()
		fi
	};
	account(cacct, cwakec, ccsig, ccsend, cgrp, c, gen, n, callerAfter());
#ifdef GOEXIT
cexit:
	/* the copy may have called runtime.Goexit: the caller stops claiming
	   and runOnCaller's deferred function waits for the end (the next run
	   is made by another goroutine, modelled by this process) */
	if
	:: atomic { !goexited -> goexited = true; goto endwait }
	:: atomic { true -> callerNext() }
	fi;
#endif
endwait:
	/* waitEnd(gen, m): if d.done.Load() == gen { return }; spin.Until
	   polling done (a poll that finds nothing is a stutter step; the
	   budget may run out at any time, 0 included); then park */
	if
	:: atomic { done == gen -> runReturns() }
	:: atomic { done != gen -> goto cspin }
	fi;
cspin:
	if
	:: atomic { done == gen -> runReturns() }   /* a poll saw the end */
	:: coordParked = TAG(gen)                   /* d.coordParked.Store(gen) */
	fi;
	atomic {
		if
		:: done == gen -> skip                  /* the re-check: d.done.Load() == gen */
		:: else -> goto csleep
		fi
	};
	atomic {
		if
		:: coordParked == TAG(gen) -> coordParked = 0; runReturns()  /* CAS(gen, 0) */
		:: else -> skip
		fi
	};
	/* finish got there first and owes the permit: d.coordWake.Wait() */
	atomic { semWait(ccnt, ctok, crecv1, runReturns()) };
csleep:
	/* d.coordWake.Wait() */
	atomic { semWait(ccnt, ctok, crecv2, runReturns()) };
subend:
	atomic {
		subsDone++;
		if
		:: subsDone == NSUB -> skip             /* the last one closes the set */
		:: else -> goto subgone
		fi
	};
	/* Workers.close: d.Stop(k): d.gen++; runGen, run.Store(stop word);
	   wakeIfParked(i) for i < k; then w.wg.Wait() */
	atomic { dgen++; rGen = dgen; rStop = 1; rCaller = 0; rN = 0; k = 0 };
	wakeIfParked(k, stopk, stsig, stsend, k++; if :: k < NW -> goto stopk :: else -> goto wgwait fi);
wgwait:
	atomic {
		exited == NW -> finished = true;        /* w.wg.Wait() */
		/* every park took the one permit owed to it */
		k = 0;
		do
		:: k < NW -> assert(wcnt[k] == 0); k++
		:: else -> k = 0; break
		od;
		assert(ccnt == 0);
		sideClosed()
	};
subgone:
	skip
}

init {
	byte k;
	atomic {                                    /* go w.work(i, wk, true) for every slot */
		k = 0;
		do
		:: k < NW -> run worker(k, 0); k++
		:: else -> break
		od;
		k = 0;
		do
		:: k < NSUB -> run submitter(k); k++
		:: else -> k = 0; break
		od
	}
}
