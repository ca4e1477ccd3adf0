/*
 * dispatch.pml: a SPIN model of workgang's dispatch protocol v2 (issue 9):
 * one run word, per-copy claim slots with a generation test, per-worker
 * park state with a Dekker re-check, a wake tree, surplus helpers, end
 * accounting in groups, and the coordinator's spin-then-park end wait
 * (gang/gang.go: Run, the worker loop, claim, wakeIfParked, execute,
 * finish, Stop; workers/workers.go: worker creation, Goexit replacement,
 * Close). docs/model/README.md maps every step below to the Go statement it
 * stands for; keep the two in step.
 *
 * One coordinator (the goroutine holding the set's run lock) performs RUNS
 * consecutive runs, each with a nondeterministic n and, depending on CALLER,
 * caller-runs off, on, or chosen per run; then it stops the NW workers
 * (Workers.Close: Dispatcher.Stop + wg.Wait). NW worker processes run the
 * worker loop. Every Go atomic operation (Load, Store, Add, CompareAndSwap)
 * is one indivisible Promela step; Go's atomics are sequentially consistent,
 * so SPIN's interleaving semantics is the Go memory model for these words.
 * Plain fields (task, left[] before the publish) are also one step: the race
 * detector, not this model, checks that the atomics order them.
 *
 * Checked (see .ci/spin-check):
 *   safety:  no assertion violation (each copy id of each run runs exactly
 *            once, with that run's gen and task, by a goroutine that read
 *            that run's word; every end-accounting step belongs to the run in
 *            progress; Run returns only after all n copies ran and all their
 *            accounting is done) and no invalid end state (a goroutine parked
 *            for good; after Stop every worker has exited), with -DSAFETY
 *            -DNOCLAIM and pan -q (no wake token left in a channel);
 *   liveness: the LTL property `live` (<> finished: every run completes and
 *            Stop's wg.Wait returns), with pan -a.
 *
 * Configuration (-D flags to spin, e.g. spin -a -DNW=2 -DCALLER=1 dispatch.pml):
 *   NW        worker goroutines (1..3)                          default 3
 *   RUNS      consecutive runs before Stop (>= 2)               default 2
 *   CALLER    0: caller-runs off, 1: on, 2: chosen per run      default 2
 *   SPINMAX   most polls a waiter makes before parking          default 1
 *             (the number actually made is chosen
 *             nondeterministically in 0..SPINMAX, which covers every spin
 *             budget, the demand policy (full, 1/8, park at once) and
 *             GOMAXPROCS = 1)
 *   G         copies per end-accounting group (Go: 8)           default 2
 *             (2 makes runs of n >= 3 use two groups, so groupsLeft is used)
 *   GOEXIT    if defined, one copy may call runtime.Goexit: on a worker the
 *             goroutine dies after the copy's accounting and a replacement
 *             with the same slot and `seen` continues (Workers.work's
 *             defer); on the caller the coordinator stops claiming and goes
 *             to the end wait (Run's defer), and the next run is made by
 *             another goroutine, modelled by the same process.
 * Deliberately broken variants (each must be REJECTED by SPIN):
 *   BUG_NO_RECHECK    a parking worker does not re-check the run word after
 *                     state.Store(PARKED): it parks at once (lost wake-up).
 *   BUG_STALE_CLAIM   claim tests old == gen instead of old >= gen, so a CAS
 *                     from an older or a NEWER value succeeds: a stale
 *                     claimer (one that read an older run word) claims a copy
 *                     of a later run.
 *   BUG_NO_TREE       a worker does not wake its children in the tree.
 *   BUG_EARLY_DONE    the copy that empties its group calls finish before
 *                     its groupsLeft decrement (so each group's last copy
 *                     ends the run).
 *   BUG_END_NO_LOOP   the coordinator's end wait as protocol.md step 5
 *                     words it: after <-coordWake it returns without
 *                     re-checking done == gen. A finisher of the previous run
 *                     that is still between done.Store and its coordState CAS
 *                     wakes the next run's parked coordinator: Run returns
 *                     early. (A finding: the sound model loops.)
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
#ifndef G
#define G 2
#endif

#define NC (NW + 1)              /* copy slots: n <= NW + 1 (caller-runs) */
#define NG ((NC + G - 1) / G)    /* end-accounting groups */
#define AWAKE  0
#define PARKED 1

