package load

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRunnableField(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"0.12 0.34 0.56 3/412 9876\n", 3, true},
		{"4.84 1.77 0.65 12/141 9693\n", 12, true},
		{"0.12 0.34 0.56", 0, false},
		{"", 0, false},
	} {
		got, ok := runnableField([]byte(tc.in))
		assert.Equal(t, tc.want, got, tc.in)
		assert.Equal(t, tc.ok, ok, tc.in)
	}
}

// A thread that is runnable at one of a refresh's kernel readings and not at
// another (the runtime looking for work) does not count; one runnable at
// every reading does.
func TestLeastRunnable(t *testing.T) {
	reads := 0
	reader := func(lines ...string) func([]byte) (int, error) {
		reads = 0
		return func(buf []byte) (int, error) {
			reads++
			line := lines[0]
			lines = lines[1:]
			if line == "fail" {
				return 0, errors.New("read failed")
			}
			return copy(buf, line), nil
		}
	}
	// Free at 2 runnable threads or fewer.
	got, ok := leastRunnable(reader("0 0 0 3/100 1\n", "0 0 0 2/100 1\n", "0 0 0 3/100 1\n"), make([]byte, 128), 2)
	assert.True(t, ok)
	assert.Equal(t, 2, got, "a thread passing through")
	assert.Equal(t, 2, reads, "a free reading ends the readings")
	got, ok = leastRunnable(reader("0 0 0 3/100 1\n", "0 0 0 3/100 1\n", "0 0 0 4/100 1\n"), make([]byte, 128), 2)
	assert.True(t, ok)
	assert.Equal(t, 3, got, "a thread at every reading")
	assert.Equal(t, kernelReadings, reads)
	got, ok = leastRunnable(reader("0 0 0 1/100 1\n"), make([]byte, 128), 2)
	assert.True(t, ok)
	assert.Equal(t, 1, got)
	assert.Equal(t, 1, reads, "free at once: one reading")
	_, ok = leastRunnable(reader("0 0 0 3/100 1\n", "fail"), make([]byte, 128), 2)
	assert.False(t, ok, "a failed read")
	_, ok = leastRunnable(reader("0 0 0 3/100 1\n", "garbage"), make([]byte, 128), 2)
	assert.False(t, ok, "an unreadable line")
}

func TestCountCPUList(t *testing.T) {
	for in, want := range map[string]int{"0-1\n": 2, "0\n": 1, "0-3,8,10-11\n": 7, "": 0} {
		assert.Equal(t, want, countCPUList([]byte(in)), in)
	}
}

func TestMachineReadings(t *testing.T) {
	assert.Positive(t, onlineCPUs())
}

// The load signal counts as this process's only the threads that run its Go
// code at the reading: a process whose loop runs inline on one thread (its
// workers parked) beside one busy process on two CPUs must still see the
// machine as crowded, or it would start its workers, see the machine busy
// again, and so on.
func TestCrowdedBy(t *testing.T) {
	for _, tc := range []struct {
		name                        string
		runnable, ours, procs, cpus int
		want                        bool
	}{
		{"idle: our two processors only", 2, 2, 2, 2, false},
		{"idle: a loop inline", 1, 1, 2, 2, false},
		{"one busy process, a loop inline", 2, 1, 2, 2, true},
		{"one busy process, both processors running", 3, 2, 2, 2, true},
		{"two busy processes, a loop inline", 3, 1, 2, 2, true},
		{"one busy process on a machine with a CPU to spare", 3, 2, 2, 4, false},
	} {
		var h hysteresis
		got := false
		for range othersReadings { // enough readings in a row to turn it on
			got = crowdedBy(tc.runnable, tc.ours, tc.procs, tc.cpus, &h)
		}
		assert.Equal(t, tc.want, got, tc.name)
	}
}

// Another thread seen at some readings but not all in a row (a thread that
// runs for an instant, such as the runtime's own waking from a sleep) does
// not make the machine crowded; seen at othersReadings readings in a row, it
// does, one free reading in between does not end it, freeReadings do.
func TestCrowdedByHysteresis(t *testing.T) {
	var h hysteresis
	for i := range 3 * othersReadings {
		busy := 2 - i%2 // every other reading
		assert.False(t, crowdedBy(busy, 1, 2, 2, &h), "reading %d: a thread passing through", i)
	}
	for i := range othersReadings - 1 {
		assert.False(t, crowdedBy(2, 1, 2, 2, &h), "busy reading %d of %d", i+1, othersReadings)
	}
	assert.True(t, crowdedBy(2, 1, 2, 2, &h), "busy at every reading")
	assert.True(t, crowdedBy(1, 1, 2, 2, &h), "one free reading")
	assert.True(t, crowdedBy(2, 1, 2, 2, &h), "busy again")
	for i := range freeReadings - 1 {
		assert.True(t, crowdedBy(1, 1, 2, 2, &h), "free reading %d of %d", i+1, freeReadings)
	}
	assert.False(t, crowdedBy(1, 1, 2, 2, &h), "free at freeReadings readings in a row")
}

func TestOurRunning(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	got := ourRunning(procs)
	assert.GreaterOrEqual(t, got, 1, "the caller runs Go code")
	assert.LessOrEqual(t, got, procs)
}

// Goroutines waiting in our run queues count as ours: their processors'
// threads are runnable to the kernel (a spin loop's yields keep them there),
// and counting only running goroutines read our own spinners as other
// processes' threads. At GOMAXPROCS=1, with three goroutines that only
// yield, this one runs and those three are runnable.
func TestOurRunningCountsQueuedGoroutines(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				runtime.Gosched()
			}
		}()
	}
	runtime.Gosched() // let them start
	got, capped := ourRunning(64), ourRunning(2)
	stop.Store(true)
	wg.Wait()
	if got < 4 || capped != 2 {
		t.Errorf("ourRunning(64) = %d, ourRunning(2) = %d; want at least 4 (one running, three runnable) and 2 (at most procs)", got, capped)
	}
}
