package main

import (
	"fmt"
	"strings"
)

// report is the part of a perf -json report the figures are read from
// (docs/perf.md describes the whole).
type report struct {
	Header struct {
		CPU         string `json:"cpu"`
		LogicalCPUs int    `json:"logical_cpus"`
		GOMAXPROCS  int    `json:"gomaxprocs"`
		GoVersion   string `json:"go_version"`
	} `json:"header"`
	Sections struct {
		Pause *struct {
			Impls []struct {
				Impl  string  `json:"impl"`
				P50NS float64 `json:"p50_ns"`
				P99NS float64 `json:"p99_ns"`
			} `json:"impls"`
		} `json:"pause"`
		Pow *struct {
			Rows []struct {
				Solver string `json:"solver"`
				First  struct {
					P50 float64 `json:"p50_ns"`
				} `json:"first"`
				Later struct {
					P50 float64 `json:"p50_ns"`
				} `json:"later"`
			} `json:"rows"`
		} `json:"pow"`
		Peers *struct {
			Groups []struct {
				N    int `json:"n"`
				Rows []struct {
					Impl  string  `json:"impl"`
					AvgNS float64 `json:"median_avg_ns"`
				} `json:"rows"`
			} `json:"groups"`
		} `json:"peers"`
		Interleaved *struct {
			Ops []struct {
				Op          string `json:"op"`
				Kind        string `json:"kind"`
				Interleaved []struct {
					Impl     string  `json:"impl"`
					MedianNS float64 `json:"median_ns"`
				} `json:"interleaved"`
			} `json:"ops"`
		} `json:"interleaved"`
		HTTPD *struct {
			Bests []struct {
				Conns       int     `json:"conns"`
				WorkgangRPS float64 `json:"workgang_rps"`
				PeerRPS     float64 `json:"peer_rps"`
			} `json:"bests"`
		} `json:"httpd"`
		Shared *struct {
			Rows []struct {
				Config struct {
					Instances int     `json:"instances"`
					Variant   string  `json:"variant"`
					NominalNS float64 `json:"nominal_ns"`
				} `json:"config"`
				WallNS float64 `json:"wall_ns"`
			} `json:"rows"`
		} `json:"shared"`
		Contended *struct {
			GrainsNS   []float64 `json:"grains_ns"`
			Conditions []struct {
				Key   string `json:"key"`
				Child *struct {
					Methods []struct {
						Impl   string    `json:"impl"`
						Median []float64 `json:"median"`
					} `json:"methods"`
				} `json:"child"`
			} `json:"conditions"`
		} `json:"contended"`
	} `json:"sections"`
}

// A point is one figure as one process measured it, with the peers'
// values beside it where its section has them.
type point struct {
	name   string
	unit   string
	higher bool // higher is better
	v      float64
	beside []named
}

type named struct {
	Name string  `json:"name"`
	V    float64 `json:"value"`
}

// A group is a set of figures -only selects: the perf sections that measure
// them and how to read them from one report.
type group struct {
	name      string
	scenarios []string
	optIn     bool // measured only when asked for (-full or -only)
	read      func(r *report) []point
}

var groups = []group{
	{name: "pause", scenarios: []string{"pause"}, read: readPause},
	{name: "pow", scenarios: []string{"pow"}, read: readPow},
	{name: "empty", scenarios: []string{"peers", "interleaved"}, read: readEmpty},
	{name: "grain", scenarios: []string{"interleaved"}, read: readGrain},
	{name: "httpd", scenarios: []string{"httpd"}, read: readHTTPD},
	{name: "shared", scenarios: []string{"shared"}, read: readShared},
	{name: "contended", scenarios: []string{"contended"}, optIn: true, read: readContended},
}

func readPause(r *report) []point {
	s := r.Sections.Pause
	if s == nil {
		return nil
	}
	by := map[string][2]float64{}
	for _, x := range s.Impls {
		by[x.Impl] = [2]float64{x.P50NS / 1e3, x.P99NS / 1e3}
	}
	wg, serial := by["go+WaitGroup"], by["serial"]
	return []point{
		{"pause p50", "us", false, by["workgang"][0], []named{{"go+WG", wg[0]}, {"serial", serial[0]}}},
		{"pause p99", "us", false, by["workgang"][1], []named{{"go+WG", wg[1]}, {"serial", serial[1]}}},
	}
}

// readPow reads RunContext's calls, the pow example's workgang solver.
func readPow(r *report) []point {
	s := r.Sections.Pow
	if s == nil {
		return nil
	}
	var rc, wg [2]float64
	for _, x := range s.Rows {
		switch x.Solver {
		case "RunContext":
			rc = [2]float64{x.First.P50 / 1e3, x.Later.P50 / 1e3}
		case "go+wg":
			wg = [2]float64{x.First.P50 / 1e3, x.Later.P50 / 1e3}
		}
	}
	return []point{
		{"pow first call p50, RunContext", "us", false, rc[0], []named{{"go+WG", wg[0]}}},
		{"pow later calls p50, RunContext", "us", false, rc[1], []named{{"go+WG", wg[1]}}},
	}
}