/* ---- Dispatcher state ---- */
/* the run word gen<<22 | stop<<21 | caller<<20 | n: four fields, always
   written together in one atomic step (run.Store) and read together in one
   (run.Load) */
byte rGen;
bit  rStop;
bit  rCaller;
byte rN;
byte task;                     /* 0: nil; g: the task of run g (plain field) */
byte claimv[NC];               /* slot[c].claim */
bit  state[NW];                /* slot[i].state */
chan wake[NW] = [1] of { bit };/* slot[i].wake, cap 1 */
byte left[NG];                 /* left[g] */
byte groupsLeft;               /* groupsLeft */
byte done;                     /* done: gen of the last finished run */
bit  coordState;               /* coordState */
chan coordWake = [1] of { bit };

/* ---- ghost state: observation only, never read by the protocol ---- */
byte curGen;          /* gen of the run in progress, 0 between runs */
byte curDone;         /* bitmap of the copy ids of that run that ran */
byte exited;          /* workers that saw the stop word and returned (wg.Done) */
bool finished;        /* Stop's wg.Wait returned */
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
 * Four pairs of Go steps are merged into one transition because no other
 * goroutine can tell the difference; README.md argues each:
 *   - a claimer's winning CAS, its read of task and the copy's Work
 *     (nobody writes task while a claimed copy is unfinished);
 *   - a waker's Load, CAS and token send (only the owner receives from the
 *     channel, and only after its own CAS failed; the Load only filters);
 *   - a parked goroutine's token receive and its next step;
 *   - the copy's left[] decrement, groupsLeft decrement and done.Store
 *     (only decrementers read left[] and groupsLeft, and nobody else
 *     decrements after the last copy).
 * A spin poll that finds nothing new is a stutter step and is not
 * modelled: a waiter may find the news at any time before it parks, and
 * may park at any time, which covers every spin budget.
 */

/* claim(c, gen): old := slot[c].claim.Load(); if old >= gen { return false } */
#ifdef BUG_STALE_CLAIM
#define claimOK(o, g) ((o) != (g))    /* broken: only "not claimed in this run" */
#else
#define claimOK(o, g) ((o) < (g))
#endif

/* t := d.task after the winning claim; t.Work(c), observed by the ghost
   checks. A panic takes the same path (captured in execute's defer). */
#define work(cc, g, nn) \
	assert(task == (g));                    /* the task of the run it claimed */ \
	assert((g) == curGen);                  /* claimed in the run in progress */ \
	assert((cc) < (nn));                    /* ids are 0..n-1 */ \
	assert((curDone & (1 << (cc))) == 0);   /* each id once */ \
	curDone = curDone | (1 << (cc))

/* wakeIfParked(j): if state.Load() == PARKED && state.CAS(PARKED, AWAKE)
   { wake <- token } (one step, see above) */
#define wakeIfParked(j) \
	if \
	:: state[j] == PARKED -> state[j] = AWAKE; wake[j] ! 1 \
	:: else -> skip \
	fi

/* finish, after done.Store(gen): if coordState.Load() == PARKED &&
   coordState.CAS(PARKED, AWAKE) { coordWake <- token }. A step of its
   own: between done.Store and this CAS the coordinator may already have
   returned and parked for the next run (BUG_END_NO_LOOP). */
#define wakeCoord() \
	if \
	:: coordState == PARKED -> coordState = AWAKE; coordWake ! 1 \
	:: else -> skip \
	fi

