/*
 * epcc.c: the OpenMP side of the perf command's openmp section, in the manner
 * of the EPCC OpenMP micro-benchmarks (syncbench and schedbench): the overhead
 * of each construct is the time of the construct around a fixed delay minus
 * the time of the same delay run serially, per repetition.
 *
 * Built at run time by the perf command (gcc -fopenmp gives libgomp, clang
 * -fopenmp gives libomp) and run in a process of its own:
 *
 *     epcc THREADS ROUNDS TARGET_US DELAY_NS
 *
 * THREADS is the team size, ROUNDS the rounds of every measurement, TARGET_US
 * the length one measurement is sized to, DELAY_NS the delay per thread.
 * It prints one line per figure, "kind key=value ...", parsed by results.go:
 *
 *     epcc runtime=<_OPENMP> threads=T rounds=R
 *     calib ns_per_iter=X delay_iters=N delay_ns=D
 *     overhead construct=NAME round=R reps=K test_ns=T ref_ns=F ns=O
 *     grain w_ns=W round=R reps=K serial_ns=S parallel_ns=P
 *     done
 *
 * The kernel is a xorshift step (nine instructions: three shifts, three xors,
 * three moves) whose every iteration depends on the last; an empty asm
 * statement that claims to change x keeps the compiler from folding,
 * vectorizing or hoisting the chain. Its cost per iteration is calibrated in
 * this process, and the Go side (kernel.go) runs and calibrates the same
 * chain in its own.
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

static inline uint64_t kernel(uint64_t x, long n) {
	for (long i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

/* work runs n iterations of the kernel; the result is used, so it stays. */
static void work(long n) {
	uint64_t x = kernel((uint64_t)n * 0x9E3779B97F4A7C15ull | 1, n);
	if (x == 0) /* xorshift never reaches 0 from a non-zero seed */
		sink = x;
}

static long delay_iters;
static void delay(void) { work(delay_iters); }

static double now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* calibrate returns the kernel's cost per iteration in ns: the best of a few
 * timings of about half a millisecond (the best is the least disturbed). */
static double calibrate(void) {
	const long n = 1L << 18;
	double best = 1e30;
	for (int i = 0; i < 7; i++) {
		double t0 = now_ns();
		work(n);
		double t = now_ns() - t0;
		if (t < best)
			best = t;
	}
	return best / (double)n;
}

/* A test runs its construct up to reps times and returns how many times it
 * did; the time is taken around the call. A test stops early, at a check
 * every CHECK_EVERY repetitions, once it has run for cap_ns: on a loaded
 * machine a construct sized from an undisturbed timing can take many times
 * its size (a team whose threads wait for each other's time slices), and the
 * repetitions done still give its time per repetition. */
typedef long (*test_fn)(long reps);

#define CHECK_EVERY 64

static double meas_start; /* set by time_reps */
static double cap_ns;     /* a test's time limit */

/* over_cap reports, at every CHECK_EVERY-th repetition j > 0, whether the
 * test has run past cap_ns. */
static inline int over_cap(long j) {
	return j > 0 && j % CHECK_EVERY == 0 && now_ns() - meas_start > cap_ns;
}

/* A test whose repetitions all run inside one parallel region stops with
 * every thread at the same repetition: at a check, thread 0 writes the
 * verdict into stop_slot before the repetition's barrier (the implied
 * barrier of an omp for, or an omp barrier), and every thread reads it after
 * that barrier. The slot alternates between checks, so the next write to a
 * slot comes two checks later, after every thread has passed the barrier of
 * the repetition after its last read. */
static volatile int stop_slot[2];

#define REGION_CHECK_BEFORE(j)                                                        \
	do {                                                                          \
		if ((j) % CHECK_EVERY == 0 && omp_get_thread_num() == 0)              \
			stop_slot[((j) / CHECK_EVERY) & 1] = over_cap(j);             \
	} while (0)
#define REGION_STOP_AFTER(j) ((j) % CHECK_EVERY == 0 && stop_slot[((j) / CHECK_EVERY) & 1])

static int nthreads;
static long sched_iters; /* iterations of a schedule test's loop */
static long grain_iters; /* kernel iterations per thread in the grain test */
static long grain_serial; /* kernel iterations of the serial grain reference */

static long ref_delay(long reps) {
	long j;
	for (j = 0; j < reps && !over_cap(j); j++)
		delay();
	return j;
}

static long test_parallel(long reps) {
	long j;
	for (j = 0; j < reps && !over_cap(j); j++) {
#pragma omp parallel
		delay();
	}
	return j;
}

static long test_parallel_for(long reps) {
	long j;
	for (j = 0; j < reps && !over_cap(j); j++) {
#pragma omp parallel for
		for (int i = 0; i < nthreads; i++)
			delay();
	}
	return j;
}

