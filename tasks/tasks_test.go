package tasks_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"

	"github.com/workgang/workgang/tasks"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type optIn struct{ yes bool }

func (optIn) Name() string         { return "opt" }
func (optIn) Work(int)             {}
func (o optIn) CallerCanRun() bool { return o.yes }

func TestCallerCanRun(t *testing.T) {
	plain := tasks.Func("plain", func(int) {})
	for _, tc := range []struct {
		name string
		t    tasks.Task
		want bool
	}{
		{"Func", plain, false},
		{"CallerRuns(Func)", tasks.CallerRuns(plain), true},
		{"implements, says yes", optIn{true}, true},
		{"implements, says no", optIn{false}, false},
		{"CallerRuns of a no", tasks.CallerRuns(optIn{false}), true},
	} {
		if got := tasks.CallerCanRun(tc.t); got != tc.want {
			t.Errorf("%s: CallerCanRun = %v; want %v", tc.name, got, tc.want)
		}
	}
}

func TestFuncCallsFnWithID(t *testing.T) {
	var got []int
	f := tasks.Func("ids", func(w int) { got = append(got, w) })
	f.Work(3)
	f.Work(0)
	assert.Equal(t, []int{3, 0}, got)
	assert.Equal(t, "ids", f.Name())
}

func TestCallerRunsKeepsNameAndWork(t *testing.T) {
	var got int
	c := tasks.CallerRuns(tasks.Func("inner", func(w int) { got = w + 1 }))
	c.Work(41)
	assert.Equal(t, 42, got)
	assert.Equal(t, "inner", c.Name())
	yes := optIn{true}
	assert.Equal(t, tasks.Task(yes), tasks.CallerRuns(yes), "an opted-in task is returned unchanged")
}