/*
 * The end accounting of copy cc of run g (n = nn) after its Work:
 * left[cc/G].Add(-1); the copy reaching 0 does groupsLeft.Add(-1) (not
 * with one group); the copy reaching 0 there calls finish(g). Used by the
 * workers and by the caller, with their own labels: ACCT (this step),
 * WAKEC (finish's wake-up step) and, for BUG_EARLY_DONE, GRP; AFTER is
 * the code run after the copy's last step.
 */
#ifndef BUG_EARLY_DONE
#define account(ACCT, WAKEC, GRP, cc, g, nn, AFTER) \
ACCT: \
	atomic { \
		assert((g) == curGen);              /* accounting of the run in progress only */ \
		left[(cc) / G]--; lv = left[(cc) / G];  /* left[c/G].Add(-1) */ \
		if \
		:: lv == 0 && groupsOf(nn) > 1 -> \
			groupsLeft--; lv = groupsLeft   /* groupsLeft.Add(-1) */ \
		:: else -> skip \
		fi; \
		if \
		:: lv == 0 -> done = (g); goto WAKEC  /* finish: done.Store(gen) */ \
		:: else -> lv = 0; AFTER \
		fi \
	}; \
WAKEC: \
	atomic { wakeCoord(); AFTER }
#else
#define account(ACCT, WAKEC, GRP, cc, g, nn, AFTER) \
ACCT: \
	atomic { \
		assert((g) == curGen); \
		left[(cc) / G]--; \
		if \
		:: left[(cc) / G] == 0 -> done = (g); goto WAKEC  /* broken: finish first */ \
		:: else -> AFTER \
		fi \
	}; \
WAKEC: \
	atomic { \
		wakeCoord(); \
		if \
		:: groupsOf(nn) > 1 -> goto GRP \
		:: else -> AFTER \
		fi \
	}; \
GRP: \
	atomic { assert((g) == curGen); groupsLeft--; AFTER }
#endif

/*
 * The worker loop for slot i. seen is the gen of the last run word it
 * processed (a Goexit replacement starts with its predecessor's).
 */
#ifdef BUG_NO_TREE
#define hasChild(j) false                       /* broken: no tree wake-ups */
#else
#define hasChild(j) ((j) < m)                   /* wakeIfParked(j) if j < m */
#endif

/* after step 4: back to step 1 */
#define next() \
	m = 0; c = 0; clearRun(); goto poll

/* steps 2-4 after reading the run word r: seen = gen(r); stop: return;
   m = n(r) - caller(r); wake the children 2i+2, 2i+3 if < m; then the own
   copy (i < m) or the helper scan (i >= m) */
#define dispatch() \
	seen = rg; \
	if \
	:: rs -> clearRun(); exited++; goto gone    /* stop word: return (wg.Done) */ \
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

/* after a copy of this worker ran (c is its id): the own copy ends step
   4, the helper scan goes on with c+1 */
#define helpNext() \
	if \
	:: c + 1 < m -> c++; goto help \
	:: else -> next() \
	fi
#define afterCopyNoExit() \
	if \
	:: i < m -> next() \
	:: else -> helpNext() \
	fi
#ifdef GOEXIT
#define afterCopy() goto wexit
#else
#define afterCopy() afterCopyNoExit()
#endif

