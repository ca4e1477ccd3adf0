/*
 * dispatch.pml: a SPIN model of workgang's dispatch protocol as
 * gang/protocol.go implements it: one run word, a claim word per copy with a
 * generation test, per-worker park state (awake/parked/waking) with a Dekker
 * re-check, parking and waking through package semaphore (a count that is
 * both the permits and the committed waiters, one read-modify-write on each
 * side), a wake tree, the bounded look-ahead, surplus helpers, end accounting
 * in groups, the coordinator's spin-then-park end wait tagged with the
 * run's generation, and a late run's wake-up (a late word tagged with the
 * generation, a timer whose goroutine Wakes at any time). Each step names
 * the function of gang/protocol.go it belongs to (Run, runOnCaller, claim,
 * Wake, armLate, disarmLate, wakeChildren, wake, Serve, serveCopy, next,
 * fresh, park, execute, retire, finish, waitEnd, Stop, RunOnCaller);
 * also semaphore/semaphore.go (Signal, Wait with spin budget 0) and
 * workers/workers.go (worker creation, Goexit replacement, the run lock, a
 * busy run on its caller, Close). docs/model/README.md maps every step to the
 * Go statement it stands for; keep the two in step.
 *
 * One submitter (the goroutine holding the set's run lock) performs RUNS
 * consecutive runs, each with a nondeterministic n and, depending on CALLER,
 * caller-runs off, on, or chosen per run; then it stops the NW workers
 * (Workers.Close: Dispatcher.Stop + wg.Wait). With SUBMIT, two or three
 * submitters contend for the run lock (below). NW worker processes run Serve.
 * Every Go atomic operation (Load, Store, Add, CompareAndSwap) is one
 * indivisible Promela step, apart from the merges listed below; Go's atomics
 * are sequentially consistent, so SPIN's interleaving semantics is the Go
 * memory model for these words. Plain fields (task) are also one step: the
 * race detector, not this model, checks that the atomics order them.
 *
 * Checked (see .ci/spin-check):
 *   safety:  no assertion violation (each copy id of each run runs exactly
 *            once, with that run's gen and task, by a goroutine that read
 *            that run's word; every end-accounting step belongs to the run in
 *            progress; Run returns only after all n copies ran and all their
 *            accounting is done; every semaphore's count stays within -1..1
 *            and is 0 at the end; never two submitters inside Run; a busy
 *            run runs each of its ids once on its caller; a Wake wins the
 *            late word only in the run it names, and Run returns with the
 *            word 0) and no invalid end
 *            state (a goroutine parked for good or stuck at a barrier; after
 *            Stop every worker has exited), with -DSAFETY -DNOCLAIM and pan -q
 *            (no wake token left in a channel);
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
 *   MEET      the caller's copy n-1 of a caller-runs run waits for copy 0
 *             of its run (its Work returns only once copy 0 started), which
 *             only a worker can run: the caller claims copy 0 only after
 *             copy n-1 returned. A late run then completes only if a Wake
 *             comes (the timer's: the copy need not call Wake). Needs
 *             CALLER 1 or 2, no SUBMIT, no LATE_UNWOKEN.
 *   LATE_UNWOKEN  a late run is woken by nobody before its caller claimed
 *             every copy (its timer fires after the disarm, its copy never
 *             Wakes), and the Wake's words are left out; with GOEXIT no run
 *             is late. A subset of the histories of late runs, for the
 *             searches too large for the timer: with it the state space is
 *             the one of the model before the timer.
 *   SUBMIT    several submitters contend for the run lock, each making RUNS
 *             runs: 1 = submitter 0 caller-runs, submitter 1 plain; 2 =
 *             both caller-runs; 3 = three, 0 and 2 caller-runs, 1 plain. The
 *             run lock's tryLock is a CAS from free; a caller-runs run that
 *             finds it taken runs its n copies on its caller without touching
 *             the dispatcher (gang.RunOnCaller); a plain run waits until the
 *             lock is free. The winner dispatches through the coordinator
 *             steps below. Needs CALLER unset or 2 (the modes are fixed per
 *             submitter) and no GOEXIT.
 * Spinning has no parameter: a poll that finds nothing new is a stutter step
 * (it changes nothing), so only the poll that finds news is modelled, and a
 * waiter may park at any time; that covers every budget internal/spin may
 * give (zero, an idle worker's eighth, the full budget, a contended machine,
 * a coordinator that stops when the running copies take every processor)
 * and every yield it makes.
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
 *                     wakes the parked coordinator).
 *   BUG_UNTAGGED_END  the coordinator parks with a flag instead of the run's
 *                     generation (coordParked.Store(1), finish CASes 1 -> 0):
 *                     a finisher of run k that is slow between its decrement
 *                     and its CAS wakes the coordinator's park for run k+1,
 *                     and Run returns before run k+1's copies finished.
 *   BUG_BATCH_CLAIM   (with BARRIER) a needed worker claims its own copy and
 *                     the next one, (i+1) % m, before running either: the
 *                     own copy waits at the barrier for the next one, which
 *                     only this goroutine may now run (deadlock).
 *   BUG_NO_WAKE_CAS   wake takes the worker from parked to waking with a
 *                     Store after its Load instead of a CAS, so two wakers
 *                     (the coordinator and a parent, or a stale one) may
 *                     both signal one park: the count leaves -1..1.
 *   BUG_NO_LOCK       (with SUBMIT) a caller-runs run that finds the run lock
 *                     taken dispatches anyway: two coordinators in Run.
 *   BUG_NO_LATE_TIMER (with MEET) a late run arms no timer, as before the
 *                     timer: its roots wait for the caller's copy to Wake,
 *                     and a copy that waits for copy 0 never does (invalid
 *                     end state, acceptance cycle).
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
#ifdef MEET
#error SUBMIT is not combined with MEET (a busy run runs its copies one after another)
#endif
#if SUBMIT == 3
#define NSUB 3
#else
#define NSUB 2
#endif
#else
#define NSUB 1
#endif
#if defined(MEET) && defined(LATE_UNWOKEN)
#error MEET needs a Wake of the late run: do not combine it with LATE_UNWOKEN
#endif
#if defined(MEET) && CALLER == 0
#error MEET is about the copy n-1 of caller-runs runs: use it with -DCALLER=1 or 2
#endif

#define NG ((NW + 1 + G - 1) / G)  /* end-accounting groups: n <= NW + 1 */
#define AWAKE  0
#define PARKED 1
#define WAKING 2

