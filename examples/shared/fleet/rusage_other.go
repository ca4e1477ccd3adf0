//go:build !unix

package fleet

import "time"

type rusage struct {
	user, sys     time.Duration
	nvcsw, nivcsw int64
}

func getRusage() rusage { return rusage{} }
func resetPeakRSS()     {}
func peakRSS() int64    { return 0 }