proctype worker(byte i; byte seen) {
	byte rg, rn, m, c, old, lv;
	bit rs, rc;
poll:
	/* 1. wait for a run word with gen != seen: spin, then park */
	if
	:: atomic { rGen != seen -> loadRun(); dispatch() }  /* a poll: r := d.run.Load() */
	:: state[i] = PARKED                        /* park: state.Store(PARKED) */
	fi;
#ifdef BUG_NO_RECHECK
	atomic { wake[i] ? _; loadRun(); dispatch() };  /* broken: <-wake without the re-check */
#else
	atomic {
		loadRun();                              /* r := d.run.Load() (the re-check) */
		if
		:: rg == seen -> clearRun(); goto sleep
		:: else -> skip
		fi
	};
	atomic {
		if
		:: state[i] == PARKED -> state[i] = AWAKE; dispatch()  /* state.CAS(PARKED, AWAKE): go on with r */
		:: else -> skip
		fi
	};
	atomic { wake[i] ? _; dispatch() };         /* a waker won the CAS: take its token, go on with r */
sleep:
	atomic { wake[i] ? _; loadRun(); dispatch() };  /* <-wake; r = d.run.Load() */
#endif
child1:
	/* 3. the tree: wake 2i+2, then 2i+3 */
	atomic {
		wakeIfParked(2 * i + 2);
		if
		:: hasChild(2 * i + 3) -> goto child2
		:: else -> toWork()
		fi
	};
child2:
	atomic { wakeIfParked(2 * i + 3); toWork() };
own:
	/* 4. the own copy: claim(i, gen) */
	atomic {
		old = claimv[i];                        /* old := slot[i].claim.Load() */
		if
		:: claimOK(old, rg) -> skip
		:: else -> old = 0; next()              /* if old >= gen { return false } */
		fi
	};
	atomic {
		if
		:: claimv[i] == old ->                  /* slot[i].claim.CompareAndSwap(old, gen) */
			claimv[i] = rg; old = 0;
			work(i, rg, rn); c = i; goto wacct  /* t := d.task; execute(t, i) */
		:: else -> old = 0; next()
		fi
	};
help:
	/* 4. a surplus worker: for c in 0..m-1: if slot[c].state.Load() ==
	   PARKED && claim(c, gen) { execute(t, c) }. The state Load and the
	   claim's Load are one step (the state only filters which claims are
	   tried; README.md) */
	atomic {
		if
		:: state[c] == PARKED ->
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
		:: claimv[c] == old ->                  /* slot[c].claim.CompareAndSwap(old, gen) */
			claimv[c] = rg; old = 0;
			work(c, rg, rn); goto wacct
		:: else -> old = 0; helpNext()
		fi
	};
	account(wacct, wwakec, wgrp, c, rg, rn, afterCopy());
#ifdef GOEXIT
wexit:
	/* the copy may have called runtime.Goexit: execute's defer did its
	   accounting; Workers.work's defer starts a replacement for slot i
	   with the same seen, and this goroutine ends */
	if
	:: atomic {
		!goexited -> goexited = true; run worker(i, seen);
		i = 0; seen = 0; m = 0; c = 0; clearRun(); goto gone
	   }
	:: atomic { true -> afterCopyNoExit() }
	fi;
#endif
gone:
	skip
}

/*
 * The coordinator: the goroutine holding the set's run lock. RUNS runs
 * (Dispatcher.Run), then Workers.Close (Dispatcher.Stop(NW); wg.Wait).
 */

/* 4. the caller's next claim: for c = m-1 down to 0 */
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

/* Run returns (asserting that every copy of run gen ran, each once, and
   that its accounting is complete); 6. task = nil */
#define runReturns() \
	assert(done == gen); \
	assert(curDone == (1 << n) - 1); \
	k = 0; \
	do \
	:: k < NG -> assert(left[k] == 0); k++ \
	:: else -> k = 0; break \
	od; \
	assert(groupsOf(n) == 1 || groupsLeft == 0); \
	task = 0; curGen = 0; \
	n = 0; m = 0; c = 0; callerRuns = false; \
	r++; \
	goto runs