#ifdef BUG_UNTAGGED_END
#define TAG(g) 1                 /* broken: the coordinator parks with a flag */
#else
#define TAG(g) (g)               /* coordParked holds the gen it sleeps for */
#endif

/* ---- Dispatcher state (gang/gang.go) ---- */
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
/* slot[i].sem, a semaphore.Semaphore: wcnt is its count (> 0: permits,
   < 0: committed waiters), wtok its token channel (capacity 64 in the code;
   1 here, and a send asserts it is empty) */
short wcnt[NW];
chan wtok[NW] = [1] of { bit };
byte left[NG];                 /* groups[g].left */
byte groupsLeft;               /* groupsLeft */
byte coordParked;              /* coordParked: 0, or the gen the coordinator sleeps for */
short ccnt;                    /* coordWake's count */
chan ctok = [1] of { bit };    /* coordWake's token channel */
#ifdef SUBMIT
byte lockv;                    /* the run lock: 0 free, else the holder's id + 1 */
#endif
#ifdef BARRIER
byte arr;                      /* the user's barrier: copies of the current run that arrived */
#endif
/* d.late, gen<<genShift | m while a late run's m worker copies wait for
   Wake, else 0: two fields, always written together in one atomic step */
byte lateG;
byte lateM;
/* d.timer, the runtime's timer (no word of the dispatcher): the gen of the
   run whose armLate set it, until it fires or disarm stops it; else 0 */
