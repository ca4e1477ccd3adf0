package fleet

import (
	"cmp"
	"fmt"
	"slices"
)

// Compare runs every variant runs times with the same instances, jobs and
// work (interleaved, so that machine noise hits them alike), checks that
// each produced the serial variant's checksums, and returns per variant the
// run with the median wall time, serial first. The serial variant is
// always run: it is the reference.
func Compare(base Config, variants []Variant, runs int) ([]Result, error) {
	if runs < 1 {
		return nil, fmt.Errorf("fleet: runs = %d, want at least 1", runs)
	}
	if !slices.Contains(variants, Serial) {
		variants = append([]Variant{Serial}, variants...)
	}
	all := make(map[Variant][]Result)
	var ref []uint64
	for range runs {
		for _, v := range variants {
			cfg := base
			cfg.Variant = v
			r, err := Run(cfg)
			if err != nil {
				return nil, err
			}
			if v == Serial && ref == nil {
				ref = r.Sums
			}
			all[v] = append(all[v], r)
		}
	}
	var out []Result
	for _, v := range variants {
		rs := all[v]
		for _, r := range rs {
			if i := firstDiff(r.Sums, ref); i >= 0 {
				return nil, fmt.Errorf("fleet: %s: instance %d's checksum %#x differs from serial's %#x", v, i, r.Sums[i], ref[i])
			}
		}
		slices.SortFunc(rs, func(a, b Result) int { return cmp.Compare(a.Wall, b.Wall) })
		out = append(out, rs[(len(rs)-1)/2])
	}
	return out, nil
}

func firstDiff(a, b []uint64) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}
