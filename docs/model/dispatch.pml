/*
 * dispatch.pml: a SPIN model of workgang's spin-then-park semaphore
 * (semaphore/semaphore.go) and of the dispatch protocol built on it
 * (gang/gang.go: Run, waitEnd, runWithCaller, ServeHow, Stop, execute), as the Go code
 * implements them. docs/model/README.md maps every step below to the Go
 * statement it stands for; keep the two in step.
 *
 * One coordinator (the goroutine holding the set's run mutex) performs RUNS
 * consecutive runs, each with a nondeterministic n and, depending on CALLER,
 * caller-runs off, on, or chosen per run; then it stops the NW workers
 * (Workers.Close: Dispatcher.Stop + wg.Wait). NW worker processes loop in
 * ServeHow (Workers.work). Every Go atomic operation (Load, Store, Add, CompareAndSwap) is one
 * indivisible Promela step; Go's atomics are sequentially consistent, so
 * SPIN's interleaving semantics is the Go memory model for these words. Plain
 * fields (task) are also one step: the race detector, not this model, checks
 * that they are ordered by the permit hand-offs.
 *
 * Checked (see .ci/spin-check):
 *   safety:  no assertion violation (each copy id of each run runs exactly
 *            once, on the run it belongs to, and every run's n copies all
 *            ran before Run returns) and no invalid end state (deadlock: a
 *            goroutine parked for good), with -DSAFETY -DNOCLAIM;
 *   liveness: the LTL property `live` (<> finished: every run completes and
 *            Stop's wg.Wait returns), with pan -a.
 *
 * Configuration (-D flags to spin, e.g. spin -a -DNW=2 -DCALLER=1 dispatch.pml):
 *   NW        worker goroutines (1..3)                          default 3
 *   RUNS      consecutive runs before Stop (>= 2)               default 2
 *   CALLER    0: caller-runs off, 1: on, 2: chosen per run      default 2
 *   SPINMAX   most spin polls a waiter makes before committing  default 1
 *             (each poll is a full TryWait; the number actually made is
 *             chosen nondeterministically in 0..SPINMAX, which covers every
 *             spin budget including WithSpin(0) and GOMAXPROCS=1)
 *   WAKEBUF   capacity of each token channel (Go: 64)           default 4
 *             (1 makes the signaller block on a full buffer, the case the
 *             code comments claim cannot deadlock)
 *   GOEXIT    if defined, one copy may call runtime.Goexit: on a worker the
 *             worker process ends after retiring the copy and a replacement
 *             is started (Workers.work's defer); on the caller the
 *             coordinator stops claiming and goes to end.Wait
 *             (runWithCaller's defer), and the next run is made by another
 *             goroutine, modelled by the same process.
 * Deliberately broken variants (each must be REJECTED by SPIN):
 *   BUG_LOST_WAKEUP   Wait checks for a permit, then registers as parked in a
 *                     second step (a failed poll, then count-- and park
 *                     regardless of what the decrement left).
 *   BUG_CALLER_N      caller-runs signals n permits instead of n-1.
 *   BUG_TRYWAIT_ZERO  TryWait takes a permit when count == 0 (c < 0 instead
 *                     of c <= 0), i.e. steals a permit owed to a parked waiter.
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
#ifndef SPINMAX
#define SPINMAX 1
#endif
#ifndef WAKEBUF
#define WAKEBUF 4
#endif

#define START 0
#define END   1

/* ---- Dispatcher state (gang.Dispatcher) ---- */
short count[2];                       /* start.count, end.count */
chan  wake[2] = [WAKEBUF] of { bit }; /* the token channels of start and end */
byte  task;                           /* 0: nil (Stop); r+1: the task of run r */
byte  claimed;                        /* Dispatcher.claimed */
byte  notFinished;                    /* Dispatcher.notFinished */

/* ---- ghost state: observation only, never read by the protocol ---- */
byte curRun;          /* the run the coordinator is in */
byte curN;            /* n of that run */
byte curDone;         /* bitmap of the copy ids of that run that ran */
byte exited;          /* workers that returned false from Serve (wg.Done) */
bool finished;        /* Stop's wg.Wait returned */
#ifdef GOEXIT
bool goexited;        /* the one Goexit was used */
#endif

