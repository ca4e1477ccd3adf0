package main

import (
	"encoding/xml"
	"io"
	"maps"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/workgang/workgang/perf/internal/runners"
)

// svgText parses doc as XML and returns the root element's name and the
// character data of every text element.
func svgText(doc string) (root string, texts []string, err error) {
	d := xml.NewDecoder(strings.NewReader(doc))
	inText := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return root, texts, nil
		}
		if err != nil {
			return root, texts, err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Local
			}
			if tok.Name.Local == "text" {
				inText++
			}
		case xml.EndElement:
			if tok.Name.Local == "text" {
				inText--
			}
		case xml.CharData:
			if inText > 0 {
				texts = append(texts, string(tok))
			}
		}
	}
}

// TestSVGPlots checks that -svg writes every plot, that each parses as SVG,
// and that each names its series (the implementations) in its text.
func TestSVGPlots(t *testing.T) {
	r := tinyRun()
	require.Equal(t, 0, r.code, "stderr: %s", r.errw)
	peers := []string{runners.NameWaitGroup, runners.NameErrgroup, runners.NameChanPool}
	grainNames := append([]string{runners.NameWorkgang, runners.NameCaller, runners.NameOneWorkgang, runners.NameOneCaller}, peers...)
	kernelNames := append(slices.Clone(peers), runners.NameWorkgang, runners.NameCaller, runners.NameForRange, runners.NameTeam)
	var pauseNames []string
	for _, name := range append([]string{runners.NameSerial, runners.NameWorkgang}, peers...) {
		pauseNames = append(pauseNames, name+" (pause p50")
	}
	gcNames := append(slices.Clone(peers), runners.NameWorkgang, runners.NameSerial, "p50", "p99")
	want := map[string][]string{
		"grain-n2.svg":     append(grainNames, "serial (speedup 1)", "speedup over serial", "bound: pingpong", "µs"),
		"kernel.svg":       append(kernelNames, "serial (speedup 1)", "32", "100"),
		"pause-phases.svg": append(pauseNames, "mark n=2 p", "resize-tlabs n=1 c", "µs"),
		"mark.svg":         {"serial", "static partition", "workgang work-stealing mark"},
		"gc-small.svg":     append(gcNames, "small heap", "µs"),
		"gc-large.svg":     append(gcNames, "large heap"),
	}
	for file, names := range want {
		doc, ok := r.svgs[file]
		if !assert.True(t, ok, "%s not written (have %v)", file, slices.Collect(maps.Keys(r.svgs))) {
			continue
		}
		root, texts, err := svgText(doc)
		require.NoError(t, err, file)
		assert.Equal(t, "svg", root, file)
		all := strings.Join(texts, "\n")
		for _, name := range names {
			assert.Contains(t, all, name, "%s: series or label %q", file, name)
		}
		assert.Contains(t, r.out, file, "the run lists the files it wrote")
	}
	// Every plot, openmp's too, says where and how it was measured, and
	// spells microseconds one way.
	for file, doc := range r.svgs {
		_, texts, err := svgText(doc)
		require.NoError(t, err, file)
		all := strings.Join(texts, "\n")
		assert.Contains(t, all, "GOMAXPROCS 2", "%s: the machine in the caption", file)
		assert.Contains(t, all, runtime.Version(), "%s: the Go version in the caption", file)
		assert.Contains(t, all, "-scenario all,examples", "%s: the command in the caption", file)
		assert.NotRegexp(t, `\dus\b| us\b`, all, "%s: microseconds spelled us", file)
	}
	assert.Contains(t, r.svgs, "openmp.svg")
}