byte tArmed;

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
 *   - a claimer's winning CAS, its read of task (execute's d.task) and the
 *     copy's Work (nobody writes task while a claimed copy is unfinished);
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
 *   - the copy's left[] decrement and groupsLeft decrement (only
 *     decrementers read left[] of a run of more than G copies, and the
 *     coordinator reads only the run's last counter, ended(n); nobody
 *     else decrements after the last copy);
 *   - a Wake's Load and the step that starts the Wake: the timer's firing
 *     (its goroutine does nothing shared before), the caller copy's start
 *     (the copy's Work calls Wake first), the caller copy's Goexit (the
 *     deferred function's first shared access); the Wake's CAS is a step
 *     of its own;
 *   - armLate's late.Store and the timer's Reset (only the timer's firing
 *     reads the timer), and disarmLate's late.Store(0) and timer.Stop (a
 *     timer firing between them loads 0: one that did not fire);
 *   - the coordinator's lock CAS (SUBMIT), its setup of a run (gen, task,
 *     left[], groupsLeft) and its publish (read only by goroutines that read
 *     the new run word);
 *   - Run's return and the run lock's release; a busy run's RunOnCaller
 *     (it touches no word of the dispatcher).
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

/* execute: runCopy(d.task, ...), t.Work(c), with the task read after the
   claim, observed by the ghost checks. A panic takes the same path (call
   recovers it). */
#define runCopy(cc, g, nn) \
	assert(task == (g));                    /* the task of the run it claimed */ \
	assert((g) == curGen);                  /* claimed in the run in progress */ \
	assert((cc) < (nn));                    /* ids are 0..n-1 */ \
	assert((curDone & (1 << (cc))) == 0);   /* each id once */ \
	curDone = curDone | (1 << (cc)) arrive()

/*
 * semaphore.Semaphore with spin budget 0 (gang's slot.sem and coordWake).
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

/* wake(j): if s.state.Load() == parked && s.state.CompareAndSwap(parked,
   waking) { s.sem.Signal(1) }: the CAS is step W, Signal's count update step
   SIG, its token send step SEND. */
#ifdef BUG_NO_WAKE_CAS
#define mayWake(j) ((state[j] == PARKED || state[j] == WAKING))  /* broken: Load, then a plain Store(waking) */
#else
#define mayWake(j) (state[j] == PARKED)        /* CompareAndSwap(parked, waking) */
#endif
#define wake(j, W, SIG, SEND, AFTER) \
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
 * Wake (any goroutine: the late run's caller from its copy, runOnCaller's
 * deferred function, the timer's goroutine): w := d.late.Load(); if w != 0
 * && d.late.CompareAndSwap(w, 0) { d.wakeChildren(-1, int(w&nMask)) }.
 * lateLoad is the Load, the end of its caller's step (the step that starts
 * the Wake); lateWake the CAS, a step of its own: a Wake may load run k's
 * word and try its CAS after run k's disarm, in run k+1, where it fails (the
 * word is 0 or run k+1's: the generation differs). The winner wakes the
 * roots as Run's wakeChildren does: wake(0), and wake(1) if 1 < m. lg, lm
 * are w.
 */
#define lateLoad(CAS, AFTER) \
	lg = lateG; lm = lateM;                         /* w := d.late.Load() */ \
	if \
	:: lg != 0 -> goto CAS \
	:: else -> lm = 0; AFTER \
	fi
#define lateWake(CAS, R0, R0SIG, R0SEND, R1, R1SIG, R1SEND, AFTER) \
CAS: \
	atomic { \
		if \
		:: lateG == lg && lateM == lm ->        /* d.late.CompareAndSwap(w, 0) */ \
			assert(lg == curGen);           /* won only in the run it names */ \
			lateG = 0; lateM = 0; lg = 0; goto R0 \
		:: else -> lg = 0; lm = 0; AFTER \
		fi \
	}; \
	wake(0, R0, R0SIG, R0SEND, lateRoot1(R1, AFTER)); \
	wake(1, R1, R1SIG, R1SEND, lm = 0; AFTER)
#define lateRoot1(R1, AFTER) if :: 1 < lm -> goto R1 :: else -> lm = 0; AFTER fi

/* waitEnd's ended(): the run's last counter is zero (groups[0].left, or
   groupsLeft for a run of more than G copies) */
#define ended(nn) (groupsOf(nn) > 1 -> groupsLeft == 0 : left[0] == 0)

/* finish(gen), after the decrement that ended the run: if
   d.coordParked.Load() == gen && d.coordParked.CompareAndSwap(gen, 0) {
   d.coordWake.Signal(1) }. The CAS is a step of its own: between the
   decrement and it the coordinator may
   already have returned and parked for the next run (BUG_UNTAGGED_END). */