// readEmpty reads the empty runs of one long-lived set at n = 1 and n =
// GOMAXPROCS, from a plain process (peers) and between other libraries'
// fork-joins (interleaved).
func readEmpty(r *report) []point {
	var ps []point
	if s := r.Sections.Peers; s != nil {
		for _, g := range s.Groups {
			if g.N != 1 && g.N != r.Header.GOMAXPROCS {
				continue
			}
			by := map[string]float64{}
			for _, x := range g.Rows {
				by[x.Impl] = x.AvgNS
			}
			beside := []named{{"go+WG", by["go+WaitGroup"]}, {"chanpool", by["chanpool"]}}
			ps = append(ps,
				point{fmt.Sprintf("empty n=%d plain (peers, 1set)", g.N), "ns", false, by["1set:workgang"], beside},
				point{fmt.Sprintf("empty n=%d caller (peers, 1set)", g.N), "ns", false, by["1set:workgang+caller"], beside})
		}
	}
	return append(ps, readInterleaved(r, "empty", "ns", 1)...)
}

func readGrain(r *report) []point { return readInterleaved(r, "grain", "us", 1e3) }

// readInterleaved reads the interleaved section's ops of kind, in ns/scale.
func readInterleaved(r *report, kind, unit string, scale float64) []point {
	s := r.Sections.Interleaved
	if s == nil {
		return nil
	}
	var ps []point
	for _, o := range s.Ops {
		if o.Kind != kind {
			continue
		}
		by := map[string]float64{}
		for _, x := range o.Interleaved {
			by[x.Impl] = x.MedianNS / scale
		}
		beside := []named{{"go+WG", by["go+WaitGroup"]}, {"chanpool", by["chanpool"]}}
		if kind == "grain" {
			beside = []named{{"go+WG", by["go+WaitGroup"]}, {"serial", by["serial"]}}
		}
		ps = append(ps, point{o.Op + " (interleaved)", unit, false, by["workgang"], beside})
	}
	return ps
}

// readHTTPD reads the best workgang variant's req/s at 1 and 16
// connections.
func readHTTPD(r *report) []point {
	s := r.Sections.HTTPD
	if s == nil {
		return nil
	}
	var ps []point
	for _, b := range s.Bests {
		if b.Conns == 1 || b.Conns == 16 {
			ps = append(ps, point{fmt.Sprintf("httpd c=%d, best workgang", b.Conns), "req/s", true, b.WorkgangRPS, []named{{"best peer", b.PeerRPS}}})
		}
	}
	return ps
}

// readShared reads the wall time of the instances sharing one set.
func readShared(r *report) []point {
	s := r.Sections.Shared
	if s == nil {
		return nil
	}
	wg := map[float64]float64{}
	for _, x := range s.Rows {
		if x.Config.Variant == "go+wg" {
			wg[x.Config.NominalNS] = x.WallNS / 1e6
		}
	}
	var ps []point
	for _, x := range s.Rows {
		if x.Config.Variant == "shared" {
			ps = append(ps, point{fmt.Sprintf("shared %d instances, %gus jobs", x.Config.Instances, x.Config.NominalNS/1e3), "ms", false,
				x.WallNS / 1e6, []named{{"go+WG", wg[x.Config.NominalNS]}}})
		}
	}
	return ps
}

// readContended reads every workgang call's speedup over serial, per
// condition and grain.
func readContended(r *report) []point {
	s := r.Sections.Contended
	if s == nil {
		return nil
	}
	var ps []point
	for _, c := range s.Conditions {
		if c.Child == nil {
			continue // skipped (e.g. no cgroup)
		}
		for i, g := range s.GrainsNS {
			var wg float64
			for _, m := range c.Child.Methods {
				if m.Impl == "go+WaitGroup" && i < len(m.Median) {
					wg = m.Median[i]
				}
			}
			for _, m := range c.Child.Methods {
				if !strings.HasPrefix(m.Impl, "workgang") || i >= len(m.Median) {
					continue
				}
				ps = append(ps, point{fmt.Sprintf("contended %s %gus %s", c.Key, g/1e3, contendedName(m.Impl)), "x serial", true,
					m.Median[i], []named{{"go+WG", wg}}})
			}
		}
	}
	return ps
}

// contendedName is a contended row's call without the library's name.
func contendedName(impl string) string {
	if impl == "workgang" {
		return "RunN plain"
	}
	return strings.TrimPrefix(impl, "workgang ")
}