ltl live { <> finished }

/*
 * Semaphore.TryWait: load; if <= 0 fail; CAS(c, c-1); retry on CAS failure.
 * Uses the caller's locals c and ok.
 */
inline tryWait(s) {
	ok = false;
	do
	:: c = count[s];                           /* c := s.count.Load() */
	   if
#ifdef BUG_TRYWAIT_ZERO
	   :: c < 0 -> c = 0; break                /* broken: takes a permit at c == 0 */
#else
	   :: c <= 0 -> c = 0; break               /* return false */
#endif
	   :: else ->
		atomic {                                /* s.count.CompareAndSwap(c, c-1) */
			if
			:: count[s] == c -> count[s] = c - 1; ok = true
			:: else -> skip
			fi;
			c = 0
		};
		if
		:: ok -> break                          /* return true */
		:: else -> skip                         /* CAS lost: reload */
		fi
	   fi
	od
}

/*
 * Semaphore.WaitHow / WaitWith: TryWait; spinFor (a nondeterministic number,
 * 0..SPINMAX, of TryWait polls; Gosched, the clock and the adaptive burst
 * length are not modelled: they only change timing, which the interleavings
 * already range over); park: commit with Add(-1), and receive a token if the
 * result is negative. Callers that poll once more before calling it
 * (ServeHow, waitEnd) are covered by the spin polls.
 * Uses the caller's locals c, ok, k.
 */
inline semWait(s) {
	tryWait(s);                                 /* if s.TryWait() { return Immediate } */
	do                                          /* if budget > 0 && s.spinFor(budget, sp) */
	:: ok -> k = 0; break
	:: !ok && k < SPINMAX -> tryWait(s); k++
	:: !ok -> k = 0; break                      /* budget ran out (or was 0) */
	od;
	if
	:: ok -> ok = false
	:: else ->
#ifdef BUG_LOST_WAKEUP
		/* broken: "no permit seen, so register and park", in two steps:
		   a Signal between the failed poll above and this Add finds no
		   registered waiter (old >= 0) and sends no token */
		count[s] = count[s] - 1;
		wake[s] ? _
#else
		atomic { count[s] = count[s] - 1; c = count[s] };  /* park: if s.count.Add(-1) >= 0 */
		if
		:: c >= 0 -> c = 0                      /* return Committed: a permit after all */
		:: else -> c = 0; wake[s] ? _           /* <-wake */
		fi
#endif
	fi
}

/*
 * Semaphore.Signal(n): old := Add(n) - n; if old < 0, send min(n, -old)
 * tokens, one channel send each (wakeParked). Signal(0) returns at once.
 * Uses the caller's locals old and k.
 */
inline signal(s, n) {
	if
	:: n > 0 ->
		atomic { old = count[s]; count[s] = count[s] + n };  /* old := s.count.Add(n) - n */
		if
		:: old < 0 ->                           /* s.wakeParked(min(n, -old)) */
			if
			:: n < -old -> k = n
			:: else -> k = -old
			fi;
			old = 0;
			do
			:: k > 0 -> wake[s] ! 1; k--        /* wake <- struct{}{} */
			:: else -> break
			od
		:: else -> old = 0                      /* if old >= 0 { return } */
		fi
	:: else -> skip                             /* if n <= 0 { return } */
	fi
}

/*
 * Dispatcher.execute(t, id, onCaller) after the claim: the copy's Work (the
 * ghost checks), then the deferred notFinished.Add(-1), and end.Signal(1)
 * by the copy that reached zero. A panic does not change this path (the
 * deferred function recovers it and retires the copy the same way), so panics
 * need no modelling of their own.
 */
inline claimAndWork(t) {
	atomic {
		id = claimed; claimed++;                /* id := int(d.claimed.Add(1) - 1) */
		/* t.Work(id), observed by ghost checks; the copy's duration is the
		   interleaving between this step and the decrement below */
		assert(t == curRun + 1);                /* the copy belongs to the current run */
		assert(id < curN);                      /* ids are 0..n-1 */
		assert((curDone & (1 << id)) == 0);     /* each id once */
		curDone = curDone | (1 << id);
		id = 0
	}
}