#define finish(g, WAKEC, CSIG, CSEND, AFTER) \
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
 * retire(c, n, gen), execute's deferred call after the copy's Work: if
 * groups[c/G].left.Add(-1) != 0 { return }; if n > G &&
 * groupsLeft.Add(-1) != 0 { return }; finish(gen). Used by the workers and
 * by the caller, with their own labels: ACCT (this step), WAKEC, CSIG, CSEND
 * (finish's wake-up steps) and, for BUG_EARLY_DONE, GRP; AFTER is the code
 * run after the copy's last step. With BARRIER the step is enabled only once
 * every copy of the run arrived (Work's return; nothing shared happens
 * between it and the decrement).
 */
#ifndef BUG_EARLY_DONE
#define retire(ACCT, WAKEC, CSIG, CSEND, GRP, cc, g, nn, AFTER) \
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
		:: lv == 0 -> goto WAKEC              /* the run ended: finish(gen) */ \
		:: else -> lv = 0; AFTER \
		fi \
	}; \
	finish(g, WAKEC, CSIG, CSEND, AFTER)
#else
#define retire(ACCT, WAKEC, CSIG, CSEND, GRP, cc, g, nn, AFTER) \
ACCT: \
	atomic { \
		atBarrier(nn) \
		assert((g) == curGen); \
		left[(cc) / G]--; \
		if \
		:: left[(cc) / G] == 0 -> goto WAKEC  /* broken: finish first */ \
		:: else -> AFTER \
		fi \
	}; \
	finish(g, WAKEC, CSIG, CSEND, afterFinish(nn, GRP, AFTER)); \
GRP: \
	atomic { assert((g) == curGen); groupsLeft--; AFTER }
#define afterFinish(nn, GRP, AFTER) \
	if \
	:: groupsOf(nn) > 1 -> goto GRP \
	:: else -> AFTER \
	fi
#endif

/*
 * The worker: Serve(i), with next, fresh, park and serveCopy. seen is
 * s.seen, the gen of the last run word it acted on (a Goexit replacement
 * serves the same slot, so it starts with its predecessor's).
 */
#ifdef BUG_NO_TREE
#define hasChild(j) false                       /* broken: no tree wake-ups */
#else
#define hasChild(j) ((j) < m)                   /* wakeChildren: c < min(2*p+4, m) */
#endif

/* the for loop of Serve: back to next */
#define next() \
	m = 0; c = 0; k = 0; clearRun(); goto poll

/* Serve after next returned r: s.seen = gen; stop: return; m = n - caller;
   wakeChildren(i, m): wake 2i+2, 2i+3 if < m; then the own copy (i < m) or
   the helper scan (i >= m) */
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
   k++ { d.serveCopy(s, (i+k)%m, n, gen) } */
#define lookNext() \
	if \
	:: k + 1 <= STEAL && k + 1 < m -> k++; c = (i + k) % m; goto look \
	:: else -> next() \
	fi
#ifdef BUG_BATCH_CLAIM
/* broken: the copy claimed together with the own one runs after it */
#define ownNext() \
	if \
	:: pend -> pend = 0; c = (i + 1) % m; runCopy(c, rg, rn); goto wacct \
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

