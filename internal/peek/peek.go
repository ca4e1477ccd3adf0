// Package peek lets package workers read one fact of package gang's state that
// gang does not export: whether a dispatcher's coordinator sleeps in its end
// wait. The cycle check of nested runs needs it (a goroutine asleep there
// waits for the run's copies); an embedder of gang does not, so it is not part
// of gang's API. Package gang sets the function when it is initialized.
package peek

// CoordinatorParked reports whether the coordinator of d (a *gang.Dispatcher)
// is asleep in its end wait. Set by package gang's init.
var CoordinatorParked func(d any) bool