static long test_for(long reps) {
	long done = reps;
#pragma omp parallel
	for (long j = 0; j < reps; j++) {
		REGION_CHECK_BEFORE(j);
#pragma omp for
		for (int i = 0; i < nthreads; i++)
			delay();
		if (REGION_STOP_AFTER(j)) {
			if (omp_get_thread_num() == 0)
				done = j + 1;
			break;
		}
	}
	return done;
}

static long test_barrier(long reps) {
	long done = reps;
#pragma omp parallel
	for (long j = 0; j < reps; j++) {
		REGION_CHECK_BEFORE(j);
		delay();
#pragma omp barrier
		if (REGION_STOP_AFTER(j)) {
			if (omp_get_thread_num() == 0)
				done = j + 1;
			break;
		}
	}
	return done;
}

static long test_reduction(long reps) {
	long total = 0, j;
	for (j = 0; j < reps && !over_cap(j); j++) {
		long a = 0;
#pragma omp parallel reduction(+ : a)
		{
			delay();
			a += 1;
		}
		total += a;
	}
	if (total != j * nthreads) {
		fprintf(stderr, "epcc: reduction: got %ld, want %ld\n", total, j * nthreads);
		exit(1);
	}
	return j;
}

/* The schedule tests: a worksharing loop of sched_iters iterations, one delay
 * each, inside one parallel region (as schedbench). The reference is the
 * serial time of one thread's share, sched_iters / nthreads delays. */
#define SCHED_TEST(fname, clause)                                              \
	static long fname(long reps) {                                         \
		long done = reps;                                              \
		_Pragma("omp parallel") for (long j = 0; j < reps; j++) {      \
			REGION_CHECK_BEFORE(j);                                \
			_Pragma(clause) for (long i = 0; i < sched_iters; i++) \
				delay();                                       \
			if (REGION_STOP_AFTER(j)) {                            \
				if (omp_get_thread_num() == 0)                 \
					done = j + 1;                          \
				break;                                         \
			}                                                      \
		}                                                              \
		return done;                                                   \
	}
SCHED_TEST(test_static, "omp for schedule(static)")
SCHED_TEST(test_static8, "omp for schedule(static, 8)")
SCHED_TEST(test_dynamic1, "omp for schedule(dynamic, 1)")
SCHED_TEST(test_dynamic8, "omp for schedule(dynamic, 8)")
SCHED_TEST(test_dynamic64, "omp for schedule(dynamic, 64)")
SCHED_TEST(test_guided8, "omp for schedule(guided, 8)")

static long ref_sched(long reps) {
	long share = sched_iters / nthreads, j;
	for (j = 0; j < reps && !over_cap(j); j++)
		for (long i = 0; i < share; i++)
			delay();
	return j;
}

static long test_grain_parallel(long reps) {
	long j;
	for (j = 0; j < reps && !over_cap(j); j++) {
#pragma omp parallel
		work(grain_iters);
	}
	return j;
}

static long ref_grain(long reps) {
	long j;
	for (j = 0; j < reps && !over_cap(j); j++)
		work(grain_serial);
	return j;
}

/* set_grain sizes the grain test for a total work of w_ns: each thread's
 * share, and the serial reference of all the shares. */
static void set_grain(double w_ns, double ns_per_iter) {
	grain_iters = (long)(w_ns / ns_per_iter / nthreads + 0.5);
	if (grain_iters < 1)
		grain_iters = 1;
	grain_serial = grain_iters * nthreads;
}

/* time_reps returns the time of fn(reps) in ns: when the test stopped early
 * at its cap, the time of the repetitions it did scaled to reps. */
static double time_reps(test_fn fn, long reps) {
	meas_start = now_ns();
	long done = fn(reps);
	double t = now_ns() - meas_start;
	return done < reps ? t * (double)reps / (double)done : t;
}

/* per_rep returns the time of one repetition of fn, measured over reps. */
static double per_rep(test_fn fn, long reps) { return time_reps(fn, reps) / (double)reps; }

/* mid_of3 returns the middle of three timings of fn(reps). Sizing from the
 * middle rather than the least keeps a measurement near its target on a
 * loaded machine, where the least timing is the rare undisturbed one. */
static double mid_of3(test_fn fn, long reps) {
	double a = time_reps(fn, reps), b = time_reps(fn, reps), c = time_reps(fn, reps);
	if (a > b) {
		double t = a;
		a = b;
		b = t;
	}
	/* now a <= b: the middle is b clamped to [a, c] or c in between */
	if (c < a)
		return a;
	if (c > b)
		return b;
	return c;
}