proctype worker(byte i; byte seen) {
	byte rg, rn, m, c, k, old, lv;
	bit rs, rc;
#ifdef BUG_BATCH_CLAIM
	bit pend;
#endif
poll:
	/* next: if d.fresh(s) { return d.snapshot() } */
	if
	:: atomic { rGen != seen -> loadRun(); dispatch() }  /* fresh: a new run word */
	:: atomic { rGen == seen -> goto spinning }          /* not fresh */
	fi;
spinning:
	/* spin.Until(budget, &s.spin, func() bool { return d.fresh(s) }): a poll
	   that finds nothing is a stutter step; the budget may run out at any
	   time (0 included) */
	if
	:: atomic { rGen != seen -> loadRun(); dispatch() }  /* a poll found a new run word */
	:: atomic { state[i] = PARKED; goto parked }  /* d.park(s): s.state.Store(parked) */
	fi;
parked:
#ifdef BUG_NO_RECHECK
	goto sleep;                                 /* broken: block without the re-check */
#endif
	atomic {
		if
		:: rGen == seen -> goto sleep           /* if d.fresh(s) (the re-check) */
		:: else -> skip
		fi
	};
	atomic {
		if
		:: state[i] == PARKED -> state[i] = AWAKE; goto snap  /* withdraw: CAS(parked, awake) */
		:: else -> skip
		fi
	};
	/* a waker won the CAS and owes a permit: s.sem.Wait(); s.state.Store(awake) */
	atomic { semWait(wcnt[i], wtok[i], wrecv1, state[i] = AWAKE; goto snap) };
snap:
	/* park returned; next's loop: if d.fresh(s) { return d.snapshot() }
	   (fresh here: the re-check saw it, and only the coordinator, which is
	   in the run that published it or later, changes the word) */
	atomic { loadRun(); dispatch() };
sleep:
	/* s.sem.Wait(); s.wakeups.Add(1); s.state.Store(awake) */
	atomic { semWait(wcnt[i], wtok[i], wrecv2, state[i] = AWAKE; goto slept) };
slept:
	/* park returned; next's loop: if d.fresh(s) { return d.snapshot() };
	   else park again at once (a stale waker's wake-up) */
	if
	:: atomic { rGen != seen -> loadRun(); dispatch() }
	:: atomic { rGen == seen -> skip }
	fi;
	atomic { state[i] = PARKED; goto parked };  /* d.park(s): s.state.Store(parked) */
	/* wakeChildren(i, m): wake(2i+2), then wake(2i+3) */
	wake(2 * i + 2, child1, c1sig, c1send, afterChild1());
	wake(2 * i + 3, child2, c2sig, c2send, toWork());
own:
	/* i < m: d.serveCopy(s, i, n, gen): if !d.claim(i, gen) { return };
	   d.execute(i, n, gen, false) */
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
			runCopy(i, rg, rn); c = i; goto wacct
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
		c = i; runCopy(i, rg, rn); goto wacct
	};
#endif
look:
	/* d.serveCopy(s, (i+k)%m, n, gen) */
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
			runCopy(c, rg, rn); goto wacct
		:: else -> old = 0; lookNext()
		fi
	};
help:
	/* i >= m: for c := range m { if d.slots[c].state.Load() != awake &&
	   d.serveCopy(s, c, n, gen) { ... } } */
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
			runCopy(c, rg, rn); goto wacct
		:: else -> old = 0; helpNext()
		fi
	};
	retire(wacct, wwakec, wcsig, wcsend, wgrp, c, rg, rn, afterCopy());
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
 * The goroutine of a late run's timer: armLate's time.AfterFunc(d.lateBound,
 * d.Wake) (or its Reset) for run g fires at any time unless disarm's (or
 * runOnCaller's deferred) timer.Stop comes first, and the goroutine it
 * starts runs Wake: its Load in run g, its CAS and wake-ups at any later
 * time (in run g, after the disarm, in a later run). A goroutine that fired
 * before the Stop and loads after the disarm loads 0 (a timer that did not
 * fire) or a later late run's word (as that run's own timer, armed with the
 * word). Not firing is its blocked end. BUG_NO_LATE_TIMER: no timer (a late
 * run's workers wait for its caller's Wake).
 */
proctype timer(byte g) {
	byte lg, lm;
end_armed:
	/* it fires: go d.Wake(), and the Wake's Load (the goroutine does nothing
	   shared in between) */
	atomic { tArmed == g -> tArmed = 0; g = 0; lateLoad(tcas, goto tdone) };
	lateWake(tcas, troot0, tr0sig, tr0send, troot1, tr1sig, tr1send, goto tdone);
tdone:
	skip
}

/*
 * A submitter: a goroutine that makes RUNS runs on the set (RunN), holding
 * the set's run lock for each, so that it is the coordinator of the
 * dispatcher meanwhile (Dispatcher.Run); the last one to finish closes the
 * set (Workers.Close: Dispatcher.Stop(NW); wg.Wait).
 */

/* runOnCaller: for c := m - 1; c >= 0; c-- { if d.claim(c, gen) { ... } };
   after its return, a late run disarms */
#define callerNext() \
	if \
	:: c > 0 -> c--; goto cload \
	:: else -> if :: lt -> goto disarm :: else -> goto endwait fi \
	fi
