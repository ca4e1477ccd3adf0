package harness

import (
	"math"
	"runtime"
	"slices"
	"sync/atomic"
	"time"
)

// Pickup is how long a goroutine readied by a running one waits before it
// runs on an idle processor, while the readier keeps computing: the wait of
// every fork-join that readies goroutines as a phase starts (a workgang
// worker that parked, a goroutine go+WaitGroup just created). The Go
// scheduler puts the readied goroutine on the readier's processor and wakes
// an idle one to take it; how soon that processor's thread runs is the
// operating system's (and, on a VM, the host's) choice. Where the woken
// thread is queued behind the busy one, this reaches milliseconds, and a
// phase shorter than that runs on its caller alone whatever the runtime.
type Pickup struct {
	Samples int     `json:"samples"`
	P50NS   float64 `json:"p50_ns"`
	P90NS   float64 `json:"p90_ns"`
	// TimedOut counts samples that waited the whole limit (counted at it).
	TimedOut int `json:"timed_out"`
}

// pickupLimit bounds one sample's busy wait: past the Go scheduler's
// preemption of a goroutine that runs too long (10 ms), the readied one
// would have run on the readier's processor anyway.
const pickupLimit = 20 * time.Millisecond

// measurePickup takes samples readings of Pickup after idle gaps of gap to
// 3*gap (long enough for the other processors to go idle), spread evenly
// over that range: an operating system that moves the readied goroutine's
// thread only at its scheduler tick gives a figure that depends on where in
// the tick period the gap ends. It needs two processors; with one it
// reports false.
func measurePickup(samples int, gap time.Duration) (Pickup, bool) {
	if runtime.GOMAXPROCS(0) < 2 || samples < 1 {
		return Pickup{}, false
	}
	ready := make(chan struct{}) // unbuffered: the send readies the receiver
	var ran atomic.Int64         // the receiver's clock when it ran; 0 before
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range ready {
			ran.Store(time.Now().UnixNano())
		}
	}()
	p := Pickup{Samples: samples}
	lat := make([]float64, 0, samples)
	for i := range samples {
		// Golden-ratio steps spread the gaps evenly over [gap, 3*gap).
		frac := math.Mod(float64(i)*0.6180339887, 1)
		time.Sleep(gap + time.Duration(frac*float64(2*gap)))
		ran.Store(0)
		t0 := time.Now()
		ready <- struct{}{} // the receiver waits: this readies it onto our processor
		for ran.Load() == 0 && time.Since(t0) < pickupLimit {
			// Busy, without yielding: only another processor can run it.
		}
		if r := ran.Load(); r != 0 {
			lat = append(lat, float64(r-t0.UnixNano()))
		} else {
			lat = append(lat, float64(pickupLimit))
			p.TimedOut++
		}
	}
	close(ready)
	<-done
	slices.Sort(lat)
	p.P50NS, p.P90NS = lat[len(lat)/2], lat[len(lat)*9/10]
	return p, true
}