inline retire() {
	atomic { notFinished--; nf = notFinished }; /* d.notFinished.Add(-1) */
	if
	:: nf == 0 -> nf = 0; signal(END, 1)        /* d.end.Signal(1) */
	:: else -> nf = 0
	fi
}


/* Workers.work(i, wk): for { ok, how := w.d.ServeHow(&wk.spin); if !ok { break } }; then wg.Done(). */
proctype worker() {
	short c, old;
	byte k, t, id, nf;
	bool ok;
serve:
	semWait(START);                             /* ServeHow: TryWait, then d.start.WaitWith(sp, ...) */
	t = task;                                   /* t := d.task */
	if
	:: t == 0 -> goto stopped                   /* if t == nil { return false } */
	:: else -> skip
	fi;
	claimAndWork(t);                            /* d.execute(t, int(d.claimed.Add(1)-1), false) */
	t = 0;
	retire();                                   /* execute's deferred function */
#ifdef GOEXIT
	if
	:: atomic { !goexited -> goexited = true };
		/* the copy called runtime.Goexit: execute's defer retired it above;
		   Workers.work's defer starts a replacement and this goroutine ends */
		run worker();
		goto gone
	:: true -> skip
	fi;
#endif
	goto serve;                                 /* return true; the loop calls Serve again */
stopped:
	t = 0;
	exited++;                                   /* wg.Done() */
#ifdef GOEXIT
gone:
	skip
#endif
}

/* The goroutine holding the set's mutex: RUNS runs (Dispatcher.Run), then
   Workers.Close (Dispatcher.Stop(NW); wg.Wait). */
active proctype coordinator() {
	short c, old;
	byte k, id, nf, r, n;
	bool ok, callerRuns;

	atomic {                                    /* ensureCreated: go w.worker(i) */
		k = 0;
		do
		:: k < NW -> run worker(); k++
		:: else -> k = 0; break
		od
	};

	r = 0;
	do
	:: r < RUNS ->
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
		/* n copies: at most NW without caller-runs (every copy needs a
		   worker); with caller-runs n-1 workers suffice, so up to NW+1 */
		if
		:: callerRuns -> select(n : 1 .. NW + 1)
		:: else -> select(n : 1 .. NW)
		fi;
		atomic { curRun = r; curN = n; curDone = 0; task = r + 1 };  /* if !sameTask(d.task, t) { d.task = t } */
		claimed = 0;                                      /* d.claimed.Store(0) */
		notFinished = n;                                  /* d.notFinished.Store(n) */
		if
		:: callerRuns ->                                  /* runWithCaller(t, n) */
#ifdef BUG_CALLER_N
			signal(START, n);
#else
			signal(START, n - 1);                         /* d.start.Signal(n - 1) */
#endif
			do
			:: claimAndWork(r + 1);                       /* d.execute(t, int(d.claimed.Add(1)-1), true) */
				retire();
#ifdef GOEXIT
				if
				:: atomic { !goexited -> goexited = true };
					break                                 /* Goexit: runWithCaller's defer: end.Wait */
				:: true -> skip
				fi;
#endif
				tryWait(START);                           /* if !d.start.TryWait() { break } */
				if
				:: !ok -> break
				:: else -> ok = false
				fi
			od
		:: else ->
			signal(START, n)                              /* d.start.Signal(n) */
		fi;
		semWait(END);                                     /* d.waitEnd: TryWait, then d.end.WaitWith(&d.coord, budget) */
		/* Run returns: every copy of run r ran, each once, and all retired */
		assert(curDone == (1 << n) - 1 && notFinished == 0);
		n = 0; callerRuns = false;
		r++
	:: else -> break
	od;

	/* Workers.Close: Dispatcher.Stop(k), k = created workers; wg.Wait() */
	task = 0;                                             /* d.task = nil */
	signal(START, NW);                                    /* d.start.Signal(k) */
	(exited == NW);                                       /* w.wg.Wait() */
	assert(count[START] == 0 && count[END] == 0);         /* no permit outlives the set */
	finished = true
}