#ifdef GOEXIT
#define callerAfter() goto cexit
#else
#define callerAfter() callerNext()
#endif

#ifdef SUBMIT
/* Run's return, then the deferred w.mu.unlock(): nothing shared happens
   between them */
#define leaveRun() coords--; lockv = 0
#else
#define leaveRun() skip
#endif

/* Run returns (asserting that every copy of run gen ran, each once, and
   that its accounting is complete); d.task, d.name = nil, "" */
#define runReturns() \
	assert(ended(n)); \
	assert(curDone == (1 << n) - 1); \
	k = 0; \
	do \
	:: k < NG -> assert(left[k] == 0); k++ \
	:: else -> k = 0; break \
	od; \
	assert(groupsOf(n) == 1 || groupsLeft == 0); \
	assert(coordParked == 0);               /* peek.CoordinatorParked is false again */ \
	assert(lateG == 0 && lateM == 0);       /* no Wake can wake for this run any more */ \
	task = 0; curGen = 0; lt = 0; \
	leaveRun(); \
	n = 0; m = 0; c = 0; callerRuns = false; \
	r++; \
	goto runs

#ifdef SUBMIT
#define enterRun() coords++; assert(coords == 1)  /* one coordinator at a time */
#else
#define enterRun() skip
#endif

/* Run: d.gen++; d.task = p.t; the groups' left and groupsLeft (read only by
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
	goto late

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

#ifdef BUG_NO_LOCK
#define lockLost() goto setup                   /* broken: dispatch without the lock */
#else
#define lockLost() c = 0; goto inlrun           /* RunOnCaller: every copy on the caller */
#endif

#define afterRoot0() if :: 1 < m -> goto wroot1 :: else -> goto caller fi

/* armLate's timer: time.AfterFunc or Reset (its goroutine is a timer
   process); BUG_NO_LATE_TIMER: none */
#if defined(BUG_NO_LATE_TIMER) || defined(LATE_UNWOKEN)
#define armTimer() skip
#else
#define armTimer() tArmed = gen; run timer(gen)
#endif

/* the caller's copy n-1 has started: with MEET its Work returns only once
   copy 0 of the run started (it waits for that copy), else at once */
#ifdef MEET
#define callerWork() goto cmeet
#else
#define callerWork() goto cacct
#endif

proctype submitter(byte me) {
	byte gen, n, m, c, k, old, lv, r, lg, lm;
	bool callerRuns;
	bit lt;           /* this run is late (Run's late) */
#ifdef SUBMIT
	byte inlDone;     /* ghost: the copies of an inline run that ran */
#endif
runs:
	if
	:: atomic {
		r < RUNS ->
		/* the arguments of Run(p, n): n copies, 1..NW without caller-runs
		   (every copy needs a worker), 2..NW+1 with it (n = 1 caller-runs
		   runs inline, outside the dispatcher) */
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
		:: lockv == 0 -> lockv = me + 1; chooseN(); setupRun()
		:: lockv != 0 && callerRuns -> chooseN(); lockLost()
		fi
	};
setup:
	atomic { setupRun() };
inlrun:
	/* runBusy: gang.RunOnCaller(p, n) runs Work(c) for c in 0..n-1 on the
	   caller; it touches no word of the dispatcher, so the whole busy run is
	   one step; the ghost bitmap checks that each id 0..n-1 ran once */
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
late:
	/* Run: a late plan (Plan.Late, caller-runs only) leaves the roots
	   parked: d.armLate(word): d.late.Store(gen | m) after the run word,
	   then the timer's AfterFunc or Reset (nothing reads the timer: one
	   step). Whoever Wakes first wakes the roots: the caller's copy (at
	   caller:, or never), runOnCaller's deferred function after a Goexit
	   (cexit:), the timer's goroutine (timer); the caller claims the copies
	   nobody took. Any other run: d.wakeChildren(-1, m) */
	if
#ifndef LATE_UNWOKEN
	:: atomic { callerRuns -> lt = 1; lateG = gen; lateM = m; armTimer(); goto caller }
#elif !defined(GOEXIT)
	/* LATE_UNWOKEN: the late run that nobody Wakes before the caller
	   claimed every copy (the timer fires after the disarm, the copy never
	   Wakes), the words of the Wake left out (nobody reads them); with
	   GOEXIT a late run is not chosen (runOnCaller's deferred Wake wakes
	   the roots: the woken case) */
	:: atomic { callerRuns -> goto caller }
#endif
	:: atomic { true -> goto wroot0 }
	fi;
	/* Run: d.wakeChildren(-1, m): wake(0) (m > 0 always here), wake(1) if m > 1 */
	wake(0, wroot0, r0sig, r0send, afterRoot0());
	wake(1, wroot1, r1sig, r1send, goto caller);
caller:
	/* runOnCaller: d.execute(n-1, n, gen, true) without a claim (nobody else
	   ever runs copy n-1 of a caller run; the ghost checks would see it) */
	atomic {
		if
		:: callerRuns -> runCopy(n - 1, gen, n); c = n - 1;  /* c = n-1 = m: the loop starts at m-1 */
			if
			:: lt -> lateLoad(cwcas, callerWork())  /* the copy calls d.Wake (a loop's chunk claim) */
			:: true -> callerWork()             /* ... or never */
			fi
		:: else -> goto endwait
		fi
	};
	lateWake(cwcas, cwroot0, cw0sig, cw0send, cwroot1, cw1sig, cw1send, callerWork());
#ifdef MEET
cmeet:
	/* MEET: copy n-1 waits for copy 0 of its run (set in runCopy by a
	   worker: the caller claims copy 0 only after copy n-1 returned) */
	atomic { (curDone & 1) -> goto cacct };
#endif
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
		:: claimv[c] == old -> claimv[c] = gen; old = 0; runCopy(c, gen, n); goto cacct
		:: else -> old = 0; callerNext()
		fi
	};
	retire(cacct, cwakec, ccsig, ccsend, cgrp, c, gen, n, callerAfter());
