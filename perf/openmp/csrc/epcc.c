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

/* A test runs its construct reps times and returns nothing; the time is taken
 * around the call. */
typedef void (*test_fn)(long reps);

static int nthreads;
static long sched_iters; /* iterations of a schedule test's loop */
static long grain_iters; /* kernel iterations per thread in the grain test */
static long grain_serial; /* kernel iterations of the serial grain reference */

static void ref_delay(long reps) {
	for (long j = 0; j < reps; j++)
		delay();
}

static void test_parallel(long reps) {
	for (long j = 0; j < reps; j++) {
#pragma omp parallel
		delay();
	}
}

static void test_parallel_for(long reps) {
	for (long j = 0; j < reps; j++) {
#pragma omp parallel for
		for (int i = 0; i < nthreads; i++)
			delay();
	}
}

static void test_for(long reps) {
#pragma omp parallel
	for (long j = 0; j < reps; j++) {
#pragma omp for
		for (int i = 0; i < nthreads; i++)
			delay();
	}
}

static void test_barrier(long reps) {
#pragma omp parallel
	for (long j = 0; j < reps; j++) {
		delay();
#pragma omp barrier
	}
}

static void test_reduction(long reps) {
	long total = 0;
	for (long j = 0; j < reps; j++) {
		long a = 0;
#pragma omp parallel reduction(+ : a)
		{
			delay();
			a += 1;
		}
		total += a;
	}
	if (total != reps * nthreads) {
		fprintf(stderr, "epcc: reduction: got %ld, want %ld\n", total, reps * nthreads);
		exit(1);
	}
}

/* The schedule tests: a worksharing loop of sched_iters iterations, one delay
 * each, inside one parallel region (as schedbench). The reference is the
 * serial time of one thread's share, sched_iters / nthreads delays. */
#define SCHED_TEST(fname, clause)                                              \
	static void fname(long reps) {                                         \
		_Pragma("omp parallel") for (long j = 0; j < reps; j++) {      \
			_Pragma(clause) for (long i = 0; i < sched_iters; i++) \
				delay();                                       \
		}                                                              \
	}
SCHED_TEST(test_static, "omp for schedule(static)")
SCHED_TEST(test_static8, "omp for schedule(static, 8)")
SCHED_TEST(test_dynamic1, "omp for schedule(dynamic, 1)")
SCHED_TEST(test_dynamic8, "omp for schedule(dynamic, 8)")
SCHED_TEST(test_dynamic64, "omp for schedule(dynamic, 64)")
SCHED_TEST(test_guided8, "omp for schedule(guided, 8)")

static void ref_sched(long reps) {
	long share = sched_iters / nthreads;
	for (long j = 0; j < reps; j++)
		for (long i = 0; i < share; i++)
			delay();
}

static void test_grain_parallel(long reps) {
	for (long j = 0; j < reps; j++) {
#pragma omp parallel
		work(grain_iters);
	}
}

static void ref_grain(long reps) {
	for (long j = 0; j < reps; j++)
		work(grain_serial);
}

/* set_grain sizes the grain test for a total work of w_ns: each thread's
 * share, and the serial reference of all the shares. */
static void set_grain(double w_ns, double ns_per_iter) {
	grain_iters = (long)(w_ns / ns_per_iter / nthreads + 0.5);
	if (grain_iters < 1)
		grain_iters = 1;
	grain_serial = grain_iters * nthreads;
}

/* time_reps returns the time of fn(reps) in ns. */
static double time_reps(test_fn fn, long reps) {
	double t0 = now_ns();
	fn(reps);
	return now_ns() - t0;
}

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
			double test = time_reps(cs[c].test, cs[c].reps) / (double)cs[c].reps;
			double ref = time_reps(cs[c].ref, cs[c].ref_reps) / (double)cs[c].ref_reps;
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
			double par = time_reps(test_grain_parallel, reps[g]) / (double)reps[g];
			double ser = time_reps(ref_grain, ref_reps[g]) / (double)ref_reps[g];
			printf("grain w_ns=%.0f round=%d reps=%ld serial_ns=%.1f parallel_ns=%.1f\n",
			       grains_ns[g], r, reps[g], ser, par);
		}
	}
	printf("done\n");
	return 0;
}