active proctype coordinator() {
	byte gen, n, m, c, k, old, lv, r;
	bool callerRuns;

	atomic {                                    /* go w.work(i, ...) for every slot */
		k = 0;
		do
		:: k < NW -> run worker(k, 0); k++
		:: else -> k = 0; break
		od
	};
runs:
	if
	:: atomic {
		r < RUNS ->
		/* the arguments of Run(t, n, callerRuns): n copies, 1..NW without
		   caller-runs (every copy needs a worker), 2..NW+1 with it (n = 1
		   caller-runs runs inline, outside the dispatcher) */
#if CALLER == 0
		callerRuns = false;
#elif CALLER == 1
		callerRuns = true;
#else
		if
		:: callerRuns = false
		:: callerRuns = true
		fi;
#endif
		if
		:: callerRuns -> select(n : 2 .. NW + 1)
		:: else -> select(n : 1 .. NW)
		fi;
		m = n - callerRuns;
		/* 1. gen++; task = t; init left[] and groupsLeft (plain writes,
		   read only by goroutines that read the run word below) */
		gen++; curGen = gen; curDone = 0;
		task = gen;
		k = 0;
		do
		:: k < NG ->
			left[k] = (k * G >= n -> 0 : (n - k * G >= G -> G : n - k * G));
			k++
		:: else -> k = 0; break
		od;
		groupsLeft = groupsOf(n);
		/* 2. publish: d.run.Store(word(gen, n, caller)) */
		rGen = gen; rStop = 0; rCaller = callerRuns; rN = n
	   }
	:: atomic { r >= RUNS -> goto stop }
	fi;
	/* 3. wake the tree roots: 0 if 0 < m (always), 1 if 1 < m */
	atomic {
		wakeIfParked(0);
		if
		:: 1 < m -> skip
		:: else -> goto caller
		fi
	};
	atomic { wakeIfParked(1); goto caller };
caller:
	/* 4. caller-runs: claim(n-1, gen) and execute it. Nobody else claims
	   copy n-1 of a caller run, so its Load and CAS are one step here (a
	   foreign write would fail this assertion or, if later, the writer's
	   own checks in work()) */
	atomic {
		if
		:: callerRuns ->
			assert(claimOK(claimv[n - 1], gen));
			claimv[n - 1] = gen;
			work(n - 1, gen, n); c = n - 1; goto cacct  /* c = n-1 = m: the loop below starts at m-1 */
		:: else -> goto endwait
		fi
	};
cload:
	/* then for c = m-1 down to 0: if claim(c, gen) { execute(c) } */
	atomic {
		old = claimv[c];
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
	account(cacct, cwakec, cgrp, c, gen, n, callerAfter());
#ifdef GOEXIT
cexit:
	/* the copy may have called runtime.Goexit: the caller stops claiming
	   and Run's deferred function waits for the end (the next run is made
	   by another goroutine, modelled by this process) */
	if
	:: atomic { !goexited -> goexited = true; goto endwait }
	:: atomic { true -> callerNext() }
	fi;
#endif
endwait:
	/* 5. wait until done == gen: spin (a poll may see it at any time),
	   then park */
	if
	:: atomic { done == gen -> runReturns() }   /* d.done.Load() == gen */
	:: coordState = PARKED                      /* coordState.Store(PARKED) */
	fi;
	atomic {
		if
		:: done == gen -> skip                  /* the re-check: d.done.Load() == gen */
		:: else -> goto csleep
		fi
	};
	atomic {
		if
		:: coordState == PARKED -> coordState = AWAKE; runReturns()  /* CAS(PARKED, AWAKE) */
		:: else -> skip
		fi
	};
	atomic { coordWake ? _; runReturns() };     /* a finisher won the CAS: take its token */
csleep:
#ifdef BUG_END_NO_LOOP
	atomic { coordWake ? _; runReturns() };     /* broken: <-coordWake, then return */
#else
	atomic { coordWake ? _; goto endwait };     /* <-coordWake, then re-check done == gen */
#endif
stop:
	/* Workers.Close: Stop(NW): run.Store(word(gen+1, stop)); wake every
	   parked worker; wg.Wait() */
	atomic { gen++; rGen = gen; rStop = 1; rCaller = 0; rN = 0; k = 0 };
	do
	:: atomic { k < NW -> wakeIfParked(k); k++ }
	:: atomic { k >= NW -> k = 0; break }
	od;
	atomic { exited == NW -> finished = true }  /* w.wg.Wait() */
}