#ifdef GOEXIT
cexit:
	/* the copy may have called runtime.Goexit: the caller stops claiming
	   and runOnCaller's deferred function waits for the end (the next run
	   is made by another goroutine, modelled by this process) */
	if
	:: atomic { !goexited -> goexited = true; if :: lt -> lateLoad(cgcas, goto cgstop) :: else -> goto endwait fi }
	:: atomic { true -> callerNext() }
	fi;
	/* the deferred d.Wake() (a late run's workers must run the copies the
	   caller left), then d.timer.Stop(); no disarm (Wake leaves the word
	   0); outside a late run Wake loads 0 and the timer is stopped */
	lateWake(cgcas, cgroot0, cg0sig, cg0send, cgroot1, cg1sig, cg1send, goto cgstop);
cgstop:
	atomic { tArmed = 0; goto endwait };
#endif
disarm:
	/* Run: if late { d.disarmLate() }: d.late.Store(0), d.timer.Stop() (a
	   timer that fired meanwhile still runs its Wake) */
	atomic { lateG = 0; lateM = 0; tArmed = 0; goto endwait };
endwait:
	/* waitEnd(gen, n, m): if ended() { return }; spin.Until polling ended
	   while the copies not yet returned leave a processor free (a poll that finds
	   nothing is a stutter step; the budget may run out at any time, 0
	   included); then park */
	if
	:: atomic { ended(n) -> runReturns() }
	:: atomic { !ended(n) -> goto cspin }
	fi;
cspin:
	if
	:: atomic { ended(n) -> runReturns() }      /* a poll saw the end */
	:: coordParked = TAG(gen)                   /* d.coordParked.Store(gen) */
	fi;
	atomic {
		if
		:: ended(n) -> skip                     /* the re-check: if ended() */
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
	   d.wake(i) for i < k; then w.wg.Wait() */
	atomic { dgen++; rGen = dgen; rStop = 1; rCaller = 0; rN = 0; k = 0 };
	wake(k, stopk, stsig, stsend, k++; if :: k < NW -> goto stopk :: else -> goto wgwait fi);
wgwait:
	atomic {
		exited == NW -> finished = true;        /* w.wg.Wait() */
		/* every park took the one permit owed to it */
		k = 0;
		do
		:: k < NW -> assert(wcnt[k] == 0); k++
		:: else -> k = 0; break
		od;
		assert(ccnt == 0)
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