/* size_reps returns the repetitions that make fn take about target_ns:
 * doubling until the middle of three runs takes a tenth of it, then
 * scaling. */
static long size_reps(test_fn fn, double target_ns) {
	long reps = 1;
	double t;
	for (;;) {
		t = mid_of3(fn, reps);
		if (t >= target_ns / 10 || reps >= (1L << 30))
			break;
		reps *= 2;
	}
	double r = (double)reps * target_ns / (t > 1 ? t : 1);
	return r < 1 ? 1 : (long)r;
}

struct construct {
	const char *name;
	test_fn test, ref;
	long reps, ref_reps;
};

int main(int argc, char **argv) {
	if (argc != 5) {
		fprintf(stderr, "usage: epcc THREADS ROUNDS TARGET_US DELAY_NS\n");
		return 2;
	}
	nthreads = atoi(argv[1]);
	int rounds = atoi(argv[2]);
	double target_ns = atof(argv[3]) * 1e3;
	double delay_ns = atof(argv[4]);
	cap_ns = 10 * target_ns;
	if (nthreads < 1 || rounds < 1 || target_ns <= 0 || delay_ns <= 0) {
		fprintf(stderr, "epcc: bad arguments\n");
		return 2;
	}
	omp_set_dynamic(0);
	omp_set_num_threads(nthreads);
	int got = 0;
#pragma omp parallel
#pragma omp single
	got = omp_get_num_threads();
	if (got != nthreads) {
		fprintf(stderr, "epcc: asked for %d threads, got %d\n", nthreads, got);
		return 1;
	}
	printf("epcc runtime=%d threads=%d rounds=%d\n", _OPENMP, nthreads, rounds);

	double ns_per_iter = calibrate();
	delay_iters = (long)(delay_ns / ns_per_iter + 0.5);
	if (delay_iters < 1)
		delay_iters = 1;
	printf("calib ns_per_iter=%.4f delay_iters=%ld delay_ns=%.1f\n", ns_per_iter, delay_iters,
	       (double)delay_iters * ns_per_iter);
	sched_iters = 128L * nthreads;

	struct construct cs[] = {
		{.name = "parallel", .test = test_parallel, .ref = ref_delay},
		{.name = "parallel_for", .test = test_parallel_for, .ref = ref_delay},
		{.name = "for", .test = test_for, .ref = ref_delay},
		{.name = "barrier", .test = test_barrier, .ref = ref_delay},
		{.name = "reduction", .test = test_reduction, .ref = ref_delay},
		{.name = "static", .test = test_static, .ref = ref_sched},
		{.name = "static_8", .test = test_static8, .ref = ref_sched},
		{.name = "dynamic_1", .test = test_dynamic1, .ref = ref_sched},
		{.name = "dynamic_8", .test = test_dynamic8, .ref = ref_sched},
		{.name = "dynamic_64", .test = test_dynamic64, .ref = ref_sched},
		{.name = "guided_8", .test = test_guided8, .ref = ref_sched},
	};
	int ncs = (int)(sizeof cs / sizeof cs[0]);
	for (int c = 0; c < ncs; c++) {
		cs[c].reps = size_reps(cs[c].test, target_ns);
		cs[c].ref_reps = size_reps(cs[c].ref, target_ns);
	}
	for (int r = 0; r < rounds; r++) {
		for (int c = 0; c < ncs; c++) {
			double test = per_rep(cs[c].test, cs[c].reps);
			double ref = per_rep(cs[c].ref, cs[c].ref_reps);
			printf("overhead construct=%s round=%d reps=%ld test_ns=%.1f ref_ns=%.1f ns=%.1f\n",
			       cs[c].name, r, cs[c].reps, test, ref, test - ref);
		}
	}

	/* The grain sweep: total work W split over the threads, speedup =
	 * serial / parallel. */
	static const double grains_ns[] = {250, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000};
	int ng = (int)(sizeof grains_ns / sizeof grains_ns[0]);
	long reps[16], ref_reps[16];
	for (int g = 0; g < ng; g++) {
		set_grain(grains_ns[g], ns_per_iter);
		reps[g] = size_reps(test_grain_parallel, target_ns);
		ref_reps[g] = size_reps(ref_grain, target_ns);
	}
	for (int r = 0; r < rounds; r++) {
		for (int g = 0; g < ng; g++) {
			set_grain(grains_ns[g], ns_per_iter);
			double par = per_rep(test_grain_parallel, reps[g]);
			double ser = per_rep(ref_grain, ref_reps[g]);
			printf("grain w_ns=%.0f round=%d reps=%ld serial_ns=%.1f parallel_ns=%.1f\n",
			       grains_ns[g], r, reps[g], ser, par);
		}
	}
	printf("done\n");
	return 0;
}
