package harness

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRatioTarget checks both kinds of goal and the N/A case.
func TestRatioTarget(t *testing.T) {
	tests := []struct {
		name            string
		num, den, limit float64
		atLeast         bool
		status, goal    string
	}{
		{"under the limit", 1, 2, 0.7, false, StatusPass, "<= 0.7"},
		{"over the limit", 3, 2, 1.1, false, StatusMiss, "<= 1.1"},
		{"at least, reached", 340, 180, 1.7, true, StatusPass, ">= 1.7"},
		{"at least, missed", 340, 300, 1.7, true, StatusMiss, ">= 1.7"},
		{"nothing measured", 1, 0, 1, false, StatusNA, "<= 1"},
	}
	for _, tt := range tests {
		tg := RatioTarget(tt.name, "a reason", tt.num, tt.den, tt.limit, tt.atLeast, "")
		assert.Equal(t, tt.status, tg.Status, tt.name)
		assert.Equal(t, tt.goal, tg.Goal, tt.name)
	}
}

// TestTargetJSON checks that a target that was not measured has ratio null,
// not 0.
func TestTargetJSON(t *testing.T) {
	b, err := json.Marshal(Target{Name: "x", Status: StatusNA})
	require.NoError(t, err)
	assert.Contains(t, string(b), `"ratio":null`)
	b, err = json.Marshal(Target{Name: "x", Status: StatusPass, Ratio: 0.5})
	require.NoError(t, err)
	assert.Contains(t, string(b), `"ratio":0.5`)
}

// TestTargetsOfEverySectionThatRan checks that the targets section collects
// the targets of the sections that ran, in table order, skips a section
// that did not run, groups them under their reasons and counts them.
func TestTargetsOfEverySectionThatRan(t *testing.T) {
	goal := func(name, reason string, num float64) func(*Harness, any) []Target {
		return func(*Harness, any) []Target { return []Target{RatioTarget(name, reason, num, 1, 1, false, "")} }
	}
	var out bytes.Buffer
	h := &Harness{Out: &out, Results: map[string]any{"a": 1, "c": 3}, sections: table{
		{Name: "a", Targets: goal("a1", "why a", 0.5)},
		{Name: "b", Targets: goal("b1", "why b", 0.5)},
		{Name: "c", Targets: goal("c1", "why a", 2)},
		TargetsSection("a"),
	}}
	res, err := runTargets(h)
	require.NoError(t, err)
	ts := res.([]Target)
	require.Len(t, ts, 2, "b did not run")
	assert.Equal(t, []string{"a1", "c1"}, []string{ts[0].Name, ts[1].Name})
	assert.Equal(t, []string{StatusPass, StatusMiss}, []string{ts[0].Status, ts[1].Status})
	text := out.String()
	assert.Equal(t, 1, strings.Count(text, "why: why a"), "one group per reason")
	assert.Contains(t, text, "2 targets: 1 PASS, 1 MISS, 0 N/A")
}
