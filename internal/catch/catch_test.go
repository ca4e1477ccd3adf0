package catch

import (
	"runtime"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Call tells a return, a panic (with its value and the panic site's stack),
// a panic(nil) and a Goexit apart; only the Goexit leaves it without
// returning.
func TestCall(t *testing.T) {
	if panicked, v, stack := Call(func() {}); panicked || v != nil || stack != nil {
		t.Errorf("a return: got (%v, %v, %d bytes); want (false, nil, none)", panicked, v, len(stack))
	}
	panicked, v, stack := Call(func() { panicSite("boom") })
	if !panicked || v != "boom" {
		t.Errorf("a panic: got (%v, %v); want (true, boom)", panicked, v)
	}
	if !strings.Contains(string(stack), "panicSite") {
		t.Errorf("the stack does not show the panic site:\n%s", stack)
	}
	if panicked, _, _ := Call(func() { panic(nil) }); !panicked {
		t.Error("a panic(nil): got no panic")
	}
	returned := make(chan bool)
	go func() {
		ok := false
		defer func() { returned <- ok }()
		Call(runtime.Goexit)
		ok = true
	}()
	if <-returned {
		t.Error("Call returned after a Goexit; want the Goexit to go on")
	}
}

func panicSite(v any) { panic(v) }
